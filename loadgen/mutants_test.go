//go:build mutants

// This file measures the verifier's power: with -tags mutants each engine
// mutant (engine/internal/mutant) is switched on in turn, a real run of the
// load generator drives the engine target through a short workload with
// worker crashes, lock expiry, a stalled transaction, a zombie producer,
// aborts and rejects to a dead-letter queue, the coordinator cut off from a
// participant, and the verifier alone, reading the run's dumped ledgers
// back, must FAIL it at each of mutantSeeds. The unmutated run must PASS at
// each. Mutants no client can observe are listed with the reason. CI runs
// it with
//
//	go test -tags mutants -count=1 -v -timeout 20m -run TestVerifierCatchesMutants ./loadgen/
//
// and it prints the table of what the verifier found for each mutant at
// each seed, in Markdown; -update writes it into docs/verifier.md.

package loadgen_test

import (
	"context"
	"flag"
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

	eng "github.com/sharebench/sharebench/engine"
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
	"non-owner-accepted":          "in the exactly-once modes the late owner's staging lands on a record another worker holds, whose own staging then fails and aborts, so nothing is lost or duplicated; in the at-least-once modes it yields only the duplicate they allow. What differs is when an ack lands relative to another worker's delivery, which the ledgers do not order",
	"stale-member-epoch-accepted": "the member whose epoch is stale still owns the records it stages (an epoch bump does not move records), so accepting its staging loses or duplicates nothing; a client sees only a staging that should have been refused",
}

// byChance lists the mutants a client can observe only in a run whose
// timing happens to give them a window, which the probe cannot give at
// every seed, and why; the table shows the seeds that caught them, and the
// simulator's mutant test covers them.
var byChance = map[string]string{
	"sweep-skips-timed-out":    "a client sees it only when a transaction is left open by a worker that never ends it (the slowed worker still inside one when the run stops: it then hangs after the drain, hanging-transaction); the stalled worker comes back and commits late but whole, and a crashed worker's successor aborts the open transaction as it takes its transactional id, so whether one is left depends on where the slow worker is when the run stops",
	"expiry-releases-pending":  "a client sees it only when a lock expires on a share partition that holds TX_PENDING records of a transaction that goes on to commit, and the records it releases are delivered and committed again before they reach the delivery limit (duplicate); the probe's slowed workers and cut-off partition make that likely at a seed, not certain (with half the transactions aborting, the released records may all be an aborted transaction's or end archived at the limit)",
	"fenced-producer-accepted": "a client sees it only when the zombie's fenced producer commits a transaction whose records its successor has meanwhile taken and ended (torn-transaction, aborted-read: the zombie is told it committed); the zombie keeps a live membership, so most of its accepted writes behave like one more worker's and stay atomic",
}

// unexercised lists the mutants whose rule the probe's runs never reach,
// and why; the simulator's mutant test covers them.
var unexercised = map[string]string{
	"commit-after-failed-staging": "the load generator's workers abort after any failed staging (as Kafka's producer forces after a failed TxnOffsetCommit), so no run asks to commit one",
}

// mutantWorkload is short and busy: every phase of the loop crashes (a
// crashed worker's share session closes with records held: what
// session-close-archives archives), locks expire, a transaction outlives
// its timeout, a zombie keeps producing, half the transactions abort and
// some records are rejected, to a dead-letter queue (dlq-written-twice,
// dlq-staged-reject-not-copied). The coordinator is cut off from the leader
// of input and output partition 1 for 2.5s, so the markers of the
// transactions that touch it wait and are retried
// (marker-dropped-without-retry) while their records stay TX_PENDING; slowed
// workers (five times) hold records past their 1s lock meanwhile, so locks expire
// on that partition while it holds TX_PENDING records
// (expiry-releases-pending releases those with them). The engine's abort sweep runs every
// 250ms (mutantMode) rather than Kafka's 10s, so a timed-out transaction
// ends within the run; a drain that settles ends at once (1-4 s), and
// one that times out makes the unmutated run INCONCLUSIVE. There is no
// warm-up: the window opens once every worker has records, so a mutant
// whose outputs never catch up with the inputs does not hold it for the
// formation limit.
const mutantWorkload = `
name: mutant-probe
partitionsPerTopic: 4
consumers: 4
producerRate: 2000
testDuration: 1500ms
warmupDuration: 0s
drainTimeout: 8s
lockDuration: 1s
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
  - {at: 700ms, kind: slow-processing, params: {worker: 0, for: 600ms, delay: 1500ms}}
  - {at: 1000ms, kind: slow-processing, params: {worker: 3, for: 600ms, delay: 1500ms}}
  - {at: 1300ms, kind: slow-processing, params: {worker: 0, for: 200ms, delay: 1500ms}}
  - {at: 1400ms, kind: slow-processing, params: {worker: 1, for: 100ms, delay: 1500ms}}
  - {at: 600ms, kind: zombie-producer, params: {worker: 3}}
  - {at: 400ms, kind: network-partition, params: {between: coordinator-participant, partition: 1, for: 2500ms}}
  - {at: 500ms, kind: membership-churn, params: {for: 300ms}}
`

