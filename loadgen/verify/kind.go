// This file holds the finding kinds: the anomalies of docs/design.md §7, the phantom
// anomaly, and the informational kinds that are reported but never fail a
// mode.

package verify

// Anomaly kinds. See the package documentation for their definitions.
const (
	KindLost                = "lost"
	KindDuplicate           = "duplicate"
	KindAbortedRead         = "aborted-read"
	KindTornTransaction     = "torn-transaction"
	KindUnresolved          = "unresolved"
	KindOverDelivered       = "over-delivered"
	KindArchivedUnprocessed = "archived-unprocessed"
	// KindPhantom is a committed output whose input id is not in the input
	// ledger. No mode allows it.
	KindPhantom = "phantom"
	// KindHangingTransaction is a transaction still open on an output
	// partition after the drain: it holds the partition's last stable
	// offset, so nothing after it becomes visible to read_committed.
	KindHangingTransaction = "hanging-transaction"
	// KindDLQMissing is an input archived by a reject or at the delivery
	// limit with no dead-letter record, when the group has a DLQ.
	KindDLQMissing = "dlq-missing"
	// KindDLQDuplicate is an input with more dead-letter records than its
	// fate allows: more than one, or any for an input that was not
	// archived by a reject or at the limit (or a dead-letter record that
	// names no input at all).
	KindDLQDuplicate = "dlq-duplicate"
	// KindAckContradiction is an acknowledgement outcome the target's own
	// final share state contradicts: an accept or reject it answered as
	// taking effect on a record that ended otherwise (not ACKNOWLEDGED, not
	// ARCHIVED by a reject), or a record that ended ACKNOWLEDGED (ARCHIVED
	// by a reject) although the target refused every accept (reject) sent
	// for it.
	// The target's word or its state is false; no mode allows it.
	KindAckContradiction = "ack-contradiction"
	// KindTargetDown is a target that crashed during the run and did not
	// come back (the engine whose restart from its data directory failed):
	// the run could not finish, so what the ledgers hold was never settled
	// or read back. Its witness is the target's error. No mode allows it.
	KindTargetDown = "target-down"
)

// Informational kinds: counted and witnessed, never a failure.
const (
	// KindArchivedAtLimit is a record archived because it reached the
	// delivery limit (share groups' poison-record rule).
	KindArchivedAtLimit = "archived-at-limit"
	// KindRejected is a record the worker rejected on purpose.
	KindRejected = "rejected"
)

// Anomalies returns the anomaly kinds the records show (per input, output,
// transaction or dead letter), in report order. KindTargetDown, said of a
// whole run rather than of its records, is not among them.
func Anomalies() []string {
	return []string{
		KindLost, KindDuplicate, KindAbortedRead, KindTornTransaction,
		KindUnresolved, KindOverDelivered, KindArchivedUnprocessed, KindPhantom,
		KindHangingTransaction, KindDLQMissing, KindDLQDuplicate, KindAckContradiction,
	}
}

// Informational returns the informational kinds in report order.
func Informational() []string {
	return []string{KindArchivedAtLimit, KindRejected}
}

// IsAnomaly reports whether kind is an anomaly (as opposed to an
// informational kind or an unknown string).
func IsAnomaly(kind string) bool {
	switch kind {
	case KindLost, KindDuplicate, KindAbortedRead, KindTornTransaction,
		KindUnresolved, KindOverDelivered, KindArchivedUnprocessed, KindPhantom,
		KindHangingTransaction, KindDLQMissing, KindDLQDuplicate, KindAckContradiction, KindTargetDown:
		return true
	}
	return false
}

// kindOrder is the report order of every kind, anomalies first.
func kindOrder() []string {
	return append(append(append(Anomalies(), KindTargetDown), Informational()...), KindUnjudged)
}

// KindUnjudged labels the witnesses of inputs the verifier could not
// judge; it is neither an anomaly nor counted in Counts (see
// Verification.Unjudged).
const KindUnjudged = "unjudged"

// Verdicts.
const (
	VerdictPass = "PASS"
	VerdictFail = "FAIL"
	// VerdictInconclusive: no forbidden anomaly was found, but the evidence
	// is incomplete (the drain timed out, or some inputs could not be
	// judged), so the run proves nothing either way.
	VerdictInconclusive = "INCONCLUSIVE"
)

// Reasons an input is left unjudged (Verification.Unjudged).
const (
	UnjudgedNoState     = "no final state and not below the share-partition start offset"
	UnjudgedLostOrLimit = "lost or archived-at-limit: terminal, no output, an acknowledgement's fate unknown"
	UnjudgedInvalid     = "a field the verifier cannot use"
	UnjudgedDuplicateID = "the same input id twice in the ledger"
	UnjudgedOverflow    = "outputs beyond the verifier's capacity"
	UnjudgedNotFinished = "not terminal when the drain timed out"
	// UnjudgedNotAnInput: a worker saw deliveries of an id the input
	// ledger does not hold, so the input ledger is incomplete.
	UnjudgedNotAnInput = "delivered, but not in the input ledger"
)
