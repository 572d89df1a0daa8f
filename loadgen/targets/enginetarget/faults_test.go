// This file tests the engine target's fault runner: each engine-side fault
// applied while a transactional worker copies records, after which every
// input has exactly one committed output.

package enginetarget

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	eng "github.com/sharebench/sharebench/engine"
	"github.com/sharebench/sharebench/loadgen/targets"
	"github.com/sharebench/sharebench/vocab"
	"github.com/sharebench/sharebench/workloads"
)

func TestFaultRunnerNeedsDataDir(t *testing.T) {
	t.Parallel()
	tg, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	// In memory, the runner applies only what needs no data directory.
	fr := tg.FaultRunner()
	for _, kind := range []vocab.FaultKind{vocab.FaultEngineRestart, vocab.FaultCoordinatorCrash, vocab.FaultShareFailover} {
		if err := fr.Supports(kind); !errors.Is(err, targets.ErrUnsupported) {
			t.Errorf("in memory, Supports(%s) = %v, want ErrUnsupported", kind, err)
		}
		if _, err := fr.Apply(kind, nil); !errors.Is(err, targets.ErrUnsupported) {
			t.Errorf("in memory, Apply(%s) = %v, want ErrUnsupported", kind, err)
		}
	}
	if err := fr.Supports(vocab.FaultNetworkPartition); err != nil {
		t.Errorf("in memory, Supports(network-partition) = %v", err)
	}
}

