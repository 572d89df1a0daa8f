// This file tests the engine's durability (WithDataDir): a round trip of
// every kind of durable state through Close and New, Restart after Crash,
// bad data directories, the coordinator-only crash, share-partition
// failover, snapshots and segment deletion, and the flush policies.
// durableView, the state compared, is shared with crash_test.go.

package engine_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sharebench/sharebench/engine"
)

// durableView is the durable state of an engine as its public API shows
// it, minus acquisitions: partition logs, share partitions (an ACQUIRED
// record shown AVAILABLE at the count it was acquired from, trailing
// never-delivered records dropped), the named transactional ids and
// classic groups.
type durableView struct {
	Logs    map[string]string
	Shares  map[string][]string
	Txns    map[string]string
	Offsets map[string]string
}

func viewOf(t testing.TB, e *engine.Engine, txnIDs, classicGroups []string) durableView {
	t.Helper()
	v := durableView{Logs: map[string]string{}, Shares: map[string][]string{}, Txns: map[string]string{}, Offsets: map[string]string{}}
	groups := e.ShareGroups()
	for _, topic := range e.Topics() {
		n, err := e.Partitions(topic)
		if err != nil {
			t.Fatal(err)
		}
		for p := int32(0); p < n; p++ {
			tp := engine.TopicPartition{Topic: topic, Partition: p}
			start, hw, lso, err := e.Offsets(tp)
			if err != nil {
				t.Fatal(err)
			}
			recs, _, err := e.Fetch(tp, start, 1<<20, engine.ReadUncommitted)
			if err != nil {
				t.Fatal(err)
			}
			var b strings.Builder
			fmt.Fprintf(&b, "start=%d hw=%d lso=%d:", start, hw, lso)
			for _, r := range recs {
				fmt.Fprintf(&b, " %d=%s/k%q/p%d/e%d", r.Offset, r.Value, r.Key, r.ProducerID, r.Epoch)
				if r.Transactional {
					b.WriteString("/txn")
				}
				if r.Aborted {
					b.WriteString("/aborted")
				}
			}
			v.Logs[tp.String()] = b.String()
			for _, g := range groups {
				info, err := e.SharePartition(g, tp)
				if errors.Is(err, engine.ErrUnknownGroup) {
					continue
				}
				if err != nil {
					t.Fatal(err)
				}
				v.Shares[g+"/"+tp.String()] = durableRanges(info)
			}
		}
	}
	for _, id := range txnIDs {
		if info, ok := e.Transaction(id); ok {
			v.Txns[id] = fmt.Sprintf("pid=%d epoch=%d %v", info.ProducerID, info.Epoch, info.State)
			if info.State == engine.TxnOngoing {
				v.Txns[id] += fmt.Sprintf(" parts=%v shares=%v groups=%v", info.Partitions, info.SharePartitions, info.Groups)
			}
		}
	}
	for _, g := range classicGroups {
		var parts []string
		for _, topic := range e.Topics() {
			n, _ := e.Partitions(topic)
			for p := int32(0); p < n; p++ {
				tp := engine.TopicPartition{Topic: topic, Partition: p}
				if off, ok := e.CommittedOffset(g, tp); ok {
					parts = append(parts, fmt.Sprintf("%s=%d", tp, off))
				}
			}
		}
		v.Offsets[g] = strings.Join(parts, " ")
	}
	return v
}

