// This file holds the invariant ids: the rules of the reference engine that
// the simulator checks after every step, each named by its number in
// docs/design.md §4 and a short word for the part of the rule broken.

package vocab

// Invariant names the rule a simulator violation breaks: "I<n> <what>".
type Invariant string

// The invariants, in docs/design.md §4's order.
const (
	InvAcknowledgedOnce Invariant = "I1 acknowledged-once" // no record is ACKNOWLEDGED twice
	InvTerminalFinal    Invariant = "I1 terminal-final"    // nothing leaves ACKNOWLEDGED or ARCHIVED
	InvOneOwner         Invariant = "I2 one-owner"         // one owner per acquired record; only its ack succeeds
	InvDeliveryCount    Invariant = "I3 delivery-count"    // the count grows only on acquisition
	InvDeliveryLimit    Invariant = "I4 delivery-limit"    // no delivery past the limit
	InvSPSO             Invariant = "I5 spso"              // SPSO never decreases; below it all is terminal
	InvWindow           Invariant = "I6 window"            // the in-flight window is never exceeded
	InvTxPendingHeld    Invariant = "I7 tx-pending-held"   // TX_PENDING leaves only with its transaction
	InvCommitAtomic     Invariant = "I8 commit-atomic"     // outputs and staged acks commit or abort together
	InvRecoveryDecided  Invariant = "I9 recovery"          // a decision made before a crash completes after it
	InvFencing          Invariant = "I10 fencing"          // a fenced producer can neither stage nor produce
	InvMemberEpoch      Invariant = "I10 member-epoch"     // a stale member epoch can neither acquire nor ack
	InvTxnTimeout       Invariant = "I11 txn-timeout"      // a timed-out transaction is aborted
	InvRecovery         Invariant = "I12 recovery"         // recovery restores the durable state
	InvAbortable        Invariant = "I13 abortable"        // a failed staging call leaves only abort
	InvDLQ              Invariant = "I14 dlq"              // every archived-by-reject-or-limit record is dead-lettered as the knob says
	// InvEngineCheck is a structural check of the engine's own that names
	// none of the rules above.
	InvEngineCheck Invariant = "engine-check"
)

// String returns the invariant's id.
func (i Invariant) String() string { return string(i) }

// VerifierCheck names the simulator's end-of-run check of mode m: the
// verifier's verdict on m's ledgers, which must be PASS.
func VerifierCheck(m Mode) Invariant { return Invariant("verify " + string(m)) }
