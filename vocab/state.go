// This file holds the final share states of a source record.

package vocab

import "fmt"

// RecordState is a source record's final share state as a target reports
// it and a ledger holds it, spelled as Kafka spells the states (the
// engine's engine.RecordState prints the same names).
type RecordState string

// Final states of a source record.
const (
	StateAvailable    RecordState = "AVAILABLE"
	StateAcquired     RecordState = "ACQUIRED"
	StateAcknowledged RecordState = "ACKNOWLEDGED"
	StateArchived     RecordState = "ARCHIVED"
	StateTxPending    RecordState = "TX_PENDING"
	// StateUnknown: the target cannot report per-record state (a real
	// cluster); the verifier then judges terminality from SPSO. Written
	// as "UNKNOWN"; the empty string of the v1 ledger schema means the
	// same.
	StateUnknown RecordState = "UNKNOWN"
)

// RecordStates lists the final states, Kafka's first. The slice is the
// caller's.
func RecordStates() []RecordState {
	return []RecordState{StateAvailable, StateAcquired, StateAcknowledged, StateArchived, StateTxPending, StateUnknown}
}

// ParseRecordState returns the state named s, or an error naming the valid
// ones.
func ParseRecordState(s string) (RecordState, error) {
	for _, st := range RecordStates() {
		if string(st) == s {
			return st, nil
		}
	}
	return "", fmt.Errorf("vocab: unknown record state %q (valid: AVAILABLE, ACQUIRED, ACKNOWLEDGED, ARCHIVED, TX_PENDING, UNKNOWN)", s)
}

// String returns the state's name.
func (s RecordState) String() string { return string(s) }