// mutantSeeds are the seeds every mutant runs with: it must be caught at
// each of them (faults land on a real clock, so a mutant caught at one
// seed only would be caught by luck). The unmutated run must pass with each.
var mutantSeeds = []int64{7, 8, 9}

// updateTable rewrites the mutant table in docs/verifier.md from the run.
var updateTable = flag.Bool("update", false, "write the printed mutant table into docs/verifier.md")

// The table sits between these two lines of docs/verifier.md.
const (
	tableDoc   = "../docs/verifier.md"
	tableBegin = "<!-- mutant table: begin (go test -tags mutants -run TestVerifierCatchesMutants ./loadgen/ -update) -->"
	tableEnd   = "<!-- mutant table: end -->"
)

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

// mutantRun runs the probe workload with mutant id on ("" for none) at
// every seed, each seed and mode in its own run against its own engine, all
// concurrently (a run mostly waits on its timeline, so they share the
// cores), and returns each seed's verdicts by mode as the verifier gives
// them from the dumped ledgers alone. A mode that failed to run has no
// verdict and fails the test.
func mutantRun(t *testing.T, id string) map[int64]map[string]*result.Verification {
	t.Helper()
	t.Setenv(mutantEnv, id)
	spec, err := workloads.Parse("mutant-probe.yaml", []byte(mutantWorkload))
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu       sync.Mutex
		wg       sync.WaitGroup
		verdicts = map[int64]map[string]*result.Verification{}
	)
	for _, seed := range mutantSeeds {
		verdicts[seed] = map[string]*result.Verification{}
		for _, m := range spec.Modes() {
			wg.Add(1)
			go func() {
				defer wg.Done()
				v, err := mutantMode(spec, m, seed, t.TempDir())
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					t.Errorf("mutant %q, seed %d, %s: %v; repro: SHAREBENCH_MUTANTS_ONLY=%s go test -tags mutants -run TestVerifierCatchesMutants ./loadgen/", id, seed, m, err, id)
					return
				}
				verdicts[seed][string(m)] = v
			}()
		}
	}
	wg.Wait()
	return verdicts
}

// mutantMode runs one mode of the probe and verifies its dumped ledgers.
func mutantMode(spec *workloads.Spec, m pipeline.Mode, seed int64, out string) (*result.Verification, error) {
	// A short session timeout ends a crashed worker's session (releasing
	// what it held) within the run, and a 250ms abort sweep a timed-out
	// transaction; with Kafka's 10s sweep a run would wait for it.
	tgt, err := enginetarget.New(enginetarget.Options{SessionTimeout: 500 * time.Millisecond,
		Extra: []eng.Option{eng.WithAbortSweepInterval(250 * time.Millisecond)}})
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

// mutantRow is one line of the table: a mutant and what the verifier found
// at each seed.
type mutantRow struct {
	id     string
	found  []string // per seed: the failing modes and their forbidden kinds, or PASS
	caught []bool   // per seed: some mode FAILed
	note   string   // why it is not observable or not exercised
}

// foundAt summarises one seed's verdicts: modes that FAILed grouped by the
// forbidden kinds they found ("deferred, transactional: lost"), then the
// INCONCLUSIVE ones; "PASS" when every mode passed.
func foundAt(verdicts map[string]*result.Verification) (string, bool) {
	var kinds []string
	byKinds := map[string][]string{}
	var inconclusive []string
	for _, mode := range slices.Sorted(maps.Keys(verdicts)) {
		v := verdicts[mode]
		switch v.Verdict {
		case verify.VerdictFail:
			k := strings.Join(v.Forbidden, ", ")
			if _, ok := byKinds[k]; !ok {
				kinds = append(kinds, k)
			}
			byKinds[k] = append(byKinds[k], mode)
		case verify.VerdictInconclusive:
			inconclusive = append(inconclusive, fmt.Sprintf("%s: INCONCLUSIVE (%d unjudged)", mode, v.Unjudged))
		}
	}
	var parts []string
	for _, k := range kinds {
		parts = append(parts, strings.Join(byKinds[k], ", ")+": "+k)
	}
	parts = append(parts, inconclusive...)
	if len(parts) == 0 {
		return "PASS", false
	}
	return strings.Join(parts, "; "), len(kinds) > 0
}

// mutantTable prints rows as a Markdown table, one column per seed.
func mutantTable(rows []mutantRow) string {
	var b strings.Builder
	b.WriteString("| mutant |")
	for _, seed := range mutantSeeds {
		fmt.Fprintf(&b, " seed %d |", seed)
	}
	b.WriteString(" not caught because |\n|---|")
	for range mutantSeeds {
		b.WriteString("---|")
	}
	b.WriteString("---|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| `%s` |", r.id)
		for _, f := range r.found {
			fmt.Fprintf(&b, " %s |", f)
		}
		fmt.Fprintf(&b, " %s |\n", r.note)
	}
	return b.String()
}

