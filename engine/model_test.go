// This file is the deliberately simple model of the engine that
// differential_test.go compares the engine against: share groups,
// transactions and partition logs written as plainly as possible from
// docs/design.md §3 — a per-offset map of record states, a slice per log, no runs,
// no shards, no locks, one struct. Where the design is silent it follows the
// engine's documented choices (lazy lock expiry inside each share-partition
// call, markers at the transaction's epoch + 1, the epoch bumped again on
// re-init, staging-write failures undone per the FailedStageNoLock knob).
// It answers every operation with the same rendered result the engine
// runner produces, so histories compare line by line.

package engine_test

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/sharebench/sharebench/engine"
)

const modelNoLock = time.Duration(1<<63 - 1)

type modelEntry struct {
	value   string
	txn     string // transactional id of a transactional record or marker
	control bool
	aborted bool
}

type modelLog struct {
	entries []modelEntry
	start   int64
	open    map[string]int64 // transactional id -> first offset of its open transaction
}

func (l *modelLog) hw() int64 { return int64(len(l.entries)) }

func (l *modelLog) lso() int64 {
	lso := l.hw()
	for _, first := range l.open {
		lso = min(lso, first)
	}
	return lso
}

func (l *modelLog) isGap(o int64, rc bool) bool {
	if o < l.start || o >= l.hw() {
		return true
	}
	e := l.entries[o]
	return e.control || rc && e.aborted
}

func (l *modelLog) marker(txn string, commit bool) {
	first, ok := l.open[txn]
	if !ok {
		return // replayed, or the transaction never wrote here
	}
	delete(l.open, txn)
	if !commit {
		for o := max(first, l.start); o < l.hw(); o++ {
			if e := &l.entries[o]; e.txn == txn && !e.control {
				e.aborted = true
			}
		}
	}
	l.entries = append(l.entries, modelEntry{txn: txn, control: true})
}

type modelRec struct {
	state    engine.RecordState
	count    int
	owner    *modelMember
	deadline time.Duration
	txn      string // staging transaction while TX_PENDING
	epoch    int16
	staged   engine.AckType
	reason   engine.ArchiveReason
}

// modelSP is one share partition: every offset the group ever brought into
// its window has an entry in recs, terminal ones included (the engine keeps
// history), so state below SPSO needs no separate bookkeeping.
type modelSP struct {
	m        *diffModel
	tp       engine.TopicPartition
	g        *modelGroup
	start    int64 // where the window started; nothing is known below
	spso     int64
	end      int64
	logStart int64
	recs     map[int64]*modelRec
}

type modelGroup struct {
	id      string
	cfg     engine.GroupConfig
	members map[string]*modelMember // current members by name
	sps     map[engine.TopicPartition]*modelSP
	joins   int // members ever joined: a new member's first poll starts there
}

type modelMember struct {
	name     string
	g        *modelGroup
	topics   []string
	mode     engine.AckMode
	inGroup  bool
	left     bool
	lastSeen time.Duration
	rotate   int
	lastPoll []engine.Acknowledgement
	// epoch is the member epoch in the group (bumped on every join and
	// leave, docs/design.md §3.9); learned is the one its handle knows (its last
	// poll's).
	epoch, learned int32
}

// assignmentChanged bumps every member's epoch of g (a join or a leave).
func (g *modelGroup) assignmentChanged() {
	for _, mm := range g.members {
		mm.epoch++
	}
}

type modelTxn struct {
	id            string
	epoch         int16
	state         engine.TxnState
	timeout       time.Duration
	started       time.Duration
	parts         []engine.TopicPartition
	shares        []modelShareKey
	timedOutEpoch int16
}

type modelShareKey struct {
	group string
	tp    engine.TopicPartition
}

type modelProducer struct {
	txn   string
	epoch int16
	// abortable is the class of the staging failure that made the open
	// transaction abortable ("" if none).
	abortable string
}

type diffModel struct {
	knobs          engine.Knobs
	now            time.Duration
	sessionTimeout time.Duration
	sweepInterval  time.Duration
	lastSweep      time.Duration
	failWrite      bool

	topics    map[string]int32
	logs      map[engine.TopicPartition]*modelLog
	groups    map[string]*modelGroup
	groupIDs  []string
	members   []*modelMember
	txns      map[string]*modelTxn
	txnIDs    []string
	producers []*modelProducer
}

