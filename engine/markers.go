// This file holds the transaction coordinator's marker channels (docs/design.md
// §3.5): once a transaction's decision (PREPARE_*) is durable, Commit and
// Abort return, and its markers go to the participants asynchronously,
// retried until each applies them; COMPLETE_* is logged once all have. A
// network partition between the coordinator and a partition's leader
// (PartitionMarkers) holds that participant's markers until it heals.

package engine

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sharebench/sharebench/engine/internal/mutant"
	"github.com/sharebench/sharebench/engine/internal/sharepart"
)

// ErrConcurrentTransactions: the producer's previous transaction is still
// PREPARE_* (its markers are on their way, or a participant is cut off),
// so the call cannot start yet; retry it, as Kafka's client retries
// CONCURRENT_TRANSACTIONS. With real timers the engine waits for the
// markers up to the producer's transaction timeout first; with a manual
// clock it returns at once, and the driver fires timers (FireTimers or
// DeliverMarkers) before retrying.
var ErrConcurrentTransactions = errors.New("engine: concurrent transactions: the previous transaction is still completing")

// markerJob is a decided transaction's markers on their way: the
// participants that have not applied them yet, in the order they are
// sent (output partitions, share partitions, classic groups).
type markerJob struct {
	commit bool
	pid    int64 // the markers' producer id and epoch
	epoch  int16
	// nextPID and nextEpoch are the transactional id's producer id and
	// epoch once the transaction completes (the epoch is bumped, KIP-890);
	// the producer takes them when Commit or Abort returns.
	nextPID   int64
	nextEpoch int16
	parts     []TopicPartition
	shares    []shareKey
	groups    []string
	changed   []string // topics whose readers to wake at completion
	info      HookInfo
	done      chan struct{} // closed at COMPLETE_* (or when a coordinator reload took the job over)
}

func (j *markerJob) pending() int { return len(j.parts) + len(j.shares) + len(j.groups) }

// markerQueue lists the transactional ids whose markers are pending, each
// once, in the order they were decided, with the clock time at which the
// marker goroutine sends them. It is bounded by the number of
// transactional ids: an id has at most one transaction in PREPARE_* (its
// producer's next one waits), so each participant's channel holds at most
// one marker per transactional id. mu is a leaf lock (lockorder.go).
type markerQueue struct {
	// sending serialises DeliverMarkers calls, so one that finds the
	// queue empty returns only after a concurrent one finished what it
	// took. Taken before any transaction shard lock, never under one.
	sending sync.Mutex
	mu      sync.Mutex
	ids     []string
	// due maps each queued id to the clock time its markers are sent by
	// the marker goroutine: markerSendDelay after its transaction's
	// decision. An id decided again (its previous transaction completed)
	// takes the new time.
	due map[string]time.Duration
	// timer wakes the marker goroutine at the earliest due time (real
	// timers only; nil with a manual clock, whose driver fires timers);
	// armed says it is set.
	timer *time.Timer
	armed bool
	// busy says an id was queued since the marker goroutine last took:
	// while it is, the goroutine re-arms its timer itself (take), so
	// that producers committing back to back find it armed and never
	// set it (add).
	busy bool
	// cut holds the network partitions between the coordinator and a
	// partition's leader: markers for that partition wait until the clock
	// passes the time. cuts is len(cut), read without mu so that marker
	// delivery with no partition in force (the usual case) takes no lock
	// per participant.
	cut  map[TopicPartition]time.Duration
	cuts atomic.Int32
}

func (q *markerQueue) init(manual bool) {
	q.due = map[string]time.Duration{}
	q.cut = map[TopicPartition]time.Duration{}
	if !manual {
		q.timer = time.NewTimer(time.Hour)
		q.timer.Stop()
	}
}

// add queues id's markers, to be sent by the marker goroutine at now+delay.
// Only an add that finds the timer unarmed sets it,
// after releasing mu: setting a timer can wake another thread, and a
// producer that wakes a thread on a machine with more runnable threads
// than cores can lose its core for milliseconds (BenchmarkCTPRatio).
func (q *markerQueue) add(id string, now, delay time.Duration) {
	q.mu.Lock()
	if _, ok := q.due[id]; !ok {
		q.ids = append(q.ids, id)
	}
	q.due[id] = now + delay
	q.busy = true
	arm := q.timer != nil && !q.armed
	q.armed = q.armed || arm
	q.mu.Unlock()
	if arm {
		q.timer.Reset(delay)
	}
}

