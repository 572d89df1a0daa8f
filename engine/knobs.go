// This file holds Knobs, the decisions the KIP-1289 draft leaves open, the
// draft's set, and the names the CLI's --knobs flag takes.

package engine

import (
	"fmt"
	"strconv"
	"strings"
)

// Knobs are the decisions the KIP-1289 draft leaves open (docs/design.md
// §3.4). The zero value is the safe choice for each. Setting one of the
// first five fields reproduces the draft's choice (DraftKnobs sets them
// all); DLQAfterMarker and TxPendingLimit are what-ifs the draft does not
// make, so benchmarks and the verifier can show the difference.
type Knobs struct {
	// ExactEpochMatch applies a marker only when its epoch equals the staged
	// epoch (draft). Safe: marker epoch >= staged epoch, since the epoch is
	// bumped when a transaction ends.
	ExactEpochMatch bool
	// AbortToAvailableAtLimit makes an abort return a record that has
	// reached the delivery limit to AVAILABLE (draft: one delivery beyond
	// the limit). Safe: ARCHIVED.
	AbortToAvailableAtLimit bool
	// StageStopAtFirstFailure stages a multi-batch request batch by batch
	// and stops at the first failure, leaving earlier batches staged
	// (draft). Safe: validate all, then stage all.
	StageStopAtFirstFailure bool
	// RejectIdenticalRetry fails a staging request that repeats one already
	// applied (draft). Safe: success, as an idempotent retry.
	RejectIdenticalRetry bool
	// FailedStageNoLock returns the records of a staging write that failed
	// to ACQUIRED without a lock (draft). Safe: ACQUIRED with a live lock.
	FailedStageNoLock bool
	// DLQAfterMarker writes the dead-letter copy of a record archived by
	// a transactional REJECT after the commit marker archives it (at
	// least once). Safe (the default): in the transaction that staged the
	// reject, committed or aborted with it (exactly once).
	DLQAfterMarker bool
	// TxPendingLimit 0 counts TX_PENDING records toward
	// share.partition.max.record.locks, as the draft does (the default).
	// n > 0 is the what-if a KIP reviewer asks about: the first n
	// TX_PENDING records of a share partition do not count, so long
	// transactions no longer cap how many records can be acquired.
	//
	// At the limit, staging is never refused: the TX_PENDING records past
	// the first n count toward share.partition.max.record.locks as the
	// ACQUIRED records they were. A record slot is held by every ACQUIRED
	// record and every TX_PENDING record past the first n, and a poll
	// acquires only into free slots (never past SPSO + locks + n either).
	// Staging then never takes a slot, and an abort, a commit, a lock
	// expiry or a session close only frees slots, so the bound holds
	// whatever the transaction's outcome. Refusing the staging instead
	// would make the transaction abortable and throw away the outputs it
	// already produced.
	TxPendingLimit int
}

// DraftKnobs returns the knobs that reproduce the draft's choices: the five
// boolean knobs the draft decides, on. DLQAfterMarker stays off (a what-if,
// not a choice the draft makes) and TxPendingLimit stays the draft's 0.
func DraftKnobs() Knobs {
	return Knobs{ExactEpochMatch: true, AbortToAvailableAtLimit: true, StageStopAtFirstFailure: true,
		RejectIdenticalRetry: true, FailedStageNoLock: true}
}

// knobNames maps each knob's name, as ParseKnobs takes it, to the field it
// sets; the slice order is the order KnobNames lists them in.
var knobNames = []struct {
	name string
	set  func(*Knobs)
}{
	{"exact-epoch-match", func(k *Knobs) { k.ExactEpochMatch = true }},
	{"abort-to-available-at-limit", func(k *Knobs) { k.AbortToAvailableAtLimit = true }},
	{"stage-stop-at-first-failure", func(k *Knobs) { k.StageStopAtFirstFailure = true }},
	{"reject-identical-retry", func(k *Knobs) { k.RejectIdenticalRetry = true }},
	{"failed-stage-no-lock", func(k *Knobs) { k.FailedStageNoLock = true }},
	{"dlq-after-marker", func(k *Knobs) { k.DLQAfterMarker = true }},
}

// txPendingLimitKnob is the knob that takes a value: tx-pending-limit=N.
const txPendingLimitKnob = "tx-pending-limit"

// KnobNames lists what ParseKnobs accepts: "safe", "draft", the name of
// each boolean knob, and last "tx-pending-limit=N".
func KnobNames() []string {
	out := []string{"safe", "draft"}
	for _, n := range knobNames {
		out = append(out, n.name)
	}
	return append(out, txPendingLimitKnob+"=N")
}

// UnknownKnobError is ParseKnobs' error for a name it does not know.
type UnknownKnobError struct {
	Name string
}

func (e *UnknownKnobError) Error() string {
	return fmt.Sprintf("engine: unknown knob %q (valid: %s)", e.Name, strings.Join(KnobNames(), ", "))
}

// ParseKnobs reads a knob set: "safe" or "" (all safe, the zero Knobs),
// "draft" (DraftKnobs), or a comma-separated list of knob names, each
// switching one choice on, and tx-pending-limit=N (N > 0: the first N
// TX_PENDING records of a share partition stay out of
// share.partition.max.record.locks; see Knobs.TxPendingLimit).
func ParseKnobs(s string) (Knobs, error) {
	var k Knobs
	switch s {
	case "safe", "":
		return k, nil
	case "draft":
		return DraftKnobs(), nil
	}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if v, ok := strings.CutPrefix(part, txPendingLimitKnob+"="); ok {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				return Knobs{}, fmt.Errorf("engine: %s=%s: want a whole number of records above 0, like %s=2000 (the first N TX_PENDING records of a share partition then stay out of share.partition.max.record.locks)", txPendingLimitKnob, v, txPendingLimitKnob)
			}
			k.TxPendingLimit = n
			continue
		}
		found := false
		for _, n := range knobNames {
			if n.name == part {
				n.set(&k)
				found = true
				break
			}
		}
		if !found {
			return Knobs{}, &UnknownKnobError{Name: part}
		}
	}
	return k, nil
}
