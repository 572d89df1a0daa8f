package sim

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sharebench/sharebench/vocab"
)

// TestRunSeeds: every seed runs once, with the history Run gives it alone,
// handed on in seed order whatever order the workers finish in, and the
// totals add up the passing ones.
func TestRunSeeds(t *testing.T) {
	seen := map[int64][32]byte{}
	var order []int64
	steps := 0
	tot, bad, stopped := RunSeeds(Seeds{First: 5, Count: 4, Steps: 60, Parallel: 3, Each: func(o *Outcome) {
		seen[o.Seed] = o.Hash()
		order = append(order, o.Seed)
		steps += o.Executed
	}})
	if want := []int64{5, 6, 7, 8}; !slices.Equal(order, want) {
		t.Errorf("Each saw seeds %v, want %v (seed order)", order, want)
	}
	if bad != nil || stopped {
		t.Fatalf("RunSeeds: bad %v, interrupted %v; want neither", bad, stopped)
	}
	if tot.Seeds != 4 || len(seen) != 4 || tot.Steps != steps {
		t.Fatalf("totals %d seeds %d steps, callbacks saw %d seeds %d steps; want 4 seeds, equal steps", tot.Seeds, tot.Steps, len(seen), steps)
	}
	for seed, h := range seen {
		if got := Run(Config{Seed: seed, Steps: 60}).Hash(); got != h {
			t.Errorf("seed %d: history in RunSeeds differs from Run alone", seed)
		}
	}
	var b bytes.Buffer
	tot.Print(&b, time.Second)
	out := b.String()
	if !strings.HasPrefix(out, "ok: 4 seeds, ") || strings.Index(out, "verifier implicit") > strings.Index(out, "verifier classic-eos") {
		t.Errorf("Print:\n%s\nwant the summary line, then the modes in report order", out)
	}
}

// TestRunSeedsInterrupt: a closed Interrupt dispatches no seed.
func TestRunSeedsInterrupt(t *testing.T) {
	stop := make(chan struct{})
	close(stop)
	tot, _, stopped := RunSeeds(Seeds{First: 1, Count: 1000, Steps: 60, Parallel: 1, Interrupt: stop})
	if !stopped || tot.Seeds != 0 {
		t.Errorf("interrupted %v after %d seeds, want interrupted before the first", stopped, tot.Seeds)
	}
}

// TestModesInReportOrder: the simulator's slots run the pipeline's modes,
// in report order.
func TestModesInReportOrder(t *testing.T) {
	all := vocab.AllModes()
	if len(all) != len(modes) {
		t.Fatalf("%d modes, the pipeline has %d", len(modes), len(all))
	}
	for i, m := range all {
		if modes[i] != m {
			t.Errorf("modes[%d] = %s, want %s", i, modes[i], m)
		}
	}
}
