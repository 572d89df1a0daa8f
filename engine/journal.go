// This file holds the journal: the data directory's logs (one wal.Log per
// stream), the records the shell appends while it holds the lock that
// serialises the change, the sync point an operation waits on once its
// locks are released, and compaction of the transaction, group and
// share-state logs.
//
// Streams and their flush priority (a flush leader writes lower first, so
// a crash in the middle of a flush never leaves a record on disk without
// the records it depends on):
//
//	meta/       topics: created, deleted, grown          priority 0
//	txn/        transaction coordinator states           priority 1
//	groups/     group configs and deletions, offsets     priority 2
//	partitions/ one log per partition: batches, markers  priority 3
//	share/      share-state snapshots and deltas         priority 4
//	history/    final states of records below SPSO       priority 5
//
// A participant's record in the transaction log is appended before the
// data it covers (a batch, a staged delta, pending offsets), so a durable
// batch of an open transaction always has a coordinator that will send it
// a marker.

package engine

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/sharebench/sharebench/engine/internal/plog"
	"github.com/sharebench/sharebench/engine/internal/sharepart"
	"github.com/sharebench/sharebench/engine/internal/wal"
)

const (
	prioMeta = iota
	prioTxn
	prioGroups
	prioPartition
	prioShare
	prioHistory
)

// compactAfter is how many segments a compacted log may hold before the
// oldest are rewritten and deleted.
const compactAfter = 3

type journal struct {
	dir           string
	g             *wal.Group
	meta, txn     *wal.Log
	groups, share *wal.Log
	history       *wal.Log
	snapshotEvery int

	// kick wakes the compactor when a compacted log starts a segment.
	kick chan struct{}
	stop chan struct{}
	done chan struct{}
	seen [3]atomic.Uint64 // txn, groups, share: newest segment seen
}

// shareJournal is the journaling state of one share partition, guarded by
// its data shard's lock.
type shareJournal struct {
	deltas  int    // deltas written since the last snapshot
	snapSeg uint64 // segment of the last snapshot
	d       sharepart.Delta
	s       sharepart.Snapshot
}

var encPool = sync.Pool{New: func() any { return &enc{b: make([]byte, 0, 512)} }}

func partitionDir(root string, topicID uint64, part int32) string {
	return filepath.Join(root, "partitions", fmt.Sprintf("%06d-%d", topicID, part))
}

// append encodes one record and appends it to l. It does no I/O.
func (j *journal) append(l *wal.Log, base uint64, f func(*enc)) (wal.Pos, error) {
	e := encPool.Get().(*enc)
	e.b = e.b[:0]
	f(e)
	pos, err := j.g.Append(l, e.b, base)
	if cap(e.b) <= 1<<20 {
		encPool.Put(e)
	}
	if err == nil {
		var i int
		switch l {
		case j.txn:
			i = 0
		case j.groups:
			i = 1
		case j.share:
			i = 2
		default:
			return pos, nil
		}
		if pos.Seg > j.seen[i].Load() {
			j.seen[i].Store(pos.Seg)
			select {
			case j.kick <- struct{}{}:
			default:
			}
		}
	}
	return pos, err
}

// add appends like append and notes the ticket (or the error) in op.
func (j *journal) add(op *syncPoint, l *wal.Log, base uint64, f func(*enc)) wal.Pos {
	pos, err := j.append(l, base, f)
	op.note(j, pos, err)
	return pos
}

// syncPoint collects the tickets of one operation's appends. The operation
// waits on it once its locks are released (finish), except the decision of
// a transaction, which must be durable before any marker (waitLocked).
type syncPoint struct {
	j   *journal
	t   wal.Ticket
	err error
}

func (s *syncPoint) note(j *journal, pos wal.Pos, err error) {
	if s == nil {
		return
	}
	if err != nil {
		if s.err == nil {
			s.err = err
		}
		return
	}
	s.j = j
	if pos.Ticket > s.t {
		s.t = pos.Ticket
	}
}

// jrn returns the current journal, nil without a data directory.
func (e *Engine) jrn() *journal {
	if e.dur == nil {
		return nil
	}
	return e.dur.j.Load()
}