// durableRanges renders a share partition minus acquisitions.
func durableRanges(info engine.SharePartitionInfo) []string {
	type run struct {
		first, last int64
		desc        string
	}
	var runs []run
	for _, r := range info.Ranges {
		ri := r.Info
		var desc string
		switch ri.State {
		case engine.StateAcquired:
			desc = fmt.Sprintf("AVAILABLE c%d", ri.DeliveryCount-1)
		case engine.StateAvailable:
			desc = fmt.Sprintf("AVAILABLE c%d", ri.DeliveryCount)
		case engine.StateTxPending:
			desc = fmt.Sprintf("TX_PENDING c%d p%d e%d %v", ri.DeliveryCount, ri.Producer, ri.Epoch, ri.Staged)
		case engine.StateArchived:
			desc = fmt.Sprintf("ARCHIVED c%d %v", ri.DeliveryCount, ri.Reason)
		default:
			desc = fmt.Sprintf("%v c%d", ri.State, ri.DeliveryCount)
		}
		if n := len(runs); n > 0 && runs[n-1].last+1 == r.First && runs[n-1].desc == desc {
			runs[n-1].last = r.Last
			continue
		}
		runs = append(runs, run{r.First, r.Last, desc})
	}
	for len(runs) > 0 && runs[len(runs)-1].desc == "AVAILABLE c0" {
		runs = runs[:len(runs)-1]
	}
	out := []string{fmt.Sprintf("spso=%d", info.SPSO)}
	for _, r := range runs {
		out = append(out, fmt.Sprintf("[%d,%d] %s", r.first, r.last, r.desc))
	}
	return out
}

