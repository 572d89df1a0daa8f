// This file holds the transaction coordinator (DESIGN §3.5) and the
// producer handle: init with fencing, begin, produce, KIP-1289's
// SendShareAcksToTransaction, SendOffsetsToTransaction, and the two-phase
// end (PREPARE_*, markers to every participant, COMPLETE_*), plus the
// timeout sweep.

package engine

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sharebench/sharebench/engine/internal/plog"
	"github.com/sharebench/sharebench/engine/internal/sharepart"
)

// TxnState is a transaction's coordinator state.
type TxnState int8

// Coordinator states.
const (
	TxnEmpty TxnState = iota
	TxnOngoing
	TxnPrepareCommit
	TxnPrepareAbort
	TxnCompleteCommit
	TxnCompleteAbort
	TxnPrepareEpochFence
	TxnDead
)

func (s TxnState) String() string {
	switch s {
	case TxnEmpty:
		return "EMPTY"
	case TxnOngoing:
		return "ONGOING"
	case TxnPrepareCommit:
		return "PREPARE_COMMIT"
	case TxnPrepareAbort:
		return "PREPARE_ABORT"
	case TxnCompleteCommit:
		return "COMPLETE_COMMIT"
	case TxnCompleteAbort:
		return "COMPLETE_ABORT"
	case TxnPrepareEpochFence:
		return "PREPARE_EPOCH_FENCE"
	case TxnDead:
		return "DEAD"
	}
	return fmt.Sprintf("TxnState(%d)", int8(s))
}

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

type txnState struct {
	id      string
	pid     int64
	epoch   int16
	state   TxnState
	timeout time.Duration
	started time.Duration
	seq     int64 // transactions begun under this id

	parts  []TopicPartition
	shares []shareKey
	groups []string
	// timedOutEpoch is the epoch whose transaction the sweep aborted, so
	// that producer's next call can say why it is fenced.
	timedOutEpoch int16
}

func (t *txnState) addPart(tp TopicPartition) {
	for _, x := range t.parts {
		if x == tp {
			return
		}
	}
	t.parts = append(t.parts, tp)
}

func (t *txnState) addShare(k shareKey) {
	for _, x := range t.shares {
		if x == k {
			return
		}
	}
	t.shares = append(t.shares, k)
}

func (t *txnState) addGroup(g string) {
	for _, x := range t.groups {
		if x == g {
			return
		}
	}
	t.groups = append(t.groups, g)
}

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
	}
}

// NewProducer returns a producer. A transactional producer is initialised
// (InitProducerId): the transactional id's epoch is bumped, fencing the
// previous producer, whose open transaction is aborted.
func (e *Engine) NewProducer(cfg ProducerConfig) (*Producer, error) {
	if cfg.TransactionTimeout == 0 {
		cfg.TransactionTimeout = e.cfg.txnTimeout
	}
	if cfg.TransactionTimeout < 0 || cfg.TransactionTimeout > e.cfg.txnMaxTimeout {
		return nil, fmt.Errorf("%w: transaction.timeout.ms %v exceeds transaction.max.timeout.ms %v", ErrInvalidConfig, cfg.TransactionTimeout, e.cfg.txnMaxTimeout)
	}
	p := &Producer{e: e, cfg: cfg}
	p.mu.seqs = map[TopicPartition]int32{}
	p.mu.pid = plog.NoProducer
	switch {
	case cfg.TransactionalID != "":
		pid, epoch := e.initTransactional(cfg.TransactionalID, cfg.TransactionTimeout)
		p.mu.pid, p.mu.epoch = pid, epoch
	case cfg.Idempotent:
		p.mu.pid = e.nextPID.Add(1)
	}
	return p, nil
}

// initTransactional is InitProducerId for a transactional id.
func (e *Engine) initTransactional(id string, timeout time.Duration) (int64, int16) {
	now := e.clock.Now()
	ts := e.txnShard(id)
	ts.mu.Lock()
	defer ts.mu.Unlock()
	t := ts.mu.txns[id]
	if t == nil {
		t = &txnState{id: id, pid: e.nextPID.Add(1), state: TxnEmpty, timeout: timeout, timedOutEpoch: -1}
		ts.mu.txns[id] = t
		return t.pid, t.epoch
	}
	if t.state == TxnOngoing {
		// Fence the previous producer: abort its transaction (the markers
		// carry the bumped epoch).
		e.endTxnLocked(t, false, now)
	}
	e.bumpEpochLocked(t)
	t.state = TxnEmpty
	t.timeout = timeout
	e.stats.fenced.Add(1)
	return t.pid, t.epoch
}

