//go:build mutants

// This file measures the verifier's power: with -tags mutants each engine
// mutant (engine/internal/mutant) is switched on in turn, a real run of the
// load generator drives the engine target through a short workload with
// worker crashes, lock expiry, a stalled transaction, a zombie producer,
// aborts and rejects, and the verifier alone, reading the run's dumped
// ledgers back, must FAIL it. The unmutated run must PASS. Mutants no
// client can observe are listed with the reason. CI runs it with
//
//	go test -tags mutants -count=1 -run TestVerifierCatchesMutants ./loadgen/
//
// and it prints a table of what the verifier found for each mutant.

package loadgen_test

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sharebench/sharebench/loadgen"
	"github.com/sharebench/sharebench/loadgen/pipeline"
	"github.com/sharebench/sharebench/loadgen/result"
	"github.com/sharebench/sharebench/loadgen/targets/enginetarget"
	"github.com/sharebench/sharebench/loadgen/verify"
	"github.com/sharebench/sharebench/workloads"
)

// mutantEnv names the active mutant (engine/internal/mutant.Env; that
// package is internal to the engine, so the name is repeated here).
const mutantEnv = "SHAREBENCH_MUTANT"

// unobservable lists the mutants no client can observe, and why. Every
// other mutant in the engine must be caught.
var unobservable = map[string]string{
	"marker-double-count":         "it inflates the engine's own acknowledgement counter; no record changes state, so nothing a client reads differs",
	"window-unbounded":            "acquiring past share.partition.max.record.locks hands out more records at once; each record is still delivered, acknowledged and output once, and no client sees the window",
	"sweep-skips-timed-out":       "the stalled transaction is never aborted by its timeout, so it commits late but whole: outputs and acknowledgements stay atomic, and a client sees only a commit that succeeded",
	"non-owner-accepted":          "in the exactly-once modes the late owner's staging lands on a record another worker holds, whose own staging then fails and aborts, so nothing is lost or duplicated; in the at-least-once modes it yields only the duplicate they allow. What differs is when an ack lands relative to another worker's delivery, which the ledgers do not order",
	"fenced-producer-accepted":    "the zombie keeps a live share-group membership, so its fenced producer's accepted writes behave like one more worker's: outputs and acknowledgements stay atomic. A client sees only a commit that should have been refused, not a data anomaly",
	"stale-member-epoch-accepted": "the member whose epoch is stale still owns the records it stages (an epoch bump does not move records), so accepting its staging loses or duplicates nothing; a client sees only a staging that should have been refused",
}

// unexercised lists the mutants whose rule the probe's runs never reach,
// and why; the simulator's mutant test covers them.
var unexercised = map[string]string{
	"commit-after-failed-staging": "the load generator's workers abort after any failed staging (as Kafka's producer forces after a failed TxnOffsetCommit), so no run asks to commit one",
}

// mutantWorkload is short and busy: every phase of the loop crashes, locks
// expire, a transaction outlives its timeout, a zombie keeps producing, a
// third of the transactions abort and some records are rejected, to a
// dead-letter queue. The drain timeout is wide: with half the transactions
// aborting, records that reach the delivery limit are archived up to about
// 4 s into the drain on an idle machine, and a drain that times out makes
// the unmutated run INCONCLUSIVE; a drain that settles ends at once.
const mutantWorkload = `
name: mutant-probe
partitionsPerTopic: 4
consumers: 4
producerRate: 2000
testDuration: 1500ms
warmupDuration: 200ms
drainTimeout: 15s
lockDuration: 2s
deliveryLimit: 5
transactionTimeout: 1s
abortRatio: 0.5
rejectRatio: 0.05
errors.deadletterqueue.topic.name: dlq.probe
modes: [deferred, transactional, classic-eos]
faults:
  - {every: 300ms, kind: worker-crash, params: {phase: after-poll, worker: random}}
  - {every: 350ms, kind: worker-crash, params: {phase: after-produce, worker: random}}
  - {every: 400ms, kind: worker-crash, params: {phase: after-stage, worker: random}}
  - {every: 450ms, kind: worker-crash, params: {phase: after-commit-before-ack, worker: random}}
  - {at: 200ms, kind: slow-processing, params: {worker: 1, for: 1s, delay: 2500ms}}
  - {at: 300ms, kind: stall-worker, params: {worker: 2, for: 2500ms}}
  - {at: 600ms, kind: zombie-producer, params: {worker: 3}}
  - {at: 400ms, kind: network-partition, params: {between: coordinator-participant, partition: 1, for: 800ms}}
  - {at: 500ms, kind: membership-churn, params: {for: 300ms}}
`

// mutantSeeds are the runs a mutant gets: it is caught when any of them
// fails (faults land on a real clock, so one seed's timing can miss the
// window a mutant needs). The unmutated run must pass with each.
var mutantSeeds = []int64{7, 8, 9}

var mutantCall = regexp.MustCompile(`mutant\.On\("([a-z0-9-]+)"\)`)

// engineMutants lists every mutant.On id in the engine's sources.
func engineMutants(t *testing.T) []string {
	t.Helper()
	seen := map[string]bool{}
	err := filepath.WalkDir("../engine", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "mutant" {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range mutantCall.FindAllSubmatch(b, -1) {
			seen[string(m[1])] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]string, 0, len(seen))
	for id := range seen {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// mutantRun runs the probe workload with mutant id on ("" for none), each
// mode in its own run against its own engine (concurrently), and returns
// each mode's verdict as the verifier gives it from the dumped ledgers
// alone.
func mutantRun(t *testing.T, id string, seed int64) map[string]*result.Verification {
	t.Helper()
	t.Setenv(mutantEnv, id)
	spec, err := workloads.Parse("mutant-probe.yaml", []byte(mutantWorkload))
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu       sync.Mutex
		wg       sync.WaitGroup
		verdicts = map[string]*result.Verification{}
	)
	for _, m := range spec.Modes() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v, err := mutantMode(spec, m, seed, t.TempDir())
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				t.Errorf("mutant %q, %s: %v", id, m, err)
				return
			}
			verdicts[string(m)] = v
		}()
	}
	wg.Wait()
	return verdicts
}

