// This file holds the entry points a group coordinator outside the engine
// uses: the Kafka-protocol server runs the classic group protocol (joins,
// generations, assignments) itself and keeps only the offsets here, and it
// keeps share-group members alive between polls from their heartbeats.

package engine

import (
	"fmt"
	"sort"
	"time"
)

// classicGroupLocked returns the classic group id, creating it (durably,
// through op) when it does not exist. The group shard lock is held.
func (e *Engine) classicGroupLocked(op *syncPoint, gs *groupShard, id string) (*classicGroup, error) {
	if _, ok := gs.mu.share[id]; ok {
		return nil, fmt.Errorf("%w: %q is a share group", ErrGroupTypeMismatch, id)
	}
	g := gs.mu.classic[id]
	if g == nil {
		g = &classicGroup{id: id, members: map[string]*classicMemberState{},
			committed: map[TopicPartition]int64{}, pending: map[int64]map[TopicPartition]int64{}}
		gs.mu.classic[id] = g
		e.jClassicState(op, g)
	}
	return g, nil
}

// CommitOffsets commits a classic group's offsets outside a transaction
// (OffsetCommit), creating the group if needed. The caller runs the group's
// membership and has fenced the committing member itself.
func (e *Engine) CommitOffsets(group string, offsets map[TopicPartition]int64) error {
	if group == "" {
		return fmt.Errorf("%w: empty group id", ErrInvalidConfig)
	}
	if err := e.enterWrite(); err != nil {
		return err
	}
	defer e.exit()
	var op syncPoint
	gs := e.groupShard(group)
	gs.mu.Lock()
	g, err := e.classicGroupLocked(&op, gs, group)
	if err == nil {
		for tp, off := range offsets {
			g.committed[tp] = off
		}
		e.jClassicState(&op, g)
	}
	gs.mu.Unlock()
	return e.finish(&op, err)
}

// SendGroupOffsetsToTransaction is SendOffsetsToTransaction for a group
// whose membership the caller runs (TxnOffsetCommit through the protocol
// server, which has checked the member and generation): the offsets join
// the open transaction and become committed only with its commit marker.
func (p *Producer) SendGroupOffsetsToTransaction(group string, offsets map[TopicPartition]int64) error {
	e := p.e
	if group == "" {
		return fmt.Errorf("%w: empty group id", ErrInvalidConfig)
	}
	var op syncPoint
	return coordinatorReloaded(p.withTxn(&op, func(t *txnState, now time.Duration) error {
		if t.State != TxnOngoing {
			return fmt.Errorf("%w: sending offsets outside a transaction (state %v)", ErrInvalidTxnState, t.State)
		}
		gs := e.groupShard(group)
		gs.mu.Lock()
		g, err := e.classicGroupLocked(&op, gs, group)
		if err == nil {
			pend := g.pending[t.PID]
			if pend == nil {
				pend = map[TopicPartition]int64{}
				g.pending[t.PID] = pend
			}
			for tp, off := range offsets {
				pend[tp] = off
			}
		}
		gs.mu.Unlock()
		if err != nil {
			return err
		}
		if t.AddGroup(group) {
			e.jTxnLocked(&op, t, -1, 0)
		}
		e.jPendingOffsets(&op, group, t.PID, offsets)
		return e.callHook(HookTxnOngoing, HookInfo{TransactionalID: t.ID, ProducerID: t.PID, Epoch: t.Epoch, Group: group})
	}))
}

// ClassicGroups returns the ids of the classic groups the engine holds.
func (e *Engine) ClassicGroups() []string {
	if e.enter() != nil {
		return nil
	}
	defer e.exit()
	var out []string
	for i := range e.groups {
		gs := &e.groups[i]
		gs.mu.Lock()
		for id := range gs.mu.classic {
			out = append(out, id)
		}
		gs.mu.Unlock()
	}
	return out
}

// CommittedOffsets returns a copy of a classic group's committed offsets.
func (e *Engine) CommittedOffsets(group string) map[TopicPartition]int64 {
	if e.enter() != nil {
		return nil
	}
	defer e.exit()
	gs := e.groupShard(group)
	gs.mu.Lock()
	defer gs.mu.Unlock()
	g := gs.mu.classic[group]
	if g == nil {
		return nil
	}
	out := make(map[TopicPartition]int64, len(g.committed))
	for tp, off := range g.committed {
		out[tp] = off
	}
	return out
}

// Heartbeat records that the member is alive (a ShareGroupHeartbeat), so
// its session does not time out between polls, and tells the member its
// current epoch, as a poll does; it returns the member's group metadata.
func (m *ShareMember) Heartbeat() (GroupMetadata, error) {
	e := m.e
	if err := e.enterWrite(); err != nil {
		return GroupMetadata{}, err
	}
	defer e.exit()
	_, epoch, err := e.touchShareMember(m.group, m.id, e.clock.Now())
	if err != nil {
		return GroupMetadata{}, err
	}
	m.mu.Lock()
	m.mu.epoch = epoch
	m.mu.Unlock()
	return m.Metadata(), nil
}

// PendingOffset reports whether an open transaction holds an offset of a
// classic group's partition that has not committed yet (OffsetFetch's
// require_stable answers UNSTABLE_OFFSET_COMMIT for it).
func (e *Engine) PendingOffset(group string, tp TopicPartition) bool {
	if e.enter() != nil {
		return false
	}
	defer e.exit()
	gs := e.groupShard(group)
	gs.mu.Lock()
	defer gs.mu.Unlock()
	g := gs.mu.classic[group]
	if g == nil {
		return false
	}
	for _, offs := range g.pending {
		if _, ok := offs[tp]; ok {
			return true
		}
	}
	return false
}

// TransactionalIDs returns every transactional id the coordinator holds,
// sorted (ListTransactions).
func (e *Engine) TransactionalIDs() []string {
	if e.enter() != nil {
		return nil
	}
	defer e.exit()
	var out []string
	for i := range e.txns {
		ts := &e.txns[i]
		ts.mu.Lock()
		for id := range ts.mu.txns {
			out = append(out, id)
		}
		ts.mu.Unlock()
	}
	sort.Strings(out)
	return out
}
