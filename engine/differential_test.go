// This file is the differential test of the engine: one seeded random
// operation log over the public API (topics, plain and transactional
// produce, share members joining, polling, acknowledging and leaving,
// KIP-1289 staging, commits, aborts, re-inits that fence zombies, a manual
// clock with FireTimers for lock expiry, session expiry and the transaction
// timeout sweep, delete-records, fetches) runs against the engine with one
// lock shard, with eight, and against the simple model in model_test.go.
// Each operation's rendered result and every share partition's window after
// it form a history; the histories must be identical. The log is generated
// from the model's state, so acknowledgements mostly name records the
// member really holds.
//
//	go test ./engine -run TestDifferential -diff.seed N [-diff.ops 3000]

package engine_test

import (
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/sharebench/sharebench/engine"
)

var (
	diffSeed = flag.Int64("diff.seed", 0, "seed of TestDifferential (0: time-based)")
	diffOps  = flag.Int("diff.ops", 2500, "operations per TestDifferential run")
	diffDump = flag.String("diff.dump", "", "directory to write TestDifferential's model histories to, for reading")
)

const (
	diffSessionTimeout = 12 * time.Second
	diffSweepInterval  = 2 * time.Second
)

var errDiffWrite = errors.New("differential test: injected staging write failure")

var diffTopics = []struct {
	name       string
	partitions int32
}{{"in", 2}, {"out", 1}}

var diffGroups = []struct {
	id  string
	cfg engine.GroupConfig
}{
	{"g1", engine.GroupConfig{LockDuration: 5 * time.Second, DeliveryLimit: 3, MaxRecordLocks: 6, AutoOffsetReset: engine.ResetEarliest}},
	{"g2", engine.GroupConfig{LockDuration: 3 * time.Second, DeliveryLimit: 2, MaxRecordLocks: 4, AutoOffsetReset: engine.ResetLatest, Isolation: engine.ReadCommitted}},
}

var diffTxnIDs = []string{"tx0", "tx1", "tx2"}

type diffKind int

const (
	dProduce diffKind = iota
	dJoin
	dPoll
	dAck
	dLeave
	dNewProducer
	dBegin
	dTxnProduce
	dStage
	dCommit
	dAbort
	dAdvance
	dDeleteRecords
	dFetch
	dCreateTopic
)

// diffOp is one operation of the log: plain data, so the same log replays
// against every system.
type diffOp struct {
	kind      diffKind
	tp        engine.TopicPartition
	n         int // records to produce, max to poll or fetch
	member    int // member handle
	group     string
	topics    []string
	mode      engine.AckMode
	handle    int // producer handle
	txnID     string
	timeout   time.Duration
	acks      []engine.Acknowledgement
	metaOf    int    // member whose metadata staging sends
	metaEpoch int32  // added to the member epoch (non-zero: stale)
	metaGroup string // overrides the group id when set
	failWrite bool   // the staging write fails (hook)
	d         time.Duration
	fire      bool
	offset    int64
	iso       engine.IsolationLevel
}

func (o *diffOp) String() string {
	switch o.kind {
	case dProduce:
		return fmt.Sprintf("produce %s n=%d", o.tp, o.n)
	case dJoin:
		return fmt.Sprintf("join m? group=%s topics=%v mode=%d", o.group, o.topics, o.mode)
	case dPoll:
		return fmt.Sprintf("poll m%d max=%d", o.member, o.n)
	case dAck:
		return fmt.Sprintf("ack m%d %s", o.member, diffRenderAcks(o.acks))
	case dLeave:
		return fmt.Sprintf("leave m%d", o.member)
	case dNewProducer:
		return fmt.Sprintf("newProducer %s timeout=%v", o.txnID, o.timeout)
	case dBegin:
		return fmt.Sprintf("begin p%d", o.handle)
	case dTxnProduce:
		return fmt.Sprintf("txnProduce p%d %s n=%d", o.handle, o.tp, o.n)
	case dStage:
		return fmt.Sprintf("stage p%d meta=m%d(epoch%+d group=%q) failWrite=%v %s", o.handle, o.metaOf, o.metaEpoch, o.metaGroup, o.failWrite, diffRenderAcks(o.acks))
	case dCommit:
		return fmt.Sprintf("commit p%d", o.handle)
	case dAbort:
		return fmt.Sprintf("abort p%d", o.handle)
	case dAdvance:
		return fmt.Sprintf("advance %v fire=%v", o.d, o.fire)
	case dDeleteRecords:
		return fmt.Sprintf("deleteRecords %s to=%d", o.tp, o.offset)
	case dFetch:
		return fmt.Sprintf("fetch %s from=%d max=%d iso=%d", o.tp, o.offset, o.n, o.iso)
	case dCreateTopic:
		return fmt.Sprintf("createTopic %s partitions=%d", o.tp.Topic, o.n)
	}
	return fmt.Sprintf("op(%d)", o.kind)
}

