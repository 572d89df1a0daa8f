// This file holds classic consumer groups with transactional offset commits:
// the sendOffsetsToTransaction path that KIP-1289 mirrors, and the
// classic-eos baseline of every comparison.

package engine

import (
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/sharebench/sharebench/engine/internal/mutant"
)

// ClassicGroupMetadata identifies a classic group member for fencing, as a
// consumer's groupMetadata() does.
type ClassicGroupMetadata struct {
	GroupID    string
	MemberID   string
	Generation int32
}

type classicGroup struct {
	id         string
	reset      AutoOffsetReset
	generation int32
	members    map[string]*classicMemberState
	committed  map[TopicPartition]int64
	// pending holds offsets sent to a transaction, by producer id; they
	// become committed only with the commit marker.
	pending map[int64]map[TopicPartition]int64
	// assignLazy: membership changed where partition lists were not at
	// hand; the next member sync assigns.
	assignLazy bool
	// owner and since give each assigned partition's member and the
	// generation from which that member has held it without a break. A
	// member keeps its position across a rebalance only for a partition
	// it has held since the generation it last synced at: one that moved
	// to another member and back meanwhile may have been consumed and
	// committed further by the other, so it restarts from the committed
	// offset, as a consumer does for a partition it did not own in the
	// previous generation.
	owner map[TopicPartition]string
	since map[TopicPartition]int32
}

type classicMemberState struct {
	id         string
	topics     []string
	lastSeen   time.Duration
	assignment []TopicPartition
}

func (g *classicGroup) expireLocked(now, timeout time.Duration) {
	changed := false
	for id, m := range g.members {
		if now-m.lastSeen >= timeout {
			delete(g.members, id)
			changed = true
		}
	}
	if changed {
		g.rebalanceLocked(nil)
	}
}

// rebalanceLocked bumps the generation and assigns partitions round-robin
// over the members sorted by id (parts: every subscribed partition).
func (g *classicGroup) rebalanceLocked(e *Engine) {
	g.generation++
	ids := make([]string, 0, len(g.members))
	for id := range g.members {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	topics := map[string]bool{}
	for _, id := range ids {
		g.members[id].assignment = nil
		for _, t := range g.members[id].topics {
			topics[t] = true
		}
	}
	if e == nil || len(ids) == 0 {
		// Partition lists need the engine; callers without it (session
		// expiry) leave members to pick up their assignment lazily.
		g.assignLazy = true
		return
	}
	g.assignWith(e, ids, topics)
}

func (g *classicGroup) assignWith(e *Engine, ids []string, topics map[string]bool) {
	names := make([]string, 0, len(topics))
	for t := range topics {
		names = append(names, t)
	}
	sort.Strings(names)
	parts, _ := e.partitionsOf(names)
	if g.owner == nil {
		g.owner = map[TopicPartition]string{}
		g.since = map[TopicPartition]int32{}
	}
	for i, tp := range parts {
		id := ids[i%len(ids)]
		g.members[id].assignment = append(g.members[id].assignment, tp)
		if g.owner[tp] != id {
			g.owner[tp], g.since[tp] = id, g.generation
		}
	}
	g.assignLazy = false
}

// ClassicMember is a member of a classic consumer group reading with
// read_committed, as the consumer of a classic exactly-once pipeline does.
type ClassicMember struct {
	e     *Engine
	group string
	id    string

	mu struct {
		sync.Mutex
		generation int32
		assignment []TopicPartition
		position   map[TopicPartition]int64
		rotate     int
		left       bool
	}
}

// JoinClassicGroup joins a classic group subscribed to topics. Partitions
// are assigned round-robin; a join or leave bumps the generation and every
// member picks up its new assignment (from the committed offsets) on its
// next poll.
func (e *Engine) JoinClassicGroup(group string, topics []string, reset AutoOffsetReset) (*ClassicMember, error) {
	if group == "" {
		return nil, fmt.Errorf("%w: empty group id", ErrInvalidConfig)
	}
	if err := e.enterWrite(); err != nil {
		return nil, err
	}
	defer e.exit()
	for _, t := range topics {
		if _, err := e.topic(t); err != nil {
			return nil, err
		}
	}
	now := e.clock.Now()
	var op syncPoint
	gs := e.groupShard(group)
	gs.mu.Lock()
	if _, ok := gs.mu.share[group]; ok {
		gs.mu.Unlock()
		return nil, fmt.Errorf("%w: %q is a share group", ErrGroupTypeMismatch, group)
	}
	g := gs.mu.classic[group]
	if g == nil {
		g = &classicGroup{id: group, reset: reset, members: map[string]*classicMemberState{},
			committed: map[TopicPartition]int64{}, pending: map[int64]map[TopicPartition]int64{}}
		gs.mu.classic[group] = g
		e.jClassicState(&op, g) // the group and its reset policy are durable
	}
	id := fmt.Sprintf("%s-consumer-%d", group, e.nextMember.Add(1))
	g.members[id] = &classicMemberState{id: id, topics: append([]string(nil), topics...), lastSeen: now}
	g.rebalanceLocked(e)
	gs.mu.Unlock()
	m := &ClassicMember{e: e, group: group, id: id}
	m.mu.generation = -1
	if err := e.finish(&op, nil); err != nil {
		return nil, err
	}
	return m, nil
}

// ID returns the member id.
func (m *ClassicMember) ID() string { return m.id }

// Metadata returns the member's group metadata for
// Producer.SendOffsetsToTransaction.
func (m *ClassicMember) Metadata() ClassicGroupMetadata {
	m.mu.Lock()
	defer m.mu.Unlock()
	return ClassicGroupMetadata{GroupID: m.group, MemberID: m.id, Generation: m.mu.generation}
}

// Assignment returns the partitions assigned at the member's generation.
func (m *ClassicMember) Assignment() []TopicPartition {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]TopicPartition(nil), m.mu.assignment...)
}

