// This file tests the simulator: the same seed gives the same history byte
// for byte, a few hundred seeds hold every invariant (the CI run), the
// shrinker finds a short trace, and the draft knobs are caught breaking
// invariants.

package sim

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sharebench/sharebench/vocab"
)

// CI's seed budget: a few hundred seeds of ciSteps steps each (plus their
// drains, about as many steps again) take about 40 s on two cores. -short
// runs a tenth. The soak is the CLI: sharebench sim --seeds 10000.
const (
	ciSeeds = 400
	ciSteps = 500
)

// runSeeds simulates seeds first..first+n-1, GOMAXPROCS at a time, and
// returns every outcome in seed order.
func runSeeds(first int64, n int, cfg Config) []*Outcome {
	outs := make([]*Outcome, n)
	var wg sync.WaitGroup
	next := make(chan int)
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				c := cfg
				c.Seed = first + int64(i)
				outs[i] = Run(c)
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	return outs
}

func repro(out *Outcome, steps int) string {
	return fmt.Sprintf("sharebench sim --seed %d --steps %d", out.Seed, steps)
}

func TestSameSeedSameHistory(t *testing.T) {
	t.Parallel()
	// One seed with a data directory (engine restarts), one without.
	var durable, inMemory int64
	for seed := int64(1); durable == 0 || inMemory == 0; seed++ {
		switch {
		case paramsFor(seed).durable && durable == 0:
			durable = seed
		case !paramsFor(seed).durable && inMemory == 0:
			inMemory = seed
		}
	}
	for _, seed := range []int64{durable, inMemory, 123456789} {
		a := Run(Config{Seed: seed, Steps: 300})
		b := Run(Config{Seed: seed, Steps: 300})
		if a.Hash() != b.Hash() {
			for i := range min(len(a.Log), len(b.Log)) {
				if a.Log[i] != b.Log[i] {
					t.Fatalf("seed %d: histories differ at line %d:\n  %s\n  %s", seed, i, a.Log[i], b.Log[i])
				}
			}
			t.Fatalf("seed %d: histories differ in length: %d and %d lines", seed, len(a.Log), len(b.Log))
		}
		if a.Executed < 300 {
			t.Fatalf("seed %d: executed %d steps, want at least the 300 scheduled", seed, a.Executed)
		}
	}
	if Run(Config{Seed: 1, Steps: 300}).Hash() == Run(Config{Seed: 2, Steps: 300}).Hash() {
		t.Fatal("seeds 1 and 2 gave the same history")
	}
}

// TestSeedReplaysInAnotherProcess runs seeds here and in a second process
// of this test binary and wants the same history from each: nothing a
// seed's history depends on may come from a per-process source (a hash
// seed, map order, the wall clock), or "sharebench sim --seed N" would not
// replay what a failure printed.
func TestSeedReplaysInAnotherProcess(t *testing.T) {
	const seeds, steps = 40, 300
	hashes := func() string {
		var b strings.Builder
		for seed := int64(1); seed <= seeds; seed++ {
			fmt.Fprintf(&b, "seed %d %x\n", seed, Run(Config{Seed: seed, Steps: steps}).Hash())
		}
		return b.String()
	}
	if os.Getenv("SHAREBENCH_SIM_CHILD") == "1" {
		fmt.Print("<<" + hashes() + ">>")
		return
	}
	t.Parallel()
	cmd := exec.Command(os.Args[0], "-test.run=^TestSeedReplaysInAnotherProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), "SHAREBENCH_SIM_CHILD=1")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("the second process: %v\n%s", err, out)
	}
	i, j := bytes.Index(out, []byte("<<")), bytes.LastIndex(out, []byte(">>"))
	if i < 0 || j < i {
		t.Fatalf("the second process printed no hashes:\n%s", out)
	}
	there := strings.Split(string(out[i+2:j]), "\n")
	here := strings.Split(hashes(), "\n")
	for k := range here {
		if k >= len(there) || here[k] != there[k] {
			t.Fatalf("a seed's history differs between two processes: %q here, %q there (repro: sharebench sim --seed %d --steps %d, twice)", here[k], there[min(k, len(there)-1)], k+1, steps)
		}
	}
}