func diffRenderAcks(acks []engine.Acknowledgement) string {
	var s []string
	for _, a := range acks {
		if len(a.Types) > 0 {
			s = append(s, fmt.Sprintf("%s-%d[%d,%d]%v", a.Topic, a.Partition, a.First, a.Last, a.Types))
		} else {
			s = append(s, fmt.Sprintf("%s-%d[%d,%d]%v", a.Topic, a.Partition, a.First, a.Last, a.Type))
		}
	}
	return strings.Join(s, " ")
}

// ---- rendering shared by the model and the engine runner ----

func diffDescribe(st engine.RecordState, count int, owner string, deadline time.Duration, txn string, epoch int16, staged engine.AckType, reason engine.ArchiveReason) string {
	switch st {
	case engine.StateAvailable:
		return fmt.Sprintf("AVAILABLE c%d", count)
	case engine.StateAcquired:
		d := "nolock"
		if deadline != modelNoLock {
			d = "d" + deadline.String()
		}
		return fmt.Sprintf("ACQUIRED c%d %s %s", count, owner, d)
	case engine.StateAcknowledged:
		return fmt.Sprintf("ACKNOWLEDGED c%d", count)
	case engine.StateArchived:
		return fmt.Sprintf("ARCHIVED c%d %v", count, reason)
	case engine.StateTxPending:
		return fmt.Sprintf("TX_PENDING c%d %s e%d %v", count, txn, epoch, staged)
	}
	return st.String()
}

// windowWriter renders a window as runs of offsets with one description,
// "3-5:AVAILABLE c1 6:ACQUIRED c1 m2 d5s", however either side splits them.
type diffWindowWriter struct {
	b           strings.Builder
	first, last int64
	desc        string
}

func (w *diffWindowWriter) add(first, last int64, desc string) {
	if w.desc != "" && desc == w.desc && first == w.last+1 {
		w.last = last
		return
	}
	w.flush()
	w.first, w.last, w.desc = first, last, desc
}

func (w *diffWindowWriter) flush() {
	if w.desc == "" {
		return
	}
	if w.b.Len() > 0 {
		w.b.WriteByte(' ')
	}
	if w.first == w.last {
		fmt.Fprintf(&w.b, "%d:%s", w.first, w.desc)
	} else {
		fmt.Fprintf(&w.b, "%d-%d:%s", w.first, w.last, w.desc)
	}
	w.desc = ""
}

func (w *diffWindowWriter) String() string {
	w.flush()
	return w.b.String()
}

func diffRenderPolled(tp engine.TopicPartition, o int64, count int, value string) string {
	return fmt.Sprintf("%s@%dc%d=%s", tp, o, count, value)
}

func diffRenderPoll(recs []string, status string) string {
	return fmt.Sprintf("[%s] %s", strings.Join(recs, " "), status)
}

func diffRenderAckFailures(failed map[engine.TopicPartition]string) string {
	if len(failed) == 0 {
		return "ok"
	}
	var s []string
	for tp, c := range failed {
		s = append(s, tp.String()+":"+c)
	}
	sort.Strings(s)
	return "ack{" + strings.Join(s, ",") + "}"
}

// errClass names an error by the sentinel it wraps (errors.Is), and an
// *AckError by each partition's class.
func diffErrClass(err error) string {
	if err == nil {
		return "ok"
	}
	if errors.Is(err, engine.ErrAbortableTransaction) {
		// The cause is what the error wraps besides the sentinel.
		if u, ok := err.(interface{ Unwrap() []error }); ok {
			for _, c := range u.Unwrap() {
				if c != engine.ErrAbortableTransaction {
					return "ABORTABLE/" + diffErrClass(c)
				}
			}
		}
		return "ABORTABLE"
	}
	var ae *engine.AckError
	if errors.As(err, &ae) {
		failed := map[engine.TopicPartition]string{}
		for tp, e := range ae.Partitions {
			failed[tp] = diffErrClass(e)
		}
		return diffRenderAckFailures(failed)
	}
	for _, c := range []struct {
		name string
		err  error
	}{
		{"TIMED_OUT", engine.ErrTransactionTimedOut}, // wraps ErrProducerFenced too
		{"FENCED", engine.ErrProducerFenced},
		{"TXN_STATE", engine.ErrInvalidTxnState},
		{"UNKNOWN_TP", engine.ErrUnknownTopicOrPartition},
		{"TOPIC_EXISTS", engine.ErrTopicExists},
		{"UNKNOWN_GROUP", engine.ErrUnknownGroup},
		{"UNKNOWN_MEMBER", engine.ErrUnknownMember},
		{"MEMBER_EPOCH", engine.ErrFencedMemberEpoch},
		{"NOT_OWNER", engine.ErrNotOwner},
		{"RECORD_STATE", engine.ErrInvalidRecordState},
		{"LOG_RANGE", engine.ErrLogOffsetOutOfRange}, // a fetch error matches OUT_OF_RANGE too
		{"OUT_OF_RANGE", engine.ErrOffsetOutOfRange},
		{"ACK_TYPE", engine.ErrInvalidAckType},
		{"INVALID_REQUEST", engine.ErrInvalidRequest},
		{"WRITE_FAILED", errDiffWrite},
	} {
		if errors.Is(err, c.err) {
			return c.name
		}
	}
	return "ERR(" + err.Error() + ")"
}

