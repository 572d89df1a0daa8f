// This file holds the transaction coordinator (docs/design.md §3.5) and the
// producer handle: init with fencing, begin, produce, KIP-1289's
// SendShareAcksToTransaction, SendOffsetsToTransaction, and the two-phase
// end (PREPARE_*, markers to every participant, COMPLETE_*), plus the
// timeout sweep.

package engine

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sharebench/sharebench/engine/internal/mutant"
	"github.com/sharebench/sharebench/engine/internal/plog"
	"github.com/sharebench/sharebench/engine/internal/sharepart"
	"github.com/sharebench/sharebench/engine/internal/txncoord"
)

// TxnState is a transaction's coordinator state.
type TxnState = txncoord.State

// Coordinator states.
const (
	TxnEmpty             = txncoord.Empty
	TxnOngoing           = txncoord.Ongoing
	TxnPrepareCommit     = txncoord.PrepareCommit
	TxnPrepareAbort      = txncoord.PrepareAbort
	TxnCompleteCommit    = txncoord.CompleteCommit
	TxnCompleteAbort     = txncoord.CompleteAbort
	TxnPrepareEpochFence = txncoord.PrepareEpochFence
	TxnDead              = txncoord.Dead
)

type txnShard struct {
	mu struct {
		sync.Mutex
		txns map[string]*txnState
	}
	_ [48]byte
}

type shareKey struct {
	group string
	tp    TopicPartition
}

// txnState is one transactional id's coordinator state: the pure core
// (txncoord: states, epochs, participants and every decision on them) and
// the decided transaction's markers on their way.
type txnState struct {
	txncoord.Txn[TopicPartition, shareKey]
	// job is the decided transaction's markers on their way (PREPARE_*),
	// nil otherwise (markers.go).
	job *markerJob
}

// nextPIDFunc is the producer id source the core draws from when an epoch
// bump rolls the producer id.
func (e *Engine) nextPIDFunc() int64 { return e.nextPID.Add(1) }

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

// initTransactional is InitProducerId for a transactional id.
func (e *Engine) initTransactional(id string, timeout time.Duration) (int64, int16, error) {
	var op syncPoint
	pid, epoch, err := e.initTransactionalOp(&op, id, timeout)
	return pid, epoch, e.finish(&op, err)
}