// TestNetworkPartitionFault: a coordinator-participant partition holds
// the markers of one partition's leader: the transaction stays
// PREPARE_COMMIT and its outputs invisible until the partition heals.
func TestNetworkPartitionFault(t *testing.T) {
	t.Parallel()
	tg, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	ctx := context.Background()
	cfg := targets.Config{InputTopic: "in", OutputTopic: "out", InputPartitions: 1, OutputPartitions: 1, Group: "g",
		TransactionalIDPrefix: "p-"}
	if err := tg.Setup(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	w, err := tg.NewWorker(ctx, cfg, vocab.Transactional, 0)
	if err != nil {
		t.Fatal(err)
	}
	desc, err := tg.FaultRunner().Apply(vocab.FaultNetworkPartition, map[string]string{"for": "300ms", "partition": "0"})
	if err != nil {
		t.Fatal(err)
	}
	t.Log(desc)
	if err := w.Begin(ctx); err != nil {
		t.Fatal(err)
	}
	if err := w.Produce(ctx, []*targets.Record{{Topic: "out", Partition: 0, Value: []byte("o")}}); err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	tg.Engine().DeliverMarkers()
	if info, _ := tg.Engine().Transaction("p-0"); info.State != eng.TxnPrepareCommit || info.MarkersPending != 1 {
		t.Fatalf("during the partition: %v with %d markers pending, want PREPARE_COMMIT with 1", info.State, info.MarkersPending)
	}
	// The next transaction waits for the partition to heal, then starts.
	if err := w.Begin(ctx); err != nil {
		t.Fatal(err)
	}
	if info, _ := tg.Engine().Transaction("p-0"); info.State != eng.TxnOngoing {
		t.Fatalf("after the partition healed: %v, want ONGOING", info.State)
	}
	recs, _, err := tg.Engine().Fetch(eng.TopicPartition{Topic: "out"}, 0, 10, eng.ReadCommitted)
	if err != nil || len(recs) != 1 {
		t.Fatalf("read_committed read %d outputs (%v), want 1", len(recs), err)
	}
}

func TestFaultRunner(t *testing.T) {
	t.Parallel()
	tg, err := New(Options{DataDir: t.TempDir(), Flush: eng.FlushInterval(time.Millisecond), SessionTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	fr := tg.FaultRunner()
	if fr == nil {
		t.Fatal("no fault runner with a data directory")
	}
	if err := fr.Supports("power-cut"); !errors.Is(err, targets.ErrUnsupported) {
		t.Fatalf("Supports(power-cut) = %v, want ErrUnsupported", err)
	}
	ctx := context.Background()
	cfg := targets.Config{InputTopic: "in", OutputTopic: "out", InputPartitions: 2, OutputPartitions: 1, Group: "g",
		TransactionalIDPrefix: "w-", LockDuration: 500 * time.Millisecond, DeliveryLimit: 50, MaxRecordLocks: 1000}
	if err := tg.Setup(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	prod, err := tg.NewProducer(ctx, cfg, 0)
	if err != nil {
		t.Fatal(err)
	}
	const n = 400
	var recs []*targets.Record
	for i := 0; i < n; i++ {
		recs = append(recs, &targets.Record{Topic: "in", Partition: -1, Value: []byte(fmt.Sprintf("v%03d", i))})
	}
	if err := prod.Produce(ctx, recs); err != nil {
		t.Fatal(err)
	}
	// Two transactional workers, replaced whenever a fault fences them.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var abortSome sync.Mutex
	aborts := 0
	for id := 0; id < 2; id++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var w targets.Worker
			var err error
			for {
				select {
				case <-stop:
					return
				default:
				}
				if w == nil {
					if w, err = tg.NewWorker(ctx, cfg, vocab.Transactional, id); err != nil {
						w = nil
						time.Sleep(time.Millisecond)
						continue
					}
				}
				pctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
				in, err := w.Poll(pctx, 5)
				cancel()
				if err == nil && len(in) == 0 {
					continue
				}
				if err == nil {
					err = w.Begin(ctx)
				}
				if err == nil {
					outs := make([]*targets.Record, len(in))
					for i, r := range in {
						outs[i] = &targets.Record{Topic: "out", Partition: 0, Value: r.Value}
					}
					err = w.Produce(ctx, outs)
				}
				if err == nil {
					err = w.StageAcks(ctx, in, vocab.AckAccept)
				}
				if err == nil {
					abortSome.Lock()
					abort := aborts < 20
					aborts++
					abortSome.Unlock()
					if abort {
						err = w.Abort(ctx) // so prepare-abort is reached
					} else {
						err = w.Commit(ctx)
					}
				}
				if err != nil {
					_ = w.Abort(ctx)
					w = nil // replaced, as the load generator does
				}
			}
		}()
	}
	for _, f := range []struct {
		kind   vocab.FaultKind
		params map[string]string
	}{
		{"coordinator-crash", map[string]string{"state": "prepare-abort"}},
		{"coordinator-crash", map[string]string{"state": "ongoing"}},
		{"coordinator-crash", map[string]string{"state": "prepare-commit"}},
		{"coordinator-crash", map[string]string{"state": "prepare-commit", "scope": "engine"}},
		{"share-failover", map[string]string{"partition": "1"}},
		{"share-failover", map[string]string{"partition": "random"}},
		{"engine-restart", nil},
	} {
		desc, err := fr.Apply(f.kind, f.params)
		if err != nil {
			t.Fatalf("%s %v: %v", f.kind, f.params, err)
		}
		if strings.HasPrefix(desc, "armed") {
			t.Fatalf("%s %v: %s", f.kind, f.params, desc)
		}
		t.Logf("%s %v: %s", f.kind, f.params, desc)
	}
	for _, bad := range []map[string]string{{"state": "sleepy"}, {"state": "ongoing", "scope": "moon"}} {
		if _, err := fr.Apply(vocab.FaultCoordinatorCrash, bad); err == nil {
			t.Errorf("coordinator-crash %v applied", bad)
		}
	}
	if _, err := fr.Apply(vocab.FaultShareFailover, map[string]string{"partition": "7"}); err == nil {
		t.Error("share-failover of partition 7 of 2 applied")
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		p, err := tg.Pending(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if p == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d inputs still pending", p)
		}
		time.Sleep(10 * time.Millisecond)
	}
	close(stop)
	wg.Wait()
	rd, err := tg.NewReader(ctx, cfg, "out", true)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for {
		out, err := rd.Poll(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(out) == 0 {
			break
		}
		for _, r := range out {
			seen[string(r.Value)]++
		}
	}
	for i := 0; i < n; i++ {
		if v := fmt.Sprintf("v%03d", i); seen[v] != 1 {
			t.Errorf("input %s has %d committed outputs, want 1", v, seen[v])
		}
	}
}

// TestProduceAcrossRestarts: input producers ride through engine restarts
// (a produce cut by the crash is sent again, once) and every input is in
// the log exactly once.
func TestProduceAcrossRestarts(t *testing.T) {
	t.Parallel()
	tg, err := New(Options{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	ctx := context.Background()
	cfg := targets.Config{InputTopic: "in", OutputTopic: "out", InputPartitions: 4, OutputPartitions: 1, Group: "g"}
	if err := tg.Setup(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	prod, err := tg.NewProducer(ctx, cfg, 0)
	if err != nil {
		t.Fatal(err)
	}
	const batches = 2000
	errs := make(chan error, 1)
	go func() {
		for i := 0; i < batches; i++ {
			var recs []*targets.Record
			for k := 0; k < 8; k++ {
				recs = append(recs, &targets.Record{Topic: "in", Partition: -1, Value: []byte(fmt.Sprintf("%d-%d", i, k))})
			}
			if err := prod.Produce(ctx, recs); err != nil {
				errs <- err
				return
			}
		}
		errs <- nil
	}()
	for i := 0; i < 10; i++ {
		if _, err := tg.FaultRunner().Apply(vocab.FaultEngineRestart, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := <-errs; err != nil {
		t.Fatalf("producing across restarts: %v", err)
	}
	rd, err := tg.NewReader(ctx, cfg, "in", false)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for {
		recs, err := rd.Poll(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) == 0 {
			break
		}
		for _, r := range recs {
			seen[string(r.Value)]++
		}
	}
	if len(seen) != batches*8 {
		t.Fatalf("%d distinct inputs in the log, want %d", len(seen), batches*8)
	}
	for v, n := range seen {
		if n != 1 {
			t.Fatalf("input %s is in the log %d times", v, n)
		}
	}
}

// TestFaultParams: each param of the engine-side faults, valid and not;
// every refusal names the param and its value and says what to write.
func TestFaultParams(t *testing.T) {
	t.Parallel()
	tg, err := New(Options{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	fr := tg.FaultRunner()
	// Before any Setup a fault that defaults to the mode's topics or group
	// says to name them.
	for _, c := range []struct {
		kind   vocab.FaultKind
		params map[string]string
		want   string
	}{
		{vocab.FaultShareFailover, nil, "name the share group (param group) or run Setup first"},
		{vocab.FaultShareFailover, map[string]string{"group": "g"}, "name the topic (param topic) or run Setup first"},
		{vocab.FaultNetworkPartition, map[string]string{"for": "1s"}, "name the topic (param topic) or run Setup first"},
	} {
		if _, err := fr.Apply(c.kind, c.params); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("before Setup, %s %v = %v, want an error saying %q", c.kind, c.params, err, c.want)
		}
	}
	ctx := context.Background()
	cfg := targets.Config{InputTopic: "in", OutputTopic: "out", InputPartitions: 2, OutputPartitions: 1, Group: "g",
		TransactionalIDPrefix: "p-"}
	if err := tg.Setup(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	if err := tg.Engine().CreateTopic("other", 3); err != nil {
		t.Fatal(err)
	}
	type params = map[string]string
	for _, c := range []struct {
		kind   vocab.FaultKind
		params params
		want   []string // in the description, or with bad in the error
		bad    bool
	}{
		// engine-restart
		{kind: "engine-restart", want: []string{"engine restarted"}},
		{kind: "engine-restart", params: params{"state": "now"}, bad: true,
			want: []string{`engine-restart param "state"`, "takes no params; remove it"}},

		// coordinator-crash
		{kind: "coordinator-crash", params: params{"state": "now"},
			want: []string{"transaction coordinator crashed and reloaded its log"}},
		{kind: "coordinator-crash", params: params{"state": "now", "scope": "coordinator"},
			want: []string{"transaction coordinator crashed and reloaded its log"}},
		{kind: "coordinator-crash", params: params{"state": "marker", "wait": "0s"},
			want: []string{"armed: the next transaction to reach marker crashes the coordinator"}},
		{kind: "coordinator-crash", params: params{"state": "completed", "wait": "0s", "scope": "engine", "transactional-id-prefix": "a-,b-"},
			want: []string{"armed: the next transaction of a-*, b-* to reach completed crashes the engine"}},
		{kind: "coordinator-crash", params: params{"state": "prepared", "wait": "10ms"},
			want: []string{"armed: the next transaction to reach prepared", "(none did within 10ms)"}},
		{kind: "coordinator-crash", params: params{"state": "sleepy"}, bad: true,
			want: []string{`state "sleepy"`, "use now, ongoing, prepare-commit, prepare-abort, prepared, marker, completed"}},
		{kind: "coordinator-crash", bad: true, want: []string{`state ""`, "use now, ongoing"}},
		{kind: "coordinator-crash", params: params{"state": "ongoing", "scope": "moon"}, bad: true,
			want: []string{`scope "moon"`, "use coordinator or engine"}},
		{kind: "coordinator-crash", params: params{"state": "marker", "wait": "soon"}, bad: true,
			want: []string{`wait "soon"`, "write a Go duration like 0s"}},
		{kind: "coordinator-crash", params: params{"state": "marker", "wait": "-1s"}, bad: true,
			want: []string{`wait "-1s"`, "from 0s to 1h"}},
		{kind: "coordinator-crash", params: params{"state": "marker", "wait": "2h"}, bad: true,
			want: []string{`wait "2h"`, "from 0s to 1h"}},
		{kind: "coordinator-crash", params: params{"state": "now", "wait": "0s"}, bad: true,
			want: []string{`wait "0s" with state now`, "remove wait"}},
		{kind: "coordinator-crash", params: params{"state": "now", "transactional-id-prefix": "p-"}, bad: true,
			want: []string{`transactional-id-prefix "p-" with state now`, "remove transactional-id-prefix"}},
		{kind: "coordinator-crash", params: params{"state": "now", "scope": "engine"}, bad: true,
			want: []string{`scope "engine" with state now`, "engine-restart fault; use it, or scope coordinator"}},
		{kind: "coordinator-crash", params: params{"state": "marker", "transactional-id-prefix": "a-,,b-"}, bad: true,
			want: []string{`transactional-id-prefix "a-,,b-"`, "an empty prefix; list prefixes separated by commas"}},
		{kind: "coordinator-crash", params: params{"state": "marker", "scop": "engine"}, bad: true,
			want: []string{`coordinator-crash param "scop"`, "use state, scope, wait, transactional-id-prefix"}},

		// share-failover
		{kind: "share-failover", want: []string{"for group g", "nothing to fail over"}},
		{kind: "share-failover", params: params{"group": "g2", "topic": "other", "partition": "2"},
			want: []string{"no share partition of other-2 for group g2"}},
		{kind: "share-failover", params: params{"group": "g2", "topic": "other", "partition": "random"},
			want: []string{"no share partition of other-", "for group g2"}},
		{kind: "share-failover", params: params{"group": ""}, bad: true,
			want: []string{`group ""`, "name a share group, or omit group"}},
		{kind: "share-failover", params: params{"topic": "nope"}, bad: true,
			want: []string{`topic "nope"`, "no such topic on the engine; name one of in, other, out"}},
		{kind: "share-failover", params: params{"topic": "other", "partition": "3"}, bad: true,
			want: []string{`partition "3"`, "not a partition of other (3 partitions); use 0..2 or random"}},
		{kind: "share-failover", params: params{"partition": "x"}, bad: true,
			want: []string{`partition "x"`, "not a partition of in (2 partitions); use 0..1 or random"}},
		{kind: "share-failover", params: params{"for": "1s"}, bad: true,
			want: []string{`share-failover param "for"`, "use group, topic, partition"}},

		// network-partition
		{kind: "network-partition", params: params{"for": "1s", "partition": "0"},
			want: []string{"cut off from the leader of [in-0 out-0] for 1s"}},
		{kind: "network-partition", params: params{"for": "1s", "partition": "1"},
			want: []string{"cut off from the leader of [in-1] for 1s"}},
		{kind: "network-partition", params: params{"for": "1s", "between": "coordinator-participant", "partition": "random", "worker": "random"},
			want: []string{"cut off from the leader of [in-"}},
		{kind: "network-partition", params: params{"for": "1.5s", "topic": "other", "partition": "2"},
			want: []string{"cut off from the leader of [other-2] for 1.5s"}},
		{kind: "network-partition", params: params{"for": "1s", "topic": "out"},
			want: []string{"cut off from the leader of [out-0] for 1s"}},
		{kind: "network-partition", bad: true, want: []string{`for ""`, "write a Go duration like 500ms"}},
		{kind: "network-partition", params: params{"for": "0s"}, bad: true, want: []string{`for "0s"`, "not a duration above 0"}},
		{kind: "network-partition", params: params{"for": "1s", "between": "worker-engine"}, bad: true,
			want: []string{`between "worker-engine"`, "the load generator cuts a worker off", "between coordinator-participant"}},
		{kind: "network-partition", params: params{"for": "1s", "between": "moon"}, bad: true,
			want: []string{`between "moon"`, "use coordinator-participant"}},
		{kind: "network-partition", params: params{"for": "1s", "topic": "nope"}, bad: true,
			want: []string{`topic "nope"`, "no such topic on the engine", "or omit topic for the mode's input and output topics"}},
		{kind: "network-partition", params: params{"for": "1s", "topic": "other", "partition": "5"}, bad: true,
			want: []string{`partition "5"`, "not a partition of other (3 partitions); use 0..2 or random"}},
		{kind: "network-partition", params: params{"for": "1s", "group": "g"}, bad: true,
			want: []string{`network-partition param "group"`, "use for, between, topic, partition, worker"}},
	} {
		desc, err := fr.Apply(c.kind, c.params)
		fr.Disarm()
		got := desc
		switch {
		case c.bad && err == nil:
			t.Errorf("%s %v applied (%s), want an error", c.kind, c.params, desc)
			continue
		case !c.bad && err != nil:
			t.Errorf("%s %v: %v", c.kind, c.params, err)
			continue
		case c.bad:
			got = err.Error()
		}
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s %v: %q, want it to say %q", c.kind, c.params, got, w)
			}
		}
	}
}

// TestCrashArmedOnManualClock: on a manual clock a crash armed with wait
// 0s returns at once; the transaction that reaches the state crashes the
// engine, which stays down until the caller, told by Struck, restarts it;
// recovery completes the decided transaction.
func TestCrashArmedOnManualClock(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		state, scope, prefix string
		want                 eng.HookPoint // "": the crash does not strike
		marker               int           // Info.Marker of the strike
	}{
		{state: "prepared", scope: "engine", want: eng.HookTxnPrepared},
		{state: "prepare-commit", scope: "engine", prefix: "tx-", want: eng.HookTxnPrepared},
		{state: "prepare-abort", scope: "engine"},
		{state: "marker", scope: "engine", prefix: "other-,tx-", want: eng.HookTxnMarker, marker: 1},
		{state: "completed", scope: "engine", want: eng.HookTxnCompleted, marker: 2}, // an output and a share partition
		{state: "marker", scope: "coordinator", want: eng.HookTxnMarker, marker: 1},
		{state: "completed", scope: "engine", prefix: "other-"},
	} {
		t.Run(c.state+"-"+c.scope+"-"+c.prefix, func(t *testing.T) {
			t.Parallel()
			clk := eng.NewManualClock()
			tg, cfg := setUpOne(t, Options{DataDir: t.TempDir(), Flush: eng.FlushNever, Clock: clk})
			ctx := context.Background()
			w, recs := pollOne(t, tg, cfg)
			if err := w.Begin(ctx); err != nil {
				t.Fatal(err)
			}
			if err := w.Produce(ctx, []*targets.Record{{Topic: "out", Partition: 0, Value: []byte("o")}}); err != nil {
				t.Fatal(err)
			}
			if err := w.StageAcks(ctx, recs, vocab.AckAccept); err != nil {
				t.Fatal(err)
			}
			fr := tg.FaultRunner()
			params := map[string]string{"state": c.state, "scope": c.scope, "wait": "0s"}
			if c.prefix != "" {
				params["transactional-id-prefix"] = c.prefix
			}
			desc, err := fr.Apply(vocab.FaultCoordinatorCrash, params)
			if err != nil || !strings.HasPrefix(desc, "armed") {
				t.Fatalf("arming: %q, %v; want armed at once", desc, err)
			}
			_ = w.Commit(ctx) // fails when the crash strikes inside it
			tg.Engine().FireTimers()
			st, ok := fr.Struck()
			if c.want == "" {
				if ok || tg.Engine().Crashed() {
					t.Fatalf("struck %+v (crashed %v), want no strike", st, tg.Engine().Crashed())
				}
				fr.Disarm()
				return
			}
			if !ok {
				t.Fatal("no strike reported")
			}
			if st.Point != c.want || st.Info.TransactionalID != "tx-0" || !st.Info.Commit || st.Info.Marker != c.marker ||
				st.Engine != (c.scope == "engine") || st.Where == "" {
				t.Fatalf("strike %+v, want at %s in tx-0's commit (marker %d), engine %v", st, c.want, c.marker, c.scope == "engine")
			}
			if _, again := fr.Struck(); again {
				t.Error("Struck reported the strike twice")
			}
			if got := tg.Engine().Crashed(); got != st.Engine {
				t.Fatalf("engine crashed %v after a strike with Engine %v", got, st.Engine)
			}
			if st.Engine {
				if _, err := fr.Apply(vocab.FaultEngineRestart, nil); err != nil {
					t.Fatal(err)
				}
			}
			tg.Engine().FireTimers()
			if info, _ := tg.Engine().Transaction("tx-0"); info.State != eng.TxnCompleteCommit {
				t.Fatalf("after the crash tx-0 is %v, want COMPLETE_COMMIT (decided before the crash)", info.State)
			}
		})
	}
}

// TestFaultsNameTheirMode: with two modes set up on one target, a fault
// that names the first mode's topic and group hits them, not the last
// Setup's.
func TestFaultsNameTheirMode(t *testing.T) {
	t.Parallel()
	clk := eng.NewManualClock()
	tg, err := New(Options{DataDir: t.TempDir(), Flush: eng.FlushNever, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	ctx := context.Background()
	a := targets.Config{InputTopic: "in-a", OutputTopic: "out-a", InputPartitions: 1, OutputPartitions: 1,
		Group: "g-a", TransactionalIDPrefix: "tx-a-", LockDuration: time.Second, TransactionTimeout: time.Minute}
	b := a
	b.InputTopic, b.OutputTopic, b.Group, b.TransactionalIDPrefix = "in-b", "out-b", "g-b", "tx-b-"
	if err := tg.Setup(ctx, a); err != nil {
		t.Fatal(err)
	}
	w, _ := pollOne(t, tg, a)
	if err := tg.Setup(ctx, b); err != nil {
		t.Fatal(err)
	}
	fr := tg.FaultRunner()
	desc, err := fr.Apply(vocab.FaultShareFailover, map[string]string{"group": "g-a", "topic": "in-a", "partition": "0"})
	if err != nil || !strings.Contains(desc, "share partition in-a-0 of group g-a failed over") {
		t.Fatalf("share-failover of mode a: %q, %v", desc, err)
	}
	if desc, err := fr.Apply(vocab.FaultShareFailover, nil); err != nil || !strings.Contains(desc, "for group g-b") {
		t.Fatalf("share-failover of the last Setup's mode: %q, %v", desc, err)
	}
	// Cutting out-a-0 off holds mode a's commit in PREPARE_COMMIT.
	if _, err := fr.Apply(vocab.FaultNetworkPartition, map[string]string{"for": "1s", "topic": "out-a", "partition": "0"}); err != nil {
		t.Fatal(err)
	}
	if err := w.Begin(ctx); err != nil {
		t.Fatal(err)
	}
	if err := w.Produce(ctx, []*targets.Record{{Topic: "out-a", Partition: 0, Value: []byte("o")}}); err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	tg.Engine().FireTimers()
	if info, _ := tg.Engine().Transaction("tx-a-0"); info.State != eng.TxnPrepareCommit {
		t.Fatalf("during the partition of out-a-0: %v, want PREPARE_COMMIT", info.State)
	}
	clk.Advance(time.Second)
	tg.Engine().FireTimers()
	if info, _ := tg.Engine().Transaction("tx-a-0"); info.State != eng.TxnCompleteCommit {
		t.Fatalf("after the partition healed: %v, want COMPLETE_COMMIT", info.State)
	}
}

// TestCallerHookComposes: the caller's hook (Options.Hook) runs after the
// fault runner's: it fails a staging write, and a crash the runner armed
// still strikes.
func TestCallerHookComposes(t *testing.T) {
	t.Parallel()
	errStage := errors.New("test: staging write fails")
	var failStage bool
	clk := eng.NewManualClock()
	tg, cfg := setUpOne(t, Options{DataDir: t.TempDir(), Flush: eng.FlushNever, Clock: clk,
		Hook: func(pt eng.HookPoint, _ eng.HookInfo) error {
			if pt == eng.HookStageWrite && failStage {
				failStage = false
				return errStage
			}
			return nil
		}})
	ctx := context.Background()
	w, recs := pollOne(t, tg, cfg)
	if err := w.Begin(ctx); err != nil {
		t.Fatal(err)
	}
	failStage = true
	if err := w.StageAcks(ctx, recs, vocab.AckAccept); !errors.Is(err, errStage) {
		t.Fatalf("staging with the caller's hook failing it: %v, want %v", err, errStage)
	}
	if _, err := tg.FaultRunner().Apply(vocab.FaultCoordinatorCrash, map[string]string{"state": "prepare-abort", "scope": "engine"}); err != nil {
		t.Fatal(err)
	}
	_ = w.Abort(ctx)
	if st, ok := tg.FaultRunner().Struck(); !ok || st.Point != eng.HookTxnPrepared || !tg.Engine().Crashed() {
		t.Fatalf("strike %+v, %v (crashed %v); want the engine crashed after PREPARE_ABORT", st, ok, tg.Engine().Crashed())
	}
}

// pollOne produces one input and polls it with a transactional worker
// (id 0) of cfg's mode.
// setUpOne returns a target made with o (closed when the test ends) and
// set up with one input and one output partition, group g and
// transactional ids tx-*.
func setUpOne(t *testing.T, o Options) (*Target, targets.Config) {
	t.Helper()
	tg, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tg.Close() })
	cfg := targets.Config{InputTopic: "in", OutputTopic: "out", InputPartitions: 1, OutputPartitions: 1,
		Group: "g", TransactionalIDPrefix: "tx-", LockDuration: time.Second, TransactionTimeout: time.Minute}
	if err := tg.Setup(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	return tg, cfg
}

func pollOne(t *testing.T, tg *Target, cfg targets.Config) (targets.Worker, []*targets.Record) {
	t.Helper()
	ctx := context.Background()
	w, err := tg.NewWorker(ctx, cfg, vocab.Transactional, 0)
	if err != nil {
		t.Fatal(err)
	}
	p, err := tg.NewProducer(ctx, cfg, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Produce(ctx, []*targets.Record{{Topic: cfg.InputTopic, Partition: 0, Value: []byte("x")}}); err != nil {
		t.Fatal(err)
	}
	recs, err := w.Poll(ctx, 10)
	if err != nil || len(recs) != 1 {
		t.Fatalf("poll = %v, %v; want the one input", recs, err)
	}
	return w, recs
}

// TestWorkloadFaultsApply: every engine-side fault of the built-in
// workloads applies with its params as the load generator passes them
// (defaults written), so the runner's params refuse none a workload file
// may hold.
func TestWorkloadFaultsApply(t *testing.T) {
	t.Parallel()
	for _, spec := range workloads.All() {
		for i, f := range spec.Faults {
			if f.ClientSide() || vocab.BrokerFault(f.Kind) {
				continue
			}
			t.Run(fmt.Sprintf("%s/%d-%s", spec.Name, i, f.Kind), func(t *testing.T) {
				t.Parallel()
				tg, err := New(Options{DataDir: t.TempDir(), Flush: eng.FlushNever})
				if err != nil {
					t.Fatal(err)
				}
				defer tg.Close()
				cfg := targets.Config{InputTopic: "in", OutputTopic: "out", InputPartitions: int32(spec.PartitionsPerTopic),
					OutputPartitions: int32(spec.PartitionsPerTopic), Group: "g", TransactionalIDPrefix: "tx-"}
				if err := tg.Setup(context.Background(), cfg); err != nil {
					t.Fatal(err)
				}
				if desc, err := tg.FaultRunner().Apply(f.Kind, f.Params); err != nil {
					t.Errorf("%s: %v", f, err)
				} else {
					t.Logf("%s: %s", f, desc)
				}
			})
		}
	}
}
