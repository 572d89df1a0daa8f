// This file tests the stall and zombie faults' scripted forms in one real
// run: a worker stalled for an hour does not hold the run's end (it is
// abandoned at the stop, its timed-out transaction aborted by the
// coordinator's sweep, so the drain finishes), a stall after producing and
// a paused zombie take effect as their fault details say, and the run
// passes. That each form turns its engine mutant into an anomaly is the
// scripted mutant probe's to show (mutants_test.go).

package loadgen

import (
	"slices"
	"strings"
	"testing"
	"time"

	eng "github.com/sharebench/sharebench/engine"
	"github.com/sharebench/sharebench/loadgen/targets/enginetarget"
	"github.com/sharebench/sharebench/loadgen/verify"
	"github.com/sharebench/sharebench/vocab"
	"github.com/sharebench/sharebench/workloads"
)

const stallWorkload = `
name: stalls
partitionsPerTopic: 2
consumers: 3
producerRate: 500
testDuration: 1500ms
warmupDuration: 0s
drainTimeout: 10s
lockDuration: 1s
transactionTimeout: 1s
modes: [transactional]
faults:
  - {at: 100ms, kind: stall-worker, params: {worker: 0, for: 1h}}
  - {at: 100ms, kind: stall-worker, params: {worker: 1, for: 300ms}}
  - {at: 250ms, kind: zombie-producer, params: {worker: 1, pause: 500ms}}
  - {at: 400ms, kind: stall-worker, params: {worker: 1, phase: after-produce, for: 600ms}}
`

func TestRunStallsAndAPausedZombie(t *testing.T) {
	t.Parallel()
	spec, err := workloads.Parse("stalls.yaml", []byte(stallWorkload))
	if err != nil {
		t.Fatal(err)
	}
	tgt, err := enginetarget.New(enginetarget.Options{SessionTimeout: 500 * time.Millisecond,
		Extra: []eng.Option{eng.WithAbortSweepInterval(100 * time.Millisecond)}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tgt.Close() })
	res, err := Run(runCtx(t), Config{Workload: spec, WorkloadRef: "stalls", Target: tgt, Modes: []vocab.Mode{vocab.Transactional},
		Seed: testSeed, OutDir: t.TempDir(), FaultRunner: tgt.FaultRunner()})
	if err != nil {
		t.Fatalf("Run: %v; %s", err, repro(t))
	}
	mr := res.Modes[0]
	if mr.Error != "" || mr.Verify == nil {
		t.Fatalf("error %q, verification %v; %s", mr.Error, mr.Verify, repro(t))
	}
	if v := mr.Verify; v.Verdict != verify.VerdictPass {
		t.Fatalf("%s, forbidden %v, notes %q: want PASS (the sweep aborts the abandoned worker's transaction, the zombie's commit is refused); %s", v.Verdict, v.Forbidden, v.Notes, repro(t))
	}
	if mr.DrainTimedOut {
		t.Errorf("the drain timed out: the stalled worker's timed-out transaction should have been aborted, its records redelivered; %s", repro(t))
	}
	var details []string
	for _, f := range mr.Faults {
		details = append(details, f.Detail)
	}
	for _, want := range []string{"worker 0 stalls for 1h0m0s", "paused for 500ms, wakes as a zombie", "its outputs written and nothing staged"} {
		if !slices.ContainsFunc(details, func(d string) bool { return strings.Contains(d, want) }) {
			t.Errorf("no fault detail says %q: %q", want, details)
		}
	}
}