// finish waits until op's appends are durable (per the flush policy) and
// returns err, or the journal's failure when err is nil. No lock may be
// held but a member or producer handle's own.
func (e *Engine) finish(op *syncPoint, err error) error {
	if werr := e.waitLocked(op); werr != nil && err == nil {
		err = werr
	}
	return err
}

// waitLocked waits for op's appends; the caller may hold locks (the wal
// takes none of the engine's).
func (e *Engine) waitLocked(op *syncPoint) error {
	if e.dur == nil || op == nil {
		return nil
	}
	if op.err != nil {
		return e.journalFailed(op.err)
	}
	if op.t == 0 {
		return nil
	}
	if err := op.j.g.Wait(op.t); err != nil {
		return e.journalFailed(err)
	}
	return nil
}

// --- records appended by the shell ---

func (e *Engine) jTopic(op *syncPoint, r *topicRecord) {
	if j := e.jrn(); j != nil {
		j.add(op, j.meta, 0, r.encode)
	}
}

func (e *Engine) jTopicDelete(op *syncPoint, id uint64) {
	if j := e.jrn(); j != nil {
		j.add(op, j.meta, 0, func(en *enc) {
			en.u8(recTopicDelete)
			en.uvar(id)
		})
	}
}

func (e *Engine) jTopicPartitions(op *syncPoint, id uint64, n int32) {
	if j := e.jrn(); j != nil {
		j.add(op, j.meta, 0, func(en *enc) {
			en.u8(recTopicPartitions)
			en.uvar(id)
			en.svar(int64(n))
		})
	}
}

func (e *Engine) jTopicConfigs(op *syncPoint, id uint64, configs map[string]string) {
	if j := e.jrn(); j != nil {
		j.add(op, j.meta, 0, func(en *enc) {
			en.u8(recTopicConfigs)
			en.uvar(id)
			encodeTopicConfigs(en, configs)
		})
	}
}

// jShareDrop records that group's share partition of tp is gone, in the
// share log and the history log: their replay forgets what came before,
// so a share partition the group meets again starts afresh.
func (e *Engine) jShareDrop(op *syncPoint, group string, tp TopicPartition) {
	if j := e.jrn(); j != nil {
		j.add(op, j.share, 0, func(en *enc) {
			en.u8(recShareDrop)
			en.str(group)
			en.tp(tp)
		})
		j.add(op, j.history, 0, func(en *enc) {
			en.u8(recHistoryDrop)
			en.str(group)
			en.tp(tp)
		})
	}
}

// jGroupDelete records that a share or classic group is gone.
func (e *Engine) jGroupDelete(op *syncPoint, group string) {
	if j := e.jrn(); j != nil {
		j.add(op, j.groups, 0, func(en *enc) {
			en.u8(recGroupDelete)
			en.str(group)
		})
	}
}

func (e *Engine) jShareGroup(op *syncPoint, group string, cfg GroupConfig) {
	if j := e.jrn(); j != nil {
		j.add(op, j.groups, 0, func(en *enc) { encodeShareGroup(en, group, cfg) })
	}
}

func (e *Engine) jClassicState(op *syncPoint, g *classicGroup) {
	if j := e.jrn(); j != nil {
		j.add(op, j.groups, 0, func(en *enc) { encodeClassicState(en, g) })
	}
}

func (e *Engine) jPendingOffsets(op *syncPoint, group string, pid int64, offsets map[TopicPartition]int64) {
	if j := e.jrn(); j != nil {
		j.add(op, j.groups, 0, func(en *enc) {
			en.u8(recPendingOffset)
			en.str(group)
			en.svar(pid)
			encodeOffsets(en, offsets)
		})
	}
}

func (e *Engine) jOffsetMarker(op *syncPoint, group string, pid int64, commit bool) {
	if j := e.jrn(); j != nil {
		j.add(op, j.groups, 0, func(en *enc) {
			en.u8(recOffsetMarker)
			en.str(group)
			en.svar(pid)
			en.boolean(commit)
		})
	}
}