// ---- the engine runner ----

type diffEngine struct {
	e         *engine.Engine
	clock     *engine.ManualClock
	members   []*engine.ShareMember
	producers []*engine.Producer
	names     map[string]string // member id -> m<handle>
	pids      map[int64]string  // producer id -> transactional id
	failWrite bool
}

func newDiffEngine(t *testing.T, shards int, knobs engine.Knobs) *diffEngine {
	t.Helper()
	r := &diffEngine{clock: engine.NewManualClock(), names: map[string]string{}, pids: map[int64]string{}}
	e, err := engine.New(
		engine.WithShards(shards), engine.WithClock(r.clock), engine.WithKnobs(knobs), engine.WithHistory(true),
		engine.WithMarkerDelivery(engine.MarkersInline), // the model applies markers in Commit
		engine.WithRetentionBytes(0), engine.WithAbortSweepInterval(diffSweepInterval),
		engine.WithSessionTimeout(diffSessionTimeout),
		engine.WithHook(func(pt engine.HookPoint, _ engine.HookInfo) error {
			if pt == engine.HookStageWrite && r.failWrite {
				return errDiffWrite
			}
			return nil
		}),
	)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	r.e = e
	for _, tc := range diffTopics {
		if err := e.CreateTopic(tc.name, tc.partitions); err != nil {
			t.Fatal(err)
		}
	}
	for _, g := range diffGroups {
		if err := e.SetShareGroupConfig(g.id, g.cfg); err != nil {
			t.Fatal(err)
		}
	}
	return r
}

func diffRecords(i, n int, prefix string) []engine.ProduceRecord {
	recs := make([]engine.ProduceRecord, n)
	for k := range recs {
		recs[k].Value = []byte(fmt.Sprintf("%s%d.%d", prefix, i, k))
	}
	return recs
}

func (r *diffEngine) apply(i int, o *diffOp) string {
	e := r.e
	switch o.kind {
	case dProduce:
		base, err := e.Produce(o.tp.Topic, o.tp.Partition, diffRecords(i, o.n, "v"))
		if err != nil {
			return diffErrClass(err)
		}
		return fmt.Sprintf("base=%d", base)
	case dJoin:
		m, err := e.JoinShareGroup(o.group, o.topics, o.mode)
		if err != nil {
			return diffErrClass(err)
		}
		r.names[m.ID()] = fmt.Sprintf("m%d", len(r.members))
		r.members = append(r.members, m)
		return "ok"
	case dPoll:
		recs, err := r.members[o.member].Poll(o.n)
		var out []string
		for _, rec := range recs {
			tp := engine.TopicPartition{Topic: rec.Topic, Partition: rec.Partition}
			out = append(out, diffRenderPolled(tp, rec.Offset, rec.DeliveryCount, string(rec.Value)))
		}
		return diffRenderPoll(out, diffErrClass(err))
	case dAck:
		return diffErrClass(r.members[o.member].Acknowledge(o.acks))
	case dLeave:
		return diffErrClass(r.members[o.member].Leave())
	case dNewProducer:
		p, err := e.NewProducer(engine.ProducerConfig{TransactionalID: o.txnID, TransactionTimeout: o.timeout})
		if err != nil {
			return diffErrClass(err)
		}
		r.producers = append(r.producers, p)
		r.pids[p.ProducerID()] = o.txnID
		return fmt.Sprintf("pid=%s epoch=%d", r.pids[p.ProducerID()], p.Epoch())
	case dBegin:
		return diffErrClass(r.producers[o.handle].Begin())
	case dTxnProduce:
		base, err := r.producers[o.handle].Produce(o.tp.Topic, o.tp.Partition, diffRecords(i, o.n, "t"))
		if err != nil {
			return diffErrClass(err)
		}
		return fmt.Sprintf("base=%d", base)
	case dStage:
		meta := r.members[o.metaOf].Metadata()
		meta.MemberEpoch += o.metaEpoch
		if o.metaGroup != "" {
			meta.GroupID = o.metaGroup
		}
		r.failWrite = o.failWrite
		err := r.producers[o.handle].SendShareAcksToTransaction(o.acks, meta)
		r.failWrite = false
		return diffErrClass(err)
	case dCommit:
		return diffErrClass(r.producers[o.handle].Commit())
	case dAbort:
		return diffErrClass(r.producers[o.handle].Abort())
	case dAdvance:
		r.clock.Advance(o.d)
		if !o.fire {
			return fmt.Sprintf("now=%v", e.Now())
		}
		e.FireTimers()
		return fmt.Sprintf("now=%v fired", e.Now())
	case dDeleteRecords:
		return diffErrClass(e.DeleteRecords(o.tp, o.offset))
	case dFetch:
		return r.fetch(o.tp, o.offset, o.n, o.iso)
	case dCreateTopic:
		return diffErrClass(e.CreateTopic(o.tp.Topic, int32(o.n)))
	}
	return "unknown op"
}