// sync refreshes the member's view of its group: a new generation brings a
// new assignment, read from the committed offsets. The member lock is held.
func (m *ClassicMember) syncLocked(now time.Duration) error {
	e := m.e
	gs := e.groupShard(m.group)
	gs.mu.Lock()
	g := gs.mu.classic[m.group]
	if g == nil {
		gs.mu.Unlock()
		return fmt.Errorf("%w: %q", ErrUnknownGroup, m.group)
	}
	st := g.members[m.id]
	if st == nil {
		gs.mu.Unlock()
		return fmt.Errorf("%w: %q in group %q", ErrUnknownMember, m.id, m.group)
	}
	st.lastSeen = now
	if g.assignLazy {
		ids := make([]string, 0, len(g.members))
		topics := map[string]bool{}
		for id, mm := range g.members {
			ids = append(ids, id)
			for _, t := range mm.topics {
				topics[t] = true
			}
		}
		sort.Strings(ids)
		g.assignWith(e, ids, topics)
	}
	if g.generation == m.mu.generation {
		gs.mu.Unlock()
		return nil
	}
	// Partitions the member held without a break since its last sync keep
	// their positions (its open transaction may already cover records
	// past the committed offset); newly assigned ones, and ones that were
	// another member's meanwhile, start from the committed offset, but
	// only once no transaction holds pending offsets for them (KIP-447's
	// require_stable: reading an offset a pending commit is about to move
	// would reprocess what that commit covers).
	kept := map[TopicPartition]bool{}
	for _, tp := range m.mu.assignment {
		kept[tp] = g.owner[tp] == m.id && g.since[tp] <= m.mu.generation
	}
	committed := make(map[TopicPartition]int64, len(st.assignment))
	for _, tp := range st.assignment {
		if kept[tp] && m.mu.position != nil {
			if _, ok := m.mu.position[tp]; ok {
				continue
			}
		}
		for _, p := range g.pending {
			if _, busy := p[tp]; busy {
				gs.mu.Unlock()
				return errUnstableOffset
			}
		}
		if off, ok := g.committed[tp]; ok {
			committed[tp] = off
		} else {
			committed[tp] = -1
		}
	}
	m.mu.generation = g.generation
	m.mu.assignment = append([]TopicPartition(nil), st.assignment...)
	reset := g.reset
	gs.mu.Unlock()
	old := m.mu.position
	m.mu.position = map[TopicPartition]int64{}
	for _, tp := range m.mu.assignment {
		if off, ok := committed[tp]; !ok {
			m.mu.position[tp] = old[tp]
			continue
		} else if off >= 0 {
			m.mu.position[tp] = off
			continue
		}
		start, hw, _, err := e.Offsets(tp)
		if err != nil {
			return err
		}
		m.mu.position[tp] = hw
		if reset == ResetEarliest {
			m.mu.position[tp] = start
		}
	}
	return nil
}

// errUnstableOffset: a newly assigned partition has offsets pending in a
// transaction; the member fetches nothing until that transaction ends.
var errUnstableOffset = errors.New("engine: unstable offset commit")

