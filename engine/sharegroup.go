// This file holds share groups: membership, sessions, polls that acquire
// records, and acknowledgements (implicit and explicit modes).

package engine

import (
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"
	"unsafe"

	"github.com/sharebench/sharebench/engine/internal/plog"
	"github.com/sharebench/sharebench/engine/internal/sharepart"
)

// AckType is an acknowledgement type (numbered as Kafka's ShareAcknowledge
// API numbers them).
type AckType uint8

// Acknowledgement types.
const (
	AckGap AckType = iota
	AckAccept
	AckRelease
	AckReject
	AckRenew
)

func (a AckType) String() string { return sharepart.AckType(a).String() }

// ackTypes views acknowledgement types as the share partition's: the two
// types have one underlying type, so the view is the same memory, with no
// copy on the acknowledgement path.
func ackTypes(ts []AckType) []sharepart.AckType {
	if len(ts) == 0 {
		return nil
	}
	return unsafe.Slice((*sharepart.AckType)(unsafe.Pointer(unsafe.SliceData(ts))), len(ts))
}

// Acknowledgement acknowledges offsets [First, Last] of one partition with
// Type, or with one type per offset when Types has Last-First+1 entries.
type Acknowledgement struct {
	Topic       string
	Partition   int32
	First, Last int64
	Type        AckType
	Types       []AckType
}

// GroupMetadata identifies a share-group member for fencing, as the
// consumer's groupMetadata() does; it travels with staged acknowledgements.
type GroupMetadata struct {
	GroupID     string
	MemberID    string
	MemberEpoch int32
}

// groupShard owns share groups and classic groups.
type groupShard struct {
	mu struct {
		sync.Mutex
		share   map[string]*shareGroup
		classic map[string]*classicGroup
	}
	_ [40]byte
}

type shareGroup struct {
	id        string
	cfg       GroupConfig
	members   map[string]*shareMemberState
	owners    map[sharepart.Owner]string // owner index -> member id, including departed members
	nextOwner sharepart.Owner
	epoch     int32 // group epoch: bumps on membership change
}

type shareMemberState struct {
	id       string
	owner    sharepart.Owner
	epoch    int32 // member epoch (docs/design.md §3.9): starts at 1, bumped on every assignment change
	topics   []string
	lastSeen time.Duration
}

// assignmentChangedLocked bumps the group epoch and the member epoch of
// every member, as the group coordinator does when the membership changes
// (KIP-848, KIP-932): every member of a share group is assigned every
// partition of its topics, so a join or a leave changes every member's
// assignment. Members learn their new epoch on their next poll; staging
// with the old one fails as fenced member epoch. The group shard lock is
// held.
func (g *shareGroup) assignmentChangedLocked() {
	g.epoch++
	for _, st := range g.members {
		st.epoch++
	}
}

// shareGroupLocked returns the share group id, creating it with the engine's
// defaults (journaled into op). The group shard lock is held.
func (e *Engine) shareGroupLocked(op *syncPoint, gs *groupShard, id string) (*shareGroup, error) {
	if _, ok := gs.mu.classic[id]; ok {
		return nil, fmt.Errorf("%w: %q is a classic group", ErrGroupTypeMismatch, id)
	}
	g := gs.mu.share[id]
	if g == nil {
		g = &shareGroup{id: id, cfg: e.cfg.group, members: map[string]*shareMemberState{}, owners: map[sharepart.Owner]string{}}
		gs.mu.share[id] = g
		e.jShareGroup(op, id, g.cfg)
	}
	return g, nil
}

// SetShareGroupConfig sets a share group's configuration (creating the
// group), as kafka-configs --entity-type groups does. Existing share
// partitions of the group take the new configuration (lock duration,
// delivery limit, window, acquire mode, dead-letter queue) for future
// transitions; records already acquired past a lowered window keep their
// locks until they are terminal.
func (e *Engine) SetShareGroupConfig(group string, cfg GroupConfig) error {
	if err := cfg.validate(); err != nil {
		return err
	}
	if err := e.enterWrite(); err != nil {
		return err
	}
	defer e.exit()
	var op syncPoint
	gs := e.groupShard(group)
	gs.mu.Lock()
	g, err := e.shareGroupLocked(&op, gs, group)
	if err == nil {
		g.cfg = cfg
		e.jShareGroup(&op, group, cfg)
	}
	gs.mu.Unlock()
	if err := e.finish(&op, err); err != nil {
		return err
	}
	for i := range e.data {
		ds := &e.data[i]
		ds.mu.Lock()
		for _, p := range ds.mu.parts {
			if sp := p.shares[group]; sp != nil {
				if err := sp.SetConfig(e.spConfig(cfg)); err != nil {
					ds.mu.Unlock()
					return err
				}
				p.dlq = p.dlq || cfg.DLQTopic != ""
			}
		}
		ds.mu.Unlock()
	}
	return nil
}