func (r *diffEngine) fetch(tp engine.TopicPartition, offset int64, max int, iso engine.IsolationLevel) string {
	recs, next, err := r.e.Fetch(tp, offset, max, iso)
	if err != nil {
		return diffErrClass(err)
	}
	var out []string
	for _, rec := range recs {
		out = append(out, fmt.Sprintf("%d=%s", rec.Offset, rec.Value))
	}
	return fmt.Sprintf("%s next=%d", strings.Join(out, ","), next)
}

func (r *diffEngine) describe(ri engine.RecordInfo) string {
	if !ri.Known {
		return "?"
	}
	return diffDescribe(ri.State, ri.DeliveryCount, r.names[ri.Owner], ri.LockDeadline, r.pids[ri.Producer], ri.Epoch, ri.Staged, ri.Reason)
}

// partitions lists every partition of every topic, topics sorted by name.
func (r *diffEngine) partitions() []engine.TopicPartition {
	var out []engine.TopicPartition
	for _, name := range r.e.Topics() {
		n, _ := r.e.Partitions(name)
		for p := int32(0); p < n; p++ {
			out = append(out, engine.TopicPartition{Topic: name, Partition: p})
		}
	}
	return out
}

func diffGroupIDs() []string {
	var ids []string
	for _, g := range diffGroups {
		ids = append(ids, g.id)
	}
	sort.Strings(ids)
	return ids
}

func (r *diffEngine) windows() []string {
	var out []string
	for _, id := range diffGroupIDs() {
		for _, tp := range r.partitions() {
			info, err := r.e.SharePartition(id, tp)
			if err != nil {
				out = append(out, fmt.Sprintf("%s/%s -", id, tp))
				continue
			}
			var w diffWindowWriter
			for _, rg := range info.Ranges {
				w.add(rg.First, rg.Last, r.describe(rg.Info))
			}
			out = append(out, fmt.Sprintf("%s/%s spso=%d end=%d inflight=%d [%s]", id, tp, info.SPSO, info.End, info.InFlight, w.String()))
		}
	}
	return out
}

func (r *diffEngine) final(t *testing.T) []string {
	var out []string
	for _, tp := range r.partitions() {
		start, hw, lso, err := r.e.Offsets(tp)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%s offsets start=%d hw=%d lso=%d", tp, start, hw, lso))
		out = append(out, fmt.Sprintf("%s read_committed %s", tp, r.fetch(tp, start, 1<<20, engine.ReadCommitted)))
		out = append(out, fmt.Sprintf("%s read_uncommitted %s", tp, r.fetch(tp, start, 1<<20, engine.ReadUncommitted)))
		for _, id := range diffGroupIDs() {
			for o := int64(0); o <= hw; o++ {
				ri, err := r.e.ShareRecord(id, tp, o)
				s := diffErrClass(err)
				if err == nil {
					s = r.describe(ri)
				}
				out = append(out, fmt.Sprintf("%s/%s@%d %s", id, tp, o, s))
			}
		}
	}
	for _, id := range diffTxnIDs {
		if info, ok := r.e.Transaction(id); ok {
			out = append(out, fmt.Sprintf("txn %s epoch=%d state=%v", r.pids[info.ProducerID], info.Epoch, info.State))
		}
	}
	if err := r.e.CheckInvariants(); err != nil {
		out = append(out, "CheckInvariants: "+err.Error())
	}
	return out
}

