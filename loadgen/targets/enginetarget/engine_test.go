// This file tests the engine target's own mapping: acknowledgement ranges,
// and Pending and Inspect over a share group and a classic group, driven
// through the targets.Target primitives the load generator uses.

package enginetarget

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	eng "github.com/sharebench/sharebench/engine"
	"github.com/sharebench/sharebench/loadgen/targets"
	"github.com/sharebench/sharebench/vocab"
)

func TestAcksCoalesceRanges(t *testing.T) {
	t.Parallel()
	rec := func(p int32, o int64) *targets.Record { return &targets.Record{Topic: "in", Partition: p, Offset: o} }
	// Out of order, across partitions, with gaps.
	recs := []*targets.Record{rec(1, 5), rec(0, 2), rec(0, 0), rec(1, 4), rec(0, 1), rec(0, 7), rec(1, 9)}
	got := acks(recs, eng.AckAccept)
	want := []eng.Acknowledgement{
		{Topic: "in", Partition: 0, First: 0, Last: 2, Type: eng.AckAccept},
		{Topic: "in", Partition: 0, First: 7, Last: 7, Type: eng.AckAccept},
		{Topic: "in", Partition: 1, First: 4, Last: 5, Type: eng.AckAccept},
		{Topic: "in", Partition: 1, First: 9, Last: 9, Type: eng.AckAccept},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("acks:\n got %+v\nwant %+v", got, want)
	}
	if recs[0].Offset != 5 {
		t.Errorf("acks reordered its argument")
	}
	if len(acks(nil, eng.AckAccept)) != 0 {
		t.Errorf("acks of nothing is not empty")
	}
}

func TestAckTypes(t *testing.T) {
	t.Parallel()
	for in, want := range map[vocab.AckType]eng.AckType{
		vocab.AckAccept: eng.AckAccept, vocab.AckReject: eng.AckReject, vocab.AckRelease: eng.AckRelease,
		vocab.AckGap: eng.AckGap, vocab.AckRenew: eng.AckRenew,
	} {
		if got, err := ackType(in); err != nil || got != want {
			t.Errorf("ackType(%v) = %v, %v; want %v", in, got, err, want)
		}
	}
	if _, err := ackType(99); err == nil {
		t.Error("ackType(99) succeeded")
	}
}

func newTarget(t *testing.T) *Target {
	t.Helper()
	tg, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tg.Close() })
	return tg
}

func testConfig(name string) targets.Config {
	return targets.Config{
		InputTopic: name + "-in", OutputTopic: name + "-out", InputPartitions: 2, OutputPartitions: 1,
		Group: name + "-group", TransactionalIDPrefix: name + "-w-", LockDuration: 30 * time.Second,
		DeliveryLimit: 5, MaxRecordLocks: 1000, TransactionTimeout: 10 * time.Second, MaxPollRecords: 100,
	}
}

func produce(t *testing.T, tg *Target, cfg targets.Config, n int) {
	t.Helper()
	p, err := tg.NewProducer(context.Background(), cfg, 0)
	if err != nil {
		t.Fatal(err)
	}
	recs := make([]*targets.Record, n)
	for i := range recs {
		recs[i] = &targets.Record{Topic: cfg.InputTopic, Partition: int32(i % 2), Value: []byte{byte(i)}}
	}
	if err := p.Produce(context.Background(), recs); err != nil {
		t.Fatal(err)
	}
	for i, r := range recs {
		if r.Offset != int64(i/2) {
			t.Fatalf("record %d at offset %d, want %d", i, r.Offset, i/2)
		}
	}
}

// pollAll polls until n records arrived.
func pollAll(t *testing.T, w targets.Worker, n int) []*targets.Record {
	t.Helper()
	var got []*targets.Record
	deadline := time.Now().Add(10 * time.Second)
	for len(got) < n && time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		recs, err := w.Poll(ctx, 100)
		cancel()
		if err != nil {
			t.Fatalf("Poll: %v", err)
		}
		got = append(got, recs...)
	}
	if len(got) != n {
		t.Fatalf("polled %d records, want %d", len(got), n)
	}
	return got
}