func newDiffModel(knobs engine.Knobs, sessionTimeout, sweepInterval time.Duration) *diffModel {
	return &diffModel{
		knobs: knobs, sessionTimeout: sessionTimeout, sweepInterval: sweepInterval,
		topics: map[string]int32{}, logs: map[engine.TopicPartition]*modelLog{},
		groups: map[string]*modelGroup{}, txns: map[string]*modelTxn{},
	}
}

func (m *diffModel) createTopic(name string, n int32) {
	m.topics[name] = n
	for p := int32(0); p < n; p++ {
		m.logs[engine.TopicPartition{Topic: name, Partition: p}] = &modelLog{open: map[string]int64{}}
	}
}

func (m *diffModel) setGroupConfig(id string, cfg engine.GroupConfig) {
	m.groups[id] = &modelGroup{id: id, cfg: cfg, members: map[string]*modelMember{}, sps: map[engine.TopicPartition]*modelSP{}}
	m.groupIDs = append(m.groupIDs, id)
	sort.Strings(m.groupIDs)
}

// partitionsOf lists the partitions of topics in subscription order.
func (m *diffModel) partitionsOf(topics []string) []engine.TopicPartition {
	var out []engine.TopicPartition
	for _, t := range topics {
		for p := int32(0); p < m.topics[t]; p++ {
			out = append(out, engine.TopicPartition{Topic: t, Partition: p})
		}
	}
	return out
}

func (m *diffModel) log(tp engine.TopicPartition) *modelLog { return m.logs[tp] }

// ---- the share partition, one offset at a time ----

func (sp *modelSP) advance() {
	for sp.spso < sp.end && sp.recs[sp.spso].state.Terminal() {
		sp.spso++
	}
}

func (sp *modelSP) makeAvailable(r *modelRec) {
	r.owner, r.deadline, r.txn, r.epoch, r.staged = nil, modelNoLock, "", 0, 0
	if r.count >= sp.g.cfg.DeliveryLimit {
		r.state, r.reason = engine.StateArchived, engine.ReasonLimit
		return
	}
	r.state = engine.StateAvailable
}

func (sp *modelSP) archiveBelowLogStart() {
	for o := sp.spso; o < min(sp.logStart, sp.end); o++ {
		if r := sp.recs[o]; r.state == engine.StateAvailable {
			r.state, r.reason = engine.StateArchived, engine.ReasonLogStart
		}
	}
}

// expire releases passed locks. Every share-partition call but
// UnstageFailed and AdvanceLogStart starts with it.
func (sp *modelSP) expire(now time.Duration) {
	for o := sp.spso; o < sp.end; o++ {
		if r := sp.recs[o]; r.state == engine.StateAcquired && r.deadline <= now {
			sp.makeAvailable(r)
		}
	}
	sp.archiveBelowLogStart()
	sp.advance()
}

// acquire returns the acquired offsets, lowest first.
func (sp *modelSP) acquire(now time.Duration, owner *modelMember, max int, fetchEnd int64, gap func(int64) bool) []int64 {
	sp.expire(now)
	limit := min(sp.spso+int64(sp.g.cfg.MaxRecordLocks), fetchEnd)
	var got []int64
	for o := sp.spso; o < sp.end && o < limit && len(got) < max; o++ {
		if r := sp.recs[o]; r.state == engine.StateAvailable {
			r.state, r.owner, r.deadline = engine.StateAcquired, owner, now+sp.g.cfg.LockDuration
			r.count++
			got = append(got, o)
		}
	}
	for len(got) < max && sp.end < limit {
		o := sp.end
		if gap(o) {
			sp.recs[o] = &modelRec{state: engine.StateArchived, reason: engine.ReasonGap, deadline: modelNoLock}
		} else {
			sp.recs[o] = &modelRec{state: engine.StateAcquired, owner: owner, deadline: now + sp.g.cfg.LockDuration, count: 1}
			got = append(got, o)
		}
		sp.end++
	}
	sp.advance()
	return got
}