// jTxnLocked appends t's full state; markerPID and markerEpoch name the
// markers of a deciding or just-completed transaction. The transaction's
// shard lock is held.
func (e *Engine) jTxnLocked(op *syncPoint, t *txnState, markerPID int64, markerEpoch int16) {
	j := e.jrn()
	if j == nil {
		return
	}
	r := txnRecord{id: t.ID, pid: t.PID, epoch: t.Epoch, state: t.State, timeout: t.Timeout, started: t.Started,
		seq: t.Seq, timedOutEpoch: t.TimedOutEpoch, markerPID: markerPID, markerEpoch: markerEpoch,
		parts: t.Parts, shares: t.Shares, groups: t.Groups}
	j.add(op, j.txn, 0, r.encode)
}

// jBatch appends a batch appended at base. The data shard lock is held.
func (e *Engine) jBatch(p *partition, b *plog.Batch, base int64) {
	j := e.jrn()
	if j == nil {
		return
	}
	pos := j.add(p.op, p.wal, uint64(base), func(en *enc) {
		encodeBatch(en, b.ProducerID, b.Epoch, b.BaseSequence, b.Transactional, b.Timestamp, b.Keys, b.Values, b.Headers)
	})
	e.pendLocked(p, pos)
}

// pendLocked holds the high watermark below what the append at pos added
// to the log until it is durable (first dropping what became durable, so
// the list stays short on a partition nobody reads).
func (e *Engine) pendLocked(p *partition, pos wal.Pos) {
	e.hwLocked(p)
	if pos.Ticket != 0 {
		p.pend = append(p.pend, pendingEnd{pos.Ticket, p.log.HighWatermark()})
	}
}

// jMarker appends a marker written at offset at (also one that found no
// open transaction: it still raises the partition's epoch for the
// producer). A segment's base is the offset of its first record, so
// recovery rebuilds a log whose oldest segments were deleted at the right
// offsets.
func (e *Engine) jMarker(p *partition, r markerRecord, at int64) {
	j := e.jrn()
	if j == nil {
		return
	}
	e.pendLocked(p, j.add(p.op, p.wal, uint64(at), r.encode))
}

// jLogStart appends the partition's new log start offset and deletes the
// segments wholly below it.
func (e *Engine) jLogStart(p *partition) {
	j := e.jrn()
	if j == nil {
		return
	}
	start := p.log.StartOffset()
	j.add(p.op, p.wal, uint64(p.log.HighWatermark()), func(en *enc) {
		en.u8(recLogStart)
		en.svar(start)
	})
	if err := p.wal.DeleteBelowBase(uint64(start)); err != nil {
		p.op.note(j, wal.Pos{}, err)
	}
}

// journalSharesLocked appends what changed durably in p's share
// partitions during the operation: a snapshot for a new one or after
// snapshotEvery deltas, a delta otherwise, and history when kept. The data
// shard lock is held; withPartitionOp calls it after every operation.
func (e *Engine) journalSharesLocked(p *partition) {
	j := e.jrn()
	if j == nil {
		return
	}
	for _, g := range p.groups {
		sp := p.shares[g]
		sj := p.sj[g]
		fresh := sj == nil
		if fresh {
			sj = &shareJournal{}
			p.sj[g] = sj
		}
		changed := sp.TakeDelta(&sj.d)
		switch {
		case fresh || changed && sj.deltas+1 >= j.snapshotEvery:
			e.jSnapshotLocked(j, p.op, p, g, sp, sj)
		case changed:
			sj.deltas++
			j.add(p.op, j.share, 0, func(en *enc) { encodeDelta(en, g, p.tp, &sj.d) })
		}
		if changed && len(sj.d.History) > 0 {
			j.add(p.op, j.history, 0, func(en *enc) { encodeHistory(en, g, p.tp, sj.d.History) })
		}
	}
}

func (e *Engine) jSnapshotLocked(j *journal, op *syncPoint, p *partition, group string, sp *sharepart.SharePartition, sj *shareJournal) {
	sp.Snapshot(&sj.s)
	pos, err := j.append(j.share, 0, func(en *enc) { encodeSnapshot(en, group, p.tp, &sj.s) })
	op.note(j, pos, err)
	if err == nil {
		sj.snapSeg, sj.deltas = pos.Seg, 0
	}
}

// --- compaction ---