func (e *Engine) initTransactionalOp(op *syncPoint, id string, timeout time.Duration) (int64, int16, error) {
	now := e.clock.Now()
	ts := e.txnShard(id)
	ts.mu.Lock()
	defer ts.mu.Unlock()
	t := ts.mu.txns[id]
	if t == nil {
		t = &txnState{Txn: *txncoord.New[TopicPartition, shareKey](id, e.nextPID.Add(1), timeout)}
		ts.mu.txns[id] = t
		e.jTxnLocked(op, t, -1, 0)
		return t.PID, t.Epoch, nil
	}
	if t.FenceAborts() {
		// Fence the previous producer: abort its transaction (the markers
		// carry the bumped epoch).
		err := e.endTxnLocked(op, t, false, now)
		if errors.Is(err, errCoordinatorCrash) {
			// Reloaded, the coordinator completed the abort.
			if err = e.reloadAfterCrashLocked(op, ts); err == nil {
				t = ts.mu.txns[id]
			}
		}
		if err != nil {
			return 0, 0, err
		}
	}
	if t.job != nil {
		// A decided transaction (the fenced producer's, or the last one's)
		// completes before the new producer starts: its markers go out
		// now; a participant that cannot be reached makes the caller
		// retry, as Kafka answers InitProducerId with
		// CONCURRENT_TRANSACTIONS.
		if err := e.deliverLocked(op, ts, t, now); err != nil {
			return 0, 0, err
		}
		if t = ts.mu.txns[id]; t.job != nil {
			return 0, 0, fmt.Errorf("%w: transactional id %q", ErrConcurrentTransactions, id)
		}
	}
	t.Reinit(timeout, e.nextPIDFunc)
	e.stats.fenced.Add(1)
	e.jTxnLocked(op, t, -1, 0)
	return t.PID, t.Epoch, nil
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

// checkLocked validates the producer against its transactional id's state.
// Both the producer's lock and the transaction's shard lock are held.
func (p *Producer) checkLocked(t *txnState) error {
	v := txncoord.Fenced // an id never initialised has no producer
	if t != nil {
		v = t.Admit(p.mu.pid, p.mu.epoch, t.job != nil)
	}
	switch v {
	case txncoord.Admitted:
		return nil
	case txncoord.FencedTimedOut:
		p.e.stats.fenced.Add(1)
		return fmt.Errorf("%w: %w: transactional id %q epoch %d", ErrProducerFenced, ErrTransactionTimedOut, p.cfg.TransactionalID, p.mu.epoch)
	}
	p.e.stats.fenced.Add(1)
	return fmt.Errorf("%w: transactional id %q producer %d epoch %d", ErrProducerFenced, p.cfg.TransactionalID, p.mu.pid, p.mu.epoch)
}

// withTxn runs f with the producer's lock and its transaction's shard lock
// held, after validating the producer's epoch, and then (with a data
// directory) waits, holding no lock, until what f journaled into op is
// durable. op may be nil when f journals nothing.
func (p *Producer) withTxn(op *syncPoint, f func(t *txnState, now time.Duration) error) error {
	if p.cfg.TransactionalID == "" {
		return fmt.Errorf("%w: producer is not transactional", ErrInvalidTxnState)
	}
	e := p.e
	if err := e.enterWrite(); err != nil {
		return err
	}
	defer e.exit()
	if err := p.awaitPrevious(op); err != nil {
		return err
	}
	p.mu.Lock()
	ts := e.txnShard(p.cfg.TransactionalID)
	ts.mu.Lock()
	err := func() error {
		t := ts.mu.txns[p.cfg.TransactionalID]
		if t != nil && t.job != nil && t.job.nextPID == p.mu.pid && t.job.nextEpoch == p.mu.epoch {
			// Still completing (awaitPrevious gave up, or a crash).
			return fmt.Errorf("%w: transactional id %q", ErrConcurrentTransactions, p.cfg.TransactionalID)
		}
		if err := p.checkLocked(t); err != nil {
			return err
		}
		now := e.clock.Now()
		err := f(t, now)
		if errors.Is(err, errCoordinatorCrash) {
			if err = e.reloadAfterCrashLocked(op, ts); err == nil {
				err = errCoordinatorReloaded
			}
		}
		return err
	}()
	ts.mu.Unlock()
	p.mu.Unlock()
	return e.finish(op, err)
}

// awaitPrevious lets the producer's previous transaction complete before
// its next call (Kafka's CONCURRENT_TRANSACTIONS, retried by the client):
// the pending markers are sent now where they can be; if a participant is
// cut off, the call waits for the markers, up to the transaction timeout,
// with real timers, and returns ErrConcurrentTransactions at once with a
// manual clock (the driver fires timers and retries).
func (p *Producer) awaitPrevious(op *syncPoint) error {
	e := p.e
	var deadline time.Time
	for {
		p.mu.Lock()
		ts := e.txnShard(p.cfg.TransactionalID)
		ts.mu.Lock()
		t := ts.mu.txns[p.cfg.TransactionalID]
		if t == nil || t.job == nil || t.job.nextPID != p.mu.pid || t.job.nextEpoch != p.mu.epoch {
			ts.mu.Unlock()
			p.mu.Unlock()
			return nil
		}
		err := e.deliverLocked(op, ts, t, e.clock.Now())
		var done chan struct{}
		if t = ts.mu.txns[p.cfg.TransactionalID]; t != nil && t.job != nil {
			done = t.job.done
		}
		ts.mu.Unlock()
		p.mu.Unlock()
		switch {
		case err != nil:
			return err
		case done == nil:
			return nil
		case e.cfg.manual:
			return fmt.Errorf("%w: transactional id %q", ErrConcurrentTransactions, p.cfg.TransactionalID)
		}
		if deadline.IsZero() {
			deadline = time.Now().Add(p.cfg.TransactionTimeout)
		}
		wait := time.Until(deadline)
		if wait <= 0 {
			return fmt.Errorf("%w: transactional id %q", ErrConcurrentTransactions, p.cfg.TransactionalID)
		}
		timer := time.NewTimer(min(wait, e.cfg.timerInterval))
		select {
		case <-done:
		case <-timer.C:
		}
		timer.Stop()
		if e.Crashed() {
			return ErrCrashed
		}
	}
}

// adoptCompleted answers a Commit (or Abort) retried after a crash cut the
// first attempt short: if recovery completed this producer's transaction
// with that outcome (it had reached PREPARE_*), the retry succeeds and the
// producer takes the bumped epoch, as KIP-890 lets a client retry EndTxn.
func (p *Producer) adoptCompleted(commit bool) bool {
	e := p.e
	if e.dur == nil || p.cfg.TransactionalID == "" || e.enter() != nil {
		return false
	}
	defer e.exit()
	p.mu.Lock()
	defer p.mu.Unlock()
	ts := e.txnShard(p.cfg.TransactionalID)
	ts.mu.Lock()
	defer ts.mu.Unlock()
	t := ts.mu.txns[p.cfg.TransactionalID]
	if t == nil || !t.Adopts(p.mu.txn, commit, p.mu.pid, p.mu.epoch) {
		return false
	}
	p.mu.epoch, p.mu.txn = t.Epoch, 0
	p.mu.abortable = nil
	clear(p.mu.seqs)
	return true
}

func (e *Engine) incarnation() int64 {
	if e.dur == nil {
		return 0
	}
	return e.dur.incarnation.Load()
}

// Begin opens a transaction.
func (p *Producer) Begin() error {
	e := p.e
	var op syncPoint
	return p.withTxn(&op, func(t *txnState, now time.Duration) error {
		if !t.Begin(now) {
			return fmt.Errorf("%w: begin in state %v", ErrInvalidTxnState, t.State)
		}
		p.mu.txn = t.Seq
		// ONGOING is a coordinator state like any other: logged (with
		// its start, which the timeout counts from) before Begin returns.
		e.jTxnLocked(&op, t, -1, 0)
		return nil
	})
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
			// never changes, so the check takes no partition lock; the
			// append below takes it once.
			if cur, err := e.topic(topicName); err != nil || cur != tpc || partitionID < 0 || partitionID >= tpc.partitions {
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

// SendShareAcksToTransaction stages share-group acknowledgements in the open
// transaction (KIP-1289's sendShareAcknowledgementsToTransaction): each
// acknowledged record goes from ACQUIRED to TX_PENDING and resolves with the
// transaction's marker. meta fences a member that is no longer in its group
// or has a stale epoch. Only ACCEPT, REJECT and gap can be staged. Each
// partition stages all or nothing (unless Knobs.StageStopAtFirstFailure
// leaves a failed partition's earlier batches staged); failures come back
// in an *AckError, and any failure leaves the transaction abortable: every
// later Produce, staging and Commit fails with ErrAbortableTransaction and
// only Abort succeeds, so the outputs of a transaction whose acks did not
// all stage never become visible.
func (p *Producer) SendShareAcksToTransaction(acks []Acknowledgement, meta GroupMetadata) error {
	e := p.e
	var op syncPoint
	return p.failStaging(coordinatorReloaded(p.withTxn(&op, func(t *txnState, now time.Duration) error {
		if err := p.abortableLocked(); err != nil {
			return err
		}
		if !t.Ongoing() {
			return fmt.Errorf("%w: staging acknowledgements outside a transaction (state %v)", ErrInvalidTxnState, t.State)
		}
		owner, err := e.checkShareMember(meta, now)
		if err != nil {
			return err
		}
		order, batches := byPartition(acks)
		var failed map[TopicPartition]error
		var copies []deadLetters // dead-letter copies of staged REJECTs, written in the transaction
		for _, tp := range order {
			if t.AddShare(shareKey{meta.GroupID, tp}) {
				e.jTxnLocked(&op, t, -1, 0)
			}
			err := e.withPartitionOp(tp, &op, func(part *partition) error {
				sp := part.shares[meta.GroupID]
				if sp == nil {
					return fmt.Errorf("%w: group %q never acquired from %s", ErrInvalidRecordState, meta.GroupID, tp)
				}
				bs := batches[tp]
				// Staging a terminal record is rejected (docs/design.md §3.3), and
				// every offset below SPSO is terminal. sharepart.Stage, like
				// Acknowledge, skips offsets below SPSO as no-op successes:
				// a member whose lock expired while another member committed
				// the same records would then commit a second output for
				// them (an exactly-once duplicate, found by race_test.go).
				// Expire first so SPSO is current.
				sp.Expire(now)
				for _, b := range bs {
					if b.First < sp.SPSO() {
						return fmt.Errorf("%w: offset %d is below SPSO %d (terminal)", ErrInvalidRecordState, b.First, sp.SPSO())
					}
				}
				if err := sp.Stage(now, owner, sharepart.ProducerID(t.PID), t.Epoch, bs); err != nil {
					return err
				}
				if e.cfg.hook != nil {
					if err := e.cfg.hook(HookStageWrite, HookInfo{TransactionalID: t.ID, ProducerID: t.PID, Epoch: t.Epoch, Group: meta.GroupID, Topic: tp.Topic, Partition: tp.Partition}); err != nil {
						if e.injectedCrash(err) {
							return ErrCrashed
						}
						sp.UnstageFailed(now, owner, sharepart.ProducerID(t.PID), t.Epoch, bs)
						e.stats.stageFailed.Add(1)
						return fmt.Errorf("engine: staging write failed: %w", err)
					}
				}
				copies = e.stagedRejectCopiesLocked(part, meta.GroupID, sp, bs, copies)
				return nil
			})
			if errors.Is(err, ErrCrashed) {
				return err
			}
			if err != nil {
				if failed == nil {
					failed = map[TopicPartition]error{}
				}
				failed[tp] = err
			}
		}
		for _, dl := range copies {
			if err := p.produceCopiesLocked(&op, t, dl, now); err != nil {
				return err
			}
		}
		if failed != nil {
			return &AckError{Partitions: failed}
		}
		return e.callHook(HookTxnOngoing, HookInfo{TransactionalID: t.ID, ProducerID: t.PID, Epoch: t.Epoch, Group: meta.GroupID})
	})))
}

// produceCopiesLocked writes dead-letter copies in the open transaction t,
// whose participant their DLQ partition becomes, so they are committed or
// aborted with it (the safe DLQ knob). The producer's and the
// transaction's locks are held.
func (p *Producer) produceCopiesLocked(op *syncPoint, t *txnState, dl deadLetters, now time.Duration) error {
	e := p.e
	if t.AddPart(dl.tp) {
		e.jTxnLocked(op, t, -1, 0)
	}
	err := e.withPartitionOp(dl.tp, op, func(part *partition) error {
		seq := p.mu.seqs[dl.tp]
		if _, err := e.appendLocked(part, batchOf(dl.recs, p.mu.pid, p.mu.epoch, seq, true, int64(now))); err != nil {
			return mapLogErr(err)
		}
		p.mu.seqs[dl.tp] = seq + int32(len(dl.recs))
		return nil
	})
	if err != nil {
		return err
	}
	e.stats.dlqWritten.Add(int64(len(dl.recs)))
	return nil
}

// checkShareMember fences staging by a member that left or whose epoch is
// stale, and returns its owner index. Called with a transaction shard lock
// held; takes the group shard lock (lockorder.go).
func (e *Engine) checkShareMember(meta GroupMetadata, now time.Duration) (sharepart.Owner, error) {
	gs := e.groupShard(meta.GroupID)
	gs.mu.Lock()
	defer gs.mu.Unlock()
	g := gs.mu.share[meta.GroupID]
	if g == nil {
		return 0, fmt.Errorf("%w: %q", ErrUnknownGroup, meta.GroupID)
	}
	st := g.members[meta.MemberID]
	if st == nil {
		return 0, fmt.Errorf("%w: %q in group %q", ErrUnknownMember, meta.MemberID, meta.GroupID)
	}
	if memberEpochStale(st.epoch, meta.MemberEpoch) {
		return 0, fmt.Errorf("%w: member %q epoch %d, group has %d", ErrFencedMemberEpoch, meta.MemberID, meta.MemberEpoch, st.epoch)
	}
	st.lastSeen = now
	return st.owner, nil
}

// memberEpochStale reports whether a staging call at member epoch sent
// must be fenced because the group holds the member at epoch held.
func memberEpochStale(held, sent int32) bool {
	if mutant.On("stale-member-epoch-accepted") {
		return false
	}
	return held != sent
}

// SendOffsetsToTransaction adds a classic group's offsets (the next offset
// to consume, per partition) to the open transaction; they become the
// group's committed offsets only if the transaction commits.
func (p *Producer) SendOffsetsToTransaction(offsets map[TopicPartition]int64, meta ClassicGroupMetadata) error {
	e := p.e
	var op syncPoint
	return p.failStaging(coordinatorReloaded(p.withTxn(&op, func(t *txnState, now time.Duration) error {
		if err := p.abortableLocked(); err != nil {
			return err
		}
		if !t.Ongoing() {
			return fmt.Errorf("%w: sending offsets outside a transaction (state %v)", ErrInvalidTxnState, t.State)
		}
		if err := e.addPendingOffsets(t.PID, offsets, meta); err != nil {
			return err
		}
		// The participant is logged before the offsets it covers.
		if t.AddGroup(meta.GroupID) {
			e.jTxnLocked(&op, t, -1, 0)
		}
		e.jPendingOffsets(&op, meta.GroupID, t.PID, offsets)
		return e.callHook(HookTxnOngoing, HookInfo{TransactionalID: t.ID, ProducerID: t.PID, Epoch: t.Epoch, Group: meta.GroupID})
	})))
}

// Commit decides the open transaction as committed, as Kafka's EndTxn
// does. When it returns nil, PREPARE_COMMIT is logged (and durable with a
// data directory): the outcome is fixed and survives a crash, and the
// producer holds its next epoch. The commit markers to the participants
// (output partitions, share partitions, classic groups) have not
// necessarily landed: with MarkersAsync (the default) they follow
// asynchronously, and until each participant has applied its marker
// the outputs stay invisible to read_committed readers (the LSO holds at
// the transaction's first offset) and the staged records stay TX_PENDING
// (never redelivered); COMPLETE_COMMIT is logged once all have. The
// producer's next call (Begin, Produce, staging, Commit or Abort) first
// sends whatever of them is still pending, and waits while a participant
// cannot be reached (ErrConcurrentTransactions with a manual clock). With MarkersInline, Commit applies the markers and
// logs COMPLETE_COMMIT before it returns (except for a participant cut
// off by PartitionMarkers). A transaction in which a staging call failed
// cannot commit: Commit returns ErrAbortableTransaction.
func (p *Producer) Commit() error { return p.end(true) }

// Abort decides the open transaction as aborted; with none open it does
// nothing. When it returns nil, PREPARE_ABORT is logged: the outputs will
// never be visible to read_committed readers, and the staged records stay
// TX_PENDING until the abort marker reaches their share partition, which
// makes them AVAILABLE again with their delivery counts kept (ARCHIVED at
// the delivery limit). The markers follow as Commit describes.
func (p *Producer) Abort() error { return p.end(false) }

func (p *Producer) end(commit bool) error {
	e := p.e
	if p.adoptCompleted(commit) {
		return nil
	}
	var op syncPoint
	err := p.withTxn(&op, func(t *txnState, now time.Duration) error {
		if commit {
			if err := p.commitRefusalLocked(); err != nil {
				return err
			}
		}
		if !t.Ongoing() {
			if !commit {
				p.mu.abortable = nil
				return nil
			}
			return fmt.Errorf("%w: commit in state %v", ErrInvalidTxnState, t.State)
		}
		if err := e.endTxnLocked(&op, t, commit, now); err != nil {
			return err
		}
		// The decision is durable; the markers follow (markers.go). The
		// producer takes the epoch its transactional id has once they
		// are applied.
		if t.job != nil {
			p.mu.pid, p.mu.epoch = t.job.nextPID, t.job.nextEpoch
		} else {
			p.mu.pid, p.mu.epoch = t.PID, t.Epoch
		}
		p.mu.txn = 0
		p.mu.abortable = nil
		clear(p.mu.seqs)
		return nil
	})
	if errors.Is(err, errCoordinatorReloaded) {
		// The coordinator crashed after the decision; reloaded, it
		// completed the transaction. The client's retry succeeds.
		if p.adoptCompleted(commit) {
			return nil
		}
		return fmt.Errorf("%w: the coordinator crashed while ending the transaction", ErrCrashed)
	}
	return err
}

// endTxnLocked decides a transaction: PREPARE_* is logged and made
// durable before any marker, and the markers go to the participants
// asynchronously (markers.go: DeliverMarkers sends them and logs
// COMPLETE_*), so the caller returns once the decision is durable, as
// Kafka's EndTxn does. The transaction's shard lock is held. An error
// (ErrCrashed: an injected crash or a journal failure) leaves the
// transaction where the crash struck.
func (e *Engine) endTxnLocked(op *syncPoint, t *txnState, commit bool, now time.Duration) error {
	oldPID := t.PID
	// The decision is made: the markers carry the next epoch (KIP-890),
	// fencing anything the old epoch still sends.
	markerEpoch, ok := t.Prepare(commit)
	if !ok {
		return fmt.Errorf("%w: ending in state %v", ErrInvalidTxnState, t.State)
	}
	sortParticipantsLocked(t)
	e.jTxnLocked(op, t, oldPID, markerEpoch)
	if err := e.waitLocked(op); err != nil {
		return err
	}
	markers := len(t.Parts) + len(t.Shares) + len(t.Groups)
	info := &HookInfo{TransactionalID: t.ID, ProducerID: oldPID, Epoch: markerEpoch, Commit: commit, Markers: markers}
	if err := e.callHook(HookTxnPrepared, *info); err != nil {
		return err
	}
	// A crash from here on completes the transaction again from
	// PREPARE_*, with the same outcome and offsets.
	j := e.decideLocked(t, commit, oldPID, markerEpoch, *info)
	if e.cfg.markers != MarkersInline {
		return nil
	}
	if err := e.sendPendingLocked(op, t, j, now); err != nil || j.pending() > 0 {
		return err
	}
	return e.completeLocked(op, t, j)
}

// finishTxnLocked sends the markers of a decided transaction (its
// participants in t) and completes it: COMPLETE_*, the epoch bumped.
// Recovery calls it for a transaction found in PREPARE_* (info nil: no
// hooks).
func (e *Engine) finishTxnLocked(op *syncPoint, t *txnState, commit bool, markerPID int64, markerEpoch int16, now time.Duration, info *HookInfo) error {
	changed, err := e.sendMarkersLocked(op, t, commit, markerPID, markerEpoch, now, info)
	if err != nil {
		return err
	}
	if pid, epoch := t.Next(e.nextPIDFunc); !t.Complete(commit, pid, epoch) {
		return fmt.Errorf("%w: completing in state %v", ErrInvalidTxnState, t.State)
	}
	if commit {
		e.stats.committed.Add(1)
	} else {
		e.stats.aborted.Add(1)
	}
	e.jTxnLocked(op, t, markerPID, markerEpoch)
	if info != nil {
		if err := e.callHook(HookTxnCompleted, *info); err != nil {
			return err
		}
	}
	t.Forget()
	e.notifyTopics(changed)
	return nil
}

// sendMarkersLocked writes the markers of producer pid at epoch to every
// participant of t, in order: output partitions, share partitions,
// classic groups. Markers are idempotent. With info it calls the marker
// hook after each.
func (e *Engine) sendMarkersLocked(op *syncPoint, t *txnState, commit bool, pid int64, epoch int16, now time.Duration, info *HookInfo) ([]string, error) {
	var changed []string
	markerHook := func() error {
		if info == nil {
			return nil
		}
		info.Marker++
		return e.callHook(HookTxnMarker, *info)
	}
	for _, tp := range t.Parts {
		if outputMarkerSkipped(commit) {
			continue
		}
		e.markPartition(op, tp, pid, epoch, commit, now)
		changed = append(changed, tp.Topic)
		if err := markerHook(); err != nil {
			return changed, err
		}
	}
	for _, k := range t.Shares {
		e.markShare(op, k, pid, epoch, commit, now)
		changed = append(changed, k.tp.Topic)
		if err := markerHook(); err != nil {
			return changed, err
		}
	}
	for _, g := range t.Groups {
		e.offsetMarker(op, g, pid, commit)
		if err := markerHook(); err != nil {
			return changed, err
		}
	}
	return changed, nil
}

// callHook calls the hook at pt. Only an injected crash (a returned error
// wrapping ErrInjectedCrash, with a data directory) counts: the engine
// crashes there and callHook returns ErrCrashed; other errors are ignored
// (the in-memory engine has nothing to fail at these points).
func (e *Engine) callHook(pt HookPoint, info HookInfo) error {
	if e.cfg.hook == nil {
		return nil
	}
	err := e.cfg.hook(pt, info)
	if e.injectedCrash(err) {
		return ErrCrashed
	}
	if err != nil && e.dur != nil && errors.Is(err, ErrInjectedCoordinatorCrash) && pt != HookStageWrite {
		if ferr := e.jrn().g.Flush(); ferr != nil {
			return e.journalFailed(ferr)
		}
		return errCoordinatorCrash
	}
	return nil
}

// injectedCrash crashes the engine, after making durable what was
// appended so far, when err is an injected crash.
func (e *Engine) injectedCrash(err error) bool {
	if err == nil || e.dur == nil || !errors.Is(err, ErrInjectedCrash) {
		return false
	}
	e.crashNow(true)
	return true
}

func tpLess(a, b TopicPartition) bool { return tpCompare(a, b) < 0 }

// tpCompare orders partitions by topic, then partition number.
func tpCompare(a, b TopicPartition) int {
	if c := strings.Compare(a.Topic, b.Topic); c != 0 {
		return c
	}
	return cmp.Compare(a.Partition, b.Partition)
}

// lastSweep is when the abort sweep last ran; it runs at most once per
// abort sweep interval.
type sweepClock struct{ last atomic.Int64 }

// sweepTransactions aborts every ONGOING transaction older than its timeout
// and bumps its epoch, fencing the stalled producer.
func (e *Engine) sweepTransactions(now time.Duration) {
	last := time.Duration(e.sweep.last.Load())
	if now-last < e.cfg.abortSweepInterval {
		return
	}
	if !e.sweep.last.CompareAndSwap(int64(last), int64(now)) {
		return
	}
	e.AbortTimedOutTransactions()
}

// AbortTimedOutTransactions runs the abort sweep now, whatever the sweep
// interval, and returns how many ONGOING transactions that outlived their
// timeout it decided to abort (PREPARE_ABORT logged, their producers
// fenced). As with Abort, their staged records stay TX_PENDING, and their
// outputs hold the LSO, until the abort markers land: with MarkersAsync
// that is after FireTimers or DeliverMarkers (manual clock) or the marker
// goroutine (real timers), not when this returns.
func (e *Engine) AbortTimedOutTransactions() int {
	if e.enter() != nil {
		return 0
	}
	defer e.exit()
	now := e.clock.Now()
	n := 0
	var op syncPoint
	defer func() { _ = e.finish(&op, nil) }()
	for i := range e.txns {
		ts := &e.txns[i]
		ts.mu.Lock()
		ids := make([]string, 0, len(ts.mu.txns))
		for id := range ts.mu.txns {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		for _, id := range ids {
			t := ts.mu.txns[id]
			if t.TimedOut(now) {
				t.MarkTimedOut()
				err := e.endTxnLocked(&op, t, false, now)
				if errors.Is(err, errCoordinatorCrash) {
					// Reloaded, the coordinator completed the abort; the
					// shard's other transactions wait for the next sweep.
					if err = e.reloadAfterCrashLocked(&op, ts); err == nil {
						e.stats.timedOut.Add(1)
						n++
						break
					}
				}
				if err != nil {
					ts.mu.Unlock()
					return n
				}
				e.stats.timedOut.Add(1)
				n++
			}
		}
		ts.mu.Unlock()
	}
	return n
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