// ShareGroupConfig returns a share group's configuration.
func (e *Engine) ShareGroupConfig(group string) (GroupConfig, error) {
	if err := e.enter(); err != nil {
		return GroupConfig{}, err
	}
	defer e.exit()
	gs := e.groupShard(group)
	gs.mu.Lock()
	defer gs.mu.Unlock()
	g := gs.mu.share[group]
	if g == nil {
		return GroupConfig{}, fmt.Errorf("%w: %q", ErrUnknownGroup, group)
	}
	return g.cfg, nil
}

func (e *Engine) spConfig(g GroupConfig) sharepart.Config {
	return sharepart.Config{
		LockDuration: g.LockDuration, DeliveryLimit: g.DeliveryLimit, MaxRecordLocks: g.MaxRecordLocks,
		AcquireMode: sharepart.AcquireMode(g.AcquireMode), Knobs: sharepart.Knobs(e.cfg.knobs), KeepHistory: e.cfg.history,
		DeadLetterTopic: g.DLQTopic, CopyRecord: g.DLQCopyRecord,
	}
}

// ShareMember is one member of a share group: a share consumer's session.
// Its methods are safe for concurrent use but a member is meant to be driven
// by one goroutine, as a consumer is.
type ShareMember struct {
	e     *Engine
	group string
	id    string
	owner sharepart.Owner
	mode  AckMode

	mu struct {
		sync.Mutex
		epoch    int32
		topics   []string
		rotate   int
		lastPoll []Acknowledgement // implicit mode: ranges to accept on the next poll
		left     bool
	}
}

// JoinShareGroup joins group as a new member subscribed to topics, with the
// given acknowledgement mode, and returns the member. The group is created
// with the engine's defaults if it does not exist. Every member is assigned
// every partition of its topics: share groups let members share partitions.
func (e *Engine) JoinShareGroup(group string, topics []string, mode AckMode) (*ShareMember, error) {
	if group == "" {
		return nil, fmt.Errorf("%w: empty group id", ErrInvalidConfig)
	}
	if mode < AckImplicit || mode > AckTransactional {
		return nil, fmt.Errorf("%w: acknowledgement mode %d", ErrInvalidConfig, mode)
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
	g, err := e.shareGroupLocked(&op, gs, group)
	if err != nil {
		gs.mu.Unlock()
		return nil, err
	}
	g.nextOwner++
	g.assignmentChangedLocked()
	st := &shareMemberState{
		id:       fmt.Sprintf("%s-member-%d", group, e.nextMember.Add(1)),
		owner:    g.nextOwner,
		epoch:    1,
		topics:   append([]string(nil), topics...),
		lastSeen: now,
	}
	g.members[st.id] = st
	g.owners[st.owner] = st.id
	m := &ShareMember{e: e, group: group, id: st.id, owner: st.owner, mode: mode}
	m.mu.epoch = st.epoch
	// Members start polling at different partitions, so a group's members
	// do not all contend for partition 0's lock in lockstep.
	m.mu.rotate = int(st.owner - 1)
	m.mu.topics = st.topics
	gs.mu.Unlock()
	if err := e.finish(&op, nil); err != nil {
		return nil, err
	}
	return m, nil
}

// ID returns the member id.
func (m *ShareMember) ID() string { return m.id }

// Group returns the group id.
func (m *ShareMember) Group() string { return m.group }

// Metadata returns the member's group metadata for
// Producer.SendShareAcksToTransaction, with the member epoch the member
// learned on its last poll (or its join).
func (m *ShareMember) Metadata() GroupMetadata {
	m.mu.Lock()
	defer m.mu.Unlock()
	return GroupMetadata{GroupID: m.group, MemberID: m.id, MemberEpoch: m.mu.epoch}
}

// touchShareMember checks the member is still in its group, records that
// it is alive, and returns the group's configuration and the member's
// current epoch.
func (e *Engine) touchShareMember(group, memberID string, now time.Duration) (GroupConfig, int32, error) {
	gs := e.groupShard(group)
	gs.mu.Lock()
	defer gs.mu.Unlock()
	g := gs.mu.share[group]
	if g == nil {
		return GroupConfig{}, 0, fmt.Errorf("%w: %q", ErrUnknownGroup, group)
	}
	st := g.members[memberID]
	if st == nil {
		return GroupConfig{}, 0, fmt.Errorf("%w: %q in group %q", ErrUnknownMember, memberID, group)
	}
	st.lastSeen = now
	return g.cfg, st.epoch, nil
}

// partitionsOf lists the partitions of topics in a stable order.
func (e *Engine) partitionsOf(topics []string) ([]TopicPartition, error) {
	var out []TopicPartition
	for _, name := range topics {
		t, err := e.topic(name)
		if err != nil {
			return nil, err
		}
		for p := int32(0); p < t.partitions.Load(); p++ {
			out = append(out, TopicPartition{name, p})
		}
	}
	return out, nil
}

// sharePartitionLocked returns the group's share partition of p, creating
// it at the offset share.auto.offset.reset resolves to. The shard lock is
// held.
func (e *Engine) sharePartitionLocked(p *partition, group string, cfg GroupConfig) (*sharepart.SharePartition, error) {
	if sp := p.shares[group]; sp != nil {
		return sp, nil
	}
	start := e.hwLocked(p)
	if cfg.AutoOffsetReset == ResetEarliest {
		start = p.log.StartOffset()
	}
	sp, err := sharepart.New(e.spConfig(cfg), start)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidConfig, err)
	}
	p.shares[group] = sp
	p.groups = append(p.groups, group)
	sort.Strings(p.groups)
	p.dlq = p.dlq || cfg.DLQTopic != ""
	return sp, nil
}

