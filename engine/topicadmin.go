// This file holds topic administration: each topic's id (a random UUID per
// incarnation, as Kafka's), deleting a topic with everything that belongs
// to it, and growing a topic's partitions. With a data directory each is
// journaled in the meta log, so a recovery sees the same topics, ids and
// partition counts.

package engine

import (
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"io"

	"github.com/sharebench/sharebench/engine/internal/plog"
	"github.com/sharebench/sharebench/engine/internal/wal"
)

// TopicID is a topic's id: 16 random bytes drawn when the topic is created
// (WithTopicIDSource), so a topic deleted and created again under the same
// name has a new id, and a request naming the old id finds no topic.
type TopicID [16]byte

// String is Kafka's spelling of a topic id: URL-safe base64 without
// padding.
func (id TopicID) String() string { return base64.RawURLEncoding.EncodeToString(id[:]) }

// legacyTopicID is the id of a topic created by a build that derived ids
// from names (topic record type recTopic): recovery keeps it, so clients
// that cached it still find the topic.
func legacyTopicID(name string) TopicID {
	sum := sha256.Sum256([]byte("sharebench-topic:" + name))
	var id TopicID
	copy(id[:], sum[:16])
	return id
}

func newTopic(name string, partitions int32, id uint64, uuid TopicID) *topic {
	t := &topic{name: name, id: id, uuid: uuid, configs: map[string]string{}, notify: make(chan struct{})}
	t.partitions.Store(partitions)
	return t
}

// newTopicIDLocked draws a topic id from the configured source: a version
// 4 UUID that is neither zero nor Kafka's reserved metadata topic id (zero
// but for the last bit) and that no live topic has. topicsMu is held.
func (e *Engine) newTopicIDLocked() (TopicID, error) {
	for range 64 {
		var id TopicID
		if _, err := io.ReadFull(e.cfg.topicIDs, id[:]); err != nil {
			return TopicID{}, fmt.Errorf("%w: reading a topic id from the id source: %v", ErrInvalidConfig, err)
		}
		id[6] = id[6]&0x0f | 0x40
		id[8] = id[8]&0x3f | 0x80
		if _, taken := e.topicIDs[id]; !taken {
			return id, nil
		}
	}
	return TopicID{}, fmt.Errorf("%w: the topic id source repeats itself", ErrInvalidConfig)
}

// TopicID returns the id of the topic's current incarnation.
func (e *Engine) TopicID(name string) (TopicID, error) {
	if err := e.enter(); err != nil {
		return TopicID{}, err
	}
	defer e.exit()
	t, err := e.topic(name)
	if err != nil {
		return TopicID{}, err
	}
	return t.uuid, nil
}

// TopicByID returns the name of the topic whose current incarnation has
// id; an id of a deleted topic fails with ErrUnknownTopicID.
func (e *Engine) TopicByID(id TopicID) (string, error) {
	if err := e.enter(); err != nil {
		return "", err
	}
	defer e.exit()
	e.topicsMu.RLock()
	t := e.topicIDs[id]
	e.topicsMu.RUnlock()
	if t == nil {
		return "", fmt.Errorf("%w: %s", ErrUnknownTopicID, id)
	}
	return t.name, nil
}

// DeleteTopic removes a topic and everything of it: its partitions and
// their records, every share group's share partitions of them, and the
// classic groups' committed (and transaction-pending) offsets of them.
// Members still subscribed to it get ErrUnknownTopicOrPartition on their
// next poll. With a data directory the deletion is journaled before the
// call returns and the partitions' directories are removed, so a recovery
// never brings the topic back, and a topic created later under the name
// starts empty with a new id.
func (e *Engine) DeleteTopic(name string) error {
	if err := e.enterWrite(); err != nil {
		return err
	}
	defer e.exit()
	e.adminMu.Lock()
	defer e.adminMu.Unlock()
	var op syncPoint
	e.topicsMu.Lock()
	t := e.topics[name]
	if t == nil {
		e.topicsMu.Unlock()
		return fmt.Errorf("%w: topic %q", ErrUnknownTopicOrPartition, name)
	}
	delete(e.topics, name)
	delete(e.topicIDs, t.uuid)
	e.jTopicDelete(&op, t.id)
	e.topicsMu.Unlock()
	var logs []*wal.Log
	for p := int32(0); p < t.partitions.Load(); p++ {
		tp := TopicPartition{name, p}
		ds := e.dataShard(tp)
		ds.mu.Lock()
		if part := ds.mu.parts[tp]; part != nil {
			part.op = &op
			for _, g := range append([]string(nil), part.groups...) {
				e.dropShareLocked(part, g, part.shares[g])
			}
			if part.wal != nil {
				logs = append(logs, part.wal)
			}
			part.op = nil
			delete(ds.mu.parts, tp)
		}
		ds.mu.Unlock()
	}
	e.forgetClassicOffsets(&op, func(tp TopicPartition) bool { return tp.Topic == name })
	t.changed() // wake pollers and readers waiting on it
	if err := e.finish(&op, nil); err != nil {
		return err
	}
	if j := e.jrn(); j != nil {
		for _, l := range logs {
			if err := j.g.Remove(l); err != nil {
				return e.journalFailed(err)
			}
		}
	}
	return nil
}