func states(t *testing.T, tg *Target, cfg targets.Config) map[vocab.RecordState]int {
	t.Helper()
	st, err := tg.Inspect(context.Background(), cfg)
	if err != nil {
		t.Fatalf("Inspect: %v", err)
	}
	out := map[vocab.RecordState]int{}
	for _, r := range st.Records {
		out[r.State]++
	}
	return out
}

func pending(t *testing.T, tg *Target, cfg targets.Config) int64 {
	t.Helper()
	n, err := tg.Pending(context.Background(), cfg)
	if err != nil {
		t.Fatalf("Pending: %v", err)
	}
	return n
}

func TestTransactionalPendingAndInspect(t *testing.T) {
	t.Parallel()
	tg := newTarget(t)
	cfg := testConfig("txn")
	ctx := context.Background()
	if err := tg.Setup(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	produce(t, tg, cfg, 10)
	if n := pending(t, tg, cfg); n != 10 {
		t.Errorf("before any poll: Pending = %d, want 10", n)
	}
	w, err := tg.NewWorker(ctx, cfg, vocab.Transactional, 0)
	if err != nil {
		t.Fatal(err)
	}
	if tid, _ := w.TxnInfo(); tid != "txn-w-0" {
		t.Errorf("transactional id %q, want txn-w-0", tid)
	}
	recs := pollAll(t, w, 10)
	if err := w.Begin(ctx); err != nil {
		t.Fatal(err)
	}
	out := []*targets.Record{{Topic: cfg.OutputTopic, Partition: 0, Value: []byte("o")}}
	if err := w.Produce(ctx, out); err != nil {
		t.Fatal(err)
	}
	// Reject two, accept the rest, inside the transaction.
	if err := w.StageAcks(ctx, recs[2:], vocab.AckAccept); err != nil {
		t.Fatal(err)
	}
	if err := w.StageAcks(ctx, recs[:2], vocab.AckReject); err != nil {
		t.Fatal(err)
	}
	if n := pending(t, tg, cfg); n != 10 {
		t.Errorf("staged, not committed: Pending = %d, want 10", n)
	}
	// A read_committed reader sees nothing before the commit.
	rd, err := tg.NewReader(ctx, cfg, cfg.OutputTopic, true)
	if err != nil {
		t.Fatal(err)
	}
	pctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	if got, _ := rd.Poll(pctx); len(got) != 0 {
		t.Errorf("read_committed saw %d records of an open transaction", len(got))
	}
	cancel()
	if err := w.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	// Commit returns once the decision is durable; the markers follow
	// (the engine's goroutine sends them; this waits for them here).
	tg.Engine().DeliverMarkers()
	if n := pending(t, tg, cfg); n != 0 {
		t.Errorf("committed: Pending = %d, want 0", n)
	}
	if got := states(t, tg, cfg); got["ACKNOWLEDGED"] != 8 || got["ARCHIVED"] != 2 || len(got) != 2 {
		t.Errorf("final states %v, want 8 ACKNOWLEDGED and 2 ARCHIVED", got)
	}
	st, _ := tg.Inspect(ctx, cfg)
	rejected := 0
	for _, r := range st.Records {
		if r.Rejected {
			rejected++
		}
	}
	if rejected != 2 {
		t.Errorf("%d records flagged rejected, want 2", rejected)
	}
	pctx, cancel = context.WithTimeout(ctx, time.Second)
	defer cancel()
	if got, err := rd.Poll(pctx); err != nil || len(got) != 1 {
		t.Errorf("read_committed after the commit: %d records, %v; want 1", len(got), err)
	}
	if err := w.Close(ctx); err != nil {
		t.Errorf("Close: %v", err)
	}
}

func TestClassicEOSPendingAndInspect(t *testing.T) {
	t.Parallel()
	tg := newTarget(t)
	cfg := testConfig("classic")
	ctx := context.Background()
	if err := tg.Setup(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	produce(t, tg, cfg, 6)
	w, err := tg.NewWorker(ctx, cfg, vocab.ClassicEOS, 0)
	if err != nil {
		t.Fatal(err)
	}
	recs := pollAll(t, w, 6)
	if err := w.Begin(ctx); err != nil {
		t.Fatal(err)
	}
	if err := w.StageAcks(ctx, recs, vocab.AckAccept); err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	// Commit returns once the decision is durable; the markers follow
	// (the engine's goroutine sends them; this waits for them here).
	tg.Engine().DeliverMarkers()
	if n := pending(t, tg, cfg); n != 0 {
		t.Errorf("committed offsets: Pending = %d, want 0", n)
	}
	if got := states(t, tg, cfg); got["ACKNOWLEDGED"] != 6 || len(got) != 1 {
		t.Errorf("final states %v, want 6 ACKNOWLEDGED", got)
	}
	if err := w.Close(ctx); err != nil {
		t.Errorf("Close: %v", err)
	}
}

// TestSupportsEveryMode: the engine runs every mode, the transactional
// one included, and refuses an unknown mode with ErrUnsupported (the
// contract every target keeps is in targettest).
func TestSupportsEveryMode(t *testing.T) {
	t.Parallel()
	tg := newTarget(t)
	cfg := testConfig("plain")
	ctx := context.Background()
	if err := tg.Setup(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	if _, err := tg.NewWorker(ctx, cfg, vocab.Mode("sometimes"), 0); !errors.Is(err, targets.ErrUnsupported) {
		t.Errorf("NewWorker of an unknown mode: %v, want ErrUnsupported", err)
	}
	for _, m := range vocab.AllModes() {
		if err := tg.Supports(ctx, m); err != nil {
			t.Errorf("Supports(%s): %v", m, err)
		}
	}
}

// TestManualClockTarget: on a manual clock a poll and a reader return at
// once with what is there (nothing can arrive while the one caller
// waits), the engine's timers fire only when the caller fires them, and
// HandlesOf shows the engine clients behind a worker.
func TestManualClockTarget(t *testing.T) {
	t.Parallel()
	clk := eng.NewManualClock()
	tg, cfg := setUpOne(t, Options{Clock: clk})
	ctx := context.Background()
	w, err := tg.NewWorker(ctx, cfg, vocab.Transactional, 3)
	if err != nil {
		t.Fatal(err)
	}
	h, ok := HandlesOf(w)
	if !ok || h.Share == nil || h.Classic != nil || h.Txn == nil || h.Txn.TransactionalID() != "tx-3" {
		t.Fatalf("HandlesOf = %+v, %v; want a share member and producer tx-3", h, ok)
	}
	if _, ok := HandlesOf(nil); ok {
		t.Error("HandlesOf(nil) reported handles")
	}
	// An empty poll and an empty reader return at once: without the
	// manual clock each would wait (a test timeout is what would fail).
	recs, err := w.Poll(ctx, 10)
	if err != nil || len(recs) != 0 {
		t.Fatalf("empty poll = %v, %v; want nothing", recs, err)
	}
	rd, err := tg.NewReader(ctx, cfg, cfg.OutputTopic, true)
	if err != nil {
		t.Fatal(err)
	}
	if recs, err := rd.Poll(ctx); err != nil || len(recs) != 0 {
		t.Fatalf("empty read = %v, %v; want nothing", recs, err)
	}
	p, err := tg.NewProducer(ctx, cfg, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Produce(ctx, []*targets.Record{{Topic: "in", Partition: 0, Value: []byte("x")}}); err != nil {
		t.Fatal(err)
	}
	if recs, err = w.Poll(ctx, 10); err != nil || len(recs) != 1 {
		t.Fatalf("poll = %v, %v; want the one record", recs, err)
	}
	// The lock expires when the caller advances the clock and fires the
	// timers, not before.
	clk.Advance(2 * time.Second)
	if info, _ := tg.Engine().ShareRecord("g", eng.TopicPartition{Topic: "in"}, 0); info.State != eng.StateAcquired {
		t.Fatalf("before the timers fired the record is %v, want ACQUIRED", info.State)
	}
	tg.Engine().FireTimers()
	if info, _ := tg.Engine().ShareRecord("g", eng.TopicPartition{Topic: "in"}, 0); info.State != eng.StateAvailable {
		t.Fatalf("after the timers fired the record is %v, want AVAILABLE", info.State)
	}
}
