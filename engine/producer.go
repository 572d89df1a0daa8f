// This file holds the producer handle: creating one (plain, idempotent,
// transactional, or resuming an open transaction), its identity, the
// abortable state a failed staging call leaves, and Produce.

package engine

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/sharebench/sharebench/engine/internal/mutant"
	"github.com/sharebench/sharebench/engine/internal/plog"
)

// ProducerConfig configures a producer.
type ProducerConfig struct {
	// TransactionalID makes the producer transactional; creating it fences
	// any earlier producer with the same id and aborts its open
	// transaction.
	TransactionalID string
	// Idempotent gives a non-transactional producer a producer id and
	// sequence numbers. Transactional producers are always idempotent.
	Idempotent bool
	// TransactionTimeout is transaction.timeout.ms; 0 takes the engine's
	// default (60s).
	TransactionTimeout time.Duration
}

// Producer produces records, idempotently and in transactions when
// configured. A producer is driven by one goroutine at a time.
type Producer struct {
	e   *Engine
	cfg ProducerConfig

	mu struct {
		sync.Mutex
		pid   int64
		epoch int16
		seqs  map[TopicPartition]int32
		txn   int64 // transaction sequence of the open transaction, 0 if none
		// inc is the engine incarnation (restarts) the sequences belong
		// to: an idempotent producer bumps its epoch after a restart.
		inc int64
		// abortable is the cause that put the open transaction in the
		// abortable state (a failed staging call), nil otherwise. While
		// set, Produce, staging and Commit fail; Abort clears it.
		abortable error
	}
}

// abortableLocked returns the abortable-transaction error of the open
// transaction, or nil. The producer's lock is held.
func (p *Producer) abortableLocked() error {
	if p.mu.abortable == nil {
		return nil
	}
	return fmt.Errorf("%w: %w", ErrAbortableTransaction, p.mu.abortable)
}

// commitRefusalLocked returns why the open transaction cannot commit: it
// is abortable (abortableLocked). The producer's lock is held.
func (p *Producer) commitRefusalLocked() error {
	if mutant.On("commit-after-failed-staging") {
		return nil
	}
	return p.abortableLocked()
}

// failStaging puts the open transaction in the abortable state after a
// staging call failed with err (docs/design.md §3.3: a transaction in which a
// staging call failed can only abort, as Kafka's producer after a failed
// TxnOffsetCommit). A crash or a fenced producer is not abortable: the
// producer must be replaced, and the coordinator aborts on its own. It
// returns the error the caller sees.
func (p *Producer) failStaging(err error) error {
	if err == nil || errors.Is(err, ErrCrashed) || errors.Is(err, ErrProducerFenced) || errors.Is(err, ErrAbortableTransaction) {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.mu.txn == 0 {
		return err // no open transaction: nothing to make abortable
	}
	if p.mu.abortable == nil {
		p.mu.abortable = err
	}
	return fmt.Errorf("%w: %w", ErrAbortableTransaction, err)
}

// NewProducer returns a producer. A transactional producer is initialised
// (InitProducerId): the transactional id's epoch is bumped, fencing the
// previous producer, whose open transaction is aborted. A decided
// transaction of the id (that abort, or the previous producer's last
// commit or abort) completes first: its markers are applied before
// NewProducer returns, and while a participant cannot be reached it fails
// with ErrConcurrentTransactions, to be retried, as Kafka answers
// InitProducerId with CONCURRENT_TRANSACTIONS.
func (e *Engine) NewProducer(cfg ProducerConfig) (*Producer, error) {
	if cfg.TransactionTimeout == 0 {
		cfg.TransactionTimeout = e.cfg.txnTimeout
	}
	if cfg.TransactionTimeout < 0 || cfg.TransactionTimeout > e.cfg.txnMaxTimeout {
		return nil, fmt.Errorf("%w: transaction.timeout.ms %v exceeds transaction.max.timeout.ms %v", ErrInvalidConfig, cfg.TransactionTimeout, e.cfg.txnMaxTimeout)
	}
	if err := e.enterWrite(); err != nil {
		return nil, err
	}
	defer e.exit()
	p := &Producer{e: e, cfg: cfg}
	p.mu.seqs = map[TopicPartition]int32{}
	p.mu.pid = plog.NoProducer
	p.mu.inc = e.incarnation()
	switch {
	case cfg.TransactionalID != "":
		pid, epoch, err := e.initTransactional(cfg.TransactionalID, cfg.TransactionTimeout)
		if err != nil {
			return nil, err
		}
		p.mu.pid, p.mu.epoch = pid, epoch
	case cfg.Idempotent:
		p.mu.pid = e.nextPID.Add(1)
	}
	return p, nil
}

// ProducerID returns the producer id (-1 for a plain producer).
func (p *Producer) ProducerID() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.mu.pid
}

// Epoch returns the producer's current epoch.
func (p *Producer) Epoch() int16 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.mu.epoch
}

// TransactionalID returns the transactional id ("" if none).
func (p *Producer) TransactionalID() string { return p.cfg.TransactionalID }