// forgetClassicOffsets removes the committed and transaction-pending
// offsets of every classic group for the partitions gone says, journaling
// each group it changed into op.
func (e *Engine) forgetClassicOffsets(op *syncPoint, gone func(TopicPartition) bool) {
	for i := range e.groups {
		gs := &e.groups[i]
		gs.mu.Lock()
		for _, g := range gs.mu.classic {
			changed := false
			for tp := range g.committed {
				if gone(tp) {
					delete(g.committed, tp)
					changed = true
				}
			}
			for _, pend := range g.pending {
				for tp := range pend {
					if gone(tp) {
						delete(pend, tp)
						changed = true
					}
				}
			}
			if changed {
				e.jClassicState(op, g)
			}
		}
		gs.mu.Unlock()
	}
}

// CreatePartitions grows topic name to count partitions, as Kafka's
// CreatePartitions: a count not above the current one fails with
// ErrInvalidPartitions. The new partitions are empty and readable and
// writable when the call returns; share groups' members see them on their
// next poll, each group's share partition of one starting where the
// group's share.auto.offset.reset says, as for any partition a group meets
// for the first time. With validateOnly it checks and changes nothing.
func (e *Engine) CreatePartitions(name string, count int32, validateOnly bool) error {
	if err := e.enterWrite(); err != nil {
		return err
	}
	defer e.exit()
	e.adminMu.Lock()
	defer e.adminMu.Unlock()
	t, err := e.topic(name)
	if err != nil {
		return err
	}
	cur := t.partitions.Load()
	switch {
	case count <= cur:
		return fmt.Errorf("%w: topic %q has %d partitions; the new count %d must be above it (partitions can only be added)", ErrInvalidPartitions, name, cur, count)
	case count > 1<<20:
		return fmt.Errorf("%w: topic %q: %d partitions is above the engine's limit of %d", ErrInvalidPartitions, name, count, 1<<20)
	case validateOnly:
		return nil
	}
	var logs []*wal.Log
	if e.dur != nil {
		if logs, err = e.openPartitionLogs(t.id, cur, count); err != nil {
			return err
		}
	}
	var op syncPoint
	e.jTopicPartitions(&op, t.id, count)
	for p := cur; p < count; p++ {
		tp := TopicPartition{name, p}
		var l *wal.Log
		if logs != nil {
			l = logs[p-cur]
		}
		ds := e.dataShard(tp)
		ds.mu.Lock()
		ds.mu.parts[tp] = newPartition(tp, plog.New(e.cfg.retentionBytes), l)
		ds.mu.Unlock()
	}
	t.partitions.Store(count)
	e.topicGrewLocked(name)
	t.changed()
	return e.finish(&op, nil)
}

// topicGrewLocked bumps the epochs of every share group with a member
// subscribed to topic, as Kafka's coordinator computes a new assignment
// when a subscribed topic's partition count changes: members learn of the
// new partitions with their new epoch. adminMu is held.
func (e *Engine) topicGrewLocked(topic string) {
	for i := range e.groups {
		gs := &e.groups[i]
		gs.mu.Lock()
		for _, g := range gs.mu.share {
			if subscribes(g, topic) {
				g.assignmentChangedLocked()
			}
		}
		gs.mu.Unlock()
	}
}

func subscribes(g *shareGroup, topic string) bool {
	for _, st := range g.members {
		for _, t := range st.topics {
			if t == topic {
				return true
			}
		}
	}
	return false
}
