// This file checks the chaos workload's promise end to end, through Run
// against the engine target: under worker crashes at every phase, aborts,
// lock expiry, a stalled transaction and a zombie producer (and the
// engine-side faults when the run has a fault runner), transactional and
// classic-eos show no anomaly, and implicit, explicit and deferred show
// only the anomaly their mode allows, at least one duplicate each, which
// proves the faults bite and the verifier sees them.

package loadgen_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/sharebench/sharebench/engine"
	"github.com/sharebench/sharebench/loadgen"
	"github.com/sharebench/sharebench/loadgen/targets/enginetarget"
	"github.com/sharebench/sharebench/loadgen/verify"
	"github.com/sharebench/sharebench/vocab"
	"github.com/sharebench/sharebench/workloads"
)

// chaosTestDuration shortens the built-in's 10s per mode; the faults'
// times are scaled with it, their lengths (past the lock, past the
// transaction timeout) are kept.
const chaosTestDuration = 5 * time.Second

// chaosSpec returns the built-in chaos workload shortened for a test,
// keeping only the faults a run without a fault runner can apply.
func chaosSpec(t *testing.T, withRunner bool) *workloads.Spec {
	t.Helper()
	spec, ok := workloads.Lookup("chaos")
	if !ok {
		t.Fatal("the built-in chaos workload is not registered")
	}
	scale := float64(chaosTestDuration) / float64(spec.TestDuration())
	spec.TestLength, spec.TestMinutes = chaosTestDuration, 0
	var kept []workloads.Fault
	for _, f := range spec.Faults {
		if !withRunner && !f.Kind.ClientSide() {
			continue
		}
		f.At = time.Duration(float64(f.At) * scale)
		f.Every = time.Duration(float64(f.Every) * scale)
		kept = append(kept, f)
	}
	spec.Faults = kept
	if err := spec.Validate(); err != nil {
		t.Fatalf("shortened chaos workload: %v", err)
	}
	return spec
}

// chaosRunner returns the fault runner that applies the chaos workload's
// engine-side faults (coordinator crash, share failover, engine restart)
// to tgt, which has a data directory.
func chaosRunner(tgt *enginetarget.Target) loadgen.FaultRunner {
	if fr := tgt.FaultRunner(); fr != nil {
		return fr
	}
	return nil
}

func TestChaosExpectations(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the chaos workload for 5s per mode; skipped with -short")
	}
	t.Parallel()
	for _, m := range vocab.AllModes() {
		t.Run(string(m), func(t *testing.T) {
			t.Parallel()
			// Crashed classic consumers keep their partitions until their
			// session times out (the target's default is 10s): 4s keeps
			// the classic-eos drain short.
			// A data directory gives the engine target its fault runner
			// (engine restart, coordinator crash, share failover).
			tgt, err := enginetarget.New(enginetarget.Options{SessionTimeout: 4 * time.Second, DataDir: t.TempDir(), Flush: engine.FlushNever})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { tgt.Close() })
			runner := chaosRunner(tgt)
			if runner == nil {
				t.Fatal("the engine target with a data directory has no fault runner")
			}
			spec := chaosSpec(t, runner != nil)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			const seed = 20261
			res, err := loadgen.Run(ctx, loadgen.Config{
				Workload: spec, WorkloadRef: "chaos", Target: tgt, Modes: []vocab.Mode{m},
				Seed: seed, RunID: fmt.Sprintf("chaos-%s", m), FaultRunner: runner,
			})
			if err != nil {
				t.Fatalf("run: %v", err)
			}
			mr := res.Modes[0]
			if mr.Error != "" {
				t.Fatalf("mode %s: %s", m, mr.Error)
			}
			v := mr.Verify
			if v == nil {
				t.Fatalf("mode %s: no verdict", m)
			}
			t.Logf("mode %s: %d inputs, %d outputs, counts %v, %d crashes, %d aborts (%d fenced by a stale member epoch), %d lock expiries, faults %d, drain timed out %v",
				m, v.Inputs, v.Outputs, v.Counts, mr.WorkerCrashes, mr.Aborts, mr.FencedAborts, mr.LockExpiries, len(mr.Faults), mr.DrainTimedOut)
			if !v.Pass {
				t.Errorf("mode %s: forbidden anomalies %v (counts %v, witnesses %v); repro: sharebench run --workload chaos --modes %s --seed %d",
					m, v.Forbidden, v.Counts, v.Witnesses, m, seed)
			}
			allowed, err := verify.Allowed(m)
			if err != nil {
				t.Fatal(err)
			}
			if len(allowed) == 0 {
				for _, kind := range vocab.Anomalies() {
					if v.Counts[kind] != 0 {
						t.Errorf("mode %s: %d %s, want none", m, v.Counts[kind], kind)
					}
				}
				return
			}
			if v.Counts[vocab.KindDuplicate] == 0 {
				t.Errorf("mode %s: no duplicate: the faults did not bite (crashes %d, lock expiries %d)", m, mr.WorkerCrashes, mr.LockExpiries)
			}
		})
	}
}