// TestSeeds is the CI run: every invariant after every step of a few
// hundred seeds, and the verifier's verdict per mode after each drain.
func TestSeeds(t *testing.T) {
	t.Parallel()
	n := ciSeeds
	if testing.Short() {
		n = ciSeeds / 10
	}
	start := time.Now()
	outs := runSeeds(1, n, Config{Steps: ciSteps})
	totals := map[string]map[vocab.Finding]int64{}
	steps, failed := 0, 0
	for _, out := range outs {
		steps += out.Executed
		if v := out.Violation; v != nil {
			failed++
			if failed <= 5 {
				t.Errorf("seed %d: %v\n  repro: %s", out.Seed, v, repro(out, ciSteps))
			}
			continue
		}
		for mode, res := range out.Verdicts {
			if totals[mode] == nil {
				totals[mode] = map[vocab.Finding]int64{}
			}
			for k, c := range res.Counts {
				totals[mode][k] += c
			}
		}
	}
	t.Logf("%d seeds, %d steps checked in %v", n, steps, time.Since(start).Round(time.Millisecond))
	for _, m := range modes {
		t.Logf("  %-13s %v", m, totals[string(m)])
	}
	if failed > 0 {
		t.Fatalf("%d of %d seeds broke an invariant", failed, n)
	}
	// The faults must bite: every at-least-once mode shows duplicates.
	for _, m := range []string{"implicit", "explicit", "deferred"} {
		if totals[m]["duplicate"] == 0 {
			t.Errorf("mode %s: no duplicate in %d seeds: the faults do not reach it", m, n)
		}
	}
}

// TestShrink injects a check that fails once any record was delivered
// three times, and wants the shrinker to find a much shorter trace that
// fails the same way when replayed with Config.Only.
func TestShrink(t *testing.T) {
	t.Parallel()
	third := func(s *sim) *Violation {
		for g := range s.share {
			for _, m := range s.share[g] {
				for off := range m.recs {
					if m.recs[off].count >= 3 {
						return &Violation{Check: "test third-delivery", Detail: fmt.Sprintf("%s %s@%d delivered 3 times", m.group, m.tp, off)}
					}
				}
			}
		}
		return nil
	}
	var cfg Config
	var out *Outcome
	for seed := int64(1); seed < 50 && out == nil; seed++ {
		cfg = Config{Seed: seed, Steps: 400, check: third}
		if o := Run(cfg); o.Violation != nil && o.Violation.Step >= 50 {
			out = o
		}
	}
	if out == nil {
		t.Fatal("no seed in 1..49 delivers a record three times after step 50")
	}
	kept, shrunk := Shrink(cfg, out, 20*time.Second)
	if shrunk.Violation == nil || shrunk.Violation.Check != "test third-delivery" {
		t.Fatalf("shrunk outcome %v, want the injected violation", shrunk.Violation)
	}
	if len(kept) >= out.Violation.Step/2 {
		t.Fatalf("shrunk to %d steps from a violation after step %d: want far fewer", len(kept), out.Violation.Step)
	}
	cfg.Only = kept
	replay := Run(cfg)
	if replay.Violation == nil || replay.Hash() != shrunk.Hash() {
		t.Fatalf("replaying --only %v: %v, want the shrunk history", kept, replay.Violation)
	}
	t.Logf("seed %d: violation after step %d shrunk to %d steps: %v\n%s", cfg.Seed, out.Violation.Step, len(kept), shrunk.Violation,
		strings.Join(shrunk.Log, "\n"))
}

// TestDraftKnobsBreakInvariants: the draft's choices (docs/design.md §3.4) are
// unsafe, and the simulator must show it within a few seeds.
func TestDraftKnobsBreakInvariants(t *testing.T) {
	t.Parallel()
	for _, out := range runSeeds(1, 16, Config{Steps: 300, Draft: true}) {
		if out.Violation != nil {
			t.Logf("seed %d with the draft knobs: %v", out.Seed, out.Violation)
			return
		}
	}
	t.Fatal("16 seeds with the draft knobs broke no invariant")
}
