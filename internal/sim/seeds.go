// This file holds RunSeeds, many seeds in a row (a soak), and Totals, what
// the passing seeds add up to.

package sim

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/sharebench/sharebench/vocab"
)

// Seeds is a run of seeds First, First+1, ... First+Count-1.
type Seeds struct {
	First    int64
	Count    int
	Steps    int   // per seed
	Draft    bool  // the draft's knobs
	Only     []int // kept step indexes (one seed's shrunk trace), nil for all
	Parallel int   // seeds simulated at once (each is single-threaded); at least 1
	// Each, when set, is called with every outcome, one at a time and in
	// seed order (an outcome that finishes early waits for the seeds
	// before it).
	Each func(*Outcome)
	// Interrupt stops the dispatch of further seeds when it closes.
	Interrupt <-chan struct{}
}

// RunSeeds runs the seeds, Parallel at a time, until one breaks an
// invariant. It returns the totals of the passing seeds, the outcome of
// the first failing seed in seed order (nil if none failed), and whether
// Interrupt stopped it.
func RunSeeds(c Seeds) (tot *Totals, bad *Outcome, interrupted bool) {
	tot = NewTotals()
	jobs := make(chan int64)
	var mu sync.Mutex
	stop := make(chan struct{})
	var stopOnce sync.Once
	var wg sync.WaitGroup
	// Each sees the outcomes in seed order whatever order the workers
	// finish in, so a verbose run prints the same bytes at any --parallel:
	// an outcome waits in done until every lower seed has been handed on.
	done := map[int64]*Outcome{}
	next := c.First
	for i := 0; i < min(max(c.Parallel, 1), c.Count); i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for seed := range jobs {
				out := Run(Config{Seed: seed, Steps: c.Steps, Draft: c.Draft, Only: c.Only})
				mu.Lock()
				if c.Each != nil {
					done[seed] = out
					for o := done[next]; o != nil; o = done[next] {
						c.Each(o)
						delete(done, next)
						next++
					}
				}
				if out.Violation != nil {
					if bad == nil || out.Seed < bad.Seed {
						bad = out
					}
					stopOnce.Do(func() { close(stop) })
				} else {
					tot.Add(out)
				}
				mu.Unlock()
			}
		}()
	}
dispatch:
	for i := 0; i < c.Count; i++ {
		select { // an interrupt wins over a free worker
		case <-c.Interrupt:
			interrupted = true
			break dispatch
		default:
		}
		select {
		case jobs <- c.First + int64(i):
		case <-stop:
			break dispatch
		case <-c.Interrupt:
			interrupted = true
			break dispatch
		}
	}
	close(jobs)
	wg.Wait()
	return tot, bad, interrupted
}

// Totals adds up passing seeds: how many, their steps, and the verifier's
// counts per mode and kind.
type Totals struct {
	Seeds, Steps int
	Counts       map[string]map[vocab.Finding]int64 // mode -> kind -> count
}

// NewTotals returns empty totals.
func NewTotals() *Totals { return &Totals{Counts: map[string]map[vocab.Finding]int64{}} }

// Add adds one passing seed.
func (t *Totals) Add(out *Outcome) {
	t.Seeds++
	t.Steps += out.Executed
	for mode, v := range out.Verdicts {
		if t.Counts[mode] == nil {
			t.Counts[mode] = map[vocab.Finding]int64{}
		}
		for k, n := range v.Counts {
			t.Counts[mode][k] += n
		}
	}
}

// Print writes the summary of a passing run that took took: one line,
// then one per mode in report order with the verifier's counts.
func (t *Totals) Print(w io.Writer, took time.Duration) {
	fmt.Fprintf(w, "ok: %d seeds, %d steps checked (scheduled and drain) in %v; every invariant held\n", t.Seeds, t.Steps, took.Round(time.Millisecond))
	modes := make([]string, 0, len(t.Counts))
	for m := range t.Counts {
		modes = append(modes, m)
	}
	sort.Slice(modes, func(i, j int) bool { return vocab.Mode(modes[i]).Order() < vocab.Mode(modes[j]).Order() })
	for _, m := range modes {
		kinds := make([]vocab.Finding, 0, len(t.Counts[m]))
		for k := range t.Counts[m] {
			kinds = append(kinds, k)
		}
		slices.Sort(kinds)
		parts := make([]string, 0, len(kinds))
		for _, k := range kinds {
			parts = append(parts, fmt.Sprintf("%s %d", k, t.Counts[m][k]))
		}
		what := "no findings"
		if len(parts) > 0 {
			what = strings.Join(parts, ", ")
		}
		fmt.Fprintf(w, "  verifier %-13s PASS  %s\n", m, what)
	}
}
