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
	"github.com/sharebench/sharebench/loadgen/pipeline"
	"github.com/sharebench/sharebench/loadgen/targets"
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
	for _, kind := range []workloads.FaultKind{workloads.FaultEngineRestart, workloads.FaultCoordinatorCrash, workloads.FaultShareFailover} {
		if err := fr.Supports(kind); !errors.Is(err, targets.ErrUnsupported) {
			t.Errorf("in memory, Supports(%s) = %v, want ErrUnsupported", kind, err)
		}
		if _, err := fr.Apply(kind, nil); !errors.Is(err, targets.ErrUnsupported) {
			t.Errorf("in memory, Apply(%s) = %v, want ErrUnsupported", kind, err)
		}
	}
	if err := fr.Supports(workloads.FaultNetworkPartition); err != nil {
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
	w, err := tg.NewWorker(ctx, cfg, pipeline.Transactional, 0)
	if err != nil {
		t.Fatal(err)
	}
	desc, err := tg.FaultRunner().Apply(workloads.FaultNetworkPartition, map[string]string{"for": "300ms", "partition": "0"})
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
					if w, err = tg.NewWorker(ctx, cfg, pipeline.Transactional, id); err != nil {
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
					err = w.StageAcks(ctx, in, targets.AckAccept)
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
		kind   workloads.FaultKind
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
		if _, err := fr.Apply(workloads.FaultCoordinatorCrash, bad); err == nil {
			t.Errorf("coordinator-crash %v applied", bad)
		}
	}
	if _, err := fr.Apply(workloads.FaultShareFailover, map[string]string{"partition": "7"}); err == nil {
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
		if _, err := tg.FaultRunner().Apply(workloads.FaultEngineRestart, nil); err != nil {
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