// mutantMode runs one mode of the probe and verifies its dumped ledgers.
func mutantMode(spec *workloads.Spec, m pipeline.Mode, seed int64, out string) (*result.Verification, error) {
	tgt, err := enginetarget.New(enginetarget.Options{SessionTimeout: 500 * time.Millisecond})
	if err != nil {
		return nil, err
	}
	defer tgt.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := loadgen.Run(ctx, loadgen.Config{Workload: spec, WorkloadRef: "mutant-probe", Target: tgt, Modes: []pipeline.Mode{m},
		Seed: seed, RunID: "mut", OutDir: out, DumpLedgers: true, FaultRunner: tgt.FaultRunner()})
	if err != nil {
		return nil, fmt.Errorf("run: %w", err)
	}
	mr := res.Modes[0]
	if mr.Error != "" {
		return nil, fmt.Errorf("the mode failed to run: %s", mr.Error)
	}
	v, err := verify.VerifyDir(mr.Mode, filepath.Join(out, "ledgers", mr.Mode), verify.Options{})
	if err != nil {
		return nil, fmt.Errorf("verifying the dumped ledgers: %w", err)
	}
	if v.Verdict != mr.Verify.Verdict {
		return nil, fmt.Errorf("the dumped ledgers say %s, the run said %s", v.Verdict, mr.Verify.Verdict)
	}
	return v, nil
}

func TestVerifierCatchesMutants(t *testing.T) {
	for _, seed := range mutantSeeds {
		for mode, v := range mutantRun(t, "", seed) {
			if v.Verdict != verify.VerdictPass {
				t.Fatalf("unmutated run, seed %d: %s is %s (forbidden %v, counts %v, notes %q); repro: go test -tags mutants -run TestVerifierCatchesMutants ./loadgen/",
					seed, mode, v.Verdict, v.Forbidden, v.Counts, v.Notes)
			}
		}
	}
	ids := engineMutants(t)
	if len(ids) < 20 {
		t.Fatalf("%d mutants in the engine, want at least 20", len(ids))
	}
	for id := range unobservable {
		if !slices.Contains(ids, id) {
			t.Errorf("unobservable mutant %q is not in the engine", id)
		}
	}
	for id := range unexercised {
		if !slices.Contains(ids, id) {
			t.Errorf("unexercised mutant %q is not in the engine", id)
		}
	}
	var b strings.Builder
	caught, observable := 0, 0
	produced := map[string]bool{} // anomaly kinds some mutant's run produced
	fmt.Fprintf(&b, "\n%-30s  %-8s  %s\n", "mutant", "verdict", "what the verifier found (mode: forbidden kinds)")
	only := os.Getenv("SHAREBENCH_MUTANTS_ONLY") // a comma-separated list, for a repro
	for _, id := range ids {
		if only != "" && !slices.Contains(strings.Split(only, ","), id) {
			continue
		}
		t0 := time.Now()
		var found []string
		failed := false
		for _, seed := range mutantSeeds {
			if failed {
				break
			}
			verdicts := mutantRun(t, id, seed)
			found = found[:0]
			for _, mode := range slices.Sorted(maps.Keys(verdicts)) {
				v := verdicts[mode]
				for _, k := range v.Forbidden {
					produced[k] = true
				}
				if v.Verdict == verify.VerdictFail {
					failed = true
					found = append(found, fmt.Sprintf("%s: %s", mode, strings.Join(v.Forbidden, ",")))
					for _, k := range v.Forbidden {
						if ws := v.Witnesses[k]; len(ws) > 0 {
							t.Logf("%s, %s, first %s witness: id %d p%d@%d %s", id, mode, k, ws[0].InputID, ws[0].Partition, ws[0].Offset, ws[0].Detail)
						}
					}
				} else if v.Verdict == verify.VerdictInconclusive {
					found = append(found, fmt.Sprintf("%s: inconclusive (%d unjudged)", mode, v.Unjudged))
				}
			}
		}
		verdict := "PASS"
		if failed {
			verdict = "FAIL"
		}
		why, hidden := unobservable[id]
		skip, unreached := unexercised[id]
		switch {
		case hidden:
			found = append(found, "not observable: "+why)
		case unreached:
			found = append(found, "not exercised: "+skip)
		case failed:
			observable++
			caught++
		default:
			observable++
			t.Errorf("mutant %s survived: the verifier passed every mode (%v)", id, found)
		}
		fmt.Fprintf(&b, "%-30s  %-8s  %s  [%v]\n", id, verdict, strings.Join(found, "; "), time.Since(t0).Round(100*time.Millisecond))
		t.Logf("%s: %s in %v", id, verdict, time.Since(t0).Round(100*time.Millisecond))
	}
	fmt.Fprintf(&b, "caught by the verifier alone in real runs: %d of %d observable mutants (%d in the engine, %d not observable by any client, %d not exercised by the probe)\n",
		caught, observable, len(ids), len(unobservable), len(unexercised))
	t.Log(b.String())
	if only == "" {
		// Every anomaly kind is something a real run can produce.
		for _, k := range verify.Anomalies() {
			if !produced[k] {
				t.Errorf("no mutant's real run produced %s", k)
			}
		}
	}
}