// remove drops id from the queue: its transaction completed (the producer
// sent the markers itself), so the marker goroutine has nothing to send.
func (q *markerQueue) remove(id string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if _, ok := q.due[id]; !ok {
		return
	}
	delete(q.due, id)
	q.ids = slices.DeleteFunc(q.ids, func(x string) bool { return x == id })
}

// retry re-arms the marker goroutine's timer for d from now if ids are
// queued (its wake-up could not send them).
func (q *markerQueue) retry(d time.Duration) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.armed = len(q.ids) > 0 && q.timer != nil
	if q.armed {
		q.timer.Reset(d)
	}
}

// take removes and returns the queued ids: all of them, or with dueOnly
// those whose time has come at now. With dueOnly (the marker goroutine,
// woken by its timer) it re-arms the timer for the earliest id left, or,
// with none left but an id queued since the last take, for idle from now:
// commits are flowing, and the next is likely within idle.
func (q *markerQueue) take(now time.Duration, dueOnly bool, idle time.Duration) []string {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !dueOnly {
		ids := q.ids
		q.ids = nil
		clear(q.due)
		return ids
	}
	var ids, keep []string
	next := time.Duration(math.MaxInt64)
	for _, id := range q.ids {
		if d := q.due[id]; d > now {
			keep = append(keep, id)
			next = min(next, d)
			continue
		}
		ids = append(ids, id)
		delete(q.due, id)
	}
	q.ids = keep
	if len(keep) == 0 && q.busy {
		next = now + idle
	}
	q.busy = false
	q.armed = next != math.MaxInt64 && q.timer != nil
	if q.armed {
		q.timer.Reset(next - now)
	}
	return ids
}

