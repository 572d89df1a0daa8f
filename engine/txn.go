// This file holds the transaction coordinator (docs/design.md §3.5) around
// its pure core (internal/txncoord): InitProducerId with fencing, the
// producer's admission to its transactional id, begin, the two-phase end
// (PREPARE_*, markers to every participant, COMPLETE_*), a retried end
// adopting recovery's completion, and the timeout sweep. The core decides;
// this layer takes the shard locks, journals each state before it is
// acted on, calls the hooks and sends the markers.

package engine

import (
	"errors"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"time"

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