func diffViews(t testing.TB, got, want durableView) {
	t.Helper()
	if reflect.DeepEqual(got, want) {
		return
	}
	var keys []string
	for k := range want.Logs {
		keys = append(keys, k)
	}
	for k := range got.Logs {
		if _, ok := want.Logs[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		if got.Logs[k] != want.Logs[k] {
			t.Errorf("log %s:\n got  %s\n want %s", k, got.Logs[k], want.Logs[k])
		}
	}
	for k, w := range want.Shares {
		if g := got.Shares[k]; !reflect.DeepEqual(g, w) {
			t.Errorf("share partition %s:\n got  %v\n want %v", k, g, w)
		}
	}
	for k, g := range got.Shares {
		if _, ok := want.Shares[k]; !ok {
			t.Errorf("share partition %s: got %v, want none", k, g)
		}
	}
	if !reflect.DeepEqual(got.Txns, want.Txns) {
		t.Errorf("transactions:\n got  %v\n want %v", got.Txns, want.Txns)
	}
	if !reflect.DeepEqual(got.Offsets, want.Offsets) {
		t.Errorf("classic offsets:\n got  %v\n want %v", got.Offsets, want.Offsets)
	}
	t.FailNow()
}

// durableOpts are the options the durability tests run with: a manual
// clock, a small snapshot interval and small segments so snapshots,
// rolls and deletions happen, and history for inspection below SPSO.
func durableOpts(dir string, clk *engine.ManualClock, extra ...engine.Option) []engine.Option {
	return append([]engine.Option{
		engine.WithDataDir(dir), engine.WithClock(clk), engine.WithShards(4), engine.WithMarkerDelivery(engine.MarkersInline),
		engine.WithShareSnapshotEvery(7), engine.WithSegmentBytes(8 << 10), engine.WithHistory(true),
		engine.WithGroupDefaults(engine.GroupConfig{LockDuration: 30 * time.Second, DeliveryLimit: 3, MaxRecordLocks: 100, AutoOffsetReset: engine.ResetEarliest}),
	}, extra...)
}

func durOK(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func durGet[T any](t testing.TB) func(T, error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

func durProduce(t testing.TB, e *engine.Engine, topic string, part int32, n int, tag string) {
	t.Helper()
	recs := make([]engine.ProduceRecord, n)
	for i := range recs {
		recs[i] = engine.ProduceRecord{Key: []byte{byte(i)}, Value: []byte(fmt.Sprintf("%s-%d", tag, i))}
	}
	if _, err := e.Produce(topic, part, recs); err != nil {
		t.Fatal(err)
	}
}

func durAcks(recs []engine.Record, typ engine.AckType) []engine.Acknowledgement {
	var out []engine.Acknowledgement
	for _, r := range recs {
		if n := len(out); n > 0 && out[n-1].Topic == r.Topic && out[n-1].Partition == r.Partition && out[n-1].Last+1 == r.Offset {
			out[n-1].Last = r.Offset
			continue
		}
		out = append(out, engine.Acknowledgement{Topic: r.Topic, Partition: r.Partition, First: r.Offset, Last: r.Offset, Type: typ})
	}
	return out
}

// workload drives every kind of durable change: plain, idempotent and
// transactional produce, share acknowledgements of every type, committed
// and aborted transactions with acks, an ack-only transaction, one left
// ONGOING, classic-group offsets, delete-records, a config change.
func durWorkload(t testing.TB, e *engine.Engine, clk *engine.ManualClock) {
	t.Helper()
	durOK(t, e.CreateTopic("in", 2))
	durOK(t, e.CreateTopic("out", 1))
	for round := 0; round < 3; round++ {
		durProduce(t, e, "in", 0, 12, fmt.Sprintf("a%d", round))
		durProduce(t, e, "in", 1, 7, fmt.Sprintf("b%d", round))
	}
	idem := durGet[*engine.Producer](t)(e.NewProducer(engine.ProducerConfig{Idempotent: true}))
	durGet[int64](t)(idem.Produce("in", 1, []engine.ProduceRecord{{Value: []byte("idem")}}))

	m1 := durGet[*engine.ShareMember](t)(e.JoinShareGroup("g", []string{"in"}, engine.AckTransactional))
	m2 := durGet[*engine.ShareMember](t)(e.JoinShareGroup("g", []string{"in"}, engine.AckExplicit))
	p := durGet[*engine.Producer](t)(e.NewProducer(engine.ProducerConfig{TransactionalID: "tx-1"}))
	for i := 0; i < 4; i++ {
		recs := durGet[[]engine.Record](t)(m1.Poll(9))
		durOK(t, p.Begin())
		for _, r := range recs {
			durGet[int64](t)(p.Produce("out", 0, []engine.ProduceRecord{{Value: append([]byte("out-"), r.Value...)}}))
		}
		durOK(t, p.SendShareAcksToTransaction(durAcks(recs, engine.AckAccept), m1.Metadata()))
		if i == 2 {
			durOK(t, p.Abort())
		} else {
			durOK(t, p.Commit())
		}
		recs = durGet[[]engine.Record](t)(m2.Poll(3))
		if len(recs) > 0 {
			acks := durAcks(recs[:1], engine.AckRelease)
			if len(recs) > 1 {
				acks = append(acks, durAcks(recs[1:2], engine.AckReject)...)
			}
			if len(recs) > 2 {
				acks = append(acks, durAcks(recs[2:], engine.AckAccept)...)
			}
			durOK(t, m2.Acknowledge(acks))
		}
	}
	// Ack-only transaction, committed.
	p2 := durGet[*engine.Producer](t)(e.NewProducer(engine.ProducerConfig{TransactionalID: "tx-2"}))
	recs := durGet[[]engine.Record](t)(m1.Poll(5))
	durOK(t, p2.Begin())
	durOK(t, p2.SendShareAcksToTransaction(durAcks(recs, engine.AckReject), m1.Metadata()))
	durOK(t, p2.Commit())
	// A lock expires: the records come back AVAILABLE at their count.
	durGet[[]engine.Record](t)(m2.Poll(4))
	clk.Advance(31 * time.Second)
	e.FireTimers()
	// An ONGOING transaction with staged acks and an output.
	recs = durGet[[]engine.Record](t)(m1.Poll(4))
	durOK(t, p2.Begin())
	durGet[int64](t)(p2.Produce("out", 0, []engine.ProduceRecord{{Value: []byte("pending")}}))
	durOK(t, p2.SendShareAcksToTransaction(durAcks(recs, engine.AckAccept), m1.Metadata()))
	// Held acquisitions (not durable).
	durGet[[]engine.Record](t)(m2.Poll(2))

	// Classic exactly-once.
	durOK(t, e.CreateTopic("cin", 1))
	durProduce(t, e, "cin", 0, 10, "c")
	cm := durGet[*engine.ClassicMember](t)(e.JoinClassicGroup("cg", []string{"cin"}, engine.ResetEarliest))
	cp := durGet[*engine.Producer](t)(e.NewProducer(engine.ProducerConfig{TransactionalID: "tx-c"}))
	for i := 0; i < 2; i++ {
		crecs := durGet[[]engine.Record](t)(cm.Poll(4))
		durOK(t, cp.Begin())
		durGet[int64](t)(cp.Produce("out", 0, []engine.ProduceRecord{{Value: []byte("c-out")}}))
		durOK(t, cp.SendOffsetsToTransaction(map[engine.TopicPartition]int64{{Topic: "cin"}: crecs[len(crecs)-1].Offset + 1}, cm.Metadata()))
		durOK(t, cp.Commit())
	}
	durOK(t, e.DeleteRecords(engine.TopicPartition{Topic: "in", Partition: 1}, 3))
	durOK(t, e.SetShareGroupConfig("g", engine.GroupConfig{LockDuration: 20 * time.Second, DeliveryLimit: 4, MaxRecordLocks: 100, AutoOffsetReset: engine.ResetEarliest}))
}

var (
	durTxnIDs  = []string{"tx-1", "tx-2", "tx-c"}
	durClassic = []string{"cg"}
)

func TestDurableCloseAndReopen(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	clk := engine.NewManualClock()
	e := durGet[*engine.Engine](t)(engine.New(durableOpts(dir, clk)...))
	durWorkload(t, e, clk)
	before := viewOf(t, e, durTxnIDs, durClassic)
	durOK(t, e.Close())

	e2 := durGet[*engine.Engine](t)(engine.New(durableOpts(dir, clk)...))
	defer e2.Close()
	rep := e2.Recovery()
	t.Logf("%v", rep)
	if rep.Frames == 0 || len(rep.Truncated) != 0 || rep.Ongoing != 1 {
		t.Fatalf("recovery report %+v: want frames, no truncation, one ongoing transaction", rep)
	}
	diffViews(t, viewOf(t, e2, durTxnIDs, durClassic), before)
	if cfg := durGet[engine.GroupConfig](t)(e2.ShareGroupConfig("g")); cfg.DeliveryLimit != 4 {
		t.Fatalf("group config after reopen = %+v, want delivery limit 4", cfg)
	}
}

func TestDurableCrashAndRestart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	clk := engine.NewManualClock()
	e := durGet[*engine.Engine](t)(engine.New(durableOpts(dir, clk)...))
	defer e.Close()
	durWorkload(t, e, clk)
	before := viewOf(t, e, durTxnIDs, durClassic)
	durOK(t, e.Crash())
	if _, _, _, err := e.Offsets(engine.TopicPartition{Topic: "in"}); !errors.Is(err, engine.ErrCrashed) {
		t.Fatalf("Offsets while crashed: %v, want ErrCrashed", err)
	}
	rep := durGet[engine.RecoveryReport](t)(e.Restart())
	t.Logf("%v", rep)
	diffViews(t, viewOf(t, e, durTxnIDs, durClassic), before)
	// Twice: recovery of a recovered directory is the same state.
	durGet[engine.RecoveryReport](t)(e.Restart())
	diffViews(t, viewOf(t, e, durTxnIDs, durClassic), before)
}

// TestRunningSignalsRecovery: Running is closed while the engine runs
// (always, in memory), open from a crash, and closed by the Restart that
// recovers it, so a caller waits for recovery without polling Crashed.
func TestRunningSignalsRecovery(t *testing.T) {
	t.Parallel()
	isClosed := func(c <-chan struct{}) bool {
		select {
		case <-c:
			return true
		default:
			return false
		}
	}
	mem := durGet[*engine.Engine](t)(engine.New(engine.WithClock(engine.NewManualClock())))
	defer mem.Close()
	if !isClosed(mem.Running()) {
		t.Fatal("Running of an in-memory engine is open, want closed")
	}
	e := durGet[*engine.Engine](t)(engine.New(durableOpts(t.TempDir(), engine.NewManualClock())...))
	defer e.Close()
	if !isClosed(e.Running()) {
		t.Fatal("Running of a recovered durable engine is open, want closed")
	}
	durOK(t, e.Crash())
	down := e.Running()
	if isClosed(down) || !e.Crashed() {
		t.Fatalf("after Crash: Running closed %v, Crashed %v; want open and true", isClosed(down), e.Crashed())
	}
	durOK(t, e.Crash()) // crashing a crashed engine keeps the same wait
	if e.Running() != down {
		t.Fatal("a second Crash replaced the channel a waiter holds")
	}
	woke := make(chan struct{})
	go func() {
		<-down
		close(woke)
	}()
	durGet[engine.RecoveryReport](t)(e.Restart())
	select {
	case <-woke:
	case <-time.After(10 * time.Second):
		t.Fatal("a waiter on Running was not woken by Restart")
	}
	if e.Crashed() || !isClosed(e.Running()) {
		t.Fatalf("after Restart: Crashed %v, Running closed %v; want false and true", e.Crashed(), isClosed(e.Running()))
	}
}

// segmentFiles counts the segment files under dir/sub.
func segmentFiles(t testing.TB, dir, sub string) int {
	t.Helper()
	n := 0
	err := filepath.WalkDir(filepath.Join(dir, sub), func(path string, d os.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(path, ".wal") {
			n++
		}
		return err
	})
	durOK(t, err)
	return n
}

// TestSnapshotsBoundTheLogs: a long run with small segments keeps every
// compacted log to a few segments (snapshots cover the deleted ones) and
// partition logs to their retention, and recovery from what is left gives
// the same state.
func TestSnapshotsBoundTheLogs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	clk := engine.NewManualClock()
	opts := durableOpts(dir, clk, engine.WithSegmentBytes(4<<10))
	e := durGet[*engine.Engine](t)(engine.New(opts...))
	defer e.Close()
	durOK(t, e.CreateTopic("in", 1))
	durOK(t, e.CreateTopic("out", 1))
	m := durGet[*engine.ShareMember](t)(e.JoinShareGroup("g", []string{"in"}, engine.AckTransactional))
	p := durGet[*engine.Producer](t)(e.NewProducer(engine.ProducerConfig{TransactionalID: "tx"}))
	for round := 0; round < 400; round++ {
		durProduce(t, e, "in", 0, 3, fmt.Sprintf("r%d", round))
		recs := durGet[[]engine.Record](t)(m.Poll(3))
		durOK(t, p.Begin())
		durGet[int64](t)(p.Produce("out", 0, []engine.ProduceRecord{{Value: []byte("o")}}))
		durOK(t, p.SendShareAcksToTransaction(durAcks(recs, engine.AckAccept), m.Metadata()))
		durOK(t, p.Commit())
		if round%50 == 49 {
			// Move the log start, as retention does (the engine's own
			// retention drops 4096-record segments).
			info := durGet[engine.SharePartitionInfo](t)(e.SharePartition("g", engine.TopicPartition{Topic: "in"}))
			durOK(t, e.DeleteRecords(engine.TopicPartition{Topic: "in"}, info.SPSO))
			engine.CompactNow(e)
		}
	}
	engine.CompactNow(e)
	st := e.Stats().Journal
	t.Logf("journal: %+v", st)
	for _, sub := range []string{"txn", "share", "groups", "partitions/000001-0"} {
		if n := segmentFiles(t, dir, sub); n > 4 {
			t.Errorf("%s holds %d segments after compaction, want at most 4", sub, n)
		}
	}
	if st.SegmentsDeleted == 0 {
		t.Fatalf("no segment was deleted")
	}
	before := viewOf(t, e, []string{"tx"}, nil)
	rep := durGet[engine.RecoveryReport](t)(e.Restart())
	t.Logf("%v", rep)
	diffViews(t, viewOf(t, e, []string{"tx"}, nil), before)
	start, _, _, _ := e.Offsets(engine.TopicPartition{Topic: "in"})
	if start == 0 {
		t.Fatalf("the log start never moved")
	}
}

// TestFailoverSharePartition: a share-partition failover loses the
// acquisitions of that partition only and keeps TX_PENDING records with
// their transaction, which then commits.
func TestFailoverSharePartition(t *testing.T) {
	t.Parallel()
	clk := engine.NewManualClock()
	e := durGet[*engine.Engine](t)(engine.New(durableOpts(t.TempDir(), clk)...))
	defer e.Close()
	durOK(t, e.CreateTopic("in", 2))
	durProduce(t, e, "in", 0, 6, "a")
	durProduce(t, e, "in", 1, 6, "b")
	m := durGet[*engine.ShareMember](t)(e.JoinShareGroup("g", []string{"in"}, engine.AckTransactional))
	recs := durGet[[]engine.Record](t)(m.Poll(12))
	p := durGet[*engine.Producer](t)(e.NewProducer(engine.ProducerConfig{TransactionalID: "tx"}))
	durOK(t, p.Begin())
	var staged []engine.Record
	for _, r := range recs {
		if r.Partition == 0 && r.Offset < 3 {
			staged = append(staged, r)
		}
	}
	durOK(t, p.SendShareAcksToTransaction(durAcks(staged, engine.AckAccept), m.Metadata()))
	in0 := engine.TopicPartition{Topic: "in", Partition: 0}
	durOK(t, e.FailoverSharePartition("g", in0))
	for o := int64(0); o < 6; o++ {
		ri := durGet[engine.RecordInfo](t)(e.ShareRecord("g", in0, o))
		want, count := engine.StateTxPending, 1
		if o >= 3 {
			want, count = engine.StateAvailable, 0
		}
		if ri.State != want || ri.DeliveryCount != count {
			t.Fatalf("in-0 record %d after failover: %v c%d, want %v c%d", o, ri.State, ri.DeliveryCount, want, count)
		}
	}
	if ri := durGet[engine.RecordInfo](t)(e.ShareRecord("g", engine.TopicPartition{Topic: "in", Partition: 1}, 0)); ri.State != engine.StateAcquired {
		t.Fatalf("in-1 lost its acquisitions: %v", ri.State)
	}
	// The member's acknowledgement of a record it lost fails.
	if err := m.Acknowledge(durAcks(recs[len(recs)-1:], engine.AckAccept)); err == nil && recs[len(recs)-1].Partition == 0 {
		t.Fatalf("ack of a record lost in the failover succeeded")
	}
	durOK(t, p.Commit())
	for o := int64(0); o < 3; o++ {
		if ri := durGet[engine.RecordInfo](t)(e.ShareRecord("g", in0, o)); ri.State != engine.StateAcknowledged {
			t.Fatalf("in-0 record %d after commit: %v", o, ri.State)
		}
	}
	again := durGet[[]engine.Record](t)(m.Poll(12))
	if len(again) != 3 {
		t.Fatalf("after failover the member re-acquired %d records, want the 3 released", len(again))
	}
}

// TestFlushPolicies: every policy keeps what calls acknowledged across a
// process crash (the records reached the OS before the calls returned);
// always fsyncs before returning, never does not fsync.
func TestFlushPolicies(t *testing.T) {
	t.Parallel()
	for _, pol := range []engine.FlushPolicy{engine.FlushAlways, engine.FlushInterval(2 * time.Millisecond), engine.FlushNever} {
		t.Run(pol.String(), func(t *testing.T) {
			t.Parallel()
			back, err := engine.ParseFlushPolicy(pol.String())
			if err != nil || back != pol {
				t.Fatalf("ParseFlushPolicy(%q) = %v, %v", pol.String(), back, err)
			}
			clk := engine.NewManualClock()
			e := durGet[*engine.Engine](t)(engine.New(durableOpts(t.TempDir(), clk, engine.WithFlushPolicy(pol))...))
			defer e.Close()
			durWorkload(t, e, clk)
			st := e.Stats().Journal
			if pol == engine.FlushNever && st.Fsyncs > st.SegmentsCreated {
				t.Fatalf("never: %d fsyncs beyond sealing %d segments", st.Fsyncs, st.SegmentsCreated)
			}
			if pol == engine.FlushAlways && st.Fsyncs == 0 {
				t.Fatalf("always: no fsync")
			}
			before := viewOf(t, e, durTxnIDs, durClassic)
			durOK(t, e.Crash())
			durGet[engine.RecoveryReport](t)(e.Restart())
			diffViews(t, viewOf(t, e, durTxnIDs, durClassic), before)
		})
	}
	for _, bad := range []string{"sometimes", "interval:", "interval:-1s", "interval:soon"} {
		if _, err := engine.ParseFlushPolicy(bad); !errors.Is(err, engine.ErrInvalidConfig) {
			t.Errorf("ParseFlushPolicy(%q) err = %v, want ErrInvalidConfig", bad, err)
		}
	}
}

// TestGroupCommit: concurrent transactional workers share fsyncs, and a
// restart in the middle of their work loses nothing they were told is
// committed.
func TestGroupCommit(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	e := durGet[*engine.Engine](t)(engine.New(engine.WithDataDir(dir), engine.WithGroupDefaults(engine.GroupConfig{
		LockDuration: time.Minute, DeliveryLimit: 5, MaxRecordLocks: 10000, AutoOffsetReset: engine.ResetEarliest})))
	defer e.Close()
	durOK(t, e.CreateTopic("in", 4))
	durOK(t, e.CreateTopic("out", 4))
	for p := int32(0); p < 4; p++ {
		durProduce(t, e, "in", p, 200, "x")
	}
	const workers = 8
	done := make(chan int, workers)
	// Every member joins before any polls: each join bumps every member's
	// epoch, and a staging with an epoch learned before the last join would
	// be fenced and abort, leaving records for workers that have stopped.
	var joined sync.WaitGroup
	joined.Add(workers)
	for w := 0; w < workers; w++ {
		go func() {
			n := 0
			defer func() { done <- n }()
			m, err := e.JoinShareGroup("g", []string{"in"}, engine.AckTransactional)
			joined.Done()
			if err != nil {
				return
			}
			joined.Wait()
			p, err := e.NewProducer(engine.ProducerConfig{TransactionalID: fmt.Sprintf("w%d", w)})
			if err != nil {
				return
			}
			for {
				recs, err := m.Poll(10)
				if err != nil || len(recs) == 0 {
					return
				}
				if p.Begin() != nil {
					return
				}
				outs := make([]engine.ProduceRecord, len(recs))
				for i, r := range recs {
					outs[i].Value = r.Value
				}
				if _, err := p.Produce("out", int32(w%4), outs); err != nil {
					return
				}
				if p.SendShareAcksToTransaction(durAcks(recs, engine.AckAccept), m.Metadata()) != nil || p.Commit() != nil {
					_ = p.Abort()
					continue
				}
				n += len(recs)
			}
		}()
	}
	total := 0
	for w := 0; w < workers; w++ {
		total += <-done
	}
	st := e.Stats().Journal
	t.Logf("%d records committed by %d workers: %d appends, %d flushes, %d fsyncs", total, workers, st.Appends, st.Flushes, st.Fsyncs)
	if total != 800 {
		t.Fatalf("committed %d records, want 800", total)
	}
	if st.Fsyncs > st.Appends {
		t.Fatalf("%d fsyncs for %d appends", st.Fsyncs, st.Appends)
	}
	durGet[engine.RecoveryReport](t)(e.Restart())
	n := 0
	for p := int32(0); p < 4; p++ {
		recs, _, err := e.Fetch(engine.TopicPartition{Topic: "out", Partition: p}, 0, 10000, engine.ReadCommitted)
		durOK(t, err)
		n += len(recs)
	}
	if n != 800 {
		t.Fatalf("%d committed outputs after restart, want 800", n)
	}
}
