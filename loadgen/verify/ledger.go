// This file holds the ledger types: the verifier's inputs. loadgen writes
// them as JSON lines (ledgers/<mode>/inputs.jsonl, outputs.jsonl,
// deliveries.jsonl) beside a ledger.json that names the schema version and
// what the run could observe; field names are part of the artifact schema.

package verify

import "github.com/sharebench/sharebench/vocab"

// LedgerSchema is the ledger.json schema this package writes. A ledger
// directory without ledger.json is the older, unversioned schema
// (LedgerSchemaV1): it has no deliveries, no client outcomes and no
// transaction markers, and the verdict says what could not be judged.
const (
	LedgerSchema   = "sharebench/ledger/v2"
	LedgerSchemaV1 = "sharebench/ledger/v1"
)

// Input is one input record.
type Input struct {
	ID        uint64 `json:"id"`
	Partition int32  `json:"partition"`
	Offset    int64  `json:"offset"`
	// IntendedNs is the scheduled send time, ns since the run's start.
	IntendedNs int64 `json:"intended_ns"`
	// FinalState is one of the State constants.
	FinalState vocab.RecordState `json:"final_state"`
	// DeliveryCount is the final delivery count the target reports (0
	// where it reports none); the deliveries workers observed are in the
	// Delivery records.
	DeliveryCount int `json:"delivery_count"`
	// Rejected is true when the target reports the record archived by a
	// reject (v1: also when a worker rejected it; v2 takes the workers'
	// rejects from the deliveries, counting only those that committed).
	Rejected bool `json:"rejected,omitempty"`
	// BelowSPSO is true when the target reported the record below the
	// share-partition start offset (terminal, exact state unknown).
	BelowSPSO bool `json:"below_spso,omitempty"`
}

// Client outcomes of a transaction: what the client was told.
const (
	OutcomeCommitted = "committed" // Commit returned success
	OutcomeAborted   = "aborted"   // Abort returned success, or Commit said it aborted
	// OutcomeUnknown: the client never learned the outcome (it crashed,
	// was fenced, or Commit failed without saying how). CommitSent says
	// whether it had asked to commit: if it had not, the transaction can
	// only have aborted.
	OutcomeUnknown = "unknown"
)

// Transaction markers a read_uncommitted reader saw after an output on its
// partition, from the same producer.
const (
	MarkerCommit = "commit"
	MarkerAbort  = "abort"
	// MarkerOpen: no marker followed the output by the end of the run.
	MarkerOpen = "open"
)

// Output is one output record: what the worker wrote and what the readers
// saw of it.
type Output struct {
	// InputID is the id of the input record this output was made from.
	InputID   uint64 `json:"id"`
	Partition int32  `json:"partition"`
	Offset    int64  `json:"offset"`
	// TransactionalID, ProducerID and Epoch identify the producer (empty,
	// 0 and -1 for a non-transactional output). TxnSeq numbers the
	// producer's transactions, so outputs of one transaction share
	// (TransactionalID, TxnSeq); TxnSize is how many outputs the worker
	// wrote in that transaction (0 when unknown).
	TransactionalID string `json:"transactional_id,omitempty"`
	ProducerID      int64  `json:"producer_id,omitempty"`
	Epoch           int16  `json:"epoch"`
	TxnSeq          int64  `json:"txn_seq,omitempty"`
	TxnSize         int    `json:"txn_size,omitempty"`
	// TxnOutcome is what the client was told of the transaction (an
	// Outcome constant; empty outside transactions or when not recorded),
	// CommitSent whether it asked to commit it.
	TxnOutcome string `json:"txn_outcome,omitempty"`
	CommitSent bool   `json:"commit_sent,omitempty"`
	// Committed is true when a read_committed reader saw the record.
	Committed bool `json:"committed"`
	// Uncommitted is true when the read_uncommitted pass saw the record
	// (v2; every record in the log is there, visible or not).
	Uncommitted bool `json:"read_uncommitted,omitempty"`
	// Marker is the transaction marker that followed the record on its
	// partition (a Marker constant; empty when not transactional or not
	// observed), MarkerEpoch the epoch the marker carried.
	Marker      string `json:"marker,omitempty"`
	MarkerEpoch int16  `json:"marker_epoch,omitempty"`
	// Aborted is true when the record is known to belong to an aborted
	// transaction (the target says so, or an abort marker followed it).
	Aborted bool `json:"aborted,omitempty"`
	// VisibleNs is when the read_committed reader first saw it, ns since
	// the run's start.
	VisibleNs int64 `json:"visible_ns"`
}

// AckNone is a delivery's ack when the worker sent none (it crashed, or the
// lock expired first).
const AckNone = "none"