// writeTable replaces the table between tableBegin and tableEnd in the
// verifier's documentation.
func writeTable(t *testing.T, table string) {
	t.Helper()
	b, err := os.ReadFile(tableDoc)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	i, j := strings.Index(doc, tableBegin), strings.Index(doc, tableEnd)
	if i < 0 || j < i {
		t.Fatalf("%s has no %q ... %q lines to put the table between", tableDoc, tableBegin, tableEnd)
	}
	doc = doc[:i+len(tableBegin)] + "\n" + table + doc[j:]
	if err := os.WriteFile(tableDoc, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote the mutant table into %s", tableDoc)
}

func TestVerifierCatchesMutants(t *testing.T) {
	t0 := time.Now()
	t.Logf("seeds %v", mutantSeeds)
	for seed, verdicts := range mutantRun(t, "") {
		for mode, v := range verdicts {
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
	for id := range byChance {
		if !slices.Contains(ids, id) {
			t.Errorf("mutant %q, caught by chance, is not in the engine", id)
		}
	}
	var rows []mutantRow
	caught, observable := 0, 0
	produced := map[string]bool{}                // anomaly kinds some mutant's run produced
	only := os.Getenv("SHAREBENCH_MUTANTS_ONLY") // a comma-separated list, for a repro
	for _, id := range ids {
		if only != "" && !slices.Contains(strings.Split(only, ","), id) {
			continue
		}
		t1 := time.Now()
		bySeed := mutantRun(t, id)
		row := mutantRow{id: id}
		for _, seed := range mutantSeeds {
			for _, mode := range slices.Sorted(maps.Keys(bySeed[seed])) {
				v := bySeed[seed][mode]
				for _, k := range v.Forbidden {
					produced[k] = true
					if ws := v.Witnesses[k]; len(ws) > 0 && v.Verdict == verify.VerdictFail {
						t.Logf("%s, seed %d, %s, first %s witness: id %d p%d@%d %s", id, seed, mode, k, ws[0].InputID, ws[0].Partition, ws[0].Offset, ws[0].Detail)
					}
				}
			}
			f, c := foundAt(bySeed[seed])
			row.found = append(row.found, f)
			row.caught = append(row.caught, c)
		}
		why, hidden := unobservable[id]
		skip, unreached := unexercised[id]
		luck, chance := byChance[id]
		var missed []int64
		for i, c := range row.caught {
			if !c {
				missed = append(missed, mutantSeeds[i])
			}
		}
		switch {
		case hidden:
			row.note = "not observable: " + why
		case unreached:
			row.note = "not exercised: " + skip
		case chance:
			row.note = fmt.Sprintf("observable only by chance of timing (caught at %d of %d seeds here): %s", len(mutantSeeds)-len(missed), len(mutantSeeds), luck)
		default:
			observable++
			if len(missed) == 0 {
				caught++
			} else {
				t.Errorf("mutant %s survived at seed(s) %v: the verifier passed every mode there (%q); repro: SHAREBENCH_MUTANTS_ONLY=%s go test -tags mutants -run TestVerifierCatchesMutants ./loadgen/", id, missed, row.found, id)
			}
		}
		rows = append(rows, row)
		t.Logf("%s: caught at %d of %d seeds in %v", id, len(mutantSeeds)-len(missed), len(mutantSeeds), time.Since(t1).Round(100*time.Millisecond))
	}
	table := mutantTable(rows) + fmt.Sprintf("\nCaught by the verifier alone in real runs, at each of the %d seeds %v: %d of %d mutants the probe can observe at every seed (%d in the engine; %d not observable by any client, %d observable only by chance of timing, %d not exercised by the probe).\n",
		len(mutantSeeds), mutantSeeds, caught, observable, len(ids), len(unobservable), len(byChance), len(unexercised))
	t.Logf("the mutant table (%v):\n\n%s", time.Since(t0).Round(time.Second), table)
	if only == "" {
		// Every anomaly kind is something a real run can produce.
		for _, k := range verify.Anomalies() {
			if !produced[k] {
				t.Errorf("no mutant's real run produced %s", k)
			}
		}
		if *updateTable && !t.Failed() {
			writeTable(t, table)
		}
	} else if *updateTable {
		t.Errorf("-update writes the whole table: run it without SHAREBENCH_MUTANTS_ONLY")
	}
}