// ---- the generator ----

// diffGen writes the operation log, choosing each operation from the
// model's state, and records the model's history as it goes.
type diffGen struct {
	rng  *rand.Rand
	m    *diffModel
	ops  []diffOp
	hist []string
}

func newModelForDiff(knobs engine.Knobs) *diffModel {
	m := newDiffModel(knobs, diffSessionTimeout, diffSweepInterval)
	for _, tc := range diffTopics {
		m.createTopic(tc.name, tc.partitions)
	}
	for _, g := range diffGroups {
		m.setGroupConfig(g.id, g.cfg)
	}
	return m
}

func (m *diffModel) apply(i int, o *diffOp) string {
	switch o.kind {
	case dProduce:
		return m.produce(i, o.tp.Topic, o.tp.Partition, o.n)
	case dJoin:
		return m.join(fmt.Sprintf("m%d", len(m.members)), o.group, o.topics, o.mode)
	case dPoll:
		return m.poll(o.member, o.n)
	case dAck:
		return m.ack(o.member, o.acks)
	case dLeave:
		return m.leave(o.member)
	case dNewProducer:
		return m.newProducer(o.txnID, o.timeout)
	case dBegin:
		return m.begin(o.handle)
	case dTxnProduce:
		return m.txnProduce(i, o.handle, o.tp.Topic, o.tp.Partition, o.n)
	case dStage:
		mm := m.members[o.metaOf]
		group := mm.g.id
		if o.metaGroup != "" {
			group = o.metaGroup
		}
		return m.stage(o.handle, o.acks, group, mm.name, mm.learned+o.metaEpoch, o.failWrite)
	case dCommit:
		return m.end(o.handle, true)
	case dAbort:
		return m.end(o.handle, false)
	case dAdvance:
		return m.advance(o.d, o.fire)
	case dDeleteRecords:
		return m.deleteRecords(o.tp, o.offset)
	case dFetch:
		return m.fetch(o.tp, o.offset, o.n, o.iso)
	case dCreateTopic:
		if _, ok := m.topics[o.tp.Topic]; ok {
			return "TOPIC_EXISTS"
		}
		m.createTopic(o.tp.Topic, int32(o.n))
		return "ok"
	}
	return "unknown op"
}

func diffHistoryOf(i int, o *diffOp, result string, windows []string) []string {
	out := []string{fmt.Sprintf("#%d %s -> %s", i, o, result)}
	for _, w := range windows {
		out = append(out, fmt.Sprintf("#%d   %s", i, w))
	}
	return out
}

func diffGenerate(seed int64, knobs engine.Knobs, n int) ([]diffOp, []string) {
	g := &diffGen{rng: rand.New(rand.NewPCG(uint64(seed), 0xd1ff)), m: newModelForDiff(knobs)}
	for i := 0; i < n; i++ {
		o := g.next()
		g.ops = append(g.ops, o)
		res := g.m.apply(i, &o)
		g.hist = append(g.hist, diffHistoryOf(i, &o, res, g.m.windows())...)
	}
	return g.ops, append(g.hist, g.m.final()...)
}

func (g *diffGen) pick(n int) int { return g.rng.IntN(n) }

func (g *diffGen) randomTP() engine.TopicPartition {
	if g.pick(30) == 0 {
		return engine.TopicPartition{Topic: "in", Partition: 7} // unknown partition
	}
	tps := g.m.allPartitions()
	return tps[g.pick(len(tps))]
}

// member picks a member handle, mostly one still in its group.
func (g *diffGen) member() int {
	var in []int
	for i, mm := range g.m.members {
		if mm.inGroup {
			in = append(in, i)
		}
	}
	if len(in) > 0 && g.pick(10) > 0 {
		return in[g.pick(len(in))]
	}
	return g.pick(len(g.m.members))
}

// newest returns the newest producer handle of each transactional id.
func (g *diffGen) newest() map[string]int {
	h := map[string]int{}
	for i, p := range g.m.producers {
		h[p.txn] = i
	}
	return h
}

