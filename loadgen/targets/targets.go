// Package targets defines the small interface the load generator drives: one
// Target (the in-process reference engine, or a Kafka cluster through
// franz-go) hands out input producers, mode-specific workers and output
// readers. The mode loops live in loadgen; a target only offers primitives,
// so every target runs exactly the same pipeline.
//
// This package imports nothing of sharebench but the pipeline's vocabulary
// (the modes), so targets do not import loadgen and loadgen does not import
// a target's internals.
package targets

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sharebench/sharebench/vocab"
)

// ErrFenced is wrapped by worker errors after which the worker must be
// replaced rather than retried: its producer was fenced (a newer producer
// with its transactional id, or a transaction timed out and the epoch
// moved on), or its member left its group (unknown member, stale member
// epoch, illegal generation). Targets classify their own errors into it;
// loadgen checks it with errors.Is, never by matching text.
var ErrFenced = errors.New("worker fenced")

// Fenced wraps err with ErrFenced (nil stays nil).
func Fenced(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%w: %w", ErrFenced, err)
}

// ErrAbortable is wrapped by errors after which the worker's open
// transaction can only abort (a staging call failed: KIP-1289 and Kafka's
// producer after a failed TxnOffsetCommit); the worker aborts and goes on
// with the same clients. ErrStaleMemberEpoch is wrapped beside it when the
// staging was fenced by a stale member epoch (a rebalance between the poll
// and the staging), which the result counts apart.
var (
	ErrAbortable        = errors.New("transaction abortable")
	ErrStaleMemberEpoch = errors.New("stale member epoch")
)

// Abortable wraps err with ErrAbortable, and with ErrStaleMemberEpoch too
// when staleEpoch (nil stays nil).
func Abortable(err error, staleEpoch bool) error {
	if err == nil {
		return nil
	}
	if staleEpoch {
		return fmt.Errorf("%w: %w: %w", ErrAbortable, ErrStaleMemberEpoch, err)
	}
	return fmt.Errorf("%w: %w", ErrAbortable, err)
}

// ErrAckRefused is matched (errors.Is) by an acknowledgement error that
// names, record by record, the acknowledgements of the call that did not
// take effect (a *RefusedError): the broker answered them with a
// per-partition error (Kafka's INVALID_RECORD_STATE for a record the member
// no longer holds: its lock expired, another member acquired it, its
// session ended), or the target knows they changed nothing (the engine's
// no-op success for a record already terminal). The call's other records
// took effect. A call error without it says nothing per record.
var ErrAckRefused = errors.New("acknowledgement refused")

// RefusedError is returned by Worker.Ack when some of its records'
// acknowledgements did not take effect. Refused indexes the call's recs,
// ascending; Err is the cause the target reported.
type RefusedError struct {
	Refused []int
	Err     error
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("%d acknowledgements did not take effect: %v", len(e.Refused), e.Err)
}

// Unwrap returns ErrAckRefused and the cause.
func (e *RefusedError) Unwrap() []error { return []error{ErrAckRefused, e.Err} }

// ErrUnsupported is wrapped by errors saying a target cannot run a mode or
// an operation (for example transactional acks on a broker that does not
// advertise the API). Check with errors.Is.
var ErrUnsupported = errors.New("unsupported by this target")

// Record is one record handed between loadgen and a target. Produce fills in
// Partition and Offset; Poll fills in everything it knows.
type Record struct {
	Topic     string
	Partition int32
	Offset    int64
	Key       []byte
	Value     []byte
	// Headers are the record's headers, where a reader returns them (the
	// provenance of a dead-letter record).
	Headers []Header
	// DeliveryCount is the share-group delivery count of a polled record
	// (1 on first delivery); 0 where the target does not know it.
	DeliveryCount int
	// Aborted is set by readers of targets that know a record belongs to
	// an aborted transaction (Info.ReportsAborted).
	Aborted bool
	// ProducerID, ProducerEpoch and Transactional describe the batch the
	// record came in, where a reader knows them (0, -1, false otherwise).
	ProducerID    int64
	ProducerEpoch int16
	Transactional bool
	// Control is set on a transaction marker returned by a marker reader
	// (MarkerReader); such a record has no key or value.
	Control Control
	// Tag is the caller's: loadgen's bookkeeping for a polled record.
	// Targets never read it and leave it zero in records they return.
	Tag int64
	// Handle is target-private (for example the *kgo.Record a share ack
	// needs). loadgen passes it back untouched.
	Handle any
}