// bumpEpochLocked increments the epoch, rolling to a new producer id when
// the epoch would overflow (as Kafka does).
func (e *Engine) bumpEpochLocked(t *txnState) {
	if t.epoch >= math.MaxInt16-1 {
		t.pid, t.epoch = e.nextPID.Add(1), 0
		return
	}
	t.epoch++
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
	if t == nil || t.pid != p.mu.pid || t.epoch != p.mu.epoch {
		p.e.stats.fenced.Add(1)
		if t != nil && t.pid == p.mu.pid && t.timedOutEpoch == p.mu.epoch {
			return fmt.Errorf("%w: %w: transactional id %q epoch %d", ErrProducerFenced, ErrTransactionTimedOut, p.cfg.TransactionalID, p.mu.epoch)
		}
		return fmt.Errorf("%w: transactional id %q producer %d epoch %d", ErrProducerFenced, p.cfg.TransactionalID, p.mu.pid, p.mu.epoch)
	}
	return nil
}

// withTxn runs f with the producer's lock and its transaction's shard lock
// held, after validating the producer's epoch.
func (p *Producer) withTxn(f func(t *txnState, now time.Duration) error) error {
	if p.cfg.TransactionalID == "" {
		return fmt.Errorf("%w: producer is not transactional", ErrInvalidTxnState)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	ts := p.e.txnShard(p.cfg.TransactionalID)
	ts.mu.Lock()
	defer ts.mu.Unlock()
	t := ts.mu.txns[p.cfg.TransactionalID]
	if err := p.checkLocked(t); err != nil {
		return err
	}
	return f(t, p.e.clock.Now())
}

// Begin opens a transaction.
func (p *Producer) Begin() error {
	return p.withTxn(func(t *txnState, now time.Duration) error {
		switch t.state {
		case TxnEmpty, TxnCompleteCommit, TxnCompleteAbort:
		default:
			return fmt.Errorf("%w: begin in state %v", ErrInvalidTxnState, t.state)
		}
		t.state, t.started = TxnOngoing, now
		t.seq++
		p.mu.txn = t.seq
		return nil
	})
}

// Produce appends records to one partition: inside the open transaction for
// a transactional producer, idempotently for an idempotent one, plainly
// otherwise. It returns the first record's offset.
func (p *Producer) Produce(topicName string, partitionID int32, recs []ProduceRecord) (int64, error) {
	e := p.e
	tpc, err := e.topic(topicName)
	if err != nil {
		return 0, err
	}
	tp := TopicPartition{topicName, partitionID}
	var base int64
	appendTo := func(txn bool) error {
		return e.withPartition(tp, func(part *partition) error {
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
		err = p.withTxn(func(t *txnState, now time.Duration) error {
			if t.state != TxnOngoing {
				return fmt.Errorf("%w: produce outside a transaction (state %v)", ErrInvalidTxnState, t.state)
			}
			if _, _, _, err := e.Offsets(tp); err != nil {
				return err
			}
			t.addPart(tp)
			return appendTo(true)
		})
	} else {
		p.mu.Lock()
		err = appendTo(false)
		p.mu.Unlock()
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
// partition stages all or nothing; failures come back in an *AckError and
// the caller should abort.
func (p *Producer) SendShareAcksToTransaction(acks []Acknowledgement, meta GroupMetadata) error {
	e := p.e
	return p.withTxn(func(t *txnState, now time.Duration) error {
		if t.state != TxnOngoing {
			return fmt.Errorf("%w: staging acknowledgements outside a transaction (state %v)", ErrInvalidTxnState, t.state)
		}
		owner, err := e.checkShareMember(meta, now)
		if err != nil {
			return err
		}
		order, batches := byPartition(acks)
		var failed map[TopicPartition]error
		for _, tp := range order {
			t.addShare(shareKey{meta.GroupID, tp})
			err := e.withPartition(tp, func(part *partition) error {
				sp := part.shares[meta.GroupID]
				if sp == nil {
					return fmt.Errorf("%w: group %q never acquired from %s", ErrInvalidRecordState, meta.GroupID, tp)
				}
				bs := batches[tp]
				if err := sp.Stage(now, owner, sharepart.ProducerID(t.pid), t.epoch, bs); err != nil {
					return err
				}
				if e.cfg.hook != nil {
					if err := e.cfg.hook(HookStageWrite, HookInfo{TransactionalID: t.id, ProducerID: t.pid, Epoch: t.epoch, Group: meta.GroupID, Topic: tp.Topic, Partition: tp.Partition}); err != nil {
						sp.UnstageFailed(now, owner, sharepart.ProducerID(t.pid), t.epoch, bs)
						e.stats.stageFailed.Add(1)
						return fmt.Errorf("engine: staging write failed: %w", err)
					}
				}
				return nil
			})
			if err != nil {
				if failed == nil {
					failed = map[TopicPartition]error{}
				}
				failed[tp] = err
			}
		}
		if failed != nil {
			return &AckError{Partitions: failed}
		}
		return nil
	})
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
	if st.epoch != meta.MemberEpoch {
		return 0, fmt.Errorf("%w: member %q epoch %d, group has %d", ErrFencedMemberEpoch, meta.MemberID, meta.MemberEpoch, st.epoch)
	}
	st.lastSeen = now
	return st.owner, nil
}

// SendOffsetsToTransaction adds a classic group's offsets (the next offset
// to consume, per partition) to the open transaction; they become the
// group's committed offsets only if the transaction commits.
func (p *Producer) SendOffsetsToTransaction(offsets map[TopicPartition]int64, meta ClassicGroupMetadata) error {
	e := p.e
	return p.withTxn(func(t *txnState, now time.Duration) error {
		if t.state != TxnOngoing {
			return fmt.Errorf("%w: sending offsets outside a transaction (state %v)", ErrInvalidTxnState, t.state)
		}
		if err := e.addPendingOffsets(t.pid, offsets, meta); err != nil {
			return err
		}
		t.addGroup(meta.GroupID)
		return nil
	})
}

// Commit commits the open transaction: PREPARE_COMMIT, a commit marker to
// every participant (output partitions, share partitions, classic groups),
// COMPLETE_COMMIT. The epoch is bumped as the transaction ends.
func (p *Producer) Commit() error { return p.end(true) }

// Abort aborts the open transaction; with none open it does nothing.
func (p *Producer) Abort() error { return p.end(false) }

func (p *Producer) end(commit bool) error {
	e := p.e
	return p.withTxn(func(t *txnState, now time.Duration) error {
		if t.state != TxnOngoing {
			if !commit {
				return nil
			}
			return fmt.Errorf("%w: commit in state %v", ErrInvalidTxnState, t.state)
		}
		e.endTxnLocked(t, commit, now)
		p.mu.pid, p.mu.epoch, p.mu.txn = t.pid, t.epoch, 0
		clear(p.mu.seqs)
		return nil
	})
}

// endTxnLocked runs the two phases of ending a transaction. The
// transaction's shard lock is held; partition and group shard locks are
// taken one at a time (lockorder.go).
func (e *Engine) endTxnLocked(t *txnState, commit bool, now time.Duration) {
	if commit {
		t.state = TxnPrepareCommit
	} else {
		t.state = TxnPrepareAbort
	}
	oldPID := t.pid
	// The decision is made: bump the epoch now (KIP-890), so the markers
	// carry the new epoch and fence anything the old epoch still sends.
	markerEpoch := t.epoch + 1
	if t.epoch >= math.MaxInt16-1 {
		markerEpoch = t.epoch
	}
	markers := len(t.parts) + len(t.shares) + len(t.groups)
	info := HookInfo{TransactionalID: t.id, ProducerID: oldPID, Epoch: markerEpoch, Commit: commit, Markers: markers}
	e.callHook(HookTxnPrepared, info)

	sort.Slice(t.parts, func(i, j int) bool { return tpLess(t.parts[i], t.parts[j]) })
	sort.Slice(t.shares, func(i, j int) bool {
		if t.shares[i].group != t.shares[j].group {
			return t.shares[i].group < t.shares[j].group
		}
		return tpLess(t.shares[i].tp, t.shares[j].tp)
	})
	sort.Strings(t.groups)
	var changed []string
	for _, tp := range t.parts {
		_ = e.withPartition(tp, func(part *partition) error {
			_, err := part.log.Marker(oldPID, markerEpoch, commit, int64(now))
			return err
		})
		changed = append(changed, tp.Topic)
		info.Marker++
		e.callHook(HookTxnMarker, info)
	}
	for _, k := range t.shares {
		_ = e.withPartition(k.tp, func(part *partition) error {
			if sp := part.shares[k.group]; sp != nil {
				sp.Marker(now, sharepart.ProducerID(oldPID), markerEpoch, commit)
			}
			return nil
		})
		changed = append(changed, k.tp.Topic)
		info.Marker++
		e.callHook(HookTxnMarker, info)
	}
	for _, g := range t.groups {
		e.offsetMarker(g, oldPID, commit)
		info.Marker++
		e.callHook(HookTxnMarker, info)
	}
	if commit {
		t.state = TxnCompleteCommit
		e.stats.committed.Add(1)
	} else {
		t.state = TxnCompleteAbort
		e.stats.aborted.Add(1)
	}
	e.callHook(HookTxnCompleted, info)
	t.parts, t.shares, t.groups = t.parts[:0], t.shares[:0], t.groups[:0]
	e.bumpEpochLocked(t)
	e.notifyTopics(changed)
}

func (e *Engine) callHook(pt HookPoint, info HookInfo) {
	if e.cfg.hook != nil {
		_ = e.cfg.hook(pt, info)
	}
}

func tpLess(a, b TopicPartition) bool {
	if a.Topic != b.Topic {
		return a.Topic < b.Topic
	}
	return a.Partition < b.Partition
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
// interval, and returns how many transactions it aborted.
func (e *Engine) AbortTimedOutTransactions() int {
	now := e.clock.Now()
	n := 0
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
			if t.state == TxnOngoing && now-t.started >= t.timeout {
				epoch := t.epoch
				e.endTxnLocked(t, false, now)
				t.timedOutEpoch = epoch
				e.stats.timedOut.Add(1)
				n++
			}
		}
		ts.mu.Unlock()
	}
	return n
}