func modelTypeOf(a engine.Acknowledgement, o int64) engine.AckType {
	if len(a.Types) > 0 {
		return a.Types[o-a.First]
	}
	return a.Type
}

func modelOverlapping(acks []engine.Acknowledgement) bool {
	for i, a := range acks {
		for _, b := range acks[:i] {
			if a.First <= a.Last && b.First <= b.Last && a.First <= b.Last && b.First <= a.Last {
				return true
			}
		}
	}
	return false
}

func modelShapeErr(a engine.Acknowledgement) string {
	if a.Last < a.First || len(a.Types) > 0 && int64(len(a.Types)) != a.Last-a.First+1 {
		return "INVALID_REQUEST"
	}
	return ""
}

// owned checks that every in-window offset of a is acquired by owner with
// an acceptable type.
func (sp *modelSP) owned(a engine.Acknowledgement, owner *modelMember, typeOK func(engine.AckType) string) string {
	if a.Last >= sp.end {
		return "OUT_OF_RANGE"
	}
	for o := max(a.First, sp.spso); o <= a.Last; o++ {
		r := sp.recs[o]
		switch {
		case r.state != engine.StateAcquired:
			return "RECORD_STATE"
		case r.owner != owner:
			return "NOT_OWNER"
		}
		if e := typeOK(modelTypeOf(a, o)); e != "" {
			return e
		}
	}
	return ""
}

func (sp *modelSP) acknowledge(now time.Duration, owner *modelMember, acks []engine.Acknowledgement) string {
	sp.expire(now)
	if modelOverlapping(acks) {
		return "INVALID_REQUEST"
	}
	for _, a := range acks {
		if e := modelShapeErr(a); e != "" {
			return e
		}
		if e := sp.owned(a, owner, func(t engine.AckType) string {
			if t > engine.AckRenew {
				return "ACK_TYPE"
			}
			return ""
		}); e != "" {
			return e
		}
	}
	for _, a := range acks {
		for o := max(a.First, sp.spso); o <= a.Last; o++ {
			r := sp.recs[o]
			switch t := modelTypeOf(a, o); t {
			case engine.AckAccept:
				r.state, r.owner, r.deadline = engine.StateAcknowledged, nil, modelNoLock
			case engine.AckReject, engine.AckGap:
				r.state, r.owner, r.deadline, r.reason = engine.StateArchived, nil, modelNoLock, engine.ReasonRejected
				if t == engine.AckGap {
					r.reason = engine.ReasonGap
				}
			case engine.AckRelease:
				sp.makeAvailable(r)
			case engine.AckRenew:
				r.deadline = now + sp.g.cfg.LockDuration
			}
		}
	}
	sp.archiveBelowLogStart()
	sp.advance()
	return ""
}

func (sp *modelSP) identicalRetry(a engine.Acknowledgement, txn string, epoch int16) bool {
	first := max(a.First, sp.spso)
	if a.Last >= sp.end || first > a.Last {
		return false
	}
	for o := first; o <= a.Last; o++ {
		r := sp.recs[o]
		if r.state != engine.StateTxPending || r.txn != txn || r.epoch != epoch || r.staged != modelTypeOf(a, o) {
			return false
		}
	}
	return true
}

func (sp *modelSP) stage(now time.Duration, owner *modelMember, txn string, epoch int16, acks []engine.Acknowledgement) string {
	sp.expire(now)
	if modelOverlapping(acks) {
		return "INVALID_REQUEST"
	}
	validate := func(a engine.Acknowledgement) string {
		if e := modelShapeErr(a); e != "" {
			return e
		}
		if sp.identicalRetry(a, txn, epoch) {
			if sp.m.knobs.RejectIdenticalRetry {
				return "RECORD_STATE"
			}
			return ""
		}
		return sp.owned(a, owner, func(t engine.AckType) string {
			switch t {
			case engine.AckAccept, engine.AckReject, engine.AckGap:
				return ""
			case engine.AckRelease, engine.AckRenew:
				return "INVALID_REQUEST"
			}
			return "ACK_TYPE"
		})
	}
	apply := func(a engine.Acknowledgement) {
		if sp.identicalRetry(a, txn, epoch) {
			return
		}
		for o := max(a.First, sp.spso); o <= a.Last; o++ {
			r := sp.recs[o]
			r.state, r.owner, r.deadline = engine.StateTxPending, nil, modelNoLock
			r.txn, r.epoch, r.staged = txn, epoch, modelTypeOf(a, o)
		}
	}
	if sp.m.knobs.StageStopAtFirstFailure {
		for _, a := range acks {
			if e := validate(a); e != "" {
				return e
			}
			apply(a)
		}
		return ""
	}
	for _, a := range acks {
		if e := validate(a); e != "" {
			return e
		}
	}
	for _, a := range acks {
		apply(a)
	}
	return ""
}