// TxnSeq returns the sequence number of the open transaction (1 for the
// producer id's first), or 0 when none is open.
func (p *Producer) TxnSeq() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.mu.txn
}

func (e *Engine) incarnation() int64 {
	if e.dur == nil {
		return 0
	}
	return e.dur.incarnation.Load()
}

// Produce appends records to one partition: inside the open transaction for
// a transactional producer, idempotently for an idempotent one, plainly
// otherwise. It returns the first record's offset.
func (p *Producer) Produce(topicName string, partitionID int32, recs []ProduceRecord) (int64, error) {
	e := p.e
	if err := e.enterWrite(); err != nil {
		return 0, err
	}
	defer e.exit()
	tpc, err := e.topic(topicName)
	if err != nil {
		return 0, err
	}
	tp := TopicPartition{topicName, partitionID}
	var base int64
	var op syncPoint
	appendTo := func(txn bool) error {
		return e.withPartitionOp(tp, &op, func(part *partition) error {
			seq := p.mu.seqs[tp]
			b := batchOf(recs, p.mu.pid, p.mu.epoch, seq, txn, int64(e.clock.Now()))
			var err error
			base, err = e.appendLocked(part, b)
			if err == nil {
				p.mu.seqs[tp] = seq + int32(len(recs))
			}
			return mapLogErr(err)
		})
	}
	if p.cfg.TransactionalID != "" {
		err = p.withTxn(&op, func(t *txnState, now time.Duration) error {
			if err := p.abortableLocked(); err != nil {
				return err
			}
			if !t.Ongoing() {
				return fmt.Errorf("%w: produce outside a transaction (state %v)", ErrInvalidTxnState, t.State)
			}
			// The partition must exist before it joins the transaction
			// (journaled before its records). A topic's partition count
			// only grows, and a partition is in place before the count
			// covers it, so the check takes no partition lock; the append
			// below takes it once.
			if cur, err := e.topic(topicName); err != nil || cur != tpc || partitionID < 0 || partitionID >= tpc.partitions.Load() {
				return fmt.Errorf("%w: %s", ErrUnknownTopicOrPartition, tp)
			}
			if t.AddPart(tp) {
				e.jTxnLocked(&op, t, -1, 0)
			}
			return appendTo(true)
		})
	} else {
		p.mu.Lock()
		if inc := e.incarnation(); p.mu.inc != inc && p.mu.pid != plog.NoProducer {
			// The engine restarted since this producer's last batch: a
			// batch cut short by the crash may or may not be in the log,
			// so the sequences are unknown. A new epoch resets them, as
			// a Kafka producer bumps its epoch on an unknown sequence.
			if p.mu.epoch < math.MaxInt16-1 {
				p.mu.epoch++
			}
			clear(p.mu.seqs)
		}
		p.mu.inc = e.incarnation()
		err = appendTo(false)
		p.mu.Unlock()
		err = e.finish(&op, err)
	}
	if err == nil {
		tpc.changed()
	}
	return base, err
}

func mapLogErr(err error) error {
	if errors.Is(err, plog.ErrProducerFenced) {
		return fmt.Errorf("%w: %w", ErrProducerFenced, err)
	}
	return err
}

// ResumeProducer returns a producer that continues the transaction the
// producer pid at epoch of cfg.TransactionalID has open, without
// initialising it (no epoch bump, no abort), so that it can commit or abort
// that transaction. A restarted stream-processing task uses it to finish a
// transaction its last completed checkpoint recorded as pre-committed:
// Flink's Kafka sink resumes one by its producer id and epoch, and KIP-939's
// two-phase-commit client API (keepPreparedTxn) makes that an operation of
// the client. It fails with ErrProducerFenced when that producer is no
// longer the transactional id's current one or its transaction is no
// longer open (it committed, aborted, timed out, or a newer producer fenced
// it).
func (e *Engine) ResumeProducer(cfg ProducerConfig, pid int64, epoch int16) (*Producer, error) {
	if cfg.TransactionalID == "" {
		return nil, fmt.Errorf("%w: resuming needs a transactional id", ErrInvalidConfig)
	}
	if cfg.TransactionTimeout == 0 {
		cfg.TransactionTimeout = e.cfg.txnTimeout
	}
	if err := e.enter(); err != nil {
		return nil, err
	}
	defer e.exit()
	ts := e.txnShard(cfg.TransactionalID)
	ts.mu.Lock()
	defer ts.mu.Unlock()
	t := ts.mu.txns[cfg.TransactionalID]
	if t == nil || !t.Resumable(pid, epoch, t.job != nil) {
		return nil, fmt.Errorf("%w: transactional id %q has no open transaction of producer %d epoch %d to resume", ErrProducerFenced, cfg.TransactionalID, pid, epoch)
	}
	p := &Producer{e: e, cfg: cfg}
	p.mu.seqs = map[TopicPartition]int32{}
	p.mu.pid, p.mu.epoch = pid, epoch
	p.mu.txn = t.Seq
	p.mu.inc = e.incarnation()
	return p, nil
}
