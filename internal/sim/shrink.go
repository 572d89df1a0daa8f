// This file holds the shrinker: delta debugging over the step list, so a
// violation is reported with the shortest trace found that still breaks
// the same check.

package sim

import "time"

// Shrink searches, within budget, for a shorter list of cfg's steps that
// still breaks the check out broke: it cuts everything after the failing
// step, then removes ever smaller chunks (ddmin) while the violation
// persists. It returns the kept step indexes (for Config.Only) and the
// outcome of running them.
func Shrink(cfg Config, out *Outcome, budget time.Duration) ([]int, *Outcome) {
	if out == nil || out.Violation == nil {
		return nil, out
	}
	deadline := time.Now().Add(budget)
	steps := Generate(cfg.Seed, cfg.Steps)
	quiet := cfg
	quiet.Log = nil
	want := out.Violation.Check
	keep := cfg.Only
	if keep == nil {
		keep = make([]int, len(steps))
		for i := range keep {
			keep[i] = i
		}
	}
	best := out
	try := func(idx []int) (*Outcome, bool) {
		o := execute(quiet, steps, idx)
		return o, o.Violation != nil && o.Violation.Check == want
	}
	if cut := truncate(keep, out.Violation.Step); len(cut) < len(keep) {
		if o, ok := try(cut); ok {
			keep, best = cut, o
		}
	}
	n := 2
	for len(keep) >= 2 && time.Now().Before(deadline) {
		chunk := (len(keep) + n - 1) / n
		reduced := false
		for start := 0; start < len(keep) && time.Now().Before(deadline); start += chunk {
			cand := append(append([]int(nil), keep[:start]...), keep[min(start+chunk, len(keep)):]...)
			if len(cand) == 0 {
				continue
			}
			if o, ok := try(cand); ok {
				keep, best = truncate(cand, o.Violation.Step), o
				reduced = true
				n = max(n-1, 2)
				break
			}
		}
		if !reduced {
			if n >= len(keep) {
				break
			}
			n = min(2*n, len(keep))
		}
	}
	if len(keep) < len(best.Log) || best == out {
		best = execute(quiet, steps, keep) // the log of exactly the kept steps
	}
	return keep, best
}

// truncate drops the steps after the failing one (step < 0: the drain
// failed, so every step may matter).
func truncate(idx []int, step int) []int {
	if step < 0 {
		return idx
	}
	for i, x := range idx {
		if x == step {
			return idx[:i+1]
		}
	}
	return idx
}
