// This file holds the final share states of a source record.

package vocab

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