// cutOff reports whether markers to tp's leader cannot get through at now.
func (q *markerQueue) cutOff(tp TopicPartition, now time.Duration) bool {
	if q.cuts.Load() == 0 {
		return false
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	until, ok := q.cut[tp]
	if ok && now >= until {
		delete(q.cut, tp)
		q.cuts.Store(int32(len(q.cut)))
		return false
	}
	return ok
}

// PartitionMarkers cuts the transaction coordinator off from the leader of
// tp for d (a network partition fault): markers for tp's output partition
// and for every share partition of tp wait, and so do the transactions
// they belong to (still PREPARE_*, their producers' next transactions
// wait), until the clock passes now+d; then the markers are delivered with
// the decided outcome. Other participants are not delayed.
func (e *Engine) PartitionMarkers(tp TopicPartition, d time.Duration) error {
	if d <= 0 {
		return fmt.Errorf("%w: partition duration %v must be positive", ErrInvalidConfig, d)
	}
	if err := e.enterWrite(); err != nil {
		return err
	}
	defer e.exit()
	if _, err := e.topic(tp.Topic); err != nil {
		return err
	}
	until := e.clock.Now() + d
	e.markers.mu.Lock()
	if until > e.markers.cut[tp] {
		e.markers.cut[tp] = until
	}
	e.markers.cuts.Store(int32(len(e.markers.cut)))
	e.markers.cuts.Store(int32(len(e.markers.cut)))
	e.markers.mu.Unlock()
	return nil
}

// DeliverMarkers sends every pending marker that can get through now (the
// coordinator's marker channels) and completes the transactions whose
// participants have all applied theirs; it returns how many completed.
// FireTimers calls it; with real timers the marker goroutine sends each
// decision's markers one broker round trip (1 ms) after the decision,
// unless the producer's next call sent them first. When it returns, every
// marker decided before the call that could get through has been applied.
func (e *Engine) DeliverMarkers() int { return e.deliverMarkers(false) }

// deliverMarkers sends the pending markers that can get through now: all
// of them, or with dueOnly those whose send time (markerSendDelay after
// the decision) has come.
func (e *Engine) deliverMarkers(dueOnly bool) int {
	if e.enter() != nil {
		if dueOnly {
			// Crashed (a restart is recovering) or closed: the marker
			// goroutine's timer fired, so try again later.
			e.markers.retry(markerSendDelay)
		}
		return 0
	}
	defer e.exit()
	e.markers.sending.Lock()
	defer e.markers.sending.Unlock()
	now := e.clock.Now()
	ids := e.markers.take(now, dueOnly, markerSendDelay)
	if len(ids) == 0 {
		return 0
	}
	var op syncPoint
	n := 0
	for _, id := range ids {
		ts := e.txnShard(id)
		ts.mu.Lock()
		t := ts.mu.txns[id]
		if t == nil || t.job == nil {
			ts.mu.Unlock()
			continue
		}
		err := e.deliverLocked(&op, ts, t, now)
		switch {
		case errors.Is(err, ErrCrashed):
			ts.mu.Unlock()
			return n
		case err != nil:
			// A journal failure: the engine crashed with it.
			ts.mu.Unlock()
			return n
		}
		if t = ts.mu.txns[id]; t != nil && t.job != nil {
			e.markers.add(id, now, markerSendDelay) // a participant is cut off: retried later
		} else {
			n++
		}
		ts.mu.Unlock()
	}
	_ = e.finish(&op, nil)
	return n
}

// markerSendDelay is how long after a decision the marker goroutine sends
// that transaction's markers (and how long it waits before retrying a
// participant that is cut off): about one broker round trip, the time
// Kafka's marker channel takes to reach a participant. A producer that
// calls again sooner sends its previous transaction's markers itself
// (awaitPrevious) and they leave the queue, so at high commit rates the
// goroutine finds nothing to send and never contends with the producer
// for the transaction's and the partitions' locks. The delay counts from
// each decision, not from the goroutine's last wake-up: counted from the
// wake-up, the goroutine sent the markers of whatever transaction had
// just been decided, while its producer was polling or about to send
// them. Each wake-up wakes a thread, which on a machine with more runnable
// threads than cores can cost the producer its core, so producers set
// the timer only when it is unarmed, and while commits flow the goroutine
// keeps it armed itself (take) (BenchmarkCTPRatio,
// docs/engine-choices.md).
const markerSendDelay = time.Millisecond

// markerLoop sends each decided transaction's markers markerSendDelay
// after the decision, unless its producer sent them first, until Close.
// It exits when e.stop closes.
func (e *Engine) markerLoop() {
	defer close(e.markersDone)
	for {
		select {
		case <-e.stop:
			return
		case <-e.markers.timer.C:
		}
		e.deliverMarkers(true)
	}
}

// decideLocked turns t's decision into a marker job: the markers carry
// producer id pid and epoch markerEpoch, and the transactional id's next
// producer id and epoch are fixed now. The transaction's shard lock is
// held.
func (e *Engine) decideLocked(t *txnState, commit bool, pid int64, markerEpoch int16, info HookInfo) *markerJob {
	j := &markerJob{commit: commit, pid: pid, epoch: markerEpoch, info: info, done: make(chan struct{}),
		parts:  append([]TopicPartition(nil), t.Parts...),
		shares: append([]shareKey(nil), t.Shares...),
		groups: append([]string(nil), t.Groups...),
	}
	j.nextPID, j.nextEpoch = t.Next(e.nextPIDFunc)
	t.job = j
	e.markers.add(t.ID, e.clock.Now(), markerSendDelay)
	return j
}

// deliverLocked sends t's pending markers to every participant that is
// not cut off, each applying it (markers are idempotent), and completes
// the transaction once none is left: COMPLETE_* logged, the epoch bumped,
// the job's waiters woken. The transaction's shard lock is held; partition
// and group shard locks are taken one at a time (lockorder.go). An
// injected coordinator crash reloads the shard here (the reload completes
// the transaction); an injected engine crash returns ErrCrashed.
func (e *Engine) deliverLocked(op *syncPoint, ts *txnShard, t *txnState, now time.Duration) error {
	j := t.job
	err := e.sendPendingLocked(op, t, j, now)
	if err == nil && j.pending() == 0 {
		err = e.completeLocked(op, t, j)
	}
	if errors.Is(err, errCoordinatorCrash) {
		return e.reloadAfterCrashLocked(op, ts)
	}
	return err
}

// sendPendingLocked applies j's markers at the participants that can be
// reached, keeping the others pending.
func (e *Engine) sendPendingLocked(op *syncPoint, t *txnState, j *markerJob, now time.Duration) error {
	var err error
	hook := func() {
		j.info.Marker++
		err = e.callHook(HookTxnMarker, j.info)
	}
	parts := j.parts[:0]
	for _, tp := range j.parts {
		switch {
		case err != nil:
			parts = append(parts, tp)
			continue
		case e.markers.cutOff(tp, now):
			if keepCutMarker() {
				parts = append(parts, tp)
			}
			continue
		}
		if !outputMarkerSkipped(j.commit) {
			e.markPartition(op, tp, j.pid, j.epoch, j.commit, now)
		}
		j.changed = append(j.changed, tp.Topic)
		hook()
	}
	j.parts = parts
	shares := j.shares[:0]
	for _, k := range j.shares {
		switch {
		case err != nil:
			shares = append(shares, k)
			continue
		case e.markers.cutOff(k.tp, now):
			if keepCutMarker() {
				shares = append(shares, k)
			}
			continue
		}
		e.markShare(op, k, j.pid, j.epoch, j.commit, now)
		j.changed = append(j.changed, k.tp.Topic)
		hook()
	}
	j.shares = shares
	groups := j.groups[:0]
	for _, g := range j.groups {
		if err != nil {
			groups = append(groups, g)
			continue
		}
		e.offsetMarker(op, g, j.pid, j.commit)
		hook()
	}
	j.groups = groups
	return err
}

// completeLocked logs COMPLETE_* for t once every marker of j is applied.
func (e *Engine) completeLocked(op *syncPoint, t *txnState, j *markerJob) error {
	if !t.Complete(j.commit, j.nextPID, j.nextEpoch) {
		return fmt.Errorf("%w: completing in state %v", ErrInvalidTxnState, t.State)
	}
	if j.commit {
		e.stats.committed.Add(1)
	} else {
		e.stats.aborted.Add(1)
	}
	e.jTxnLocked(op, t, j.pid, j.epoch)
	t.Forget()
	t.job = nil
	e.markers.remove(t.ID)
	close(j.done)
	e.notifyTopics(j.changed)
	return e.callHook(HookTxnCompleted, j.info)
}

// abandonJobsLocked wakes the waiters of every pending job of ts before a
// coordinator reload replaces its transactions (the reload completes
// them). ts's lock is held.
func abandonJobsLocked(ts *txnShard) {
	for _, t := range ts.mu.txns {
		if t.job != nil {
			close(t.job.done)
			t.job = nil
		}
	}
}

// keepCutMarker reports whether a cut-off participant's marker is kept
// for a retry: always (the rule), but under the
// marker-dropped-without-retry mutant it is dropped as if delivered.
func keepCutMarker() bool {
	if mutant.On("marker-dropped-without-retry") {
		return false
	}
	return true
}

// outputMarkerSkipped is the seam of the commit-outputs-unmarked mutant:
// under it a commit marker never reaches the output partitions. The rule
// is that every participant gets its marker, so it is false.
func outputMarkerSkipped(commit bool) bool {
	return commit && mutant.On("commit-outputs-unmarked")
}

// markPartition writes a transaction marker to an output partition.
func (e *Engine) markPartition(op *syncPoint, tp TopicPartition, pid int64, epoch int16, commit bool, now time.Duration) {
	_ = e.withPartitionOp(tp, op, func(part *partition) error {
		at := part.log.HighWatermark()
		_, err := part.log.Marker(pid, epoch, commit, int64(now))
		if err == nil {
			e.jMarker(part, markerRecord{pid: pid, epoch: epoch, commit: commit, ts: int64(now)}, at)
		}
		return err
	})
}

// markShare applies a transaction marker to a share partition.
func (e *Engine) markShare(op *syncPoint, k shareKey, pid int64, epoch int16, commit bool, now time.Duration) {
	_ = e.withPartitionOp(k.tp, op, func(part *partition) error {
		if sp := part.shares[k.group]; sp != nil {
			sp.Marker(now, sharepart.ProducerID(pid), epoch, commit)
		}
		return nil
	})
}

// sortParticipantsLocked puts t's participants in the order markers are
// sent. The transaction's shard lock is held.
func sortParticipantsLocked(t *txnState) {
	t.Parts.Sort(tpCompare)
	t.Shares.Sort(func(a, b shareKey) int {
		if c := strings.Compare(a.group, b.group); c != 0 {
			return c
		}
		return tpCompare(a.tp, b.tp)
	})
	t.Groups.Sort(strings.Compare)
}
