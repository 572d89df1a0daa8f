// This file holds the finding kinds the verifier reports: the anomalies of
// an acknowledgement mode, and the informational kinds that never fail one.

package vocab

import (
	"fmt"
	"strings"
)

// Finding is the kind of a verifier finding: an anomaly a mode may or may
// not allow, or an informational kind that never fails a mode. Its value is
// the name result files and reports print.
type Finding string

// Anomaly kinds (the definitions are docs/design.md §7's).
const (
	KindLost                Finding = "lost"
	KindDuplicate           Finding = "duplicate"
	KindAbortedRead         Finding = "aborted-read"
	KindTornTransaction     Finding = "torn-transaction"
	KindUnresolved          Finding = "unresolved"
	KindOverDelivered       Finding = "over-delivered"
	KindArchivedUnprocessed Finding = "archived-unprocessed"
	// KindPhantom is a committed output whose input id is not in the input
	// ledger. No mode allows it.
	KindPhantom Finding = "phantom"
	// KindHangingTransaction is a transaction still open on an output
	// partition after the drain: it holds the partition's last stable
	// offset, so nothing after it becomes visible to read_committed.
	KindHangingTransaction Finding = "hanging-transaction"
	// KindDLQMissing is an input archived by a reject or at the delivery
	// limit with no dead-letter record, when the group has a DLQ.
	KindDLQMissing Finding = "dlq-missing"
	// KindDLQDuplicate is an input with more dead-letter records than its
	// fate allows: more than one, or any for an input that was not
	// archived by a reject or at the limit (or a dead-letter record that
	// names no input at all).
	KindDLQDuplicate Finding = "dlq-duplicate"
	// KindAckContradiction is an acknowledgement outcome the target's own
	// final share state contradicts: an accept or reject it answered as
	// taking effect on a record that ended otherwise (not ACKNOWLEDGED, not
	// ARCHIVED by a reject), or a record that ended ACKNOWLEDGED (ARCHIVED
	// by a reject) although the target refused every accept (reject) sent
	// for it.
	// The target's word or its state is false; no mode allows it.
	KindAckContradiction Finding = "ack-contradiction"
	// KindTargetDown is a target that crashed during the run and did not
	// come back (the engine whose restart from its data directory failed):
	// the run could not finish, so what the ledgers hold was never settled
	// or read back. Its witness is the target's error. No mode allows it.
	KindTargetDown Finding = "target-down"
)

// Informational kinds: counted and witnessed, never a failure.
const (
	// KindArchivedAtLimit is a record archived because it reached the
	// delivery limit (share groups' poison-record rule).
	KindArchivedAtLimit Finding = "archived-at-limit"
	// KindRejected is a record the worker rejected on purpose.
	KindRejected Finding = "rejected"
)

// Anomalies returns the anomaly kinds the records show (per input, output,
// transaction or dead letter), in report order. KindTargetDown, said of a
// whole run rather than of its records, is not among them.
func Anomalies() []Finding {
	return []Finding{
		KindLost, KindDuplicate, KindAbortedRead, KindTornTransaction,
		KindUnresolved, KindOverDelivered, KindArchivedUnprocessed, KindPhantom,
		KindHangingTransaction, KindDLQMissing, KindDLQDuplicate, KindAckContradiction,
	}
}

// Informational returns the informational kinds in report order.
func Informational() []Finding {
	return []Finding{KindArchivedAtLimit, KindRejected}
}

// IsAnomaly reports whether kind is an anomaly (as opposed to an
// informational kind or an unknown string).
func IsAnomaly(kind Finding) bool {
	switch kind {
	case KindLost, KindDuplicate, KindAbortedRead, KindTornTransaction,
		KindUnresolved, KindOverDelivered, KindArchivedUnprocessed, KindPhantom,
		KindHangingTransaction, KindDLQMissing, KindDLQDuplicate, KindAckContradiction, KindTargetDown:
		return true
	}
	return false
}

// KindOrder is the report order of every kind, anomalies first.
func KindOrder() []Finding {
	return append(append(append(Anomalies(), KindTargetDown), Informational()...), KindUnjudged)
}

// KindUnjudged labels the witnesses of inputs the verifier could not
// judge; it is neither an anomaly nor counted in Counts (see
// Verification.Unjudged).
const KindUnjudged Finding = "unjudged"

// ParseFinding returns the finding kind named s, or an error naming the
// valid ones.
func ParseFinding(s string) (Finding, error) {
	for _, k := range KindOrder() {
		if string(k) == s {
			return k, nil
		}
	}
	return "", fmt.Errorf("vocab: unknown finding kind %q (valid: %s)", s, strings.Join(Names(KindOrder()), ", "))
}

// String returns the kind's name.
func (f Finding) String() string { return string(f) }
