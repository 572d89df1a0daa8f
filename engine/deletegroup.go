// This file holds the group deletions an administrator makes (Kafka's
// DeleteGroups and OffsetDelete): removing a share or classic group with
// its state, and removing a classic group's committed offsets.

package engine

import "fmt"

// DeleteGroup removes a share or classic group, as kafka-share-groups and
// kafka-consumer-groups --delete do. A group with members fails with
// ErrGroupNotEmpty, an unknown one with ErrUnknownGroup. A share group's
// share partitions go with it, so a group created later under the id
// starts each partition where its share.auto.offset.reset says; a share
// partition holding records staged in an open transaction fails the call
// with ErrTransactionPending (the marker must resolve them first). A
// classic group's committed offsets go with it. Journaled: a recovery
// does not bring the group back.
func (e *Engine) DeleteGroup(group string) error {
	if err := e.enterWrite(); err != nil {
		return err
	}
	defer e.exit()
	var op syncPoint
	gs := e.groupShard(group)
	gs.mu.Lock()
	err := e.deleteGroupLocked(&op, gs, group)
	gs.mu.Unlock()
	return e.finish(&op, err)
}

// deleteGroupLocked is DeleteGroup under the group shard lock, which comes
// before the data shard locks, so no member joins while the share
// partitions go.
func (e *Engine) deleteGroupLocked(op *syncPoint, gs *groupShard, group string) error {
	if g := gs.mu.classic[group]; g != nil {
		if len(g.members) > 0 {
			return fmt.Errorf("%w: classic group %q has %d", ErrGroupNotEmpty, group, len(g.members))
		}
		delete(gs.mu.classic, group)
		e.jGroupDelete(op, group)
		return nil
	}
	g := gs.mu.share[group]
	switch {
	case g == nil:
		return fmt.Errorf("%w: %q", ErrUnknownGroup, group)
	case len(g.members) > 0:
		return fmt.Errorf("%w: %q has %d", ErrGroupNotEmpty, group, len(g.members))
	}
	for i := range e.data {
		ds := &e.data[i]
		ds.mu.Lock()
		for tp, p := range ds.mu.parts {
			if sp := p.shares[group]; sp != nil && hasTxPending(sp) {
				ds.mu.Unlock()
				return fmt.Errorf("%w: %s of %q", ErrTransactionPending, tp, group)
			}
		}
		ds.mu.Unlock()
	}
	for i := range e.data {
		ds := &e.data[i]
		ds.mu.Lock()
		for _, p := range ds.mu.parts {
			if sp := p.shares[group]; sp != nil {
				p.op = op
				e.dropShareLocked(p, group, sp)
				p.op = nil
			}
		}
		ds.mu.Unlock()
	}
	delete(gs.mu.share, group)
	e.jGroupDelete(op, group)
	return nil
}

// DeleteCommittedOffsets removes a classic group's committed offsets of
// the partitions tps, as kafka-consumer-groups --delete-offsets does; a
// partition without one is left as it is. Offsets pending in an open
// transaction stay with it. The caller, which runs the group's membership,
// refuses partitions a live member subscribes to. An unknown group fails
// with ErrUnknownGroup, a share group with ErrGroupTypeMismatch.
func (e *Engine) DeleteCommittedOffsets(group string, tps []TopicPartition) error {
	if err := e.enterWrite(); err != nil {
		return err
	}
	defer e.exit()
	var op syncPoint
	gs := e.groupShard(group)
	gs.mu.Lock()
	var err error
	if g := gs.mu.classic[group]; g != nil {
		changed := false
		for _, tp := range tps {
			if _, ok := g.committed[tp]; ok {
				delete(g.committed, tp)
				changed = true
			}
		}
		if changed {
			e.jClassicState(&op, g)
		}
	} else if gs.mu.share[group] != nil {
		err = fmt.Errorf("%w: %q is a share group", ErrGroupTypeMismatch, group)
	} else {
		err = fmt.Errorf("%w: %q", ErrUnknownGroup, group)
	}
	gs.mu.Unlock()
	return e.finish(&op, err)
}