func (sp *modelSP) unstageFailed(now time.Duration, owner *modelMember, txn string, epoch int16, acks []engine.Acknowledgement) {
	deadline := now + sp.g.cfg.LockDuration
	if sp.m.knobs.FailedStageNoLock {
		deadline = modelNoLock
	}
	for _, a := range acks {
		for o := max(a.First, sp.spso); o <= min(a.Last, sp.end-1); o++ {
			if r := sp.recs[o]; r.state == engine.StateTxPending && r.txn == txn && r.epoch == epoch {
				r.state, r.owner, r.deadline = engine.StateAcquired, owner, deadline
				r.txn, r.epoch, r.staged = "", 0, 0
			}
		}
	}
}

func (sp *modelSP) marker(now time.Duration, txn string, epoch int16, commit bool) {
	sp.expire(now)
	for o := sp.spso; o < sp.end; o++ {
		r := sp.recs[o]
		if r.state != engine.StateTxPending || r.txn != txn {
			continue
		}
		if sp.m.knobs.ExactEpochMatch && epoch != r.epoch || !sp.m.knobs.ExactEpochMatch && epoch < r.epoch {
			continue
		}
		staged := r.staged
		r.txn, r.epoch, r.staged, r.owner, r.deadline = "", 0, 0, nil, modelNoLock
		switch {
		case commit && staged == engine.AckAccept:
			r.state = engine.StateAcknowledged
		case commit:
			r.state, r.reason = engine.StateArchived, engine.ReasonRejected
			if staged == engine.AckGap {
				r.reason = engine.ReasonGap
			}
		case r.count >= sp.g.cfg.DeliveryLimit && !sp.m.knobs.AbortToAvailableAtLimit:
			r.state, r.reason = engine.StateArchived, engine.ReasonLimit
		default:
			r.state = engine.StateAvailable
		}
	}
	sp.archiveBelowLogStart()
	sp.advance()
}

func (sp *modelSP) releaseOwner(now time.Duration, owner *modelMember) {
	sp.expire(now)
	for o := sp.spso; o < sp.end; o++ {
		if r := sp.recs[o]; r.state == engine.StateAcquired && r.owner == owner {
			r.state, r.owner, r.deadline = engine.StateAvailable, nil, modelNoLock
			if r.count > 0 {
				r.count--
			}
		}
	}
	sp.archiveBelowLogStart()
	sp.advance()
}

func (sp *modelSP) advanceLogStart(offset int64) {
	sp.logStart = max(sp.logStart, offset)
	if offset <= sp.spso {
		return
	}
	for ; sp.end < offset; sp.end++ {
		sp.recs[sp.end] = &modelRec{state: engine.StateArchived, reason: engine.ReasonLogStart, deadline: modelNoLock}
	}
	sp.archiveBelowLogStart()
	sp.advance()
}

func (sp *modelSP) inFlight() int {
	n := 0
	for o := sp.spso; o < sp.end; o++ {
		if !sp.recs[o].state.Terminal() {
			n++
		}
	}
	return n
}

// describe renders offset o as the engine runner renders ShareRecord.
func (sp *modelSP) describe(o int64) string {
	switch {
	case o >= sp.end && o >= sp.m.log(sp.tp).hw():
		return "?" // past the log end: no record (ShareRecord's Known false)
	case o >= sp.end:
		return "AVAILABLE c0"
	case o < sp.start:
		return "?"
	}
	r := sp.recs[o]
	owner, txn := "", ""
	if r.owner != nil {
		owner = r.owner.name
	}
	txn = r.txn
	return diffDescribe(r.state, r.count, owner, r.deadline, txn, r.epoch, r.staged, r.reason)
}