// compactor rewrites and trims the compacted logs when kicked, until the
// journal stops. It runs inside the engine's gate, so a restart waits for
// it, and takes one shard lock at a time.
func (e *Engine) compactor(j *journal) {
	defer close(j.done)
	for {
		select {
		case <-j.stop:
			return
		case <-j.kick:
		}
		if e.enter() != nil {
			continue
		}
		if e.jrn() == j {
			e.compact(j)
		}
		e.exit()
	}
}

// compact compacts every log that holds more than compactAfter segments:
// it rolls the log, appends a fresh record of every entity whose last full
// record is older (transactional ids, groups, share partitions), waits for
// them, and deletes the older segments.
func (e *Engine) compact(j *journal) {
	e.compactLog(j, j.txn, func(k uint64, op *syncPoint) {
		for i := range e.txns {
			ts := &e.txns[i]
			ts.mu.Lock()
			ids := make([]string, 0, len(ts.mu.txns))
			for id := range ts.mu.txns {
				ids = append(ids, id)
			}
			sort.Strings(ids)
			for _, id := range ids {
				e.jTxnLocked(op, ts.mu.txns[id], -1, 0)
			}
			ts.mu.Unlock()
		}
	})
	e.compactLog(j, j.groups, func(k uint64, op *syncPoint) {
		for i := range e.groups {
			gs := &e.groups[i]
			gs.mu.Lock()
			for id, g := range gs.mu.share {
				e.jShareGroup(op, id, g.cfg)
			}
			for _, g := range gs.mu.classic {
				e.jClassicState(op, g)
			}
			gs.mu.Unlock()
		}
	})
	e.compactLog(j, j.share, func(k uint64, op *syncPoint) {
		for i := range e.data {
			ds := &e.data[i]
			ds.mu.Lock()
			for _, p := range ds.mu.parts {
				for _, g := range p.groups {
					if sj := p.sj[g]; sj != nil && sj.snapSeg < k {
						e.jSnapshotLocked(j, op, p, g, p.shares[g], sj)
					}
				}
			}
			ds.mu.Unlock()
		}
	})
}

func (e *Engine) compactLog(j *journal, l *wal.Log, rewrite func(k uint64, op *syncPoint)) {
	oldest, next := l.Segments()
	if next < oldest+compactAfter {
		return
	}
	k := l.RollNext()
	var op syncPoint
	rewrite(k, &op)
	if op.err != nil || (op.t != 0 && j.g.Wait(op.t) != nil) {
		return
	}
	if err := l.DeleteBefore(k); err != nil {
		e.journalFailed(err)
	}
}

// compactNow runs journal compaction synchronously (tests use it, through
// export_durability_test.go, to make segment deletion deterministic).
// Without a data directory it does nothing.
func (e *Engine) compactNow() {
	if j := e.jrn(); j != nil && e.enter() == nil {
		e.compact(j)
		e.exit()
	}
}

// openTopicLogs creates the logs of a new topic's partitions under a new
// directory id.
func (e *Engine) openTopicLogs(name string, n int32) (uint64, []*wal.Log, error) {
	if _, err := e.topic(name); err == nil {
		return 0, nil, fmt.Errorf("%w: %s", ErrTopicExists, name)
	}
	id := e.dur.nextTopicID.Add(1) - 1
	logs, err := e.openPartitionLogs(id, 0, n)
	return id, logs, err
}

// openPartitionLogs creates the logs of partitions [from, to) of the topic
// with directory id. A directory left by a creation that never became
// durable is an orphan (no durable record covers it) and is cleared first.
func (e *Engine) openPartitionLogs(id uint64, from, to int32) ([]*wal.Log, error) {
	j := e.jrn()
	logs := make([]*wal.Log, 0, to-from)
	for p := from; p < to; p++ {
		dir := partitionDir(j.dir, id, p)
		if err := os.RemoveAll(dir); err != nil {
			return nil, e.journalFailed(err)
		}
		l, err := j.g.Open(dir, prioPartition)
		if err == nil {
			_, err = l.Replay(func(uint64, []byte) error { return nil })
		}
		if err != nil {
			return nil, e.journalFailed(err)
		}
		logs = append(logs, l)
	}
	return logs, nil
}