// Acquire modes (share.acquire.mode, KIP-1206), as Kafka spells them.
const (
	AcquireBatchOptimized = "batch_optimized"
	AcquireRecordLimit    = "record_limit"
)

// Header is one record header.
type Header struct {
	Key   string
	Value []byte
}

// Control says whether a record is a transaction marker, and which.
type Control int8

// Control values.
const (
	ControlNone   Control = iota // a data record
	ControlCommit                // a commit marker
	ControlAbort                 // an abort marker
)

// Config is what Setup creates and every later call uses.
type Config struct {
	// InputTopic and OutputTopic are the full topic names, already
	// prefixed with the run's prefix so runs never see each other's data.
	InputTopic       string
	OutputTopic      string
	InputPartitions  int32
	OutputPartitions int32
	// InputTopics, when set, are all the input topics, each of
	// InputPartitions partitions, InputTopic the first of them (an OMB
	// workload's topics: N); nil means InputTopic alone (Inputs). The
	// workers' share group (or consumer group) subscribes to every one;
	// their outputs all go to OutputTopic. Where a target numbers input
	// partitions across topics (ShareState, GlobalPartition), partition p
	// of input topic i is i × InputPartitions + p.
	InputTopics []string
	// Group is the share group id (or the classic group id for
	// classic-eos).
	Group string
	// TransactionalIDPrefix prefixes every transactional id a worker uses.
	TransactionalIDPrefix string

	LockDuration       time.Duration // share.record.lock.duration.ms
	DeliveryLimit      int           // share.delivery.count.limit
	MaxRecordLocks     int           // share.partition.max.record.locks
	TransactionTimeout time.Duration // transaction.timeout.ms
	// MaxPollRecords caps one poll.
	MaxPollRecords int
	// ReplicationFactor and MinInsyncReplicas are the topics'
	// replication.factor and min.insync.replicas on a replicated target;
	// 0 takes the cluster's defaults.
	ReplicationFactor int
	MinInsyncReplicas int
	// AcquireMode is share.acquire.mode ("": the target's default).
	AcquireMode string
	// DLQTopic is the share group's errors.deadletterqueue.topic.name
	// (KIP-1191), the full name, which Setup creates; "": no dead-letter
	// queue. DLQCopyRecord is errors.deadletterqueue.copy.record.enable.
	DLQTopic      string
	DLQCopyRecord bool
}

// Inputs returns every input topic: InputTopics, or InputTopic alone.
func (c Config) Inputs() []string {
	if len(c.InputTopics) > 0 {
		return c.InputTopics
	}
	return []string{c.InputTopic}
}

// GlobalPartition numbers partition p of input topic topic across all the
// input topics (topic index × InputPartitions + p); -1 for a topic that is
// not an input.
func (c Config) GlobalPartition(topic string, p int32) int32 {
	for i, t := range c.Inputs() {
		if t == topic {
			return int32(i)*c.InputPartitions + p
		}
	}
	return -1
}

// Info describes where a run happens, for the result's environment block.
type Info struct {
	Target        vocab.Target
	Embedded      bool   // true for the in-process engine or an embedded kfake cluster
	Brokers       string // seed brokers, when a cluster is used
	BrokerVersion string // when known
	// ReportsAborted is true when read_uncommitted readers flag records
	// of aborted transactions (Record.Aborted).
	ReportsAborted bool
	// DLQAtLeastOnce is true when the target promises each dead letter at
	// least once rather than exactly once (the engine's dlq-after-marker
	// knob), so a dead-letter record written twice is allowed.
	DLQAtLeastOnce bool
	// AcksBeforeNextPoll is true when a worker's next poll releases the
	// records of its previous poll that it has not acknowledged (Kafka's
	// explicit share consumer requires every record acknowledged before
	// the next poll), so a worker cannot hold records across polls.
	AcksBeforeNextPoll bool
	Notes              []string
}