// ---- the engine's API ----

func (m *diffModel) sp(g *modelGroup, tp engine.TopicPartition) *modelSP {
	if sp := g.sps[tp]; sp != nil {
		return sp
	}
	l := m.log(tp)
	start := l.hw()
	if g.cfg.AutoOffsetReset == engine.ResetEarliest {
		start = l.start
	}
	sp := &modelSP{m: m, tp: tp, g: g, start: start, spso: start, end: start, recs: map[int64]*modelRec{}}
	g.sps[tp] = sp
	return sp
}

// appendTo appends and applies retention (none: the start never moves, but
// the engine tells share partitions the start after every append once it
// is above 0).
func (m *diffModel) appendTo(tp engine.TopicPartition, entries []modelEntry) int64 {
	l := m.log(tp)
	base := l.hw()
	l.entries = append(l.entries, entries...)
	if l.start > 0 {
		for _, id := range m.groupIDs {
			if sp := m.groups[id].sps[tp]; sp != nil {
				sp.advanceLogStart(l.start)
			}
		}
	}
	return base
}

func (m *diffModel) produce(i int, topic string, part int32, n int) string {
	tp := engine.TopicPartition{Topic: topic, Partition: part}
	if m.log(tp) == nil {
		return "UNKNOWN_TP"
	}
	entries := make([]modelEntry, n)
	for k := range entries {
		entries[k].value = fmt.Sprintf("v%d.%d", i, k)
	}
	return fmt.Sprintf("base=%d", m.appendTo(tp, entries))
}

func (m *diffModel) join(name, group string, topics []string, mode engine.AckMode) string {
	for _, t := range topics {
		if _, ok := m.topics[t]; !ok {
			return "UNKNOWN_TP"
		}
	}
	g := m.groups[group]
	g.assignmentChanged()
	mm := &modelMember{name: name, g: g, topics: topics, mode: mode, inGroup: true, lastSeen: m.now, rotate: g.joins, epoch: 1, learned: 1}
	g.joins++
	g.members[name] = mm
	m.members = append(m.members, mm)
	return "ok"
}

// acknowledgeAll applies acknowledgements partition by partition (all or
// nothing each) and renders the failures as the engine's AckError.
func (m *diffModel) acknowledgeAll(mm *modelMember, acks []engine.Acknowledgement) string {
	order, by := modelByPartition(acks)
	failed := map[engine.TopicPartition]string{}
	for _, tp := range order {
		if m.log(tp) == nil {
			failed[tp] = "UNKNOWN_TP"
			continue
		}
		sp := mm.g.sps[tp]
		if sp == nil {
			failed[tp] = "RECORD_STATE"
			continue
		}
		if e := sp.acknowledge(m.now, mm, by[tp]); e != "" {
			failed[tp] = e
		}
	}
	return diffRenderAckFailures(failed)
}

func (m *diffModel) poll(idx, max int) string {
	mm := m.members[idx]
	if !mm.inGroup {
		return diffRenderPoll(nil, "UNKNOWN_MEMBER")
	}
	mm.lastSeen = m.now
	mm.learned = mm.epoch
	if mm.mode == engine.AckImplicit && len(mm.lastPoll) > 0 {
		m.acknowledgeAll(mm, mm.lastPoll)
		mm.lastPoll = nil
	}
	parts := m.partitionsOf(mm.topics)
	start := mm.rotate
	mm.rotate++
	var out []string
	left := max
	for i := 0; i < len(parts) && left > 0; i++ {
		tp := parts[(start+i)%len(parts)]
		sp := m.sp(mm.g, tp)
		l := m.log(tp)
		rc := mm.g.cfg.Isolation == engine.ReadCommitted
		fetchEnd := l.hw()
		if rc {
			fetchEnd = l.lso()
		}
		for _, o := range sp.acquire(m.now, mm, left, fetchEnd, func(o int64) bool { return l.isGap(o, rc) }) {
			out = append(out, diffRenderPolled(tp, o, sp.recs[o].count, l.entries[o].value))
			left--
			if mm.mode == engine.AckImplicit {
				mm.lastPoll = append(mm.lastPoll, engine.Acknowledgement{Topic: tp.Topic, Partition: tp.Partition, First: o, Last: o, Type: engine.AckAccept})
			}
		}
	}
	return diffRenderPoll(out, "ok")
}

