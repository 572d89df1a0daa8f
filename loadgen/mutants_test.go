//go:build mutants

// This file measures the verifier's power: with -tags mutants each engine
// mutant (engine/internal/mutant) is switched on in turn, a real run of the
// load generator drives the engine target through a short workload with
// worker crashes, lock expiry, a stalled transaction, a zombie producer,
// aborts and rejects to a dead-letter queue, the coordinator cut off from a
// participant, and where that catches nothing a second, scripted probe
// (stalls past a lock and past a transaction timeout, a paused zombie) runs
// too; the verifier alone, reading the run's dumped ledgers back, must
// FAIL one of them at each of mutantSeeds. The unmutated runs of both must
// PASS at each. Mutants no client can observe are listed with the reason.
// CI runs it with
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
	"github.com/sharebench/sharebench/loadgen/result"
	"github.com/sharebench/sharebench/loadgen/targets/enginetarget"
	"github.com/sharebench/sharebench/loadgen/verify"
	"github.com/sharebench/sharebench/vocab"
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

// scriptedWorkload is the second probe, run at each seed where the first
// caught nothing: no random fault and no abort, one scripted story per
// worker, each of which a mutant of a timing rule turns into an anomaly at
// every seed; its rejects to a dead-letter queue and a 1s cut-off of the
// coordinator from partition 1 back up the first probe's catches of the
// reject, DLQ and marker-retry mutants. Worker 0 stalls after staging for the rest of the run:
// its transaction times out at 2s, and the coordinator's sweep must abort
// it (sweep-skips-timed-out leaves it open: hanging-transaction). Worker 1
// stalls after staging for 1.5s, past its records' 1s locks but inside its
// 2s transaction timeout, and then commits: its TX_PENDING records have no
// lock to expire (expiry-releases-pending releases them, another worker
// commits them too: duplicate). Worker 2 is replaced while it stalls after
// staging (its transaction is aborted by its successor's fencing) and
// stays paused 1s; its successor stalls after writing its outputs, before
// staging, when the zombie wakes and commits: the fenced commit must be
// refused (fenced-producer-accepted commits the successor's half-done
// transaction: its outputs visible and its records redelivered).
const scriptedWorkload = `
name: mutant-probe-scripted
partitionsPerTopic: 2
consumers: 4
producerRate: 1000
testDuration: 2500ms
warmupDuration: 0s
drainTimeout: 6s
lockDuration: 1s
deliveryLimit: 5
transactionTimeout: 2s
abortRatio: 0
rejectRatio: 0.05
errors.deadletterqueue.topic.name: dlq.scripted
modes: [deferred, transactional, classic-eos]
faults:
  - {at: 200ms, kind: stall-worker, params: {worker: 0, for: 1h}}
  - {at: 200ms, kind: stall-worker, params: {worker: 1, for: 1500ms}}
  - {at: 200ms, kind: stall-worker, params: {worker: 2, for: 400ms}}
  - {at: 400ms, kind: zombie-producer, params: {worker: 2, pause: 1s}}
  - {at: 800ms, kind: stall-worker, params: {worker: 2, phase: after-produce, for: 1s}}
  - {at: 1200ms, kind: network-partition, params: {between: coordinator-participant, partition: 1, for: 1s}}
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

// mutantRun runs a probe workload with mutant id on ("" for none) at
// each of seeds, each seed and mode in its own run against its own engine, all
// concurrently (a run mostly waits on its timeline, so they share the
// cores), and returns each seed's verdicts by mode as the verifier gives
// them from the dumped ledgers alone. A mode that failed to run has no
// verdict and fails the test.
func mutantRun(t *testing.T, id, workload string, seeds []int64) map[int64]map[string]*result.Verification {
	t.Helper()
	t.Setenv(mutantEnv, id)
	spec, err := workloads.Parse("mutant-probe.yaml", []byte(workload))
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu       sync.Mutex
		wg       sync.WaitGroup
		verdicts = map[int64]map[string]*result.Verification{}
	)
	for _, seed := range seeds {
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
func mutantMode(spec *workloads.Spec, m vocab.Mode, seed int64, out string) (*result.Verification, error) {
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
	res, err := loadgen.Run(ctx, loadgen.Config{Workload: spec, WorkloadRef: "mutant-probe", Target: tgt, Modes: []vocab.Mode{m},
		Seed: seed, RunID: "mut", OutDir: out, DumpLedgers: true, FaultRunner: tgt.FaultRunner()})
	if err != nil {
		return nil, fmt.Errorf("run: %w", err)
	}
	mr := res.Modes[0]
	if mr.Error != "" {
		return nil, fmt.Errorf("the mode failed to run: %s", mr.Error)
	}
	v, err := verify.VerifyDir(mr.Mode, filepath.Join(out, "ledgers", mr.Mode.String()), verify.Options{})
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
			k := strings.Join(vocab.Names(v.Forbidden), ", ")
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
	for _, probe := range []struct{ name, workload string }{{"probe", mutantWorkload}, {"scripted probe", scriptedWorkload}} {
		for seed, verdicts := range mutantRun(t, "", probe.workload, mutantSeeds) {
			for mode, v := range verdicts {
				if v.Verdict != verify.VerdictPass {
					t.Fatalf("unmutated run of the %s, seed %d: %s is %s (forbidden %v, counts %v, notes %q); repro: go test -tags mutants -run TestVerifierCatchesMutants ./loadgen/",
						probe.name, seed, mode, v.Verdict, v.Forbidden, v.Counts, v.Notes)
				}
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
	var rows []mutantRow
	var survivors []string
	caught, observable := 0, 0
	produced := map[vocab.Finding]bool{}         // anomaly kinds some mutant's run produced
	only := os.Getenv("SHAREBENCH_MUTANTS_ONLY") // a comma-separated list, for a repro
	for _, id := range ids {
		if only != "" && !slices.Contains(strings.Split(only, ","), id) {
			continue
		}
		t1 := time.Now()
		bySeed := mutantRun(t, id, mutantWorkload, mutantSeeds)
		// The scripted probe runs where the first caught nothing.
		found, caughtAt := map[int64]string{}, map[int64]bool{}
		var again []int64
		for _, seed := range mutantSeeds {
			found[seed], caughtAt[seed] = foundAt(bySeed[seed])
			if !caughtAt[seed] {
				again = append(again, seed)
			}
		}
		var scripted map[int64]map[string]*result.Verification
		if len(again) > 0 {
			scripted = mutantRun(t, id, scriptedWorkload, again)
		}
		row := mutantRow{id: id}
		for _, seed := range mutantSeeds {
			for _, verdicts := range []map[string]*result.Verification{bySeed[seed], scripted[seed]} {
				for _, mode := range slices.Sorted(maps.Keys(verdicts)) {
					v := verdicts[mode]
					for _, k := range v.Forbidden {
						produced[k] = true
						if ws := v.Witnesses[k]; len(ws) > 0 && v.Verdict == verify.VerdictFail {
							t.Logf("%s, seed %d, %s, first %s witness: id %d p%d@%d %s", id, seed, mode, k, ws[0].InputID, ws[0].Partition, ws[0].Offset, ws[0].Detail)
						}
					}
				}
			}
			f, c := found[seed], caughtAt[seed]
			if !c && scripted[seed] != nil {
				if f2, c2 := foundAt(scripted[seed]); c2 {
					f, c = "scripted probe: "+f2, true
				}
			}
			row.found = append(row.found, f)
			row.caught = append(row.caught, c)
		}
		why, hidden := unobservable[id]
		skip, unreached := unexercised[id]
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
		default:
			observable++
			if len(missed) == 0 {
				caught++
			} else {
				survivors = append(survivors, fmt.Sprintf("%s (seeds %v)", id, missed))
				t.Errorf("mutant %s survived at seed(s) %v: the verifier passed every mode there (%q); repro: SHAREBENCH_MUTANTS_ONLY=%s go test -tags mutants -run TestVerifierCatchesMutants ./loadgen/", id, missed, row.found, id)
			}
		}
		rows = append(rows, row)
		t.Logf("%s: caught at %d of %d seeds in %v", id, len(mutantSeeds)-len(missed), len(mutantSeeds), time.Since(t1).Round(100*time.Millisecond))
	}
	table := mutantTable(rows) + fmt.Sprintf("\nCaught by the verifier alone in real runs, at each of the %d seeds %v: %d of %d mutants the probes can observe (%d in the engine; %d not observable by any client, %d not exercised by the probes).\n",
		len(mutantSeeds), mutantSeeds, caught, observable, len(ids), len(unobservable), len(unexercised))
	if len(survivors) > 0 {
		table += fmt.Sprintf("\nSurvived: %s.\n", strings.Join(survivors, ", "))
	}
	t.Logf("the mutant table (%v):\n\n%s", time.Since(t0).Round(time.Second), table)
	if only == "" {
		// Every anomaly kind is something a real run can produce.
		for _, k := range vocab.Anomalies() {
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