// producer picks a producer handle: mostly the newest of a transactional
// id whose transaction is (ongoing == true) open or (false) not, sometimes
// any handle at all (a zombie, or a call out of order).
func (g *diffGen) producer(ongoing bool) int {
	if g.pick(10) == 0 {
		return g.pick(len(g.m.producers))
	}
	var fit, all []int
	for _, id := range diffTxnIDs {
		h, ok := g.newest()[id]
		if !ok {
			continue
		}
		all = append(all, h)
		if (g.m.txns[id].state == engine.TxnOngoing) == ongoing {
			fit = append(fit, h)
		}
	}
	if len(fit) > 0 && g.pick(6) > 0 {
		return fit[g.pick(len(fit))]
	}
	return all[g.pick(len(all))]
}

// fencedID returns a transactional id whose newest producer is fenced, as
// a client would replace it, or "".
func (g *diffGen) fencedID() string {
	for _, id := range diffTxnIDs {
		if h, ok := g.newest()[id]; ok && g.m.producers[h].epoch != g.m.txns[id].epoch {
			return id
		}
	}
	return ""
}

// holder picks a member that holds acquired records, if any.
func (g *diffGen) holder() int {
	var hs []int
	for i, mm := range g.m.members {
		if mm.inGroup && len(g.held(mm)) > 0 {
			hs = append(hs, i)
		}
	}
	if len(hs) == 0 || g.pick(8) == 0 {
		return g.member()
	}
	return hs[g.pick(len(hs))]
}

func (g *diffGen) next() diffOp {
	m := g.m
	if len(m.producers) == 0 || len(m.producers) < len(diffTxnIDs) && g.pick(6) == 0 {
		return diffOp{kind: dNewProducer, txnID: diffTxnIDs[len(m.producers)%len(diffTxnIDs)], timeout: g.timeout()}
	}
	if id := g.fencedID(); id != "" && g.pick(4) == 0 {
		return diffOp{kind: dNewProducer, txnID: id, timeout: g.timeout()}
	}
	active := map[string]int{}
	for _, mm := range m.members {
		if mm.inGroup {
			active[mm.g.id]++
		}
	}
	w := g.pick(100)
	if active["g1"] < 2 || active["g2"] < 1 || w < 3 && len(m.members) < 200 {
		return g.join()
	}
	ongoing := false
	for _, t := range m.txns {
		ongoing = ongoing || t.state == engine.TxnOngoing
	}
	if !ongoing && w >= 56 && w < 87 && g.pick(5) > 0 {
		w = 50 // nothing to produce into, stage into or end: begin one
	}
	switch {
	case w < 16:
		tp := g.randomTP()
		return diffOp{kind: dProduce, tp: tp, n: 1 + g.pick(4)}
	case w < 34:
		return diffOp{kind: dPoll, member: g.member(), n: 1 + g.pick(6)}
	case w < 45:
		mi := g.holder()
		return diffOp{kind: dAck, member: mi, acks: g.acksFor(m.members[mi], false)}
	case w < 47:
		return diffOp{kind: dLeave, member: g.member()}
	case w < 49:
		return diffOp{kind: dNewProducer, txnID: diffTxnIDs[g.pick(len(diffTxnIDs))], timeout: g.timeout()}
	case w < 56:
		return diffOp{kind: dBegin, handle: g.producer(false)}
	case w < 65:
		tp := g.randomTP()
		return diffOp{kind: dTxnProduce, handle: g.producer(true), tp: tp, n: 1 + g.pick(3)}
	case w < 77:
		mi := g.holder()
		o := diffOp{kind: dStage, handle: g.producer(true), metaOf: mi, acks: g.acksFor(m.members[mi], true), failWrite: g.pick(25) == 0}
		switch g.pick(40) {
		case 0:
			o.metaEpoch = 1
		case 1:
			o.metaGroup = "nogroup"
		case 2:
			o.metaGroup = "g1"
			if m.members[mi].g.id == "g1" {
				o.metaGroup = "g2"
			}
		}
		return o
	case w < 84:
		return diffOp{kind: dCommit, handle: g.producer(true)}
	case w < 87:
		return diffOp{kind: dAbort, handle: g.producer(true)}
	case w < 95:
		// Steps of 250ms: lock deadlines, session and transaction timeouts
		// and the sweep interval are multiples, so "now == deadline" (the
		// boundary every timer must get right) happens often.
		d := time.Duration(1+g.pick(16)) * 250 * time.Millisecond
		if g.pick(6) == 0 {
			// Exactly one lock duration, session timeout or transaction
			// timeout: whatever was touched just before expires now.
			d = []time.Duration{3 * time.Second, 5 * time.Second, diffSessionTimeout, 6 * time.Second, 15 * time.Second, 40 * time.Second}[g.pick(6)]
		}
		return diffOp{kind: dAdvance, d: d, fire: g.pick(7) > 0}
	case w < 96 && g.pick(4) == 0:
		// A topic created mid-run (or an existing name: an error).
		name := []string{"late", "late", "in"}[g.pick(3)]
		return diffOp{kind: dCreateTopic, tp: engine.TopicPartition{Topic: name}, n: 2}
	case w < 96:
		tp := g.randomTP()
		o := diffOp{kind: dDeleteRecords, tp: tp}
		if l := m.log(tp); l != nil {
			o.offset = l.start + int64(g.pick(int(l.hw()-l.start)+2))
		}
		return o
	default:
		tp := g.randomTP()
		o := diffOp{kind: dFetch, tp: tp, n: 1 + g.pick(10), iso: engine.IsolationLevel(g.pick(2))}
		if l := m.log(tp); l != nil {
			o.offset = l.start - 1 + int64(g.pick(int(l.hw()-l.start)+3))
			o.offset = max(o.offset, 0)
		}
		return o
	}
}

