// This file holds the component failovers of the KIP-1289 test plan: a
// transaction coordinator crash (its state reloaded from the transaction
// log while partitions stay up) and a share-partition leader failover (one
// share partition's state reloaded from the share-state log while the
// coordinator stays up).

package engine

import (
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/sharebench/sharebench/engine/internal/wal"
)

// CrashCoordinator crashes the transaction coordinator alone: its
// in-memory state is dropped and reloaded from the transaction log, one
// shard at a time, while partitions, share partitions and groups stay up.
// As after a full restart, PREPARE_COMMIT completes as a commit,
// PREPARE_ABORT as an abort, and ONGOING transactions wait for their
// producer or their timeout; a Begin not yet followed by a participant is
// forgotten (the producer's next call reopens it). Producers keep their
// epochs. It needs a data directory.
func (e *Engine) CrashCoordinator() (RecoveryReport, error) {
	d := e.dur
	if d == nil {
		return RecoveryReport{}, ErrNoDataDir
	}
	d.restartMu.Lock()
	defer d.restartMu.Unlock()
	if err := e.enter(); err != nil {
		return RecoveryReport{}, err
	}
	defer e.exit()
	t0 := time.Now()
	rep := RecoveryReport{Dir: d.dir}
	j := e.jrn()
	now := e.clock.Now()
	var op syncPoint
	for i := range e.txns {
		ts := &e.txns[i]
		ts.mu.Lock()
		err := e.reloadTxnShardLocked(&op, j, ts, now, &rep)
		ts.mu.Unlock()
		if err != nil {
			return rep, err
		}
	}
	rep.Duration = time.Since(t0)
	return rep, e.finish(&op, nil)
}

// reloadTxnShardLocked replaces one shard's transactions with what the
// transaction log says and resolves them. The shard's lock is held, so
// nothing of the shard is appended meanwhile.
func (e *Engine) reloadTxnShardLocked(op *syncPoint, j *journal, ts *txnShard, now time.Duration, rep *RecoveryReport) error {
	if err := j.g.Flush(); err != nil {
		return e.journalFailed(err)
	}
	recs := map[string]*txnRecord{}
	err := j.txn.Scan(func(_ uint64, payload []byte) error {
		rep.Frames++
		rep.Bytes += int64(wal.FrameBytes(len(payload)))
		dd := &dec{b: payload}
		if typ := dd.u8(); typ != recTxn {
			return unknownRecord(typ)
		}
		r := &txnRecord{}
		r.decode(dd)
		if err := dd.end(); err != nil {
			return err
		}
		if e.txnShard(r.id) == ts {
			recs[r.id] = r
		}
		return nil
	})
	if err != nil {
		return logError(err)
	}
	abandonJobsLocked(ts)
	fresh := make(map[string]*txnState, len(recs))
	ids := make([]string, 0, len(recs))
	for id, r := range recs {
		fresh[id] = txnStateOf(r, now)
		ids = append(ids, id)
	}
	sort.Strings(ids)
	ts.mu.txns = fresh
	rep.Transactions += len(recs)
	for _, id := range ids {
		if err := e.resolveTxnLocked(op, fresh[id], recs[id], now, rep); err != nil {
			return err
		}
	}
	return nil
}

// errCoordinatorCrash: an injected coordinator crash struck under a
// transaction shard's lock; the shard must be reloaded before the lock is
// released. errCoordinatorReloaded: it was.
var (
	errCoordinatorCrash    = errors.New("engine: transaction coordinator crashed")
	errCoordinatorReloaded = errors.New("engine: transaction coordinator reloaded")
)

// reloadAfterCrashLocked reloads the shard ts after an injected
// coordinator crash. ts's lock is held.
func (e *Engine) reloadAfterCrashLocked(op *syncPoint, ts *txnShard) error {
	var rep RecoveryReport
	return e.reloadTxnShardLocked(op, e.jrn(), ts, e.clock.Now(), &rep)
}

// coordinatorReloaded hides a coordinator crash from a call whose effect
// was logged before the crash struck: the client's retry would succeed.
func coordinatorReloaded(err error) error {
	if errors.Is(err, errCoordinatorReloaded) {
		return nil
	}
	return err
}

// FailoverSharePartition moves the leadership of group's share partition
// of tp, as a broker failover does: the partition's share state is
// reloaded from the share-state log while the transaction coordinator
// stays up. Acquisitions are lost (ACQUIRED records are AVAILABLE again at
// their durable delivery count, and their members' acknowledgements fail);
// TX_PENDING records stay with their transactions. It needs a data
// directory.
func (e *Engine) FailoverSharePartition(group string, tp TopicPartition) error {
	d := e.dur
	if d == nil {
		return ErrNoDataDir
	}
	d.restartMu.Lock()
	defer d.restartMu.Unlock()
	if err := e.enter(); err != nil {
		return err
	}
	defer e.exit()
	j := e.jrn()
	t, err := e.topic(tp.Topic)
	if err != nil {
		return err
	}
	err = e.withPartition(tp, func(p *partition) error {
		old := p.shares[group]
		if old == nil {
			return fmt.Errorf("%w: group %q has no share partition %s", ErrUnknownGroup, group, tp)
		}
		if err := j.g.Flush(); err != nil {
			return e.journalFailed(err)
		}
		key := shareKey{group, tp}
		rs := newReplayState(e)
		rs.only, rs.spCfg = &key, old.Config()
		rs.parts[tp] = p
		scan := func(l *wal.Log, fn func(uint64, *dec) error) error {
			return logError(l.Scan(func(seg uint64, payload []byte) error { return fn(seg, &dec{b: payload}) }))
		}
		if err := scan(j.history, rs.applyHistory); err != nil {
			return err
		}
		if err := scan(j.share, rs.applyShare); err != nil {
			return err
		}
		sp := rs.shares[key]
		if sp == nil {
			return fmt.Errorf("%w: no share state of %s for %q in the log", ErrCorruptLog, tp, group)
		}
		if err := sp.PutHistory(rs.history[key]); err != nil {
			return fmt.Errorf("%w: history of %s for %q: %v", ErrCorruptLog, tp, group, err)
		}
		sp.AdvanceLogStart(p.log.StartOffset())
		d.keepCounters(Counters(old.Counters()))
		p.shares[group], p.sj[group] = sp, rs.sj[key]
		return nil
	})
	if err == nil {
		t.changed() // released records are acquirable again
	}
	return err
}