// The acknowledgement types a worker sends for a delivery, spelled as the
// vocabulary spells them: a ledger's ack field holds one of these or
// AckNone.
var (
	AckAccept  = vocab.AckAccept.String()
	AckReject  = vocab.AckReject.String()
	AckRelease = vocab.AckRelease.String()
)

// Fates of an acknowledgement: whether it took effect.
const (
	AckCommitted = "committed" // acknowledged, or its transaction committed
	AckAborted   = "aborted"   // its transaction aborted
	AckFailed    = "failed"    // the call failed: nothing it sent took effect
	AckUnknown   = "unknown"   // sent, outcome never learned
	AckNotSent   = "none"      // no acknowledgement was sent
	// AckRefused: the call was answered, but not with success for this
	// record: the target refused it (Kafka's INVALID_RECORD_STATE for its
	// partition: the member no longer held it) or reports that it changed
	// nothing (the engine's no-op success for a record already terminal).
	// It did not take effect.
	AckRefused = "refused"
)

// Delivery is one delivery of an input record that a worker observed.
type Delivery struct {
	InputID uint64 `json:"id"`
	Worker  int    `json:"worker"`
	AtNs    int64  `json:"at_ns"`
	// DeliveryCount is the count the broker reported with the delivery (0
	// when it reports none, as for a classic consumer group).
	DeliveryCount int `json:"delivery_count"`
	// Ack is the acknowledgement the worker sent for this delivery (an Ack
	// constant), AckOutcome its fate. Transactional acks name their
	// transaction.
	Ack             string `json:"ack"`
	AckOutcome      string `json:"ack_outcome"`
	TransactionalID string `json:"transactional_id,omitempty"`
	TxnSeq          int64  `json:"txn_seq,omitempty"`
}

// OpenTransaction is a transaction still open on an output partition after
// the drain: it holds the partition's last stable offset back.
type OpenTransaction struct {
	Partition       int32  `json:"partition"`
	ProducerID      int64  `json:"producer_id"`
	Epoch           int16  `json:"epoch"`
	FirstOffset     int64  `json:"first_offset"`
	TransactionalID string `json:"transactional_id,omitempty"`
	// Source says how it was found: OpenSourceTarget or OpenSourceMarkers.
	Source string `json:"source"`
}

// How an open transaction was found.
const (
	// OpenSourceTarget: the target listed it (the engine's introspection,
	// Kafka's DescribeProducers).
	OpenSourceTarget = "target"
	// OpenSourceMarkers: records with no marker after them in the
	// read_uncommitted pass.
	OpenSourceMarkers = "markers"
)

// Meta is ledger.json: the schema, the run's identity and what the run
// could observe, so that the verifier can say what it could not judge.
// Every field whose absence would switch a judgement off is always
// written (an empty list as []) and required when read; only Brokers,
// OutputTopic, DrainNote and Notes, which no judgement reads, may be
// left out.
type Meta struct {
	Schema        string       `json:"schema"`
	Mode          vocab.Mode   `json:"mode"`
	Target        vocab.Target `json:"target"`
	Brokers       string       `json:"brokers,omitempty"`
	OutputTopic   string       `json:"output_topic,omitempty"`
	DeliveryLimit int          `json:"delivery_limit"`
	// DrainTimedOut is set when the run stopped waiting before every input
	// was settled; DrainNote says what was left.
	DrainTimedOut bool   `json:"drain_timed_out"`
	DrainNote     string `json:"drain_note,omitempty"`
	// Incomplete lists the reads of the outputs or dead letters that
	// stopped short of their end offsets (Options.Incomplete).
	Incomplete []string `json:"incomplete"`
	// TargetDown is the error of a target that crashed during the run and
	// did not come back (Options.TargetDown).
	TargetDown string `json:"target_down,omitempty"`
	// What the target reported.
	ShareState     bool `json:"share_state"`     // per-record final states
	DeliveryCounts bool `json:"delivery_counts"` // delivery counts with each delivery
	Markers        bool `json:"markers"`         // transaction markers in the read_uncommitted pass
	// DLQTopic is the share group's dead-letter topic, read back with
	// read_committed after the drain into dlq.jsonl ("": no DLQ);
	// DLQAtLeastOnce says the target promises each dead letter at least
	// once rather than exactly once.
	DLQTopic       string `json:"dlq_topic"`
	DLQAtLeastOnce bool   `json:"dlq_at_least_once"`
	// OpenTransactions lists the transactions open after the drain.
	OpenTransactions []OpenTransaction `json:"open_transactions"`
	// Notes from the run about its evidence.
	Notes []string `json:"notes,omitempty"`
}