func (g *diffGen) timeout() time.Duration {
	return []time.Duration{6 * time.Second, 15 * time.Second, 40 * time.Second}[g.pick(3)]
}

func (g *diffGen) join() diffOp {
	o := diffOp{kind: dJoin, group: "g1", mode: []engine.AckMode{engine.AckImplicit, engine.AckExplicit, engine.AckTransactional, engine.AckTransactional}[g.pick(4)]}
	if g.pick(3) == 0 {
		o.group = "g2"
	}
	switch g.pick(5) {
	case 0:
		o.topics = []string{"in"}
	case 1:
		o.topics = []string{"out"}
	case 2:
		o.topics = []string{"late", "in"} // unknown until created
	default:
		o.topics = []string{"in", "out"}
	}
	return o
}

type diffHeld struct {
	tp engine.TopicPartition
	o  int64
}

// held lists the records mm holds ACQUIRED, by partition and offset.
func (g *diffGen) held(mm *modelMember) []diffHeld {
	var held []diffHeld
	for _, tp := range g.m.allPartitions() {
		sp := mm.g.sps[tp]
		if sp == nil {
			continue
		}
		for o := sp.spso; o < sp.end; o++ {
			if r := sp.recs[o]; r.state == engine.StateAcquired && r.owner == mm {
				held = append(held, diffHeld{tp, o})
			}
		}
	}
	return held
}

// acksFor builds acknowledgements: mostly ranges of records mm holds, with
// a few that name other records, beyond-the-end offsets, malformed batches
// and invalid types.
func (g *diffGen) acksFor(mm *modelMember, staging bool) []engine.Acknowledgement {
	held := g.held(mm)
	typ := func() engine.AckType {
		n := g.pick(100)
		switch {
		case n < 2:
			return engine.AckType(9)
		case staging && n < 80:
			return engine.AckAccept
		case staging && n < 90:
			return engine.AckReject
		case staging && n < 96:
			return engine.AckGap
		case staging:
			return []engine.AckType{engine.AckRelease, engine.AckRenew}[n%2]
		case n < 50:
			return engine.AckAccept
		case n < 70:
			return engine.AckRelease
		case n < 82:
			return engine.AckReject
		case n < 94:
			return engine.AckRenew
		}
		return engine.AckGap
	}
	var acks []engine.Acknowledgement
	for k := 1 + g.pick(3); k > 0; k-- {
		var a engine.Acknowledgement
		if len(held) > 0 && g.pick(8) > 0 {
			i := g.pick(len(held))
			h := held[i]
			j := i
			for j+1 < len(held) && held[j+1].tp == h.tp && held[j+1].o == held[j].o+1 && g.pick(4) > 0 {
				j++
			}
			a = engine.Acknowledgement{Topic: h.tp.Topic, Partition: h.tp.Partition, First: h.o, Last: held[j].o}
			held = append(held[:i:i], held[j+1:]...)
		} else {
			tps := g.m.allPartitions()
			tp := tps[g.pick(len(tps))]
			first := int64(g.pick(4))
			if sp := mm.g.sps[tp]; sp != nil {
				first = max(sp.spso-1+int64(g.pick(int(sp.end-sp.spso)+3)), 0)
			}
			a = engine.Acknowledgement{Topic: tp.Topic, Partition: tp.Partition, First: first, Last: first + int64(g.pick(2))}
		}
		a.Type = typ()
		if g.pick(8) == 0 {
			a.Type = 0
			for o := a.First; o <= a.Last; o++ {
				a.Types = append(a.Types, typ())
			}
		}
		if g.pick(50) == 0 {
			a.First, a.Last, a.Types = a.Last+1, a.First, nil // malformed
		}
		acks = append(acks, a)
	}
	return acks
}

