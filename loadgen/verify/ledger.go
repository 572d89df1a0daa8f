// This file holds the ledger types: the verifier's inputs. loadgen writes
// them as JSON lines (ledgers/<mode>/inputs.jsonl, outputs.jsonl) with
// --dump-ledgers; field names are part of the artifact schema.

package verify

// Final states of a source record, as targets report them.
const (
	StateAvailable    = "AVAILABLE"
	StateAcquired     = "ACQUIRED"
	StateAcknowledged = "ACKNOWLEDGED"
	StateArchived     = "ARCHIVED"
	StateTxPending    = "TX_PENDING"
	// StateUnknown: the target cannot report per-record state (a real
	// cluster); the verifier then judges terminality from SPSO.
	StateUnknown = ""
)

// Input is one input record.
type Input struct {
	ID        uint64 `json:"id"`
	Partition int32  `json:"partition"`
	Offset    int64  `json:"offset"`
	// IntendedNs is the scheduled send time, ns since the run's start.
	IntendedNs int64 `json:"intended_ns"`
	// FinalState is one of the State constants.
	FinalState    string `json:"final_state"`
	DeliveryCount int    `json:"delivery_count"`
	// Rejected is true when a worker rejected the record on purpose.
	Rejected bool `json:"rejected,omitempty"`
	// BelowSPSO is true when the target reported the record below the
	// share-partition start offset (terminal, exact state unknown).
	BelowSPSO bool `json:"below_spso,omitempty"`
}

// Output is one output record read back from the output topic.
type Output struct {
	// InputID is the id of the input record this output was made from.
	InputID   uint64 `json:"id"`
	Partition int32  `json:"partition"`
	Offset    int64  `json:"offset"`
	// TransactionalID and Epoch identify the producer (empty and -1 for a
	// non-transactional output). TxnSeq numbers the producer's
	// transactions, so outputs of one transaction share (TransactionalID,
	// Epoch, TxnSeq); TxnSize is how many outputs that transaction wrote
	// (0 when unknown).
	TransactionalID string `json:"transactional_id,omitempty"`
	Epoch           int16  `json:"epoch"`
	TxnSeq          int64  `json:"txn_seq,omitempty"`
	TxnSize         int    `json:"txn_size,omitempty"`
	// Committed is true when a read_committed reader saw the record;
	// false for a record seen only by the read_uncommitted pass.
	Committed bool `json:"committed"`
	// Aborted is true when the record is known to belong to an aborted
	// transaction. A record that is both Committed and Aborted is an
	// aborted-read.
	Aborted bool `json:"aborted,omitempty"`
	// VisibleNs is when the reader first saw it, ns since the run's start.
	VisibleNs int64 `json:"visible_ns"`
}
