// This file holds the share-group offset changes an administrator makes
// (kafka-share-groups --reset-offsets and --delete-offsets): moving a
// share partition's start offset, and forgetting a share partition.

package engine

import (
	"errors"
	"fmt"

	"github.com/sharebench/sharebench/engine/internal/sharepart"
)

// ErrGroupNotEmpty is returned for an offset change of a share group that
// has members: the change would pull records from under their locks.
var ErrGroupNotEmpty = errors.New("engine: share group has members")

// ErrTransactionPending is returned for an offset change of a share
// partition holding records staged in an open transaction (TX_PENDING):
// the transaction's marker must resolve them first.
var ErrTransactionPending = errors.New("engine: share partition has records staged in an open transaction")

// AlterShareGroupOffsets sets the share-partition start offset of each of
// group's partitions in offsets, as kafka-share-groups --reset-offsets
// does: the partition's delivery state starts afresh at the offset (every
// record from it on is AVAILABLE with delivery count 0, nothing before it
// is delivered again). The group must exist and have no members. An
// offset outside [log start, high watermark] fails that partition with
// ErrLogOffsetOutOfRange. Each partition succeeds or fails on its own;
// the map holds the failures. The error is for the group as a whole.
func (e *Engine) AlterShareGroupOffsets(group string, offsets map[TopicPartition]int64) (map[TopicPartition]error, error) {
	return e.changeShareOffsets(group, offsets, false)
}

// DeleteShareGroupOffsets forgets group's share partitions of topics, as
// kafka-share-groups --delete-offsets does: the next member to fetch one
// starts it where share.auto.offset.reset says. The group must exist and
// have no members. With a data directory the deletion is journaled (a
// drop record in the share-state log), so a recovery does not bring the
// state back.
func (e *Engine) DeleteShareGroupOffsets(group string, topics []string) (map[TopicPartition]error, error) {
	tps, err := e.partitionsOf(topics)
	if err != nil {
		return nil, err
	}
	offsets := make(map[TopicPartition]int64, len(tps))
	for _, tp := range tps {
		offsets[tp] = -1
	}
	return e.changeShareOffsets(group, offsets, true)
}

func (e *Engine) changeShareOffsets(group string, offsets map[TopicPartition]int64, del bool) (map[TopicPartition]error, error) {
	if err := e.enterWrite(); err != nil {
		return nil, err
	}
	defer e.exit()
	var op syncPoint
	gs := e.groupShard(group)
	gs.mu.Lock()
	g := gs.mu.share[group]
	var err error
	switch {
	case g == nil:
		err = fmt.Errorf("%w: %q", ErrUnknownGroup, group)
	case len(g.members) > 0:
		err = fmt.Errorf("%w: %q has %d", ErrGroupNotEmpty, group, len(g.members))
	}
	if err != nil {
		gs.mu.Unlock()
		return nil, err
	}
	// The group shard lock is held throughout (it comes before the data
	// shard locks), so no member joins while the partitions change.
	failed := map[TopicPartition]error{}
	for tp, offset := range offsets {
		var t *topic
		if t, err = e.topic(tp.Topic); err != nil {
			failed[tp] = err
			continue
		}
		perr := e.withPartitionOp(tp, &op, func(p *partition) error {
			old := p.shares[group]
			if old != nil && hasTxPending(old) {
				return fmt.Errorf("%w: %s of %q", ErrTransactionPending, tp, group)
			}
			if del {
				if old != nil {
					e.dropShareLocked(p, group, old)
				}
				return nil
			}
			start, hw := p.log.StartOffset(), e.hwLocked(p)
			if offset < start || offset > hw {
				return fmt.Errorf("%w: %d is outside %s's [%d, %d]", ErrLogOffsetOutOfRange, offset, tp, start, hw)
			}
			sp, err := sharepart.New(e.spConfig(g.cfg), offset)
			if err != nil {
				return fmt.Errorf("%w: %v", ErrInvalidConfig, err)
			}
			if old != nil {
				e.dropShareLocked(p, group, old)
			}
			p.shares[group] = sp
			p.groups = insertSorted(p.groups, group)
			p.dlq = p.dlq || g.cfg.DLQTopic != ""
			return nil
		})
		if perr != nil {
			failed[tp] = perr
			continue
		}
		t.changed()
	}
	gs.mu.Unlock()
	return failed, e.finish(&op, nil)
}

// dropShareLocked removes group's share partition of p; a durable engine
// keeps its counters in its totals, as after a failover, and journals the
// drop into p.op, so a recovery does not bring the state back. The data
// shard lock is held.
func (e *Engine) dropShareLocked(p *partition, group string, old *sharepart.SharePartition) {
	if e.dur != nil {
		e.dur.keepCounters(Counters(old.Counters()))
		e.jShareDrop(p.op, group, p.tp)
	}
	delete(p.shares, group)
	delete(p.sj, group) // a new share partition is journaled as a fresh snapshot
	for i, g := range p.groups {
		if g == group {
			p.groups = append(p.groups[:i], p.groups[i+1:]...)
			break
		}
	}
}

func hasTxPending(sp *sharepart.SharePartition) bool {
	pending := false
	sp.Each(func(_, _ int64, ri sharepart.RecordInfo) {
		pending = pending || ri.State == sharepart.TxPending
	})
	return pending
}

func insertSorted(s []string, v string) []string {
	for i, x := range s {
		if x == v {
			return s
		}
		if x > v {
			return append(s[:i], append([]string{v}, s[i:]...)...)
		}
	}
	return append(s, v)
}