// Target is one system under test.
type Target interface {
	// Info says what the target is; callable before Setup.
	Info() Info
	// Supports returns nil when the target can run mode m, else an error
	// wrapping ErrUnsupported whose text names the mode and the
	// alternative.
	Supports(ctx context.Context, m vocab.Mode) error
	// Setup creates the topics and group configuration of cfg. It is
	// called once per mode run with fresh topic names.
	Setup(ctx context.Context, cfg Config) error
	// NewProducer returns a non-transactional producer of input records.
	NewProducer(ctx context.Context, cfg Config, id int) (Producer, error)
	// NewWorker returns a worker of mode m with a unique id; for the
	// transactional modes it owns a transactional producer whose id is
	// cfg.TransactionalIDPrefix + id. A replacement of a crashed worker
	// reuses the id (so it fences its predecessor, as a restarted process
	// would).
	NewWorker(ctx context.Context, cfg Config, m vocab.Mode, id int) (Worker, error)
	// NewReader returns a reader of topic at the given isolation level.
	NewReader(ctx context.Context, cfg Config, topic string, readCommitted bool) (Reader, error)
	// EndOffsets returns, per partition of topic, the offset below which
	// a reader at the given isolation level can see everything there is
	// now: the last stable offset for read_committed (no transaction
	// below it is still open), the high watermark otherwise. Asked once
	// the producers and workers have stopped, it is where a reader that
	// must see every output stops (Reader.Positions).
	EndOffsets(ctx context.Context, cfg Config, topic string, readCommitted bool) (map[int32]int64, error)
	// Inspect reports the final share state of the input topic's records
	// for the verifier, or an error wrapping ErrUnsupported.
	Inspect(ctx context.Context, cfg Config) (*ShareState, error)
	// Close releases everything the target holds.
	Close() error
}

// Producer writes input records.
type Producer interface {
	// Produce writes recs and returns once they are acknowledged; it sets
	// each record's Partition and Offset. The target keeps nothing of recs
	// (nor of their keys and values) after it returns: callers reuse the
	// buffers.
	Produce(ctx context.Context, recs []*Record) error
	Close() error
}

// Worker is one consuming process of a pipeline. Its methods are called
// from one goroutine.
type Worker interface {
	// Poll acquires (share modes) or fetches (classic-eos) up to max
	// records, waiting at most until ctx is done. In implicit mode a poll
	// first accepts every record of the previous poll. The caller is done
	// with a poll's records (acked, staged or released them) and keeps
	// nothing of them before it polls again, so a target may reuse their
	// memory.
	Poll(ctx context.Context, max int) ([]*Record, error)
	// Produce writes output records; inside an open transaction they join
	// it. As with Producer.Produce, the target keeps nothing of recs after
	// it returns.
	Produce(ctx context.Context, recs []*Record) error
	// Ack acknowledges recs with type t and commits the acknowledgements
	// synchronously (explicit and deferred modes). Where the target learns
	// per record (per partition) which acknowledgements did not take
	// effect, it returns a *RefusedError naming them; no error means every
	// record's acknowledgement was answered without error.
	Ack(ctx context.Context, recs []*Record, t vocab.AckType) error
	// Renew extends the acquisition locks of recs.
	Renew(ctx context.Context, recs []*Record) error
	// Begin opens a producer transaction.
	Begin(ctx context.Context) error
	// StageAcks adds acknowledgements to the open transaction: share acks
	// (KIP-1289 SendShareAcknowledgementsToTransaction) in transactional
	// mode, the consumed offsets (SendOffsetsToTransaction) in
	// classic-eos mode. t is AckAccept or AckReject.
	StageAcks(ctx context.Context, recs []*Record, t vocab.AckType) error
	// Commit and Abort end the open transaction.
	Commit(ctx context.Context) error
	Abort(ctx context.Context) error
	// TxnInfo reports the transactional id and producer epoch in use (empty
	// and -1 outside the transactional modes).
	TxnInfo() (transactionalID string, epoch int16)
	// Crash drops the worker as a killed process would: no ack, no leave,
	// no transaction end. Its locks expire or its session times out.
	Crash()
	// Close leaves cleanly.
	Close(ctx context.Context) error
}