// ---- the test ----

func TestDifferential(t *testing.T) {
	t.Parallel()
	seed := *diffSeed
	if seed == 0 {
		seed = time.Now().UnixNano()
	}
	t.Logf("seed %d (%d operations)", seed, *diffOps)
	for _, kc := range []struct {
		name  string
		knobs engine.Knobs
	}{
		{"safe", engine.Knobs{}},
		{"draft", engine.Knobs{ExactEpochMatch: true, AbortToAvailableAtLimit: true, StageStopAtFirstFailure: true, RejectIdenticalRetry: true, FailedStageNoLock: true}},
		// The draft's exact epoch match leaves staged records pending for
		// ever and soon fills every window; without it the other draft
		// knobs see as much traffic as the safe ones.
		{"draft-but-epoch", engine.Knobs{AbortToAvailableAtLimit: true, StageStopAtFirstFailure: true, RejectIdenticalRetry: true, FailedStageNoLock: true}},
	} {
		t.Run(kc.name, func(t *testing.T) {
			t.Parallel()
			ops, want := diffGenerate(seed, kc.knobs, *diffOps)
			if *diffDump != "" {
				path := filepath.Join(*diffDump, fmt.Sprintf("differential-%s-%d.txt", kc.name, seed))
				if err := os.WriteFile(path, []byte(strings.Join(want, "\n")+"\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				t.Logf("model history written to %s", path)
			}
			for _, shards := range []int{1, 8} {
				r := newDiffEngine(t, shards, kc.knobs)
				var got []string
				for i := range ops {
					res := r.apply(i, &ops[i])
					got = append(got, diffHistoryOf(i, &ops[i], res, r.windows())...)
				}
				got = append(got, r.final(t)...)
				if k := diffFirst(want, got); k >= 0 {
					t.Errorf("engine with %d shards differs from the model at history line %d:\n%s",
						shards, k, diffContext(want, got, k))
					t.Logf("repro: go test ./engine -run 'TestDifferential/^%s$' -diff.seed %d -diff.ops %d", kc.name, seed, *diffOps)
					return
				}
			}
			t.Logf("%d operations, %d history lines: model, shards=1 and shards=8 agree; %s", len(ops), len(want), diffSummary(want))
		})
	}
}

func diffFirst(a, b []string) int {
	for i := 0; i < min(len(a), len(b)); i++ {
		if a[i] != b[i] {
			return i
		}
	}
	if len(a) != len(b) {
		return min(len(a), len(b))
	}
	return -1
}

// diffContext shows the ten operations leading to line k, the windows
// after the last of them, and the two versions of line k.
func diffContext(want, got []string, k int) string {
	isOp := func(l string) bool { return strings.Contains(l, " -> ") }
	last := k
	for last > 0 && !isOp(want[last-1]) {
		last--
	}
	last = max(last-1, 0)
	var b strings.Builder
	var ops []string
	for i := last - 1; i >= 0 && len(ops) < 10; i-- {
		if isOp(want[i]) {
			ops = append(ops, want[i])
		}
	}
	for i := len(ops) - 1; i >= 0; i-- {
		fmt.Fprintf(&b, "      %s\n", ops[i])
	}
	for _, l := range want[last:k] {
		fmt.Fprintf(&b, "      %s\n", l)
	}
	line := func(h []string) string {
		if k < len(h) {
			return h[k]
		}
		return "<end of history>"
	}
	fmt.Fprintf(&b, "  model:  %s\n  engine: %s", line(want), line(got))
	return b.String()
}

// diffSummary counts how often each kind of result occurred, so a run shows
// it exercised what it claims to.
func diffSummary(hist []string) string {
	var polled, staged, committed, fenced, timedOut, expired int
	for _, h := range hist {
		switch {
		case strings.Contains(h, " poll ") && strings.Contains(h, "-> [") && !strings.Contains(h, "-> [] "):
			polled++
		case strings.Contains(h, " stage ") && strings.HasSuffix(h, "-> ok"):
			staged++
		case strings.Contains(h, " commit ") && strings.HasSuffix(h, "-> ok"):
			committed++
		}
		if strings.HasSuffix(h, "-> FENCED") {
			fenced++
		}
		if strings.HasSuffix(h, "-> TIMED_OUT") {
			timedOut++
		}
		if strings.Contains(h, "delivery-limit") {
			expired++
		}
	}
	return fmt.Sprintf("non-empty polls %d, stagings %d, commits %d, fenced calls %d, timed-out calls %d, window lines at the delivery limit %d",
		polled, staged, committed, fenced, timedOut, expired)
}