// Poll fetches up to max records with read_committed from the member's
// assigned partitions, advancing its positions. It never blocks.
func (m *ClassicMember) Poll(max int) ([]Record, error) {
	if err := m.e.enterWrite(); err != nil {
		return nil, err
	}
	defer m.e.exit()
	now := m.e.clock.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.mu.left {
		return nil, fmt.Errorf("%w: %s left the group", ErrUnknownMember, m.id)
	}
	if err := m.syncLocked(now); err != nil {
		if errors.Is(err, errUnstableOffset) {
			return nil, nil // retried on the next poll, as the consumer does
		}
		return nil, err
	}
	var out []Record
	n := len(m.mu.assignment)
	start := m.mu.rotate
	m.mu.rotate++
	for i := 0; i < n && len(out) < max; i++ {
		tp := m.mu.assignment[(start+i)%n]
		recs, next, err := m.e.Fetch(tp, m.mu.position[tp], max-len(out), ReadCommitted)
		if err != nil {
			return out, err
		}
		m.mu.position[tp] = next
		out = append(out, recs...)
	}
	return out, nil
}

// Rewind moves every position back to the group's committed offsets, as a
// consumer must after its transaction aborts.
func (m *ClassicMember) Rewind() error {
	if err := m.e.enter(); err != nil {
		return err
	}
	defer m.e.exit()
	m.mu.Lock()
	defer m.mu.Unlock()
	m.mu.generation = -1
	m.mu.position = nil
	m.mu.assignment = nil
	if err := m.syncLocked(m.e.clock.Now()); err != nil && !errors.Is(err, errUnstableOffset) {
		return err
	}
	return nil
}

// Leave leaves the group; the others get its partitions at the next
// generation.
func (m *ClassicMember) Leave() error {
	if err := m.e.enter(); err != nil {
		return err
	}
	defer m.e.exit()
	if !markLeft(&m.mu.Mutex, &m.mu.left) {
		return nil
	}
	gs := m.e.groupShard(m.group)
	gs.mu.Lock()
	defer gs.mu.Unlock()
	g := gs.mu.classic[m.group]
	if g == nil || g.members[m.id] == nil {
		return fmt.Errorf("%w: %q", ErrUnknownMember, m.id)
	}
	delete(g.members, m.id)
	g.rebalanceLocked(m.e)
	return nil
}

// CommittedOffset returns a classic group's committed offset for tp.
func (e *Engine) CommittedOffset(group string, tp TopicPartition) (int64, bool) {
	if e.enter() != nil {
		return 0, false
	}
	defer e.exit()
	gs := e.groupShard(group)
	gs.mu.Lock()
	defer gs.mu.Unlock()
	g := gs.mu.classic[group]
	if g == nil {
		return 0, false
	}
	off, ok := g.committed[tp]
	return off, ok
}

// addPendingOffsets records offsets sent to a transaction after fencing the
// member by generation. The group shard lock is taken here; the caller holds
// the transaction's shard lock (lockorder.go).
func (e *Engine) addPendingOffsets(pid int64, offsets map[TopicPartition]int64, meta ClassicGroupMetadata) error {
	gs := e.groupShard(meta.GroupID)
	gs.mu.Lock()
	defer gs.mu.Unlock()
	g := gs.mu.classic[meta.GroupID]
	if g == nil {
		return fmt.Errorf("%w: %q", ErrUnknownGroup, meta.GroupID)
	}
	if g.members[meta.MemberID] == nil {
		return fmt.Errorf("%w: %q in group %q", ErrUnknownMember, meta.MemberID, meta.GroupID)
	}
	if meta.Generation != g.generation {
		return fmt.Errorf("%w: generation %d, group is at %d", ErrIllegalGeneration, meta.Generation, g.generation)
	}
	p := g.pending[pid]
	if p == nil {
		p = map[TopicPartition]int64{}
		g.pending[pid] = p
	}
	for tp, off := range offsets {
		p[tp] = off
	}
	return nil
}

// offsetMarker applies a transaction marker to a classic group's pending
// offsets (journaled into op): commit makes them committed, abort drops
// them. Idempotent.
func (e *Engine) offsetMarker(op *syncPoint, group string, pid int64, commit bool) {
	gs := e.groupShard(group)
	gs.mu.Lock()
	defer gs.mu.Unlock()
	g := gs.mu.classic[group]
	if g == nil {
		return
	}
	applyOffsetMarker(g, pid, commit)
	e.jOffsetMarker(op, group, pid, commit)
}

// offsetsCommit reports whether a marker makes the producer's pending
// offsets the group's committed ones: only a commit marker does.
func offsetsCommit(commit bool) bool {
	if mutant.On("classic-abort-commits-offsets") {
		return true
	}
	return commit
}

// applyOffsetMarker is offsetMarker's change, shared with recovery.
func applyOffsetMarker(g *classicGroup, pid int64, commit bool) {
	if offsetsCommit(commit) {
		for tp, off := range g.pending[pid] {
			g.committed[tp] = off
		}
	}
	delete(g.pending, pid)
}