type gapLog struct {
	l  *plog.Log
	rc bool
}

func (g gapLog) IsGap(o int64) bool { return g.l.IsGap(o, g.rc) }

func (g gapLog) BatchEnd(o int64, limit int) int64 { return g.l.BatchEnd(o, limit) }

// Poll acquires up to max records across the member's partitions, starting
// at a partition that rotates from poll to poll so no partition starves. It
// never blocks: with nothing to acquire it returns no records. In implicit
// mode it first accepts every record of the previous poll still held.
func (m *ShareMember) Poll(max int) ([]Record, error) { return m.PollAppend(nil, max) }

// PollAppend is Poll appending the records to dst, so a caller that polls
// in a loop reuses one buffer (the records' keys and values alias the
// engine's log, not dst).
func (m *ShareMember) PollAppend(dst []Record, max int) ([]Record, error) {
	e := m.e
	if err := e.enterWrite(); err != nil {
		return dst, err
	}
	defer e.exit()
	now := e.clock.Now()
	cfg, epoch, err := e.touchShareMember(m.group, m.id, now)
	if err != nil {
		return dst, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.mu.left {
		return dst, fmt.Errorf("%w: %s left the group", ErrUnknownMember, m.id)
	}
	// The poll's heartbeat tells the member its current epoch.
	m.mu.epoch = epoch
	// Acquisitions are not durable; what a poll journals (an implicit
	// acknowledgement, expired locks, archived gaps, a new share
	// partition) is durable before it returns.
	var op syncPoint
	if m.mode == AckImplicit && len(m.mu.lastPoll) > 0 {
		// Records whose lock expired or that were acknowledged meanwhile
		// fail their partition's implicit ack; they are redelivered, as
		// with Kafka's implicit mode.
		_, _ = m.acknowledgeLocked(&op, now, m.mu.lastPoll)
		m.mu.lastPoll = m.mu.lastPoll[:0]
	}
	parts, err := e.partitionsOf(m.mu.topics)
	if err != nil {
		return dst, e.finish(&op, err)
	}
	out := dst
	var ranges []sharepart.Range
	left := max
	n := len(parts)
	start := m.mu.rotate
	m.mu.rotate++
	for i := 0; i < n && left > 0; i++ {
		tp := parts[(start+i)%n]
		err := e.withPartitionOp(tp, &op, func(p *partition) error {
			sp, err := e.sharePartitionLocked(p, m.group, cfg)
			if err != nil {
				return err
			}
			fetchEnd := e.hwLocked(p)
			if cfg.Isolation == ReadCommitted {
				fetchEnd = e.lsoLocked(p)
			}
			ranges = sp.Acquire(now, m.owner, left, fetchEnd, gapLog{p.log, cfg.Isolation == ReadCommitted}, ranges[:0])
			for _, r := range ranges {
				for o := r.First; o <= r.Last; o++ {
					rec, err := p.log.Read(o)
					if err != nil {
						return err
					}
					out = append(out, toRecord(tp, &rec))
					out[len(out)-1].DeliveryCount = r.DeliveryCount
				}
				left -= int(r.Last - r.First + 1)
				if m.mode == AckImplicit {
					m.mu.lastPoll = append(m.mu.lastPoll, Acknowledgement{Topic: tp.Topic, Partition: tp.Partition, First: r.First, Last: r.Last, Type: AckAccept})
				}
			}
			return nil
		})
		if err != nil {
			return out, e.finish(&op, err)
		}
	}
	return out, e.finish(&op, nil)
}

// AckError reports the partitions whose acknowledgements failed; the
// others were applied. It unwraps to each partition's error.
type AckError struct {
	Partitions map[TopicPartition]error
}

func (e *AckError) Error() string {
	tps := make([]TopicPartition, 0, len(e.Partitions))
	for tp := range e.Partitions {
		tps = append(tps, tp)
	}
	sort.Slice(tps, func(i, j int) bool {
		if tps[i].Topic != tps[j].Topic {
			return tps[i].Topic < tps[j].Topic
		}
		return tps[i].Partition < tps[j].Partition
	})
	s := "engine: acknowledgement failed for"
	for i, tp := range tps {
		if i > 0 {
			s += ";"
		}
		s += fmt.Sprintf(" %s: %v", tp, e.Partitions[tp])
	}
	return s
}

// Unwrap returns every partition's error.
func (e *AckError) Unwrap() []error {
	out := make([]error, 0, len(e.Partitions))
	for _, err := range e.Partitions {
		out = append(out, err)
	}
	return out
}

// Acknowledge applies acknowledgements and commits them (explicit mode's
// commitSync). Each partition's acknowledgements apply all or nothing;
// failures are reported per partition in an *AckError. A record the member
// no longer holds fails its partition with an error matching
// ErrInvalidRecordState (Kafka's INVALID_RECORD_STATE): its lock expired
// and it is AVAILABLE, another member acquired it (ErrNotOwner too), or it
// is terminal inside the window. Offsets below the share-partition start
// offset are the exception, as in Kafka: they are terminal already and the
// acknowledgement is a no-op success (AcknowledgeReport names them). A
// member whose session ended fails the whole call with ErrUnknownMember.
func (m *ShareMember) Acknowledge(acks []Acknowledgement) error {
	_, err := m.AcknowledgeReport(acks)
	return err
}

// AcknowledgeReport is Acknowledge that also returns the acknowledgements,
// or their parts, that were no-op successes: below the share-partition
// start offset, so terminal before this call and not this member's to
// acknowledge (another member's acknowledgement, the delivery limit or the
// log start ended them). Acknowledge answers them as successes because
// Kafka does; a client that must know whether its own acknowledgement took
// effect (the load generator's ledger) counts them as not taken. noop
// lists only partitions that did not fail.
func (m *ShareMember) AcknowledgeReport(acks []Acknowledgement) (noop []Acknowledgement, err error) {
	if err := m.e.enterWrite(); err != nil {
		return nil, err
	}
	defer m.e.exit()
	now := m.e.clock.Now()
	if _, _, err := m.e.touchShareMember(m.group, m.id, now); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	var op syncPoint
	noop, err = m.acknowledgeLocked(&op, now, acks)
	return noop, m.e.finish(&op, err)
}

// byPartition groups acknowledgements into per-partition batches, keeping
// partitions in first-seen order.
func byPartition(acks []Acknowledgement) ([]TopicPartition, map[TopicPartition][]sharepart.Batch) {
	var order []TopicPartition
	m := map[TopicPartition][]sharepart.Batch{}
	for _, a := range acks {
		tp := TopicPartition{a.Topic, a.Partition}
		if _, ok := m[tp]; !ok {
			order = append(order, tp)
		}
		m[tp] = append(m[tp], sharepart.Batch{First: a.First, Last: a.Last, Type: sharepart.AckType(a.Type), Types: ackTypes(a.Types)})
	}
	return order, m
}

func (m *ShareMember) acknowledgeLocked(op *syncPoint, now time.Duration, acks []Acknowledgement) ([]Acknowledgement, error) {
	e := m.e
	order, batches := byPartition(acks)
	var failed map[TopicPartition]error
	var changed []string
	var noop []Acknowledgement
	for _, tp := range order {
		var nb []sharepart.Batch
		err := e.withPartitionOp(tp, op, func(p *partition) error {
			sp := p.shares[m.group]
			if sp == nil {
				return fmt.Errorf("%w: group %q never acquired from %s", ErrInvalidRecordState, m.group, tp)
			}
			var err error
			nb, err = sp.AcknowledgeNoOps(now, m.owner, batches[tp])
			return err
		})
		if err == nil {
			for _, b := range nb {
				a := Acknowledgement{Topic: tp.Topic, Partition: tp.Partition, First: b.First, Last: b.Last, Type: AckType(b.Type)}
				for _, t := range b.Types {
					a.Types = append(a.Types, AckType(t))
				}
				noop = append(noop, a)
			}
		}
		if err != nil {
			if failed == nil {
				failed = map[TopicPartition]error{}
			}
			failed[tp] = err
			continue
		}
		changed = append(changed, tp.Topic)
	}
	e.notifyTopics(changed)
	if failed != nil {
		return noop, &AckError{Partitions: failed}
	}
	return noop, nil
}

// Leave leaves the group: every record the member holds ACQUIRED becomes
// AVAILABLE with its delivery count reduced by one. TX_PENDING records stay
// with their transaction.
func (m *ShareMember) Leave() error {
	if err := m.e.enter(); err != nil {
		return err
	}
	defer m.e.exit()
	if !markLeft(&m.mu.Mutex, &m.mu.left) {
		return nil
	}
	return m.e.removeShareMember(m.group, m.id)
}

// markLeft sets a member handle's left flag under the handle's lock mu and
// reports whether this call set it: Leave is idempotent, and only the first
// call removes the member. It releases mu before returning, so Leave takes
// the group shard lock without it. Share and classic Leave share only this:
// classic then rebalances in memory under the group shard lock, while share
// must drop that lock before releasing the member's records, which takes
// data shard locks and waits for the journal (finish).
func markLeft(mu *sync.Mutex, left *bool) bool {
	mu.Lock()
	defer mu.Unlock()
	if *left {
		return false
	}
	*left = true
	return true
}

func (e *Engine) removeShareMember(group, memberID string) error {
	gs := e.groupShard(group)
	gs.mu.Lock()
	g := gs.mu.share[group]
	var st *shareMemberState
	if g != nil {
		st = g.members[memberID]
	}
	if st == nil {
		gs.mu.Unlock()
		return fmt.Errorf("%w: %q in group %q", ErrUnknownMember, memberID, group)
	}
	delete(g.members, memberID)
	g.assignmentChangedLocked()
	gs.mu.Unlock()
	e.stats.sessionsEnd.Add(1)
	e.releaseOwner(group, st.owner, st.topics)
	return nil
}

// releaseOwner releases a departed member's acquired records in every
// partition of its topics.
func (e *Engine) releaseOwner(group string, owner sharepart.Owner, topics []string) {
	parts, err := e.partitionsOf(topics)
	if err != nil {
		return
	}
	now := e.clock.Now()
	var changed []string
	var op syncPoint
	for _, tp := range parts {
		_ = e.withPartitionOp(tp, &op, func(p *partition) error {
			if sp := p.shares[group]; sp != nil && sp.ReleaseOwner(now, owner) > 0 {
				changed = append(changed, tp.Topic)
			}
			return nil
		})
	}
	_ = e.finish(&op, nil)
	e.notifyTopics(changed)
}

// expireSessions removes share and classic members silent for longer than
// the session timeout, releasing their records.
func (e *Engine) expireSessions(now time.Duration) {
	type gone struct {
		group  string
		owner  sharepart.Owner
		topics []string
	}
	var out []gone
	for i := range e.groups {
		gs := &e.groups[i]
		gs.mu.Lock()
		for _, g := range gs.mu.share {
			for id, st := range g.members {
				if now-st.lastSeen >= e.cfg.sessionTimeout {
					delete(g.members, id)
					g.assignmentChangedLocked()
					out = append(out, gone{g.id, st.owner, st.topics})
				}
			}
		}
		for _, g := range gs.mu.classic {
			g.expireLocked(now, e.cfg.sessionTimeout)
		}
		gs.mu.Unlock()
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].group != out[j].group {
			return out[i].group < out[j].group
		}
		return out[i].owner < out[j].owner
	})
	for _, g := range out {
		e.stats.sessionsEnd.Add(1)
		e.releaseOwner(g.group, g.owner, g.topics)
	}
}

// ErrorIsFenced reports whether err means a member or producer must be
// replaced rather than retried.
func ErrorIsFenced(err error) bool {
	return errors.Is(err, ErrProducerFenced) || errors.Is(err, ErrUnknownMember) ||
		errors.Is(err, ErrFencedMemberEpoch) || errors.Is(err, ErrIllegalGeneration)
}