func (m *diffModel) ack(idx int, acks []engine.Acknowledgement) string {
	mm := m.members[idx]
	if !mm.inGroup {
		return "UNKNOWN_MEMBER"
	}
	mm.lastSeen = m.now
	return m.acknowledgeAll(mm, acks)
}

func (m *diffModel) removeMember(mm *modelMember) {
	mm.inGroup = false
	delete(mm.g.members, mm.name)
	mm.g.assignmentChanged()
	for _, tp := range m.partitionsOf(mm.topics) {
		if sp := mm.g.sps[tp]; sp != nil {
			sp.releaseOwner(m.now, mm)
		}
	}
}

func (m *diffModel) leave(idx int) string {
	mm := m.members[idx]
	if mm.left {
		return "ok"
	}
	mm.left = true
	if !mm.inGroup {
		return "UNKNOWN_MEMBER"
	}
	m.removeMember(mm)
	return "ok"
}

func (m *diffModel) newProducer(id string, timeout time.Duration) string {
	t := m.txns[id]
	if t == nil {
		t = &modelTxn{id: id, timeout: timeout, timedOutEpoch: -1}
		m.txns[id] = t
		m.txnIDs = append(m.txnIDs, id)
		sort.Strings(m.txnIDs)
	} else {
		if t.state == engine.TxnOngoing {
			m.endTxn(t, false) // fence the previous producer: abort its transaction
		}
		t.epoch++
		t.state, t.timeout = engine.TxnEmpty, timeout
	}
	m.producers = append(m.producers, &modelProducer{txn: id, epoch: t.epoch})
	return fmt.Sprintf("pid=%s epoch=%d", id, t.epoch)
}

// fenced is the check every transactional call starts with.
func (m *diffModel) fenced(p *modelProducer) (*modelTxn, string) {
	t := m.txns[p.txn]
	if t.epoch != p.epoch {
		if t.timedOutEpoch == p.epoch {
			return t, "TIMED_OUT"
		}
		return t, "FENCED"
	}
	return t, ""
}

func (m *diffModel) begin(h int) string {
	t, e := m.fenced(m.producers[h])
	if e != "" {
		return e
	}
	switch t.state {
	case engine.TxnEmpty, engine.TxnCompleteCommit, engine.TxnCompleteAbort:
	default:
		return "TXN_STATE"
	}
	t.state, t.started = engine.TxnOngoing, m.now
	return "ok"
}

func (m *diffModel) txnProduce(i, h int, topic string, part int32, n int) string {
	if _, ok := m.topics[topic]; !ok {
		return "UNKNOWN_TP"
	}
	t, e := m.fenced(m.producers[h])
	if e != "" {
		return e
	}
	if a := m.producers[h].abortable; a != "" {
		return "ABORTABLE/" + a
	}
	if t.state != engine.TxnOngoing {
		return "TXN_STATE"
	}
	tp := engine.TopicPartition{Topic: topic, Partition: part}
	l := m.log(tp)
	if l == nil {
		return "UNKNOWN_TP"
	}
	if !modelContainsTP(t.parts, tp) {
		t.parts = append(t.parts, tp)
	}
	if _, open := l.open[t.id]; !open {
		l.open[t.id] = l.hw()
	}
	entries := make([]modelEntry, n)
	for k := range entries {
		entries[k] = modelEntry{value: fmt.Sprintf("t%d.%d", i, k), txn: t.id}
	}
	return fmt.Sprintf("base=%d", m.appendTo(tp, entries))
}

func modelContainsTP(tps []engine.TopicPartition, tp engine.TopicPartition) bool {
	for _, x := range tps {
		if x == tp {
			return true
		}
	}
	return false
}

func (m *diffModel) stage(h int, acks []engine.Acknowledgement, group, memberName string, memberEpoch int32, failWrite bool) string {
	p := m.producers[h]
	t, e := m.fenced(p)
	if e != "" {
		return e
	}
	if p.abortable != "" {
		return "ABORTABLE/" + p.abortable
	}
	// A failed staging leaves the transaction abortable (docs/design.md §3.3).
	r := m.stageOngoing(t, acks, group, memberName, memberEpoch, failWrite)
	if r != "ok" && r != "TXN_STATE" {
		p.abortable = r
		return "ABORTABLE/" + r
	}
	return r
}