// Reader tails a topic.
type Reader interface {
	// Poll returns the records that became visible since the last call,
	// waiting at most until ctx is done. The caller keeps nothing of them
	// past the next Poll, so a target may reuse their memory.
	Poll(ctx context.Context) ([]*Record, error)
	// Positions returns, per partition the reader has read from, the
	// offset just past the last record or transaction marker it has
	// passed, returned or not: a reader whose position has reached
	// EndOffsets has seen everything below them.
	Positions() map[int32]int64
	Close() error
}

// MarkerReader is implemented by targets whose read_uncommitted readers can
// also return transaction markers (Record.Control), as Kafka's fetch
// returns control batches: with them a client can tell, record by record,
// which transactions committed and which aborted or are still open.
type MarkerReader interface {
	NewMarkerReader(ctx context.Context, cfg Config, topic string) (Reader, error)
}

// OpenTransaction is a transaction open on a partition.
type OpenTransaction struct {
	Partition       int32
	ProducerID      int64
	ProducerEpoch   int16
	FirstOffset     int64
	TransactionalID string // when known
}

// TransactionInspector is implemented by targets that can list the
// transactions open on a topic's partitions (the engine's introspection;
// Kafka's DescribeProducers).
type TransactionInspector interface {
	OpenTransactions(ctx context.Context, cfg Config, topic string) ([]OpenTransaction, error)
}

// ProducerIDer is implemented by workers that know their transactional
// producer's id.
type ProducerIDer interface {
	ProducerID() int64
}

// RecordState is the final share state of one source record.
type RecordState struct {
	Partition     int32
	Offset        int64
	State         vocab.RecordState
	DeliveryCount int
	// Rejected is true when the record was archived by an explicit reject.
	Rejected bool
}

// ShareState is what Inspect returns.
type ShareState struct {
	// Records holds every input record at or above each partition's
	// share-partition start offset, plus those below it that the target
	// still remembers; records below SPSO that it does not list are
	// terminal (ACKNOWLEDGED or ARCHIVED).
	Records []RecordState
	// SPSO is the share-partition start offset per input partition.
	// Partitions here are numbered across the input topics
	// (Config.GlobalPartition).
	SPSO map[int32]int64
}

// TxnResumer is implemented by targets that can finish a transaction a
// crashed worker left open, by its producer id and epoch, without fencing
// it first: what a restarted stream-processing task does with the
// transaction its last completed checkpoint recorded as pre-committed. It
// commits (commit true) or aborts it, and fails with an error wrapping
// ErrFenced when that transaction is no longer open.
type TxnResumer interface {
	ResumeTransaction(ctx context.Context, cfg Config, transactionalID string, producerID int64, epoch int16, commit bool) error
}

// FaultScope is what a target-side fault needs to know about the mode it hits:
// the run's identifiers (a broker-control command receives them in its
// environment; broker selectors read them) and a seeded choice for random
// picks.
type FaultScope struct {
	RunID string
	Mode  vocab.Mode
	// ModeRun names the mode's run: the mode, with the repeat when the
	// workload repeats it (explicit-r2).
	ModeRun string
	// Config names the mode's topics, group and transactional ids.
	Config Config
	// Workers is the number of the mode's workers (transactional ids
	// Config.TransactionalIDPrefix + 0 .. Workers-1).
	Workers int
	// IntN picks a number in [0, n) from the run's seed.
	IntN func(n int) int
}

// FaultOutcome is what a target-side fault did: the broker it hit (an id,
// "all", or "" when it hit no broker) and a description.
type FaultOutcome struct {
	Broker string
	Detail string
	// RoleBefore, RoleDuring and RoleAfter are the node ids that held the
	// role a role selector named (a coordinator, a leader, the active
	// controller) when the fault was resolved, while it ran (the node
	// down or paused) and once it had ended; "" when the selector names
	// no role or the cluster did not answer.
	RoleBefore, RoleDuring, RoleAfter string
}

// ErrFaultSkipped is wrapped by a fault the target did not apply because
// what it would act on was not there in time (the node its selector names
// stayed under an earlier fault); the error says which node and why, and
// the fault is recorded as not landed.
var ErrFaultSkipped = errors.New("fault skipped")
