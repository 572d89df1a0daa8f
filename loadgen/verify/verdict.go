// This file holds the verdicts of a mode.

package verify

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