func (m *diffModel) stageOngoing(t *modelTxn, acks []engine.Acknowledgement, group, memberName string, memberEpoch int32, failWrite bool) string {
	if t.state != engine.TxnOngoing {
		return "TXN_STATE"
	}
	g := m.groups[group]
	if g == nil {
		return "UNKNOWN_GROUP"
	}
	mm := g.members[memberName]
	if mm == nil {
		return "UNKNOWN_MEMBER"
	}
	if memberEpoch != mm.epoch {
		return "MEMBER_EPOCH"
	}
	mm.lastSeen = m.now
	order, by := modelByPartition(acks)
	failed := map[engine.TopicPartition]string{}
	for _, tp := range order {
		k := modelShareKey{group, tp}
		found := false
		for _, x := range t.shares {
			found = found || x == k
		}
		if !found {
			t.shares = append(t.shares, k)
		}
		if m.log(tp) == nil {
			failed[tp] = "UNKNOWN_TP"
			continue
		}
		sp := g.sps[tp]
		if sp == nil {
			failed[tp] = "RECORD_STATE"
			continue
		}
		// Staging is not an ack: a record below SPSO is terminal, and
		// staging a terminal record is rejected (docs/design.md §3.3), or a member
		// whose lock expired could commit a second output for records
		// another member committed. (The engine checks this in txn.go,
		// before the share partition's own checks.)
		sp.expire(m.now)
		below := false
		for _, a := range by[tp] {
			below = below || a.First < sp.spso
		}
		if below {
			failed[tp] = "RECORD_STATE"
			continue
		}
		if e := sp.stage(m.now, mm, t.id, t.epoch, by[tp]); e != "" {
			failed[tp] = e
			continue
		}
		if failWrite {
			sp.unstageFailed(m.now, mm, t.id, t.epoch, by[tp])
			failed[tp] = "WRITE_FAILED"
		}
	}
	return diffRenderAckFailures(failed)
}

func (m *diffModel) end(h int, commit bool) string {
	p := m.producers[h]
	t, e := m.fenced(p)
	if e != "" {
		return e
	}
	if commit && p.abortable != "" {
		return "ABORTABLE/" + p.abortable
	}
	p.abortable = ""
	if t.state != engine.TxnOngoing {
		if commit {
			return "TXN_STATE"
		}
		return "ok"
	}
	m.endTxn(t, commit)
	p.epoch = t.epoch
	return "ok"
}

// endTxn writes markers at epoch + 1 to every participant, then bumps the
// epoch.
func (m *diffModel) endTxn(t *modelTxn, commit bool) {
	markerEpoch := t.epoch + 1
	for _, tp := range t.parts {
		m.log(tp).marker(t.id, commit)
	}
	for _, k := range t.shares {
		if sp := m.groups[k.group].sps[k.tp]; sp != nil {
			sp.marker(m.now, t.id, markerEpoch, commit)
		}
	}
	t.state = engine.TxnCompleteAbort
	if commit {
		t.state = engine.TxnCompleteCommit
	}
	t.parts, t.shares = nil, nil
	t.epoch++
}

func (m *diffModel) advance(d time.Duration, fire bool) string {
	m.now += d
	if !fire {
		return fmt.Sprintf("now=%v", m.now)
	}
	// Sessions first (their release expires due locks first), then locks,
	// then the abort sweep at most once per interval.
	for _, mm := range m.members {
		if mm.inGroup && m.now-mm.lastSeen >= m.sessionTimeout {
			m.removeMember(mm)
		}
	}
	for _, id := range m.groupIDs {
		for _, sp := range m.groups[id].sps {
			sp.expire(m.now)
		}
	}
	if m.now-m.lastSweep >= m.sweepInterval {
		m.lastSweep = m.now
		for _, id := range m.txnIDs {
			if t := m.txns[id]; t.state == engine.TxnOngoing && m.now-t.started >= t.timeout {
				epoch := t.epoch
				m.endTxn(t, false)
				t.timedOutEpoch = epoch
			}
		}
	}
	return fmt.Sprintf("now=%v fired", m.now)
}

func (m *diffModel) deleteRecords(tp engine.TopicPartition, offset int64) string {
	l := m.log(tp)
	if l == nil {
		return "UNKNOWN_TP"
	}
	if offset > l.hw() {
		return "LOG_RANGE"
	}
	l.start = max(l.start, offset)
	for _, id := range m.groupIDs {
		if sp := m.groups[id].sps[tp]; sp != nil {
			sp.advanceLogStart(l.start)
		}
	}
	return "ok"
}

func (m *diffModel) fetch(tp engine.TopicPartition, offset int64, max int, iso engine.IsolationLevel) string {
	l := m.log(tp)
	if l == nil {
		return "UNKNOWN_TP"
	}
	if offset < l.start || offset > l.hw() {
		return "LOG_RANGE"
	}
	end := l.hw()
	if iso == engine.ReadCommitted {
		end = l.lso()
	}
	var out []string
	o := offset
	for ; o < end && max > 0; o++ {
		e := l.entries[o]
		if e.control || iso == engine.ReadCommitted && e.aborted {
			continue
		}
		out = append(out, fmt.Sprintf("%d=%s", o, e.value))
		max--
	}
	return fmt.Sprintf("%s next=%d", strings.Join(out, ","), o)
}

// ---- rendering shared with the engine runner ----

func (m *diffModel) windows() []string {
	var out []string
	for _, id := range m.groupIDs {
		g := m.groups[id]
		for _, tp := range m.allPartitions() {
			sp := g.sps[tp]
			if sp == nil {
				out = append(out, fmt.Sprintf("%s/%s -", id, tp))
				continue
			}
			var w diffWindowWriter
			var prev modelRec
			desc := ""
			for o := sp.spso; o < sp.end; o++ {
				if r := *sp.recs[o]; desc == "" || r != prev {
					prev, desc = r, sp.describe(o)
				}
				w.add(o, o, desc)
			}
			out = append(out, fmt.Sprintf("%s/%s spso=%d end=%d inflight=%d [%s]", id, tp, sp.spso, sp.end, sp.inFlight(), w.String()))
		}
	}
	return out
}

func (m *diffModel) allPartitions() []engine.TopicPartition {
	names := make([]string, 0, len(m.topics))
	for n := range m.topics {
		names = append(names, n)
	}
	sort.Strings(names)
	return m.partitionsOf(names)
}

func (m *diffModel) final() []string {
	var out []string
	for _, tp := range m.allPartitions() {
		l := m.log(tp)
		out = append(out, fmt.Sprintf("%s offsets start=%d hw=%d lso=%d", tp, l.start, l.hw(), l.lso()))
		out = append(out, fmt.Sprintf("%s read_committed %s", tp, m.fetch(tp, l.start, 1<<20, engine.ReadCommitted)))
		out = append(out, fmt.Sprintf("%s read_uncommitted %s", tp, m.fetch(tp, l.start, 1<<20, engine.ReadUncommitted)))
		for _, id := range m.groupIDs {
			sp := m.groups[id].sps[tp]
			for o := int64(0); o <= l.hw(); o++ {
				s := "UNKNOWN_GROUP"
				if sp != nil {
					s = sp.describe(o)
				}
				out = append(out, fmt.Sprintf("%s/%s@%d %s", id, tp, o, s))
			}
		}
	}
	for _, id := range m.txnIDs {
		t := m.txns[id]
		out = append(out, fmt.Sprintf("txn %s epoch=%d state=%v", id, t.epoch, t.state))
	}
	return out
}

func modelByPartition(acks []engine.Acknowledgement) ([]engine.TopicPartition, map[engine.TopicPartition][]engine.Acknowledgement) {
	var order []engine.TopicPartition
	by := map[engine.TopicPartition][]engine.Acknowledgement{}
	for _, a := range acks {
		tp := engine.TopicPartition{Topic: a.Topic, Partition: a.Partition}
		if _, ok := by[tp]; !ok {
			order = append(order, tp)
		}
		by[tp] = append(by[tp], a)
	}
	return order, by
}
