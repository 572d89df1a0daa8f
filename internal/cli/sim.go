// This file holds `sharebench sim`, the deterministic simulator over the
// reference engine (package internal/sim): seeds in a row, a shrunk trace
// and a one-line repro on the first violation, exit code 3.

package cli

import (
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/sharebench/sharebench/internal/sim"
	"github.com/sharebench/sharebench/reports"
)

const simExamples = `  sharebench sim --seed 42 --steps 400          # one seed; same seed, same history
  sharebench sim --seeds 200                     # seeds 1..200 (or from --seed)
  sharebench sim --seeds 10000 --steps 600       # soak
  sharebench sim --knobs draft --seeds 50        # the draft knobs break invariants: see how
  sharebench sim --seed 7 --steps 400 --only 3,17,42 -v   # replay a shrunk trace with its log`

type simFlags struct {
	seed       int64
	steps      int
	seeds      int
	knobs      string
	only       string
	shrinkTime time.Duration
	parallel   int
	verbose    bool
}

func (f *simFlags) register(fs *pflag.FlagSet) {
	fs.Int64Var(&f.seed, "seed", 0, "first seed (default: 1 with --seeds, else time-based; printed)")
	fs.IntVar(&f.steps, "steps", 400, "scheduled steps per seed, before the drain")
	fs.IntVar(&f.seeds, "seeds", 1, "run this many seeds in a row, from --seed")
	fs.StringVar(&f.knobs, "knobs", "safe", "KIP-1289 decision knobs: safe or draft (the draft's choices, expected to break invariants)")
	fs.StringVar(&f.only, "only", "", "comma-separated step indexes to keep (a shrunk trace), in order")
	fs.DurationVar(&f.shrinkTime, "shrink-time", 30*time.Second, "time allowed to shrink a failing trace (0: do not shrink)")
	fs.IntVar(&f.parallel, "parallel", runtime.GOMAXPROCS(0), "seeds simulated at once (each simulation is single-threaded and deterministic)")
	fs.BoolVarP(&f.verbose, "verbose", "v", false, "print every step of every seed")
}

// validate checks the flags, returning usage errors, and returns the step
// indexes --only keeps (nil: every step).
func (f *simFlags) validate() ([]int, error) {
	switch {
	case f.steps < 0:
		return nil, usageErr("--steps %d: must be at least 0", f.steps)
	case f.seeds < 1:
		return nil, usageErr("--seeds %d: must be at least 1", f.seeds)
	case f.parallel < 1:
		return nil, usageErr("--parallel %d: must be at least 1", f.parallel)
	case f.knobs != "safe" && f.knobs != "draft":
		return nil, usageErr("--knobs %q: want safe or draft", f.knobs)
	}
	if f.only == "" {
		return nil, nil
	}
	if f.seeds != 1 {
		return nil, usageErr("--only replays one seed's trace: drop --seeds")
	}
	var only []int
	for _, part := range strings.Split(f.only, ",") {
		i, err := strconv.Atoi(strings.TrimSpace(part))
		if err != nil || i < 0 || i >= f.steps {
			return nil, usageErr("--only: %q is not a step index in [0, %d)", part, f.steps)
		}
		only = append(only, i)
	}
	return only, nil
}

func simCmd(env *Env, args []string) error {
	var f simFlags
	fs := newFlags(env, "sim", "[flags]", simExamples)
	f.register(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	only, err := f.validate()
	if err != nil {
		return err
	}
	if !fs.Changed("seed") {
		f.seed = 1
		if f.seeds == 1 {
			f.seed = time.Now().UnixNano() % 1_000_000_000
		}
	}
	draft := f.knobs == "draft"
	last := f.seed + int64(f.seeds) - 1
	fmt.Fprintf(env.Stderr, "sharebench sim: seeds %d..%d (%d), %d steps each, knobs %s\n", f.seed, last, f.seeds, f.steps, f.knobs)

	start := time.Now()
	seeds := sim.Seeds{First: f.seed, Count: f.seeds, Steps: f.steps, Draft: draft, Only: only,
		Parallel: f.parallel, Interrupt: env.Interrupt}
	if f.verbose {
		seeds.Each = func(out *sim.Outcome) {
			fmt.Fprintf(env.Stdout, "--- seed %d\n%s\n", out.Seed, strings.Join(out.Log, "\n"))
		}
	}
	tot, bad, stopped := sim.RunSeeds(seeds)
	if bad == nil {
		if stopped {
			return withCode(reports.ExitRuntime, fmt.Errorf("interrupted after %d seeds", tot.Seeds))
		}
		tot.Print(env.Stdout, time.Since(start))
		return nil
	}
	cfg := sim.Config{Seed: bad.Seed, Steps: f.steps, Draft: draft, Only: only}
	return reportViolation(env, &f, cfg, bad)
}

// reportViolation prints the violation, the shortest trace found and the
// repro commands, and returns the exit-3 error.
func reportViolation(env *Env, f *simFlags, cfg sim.Config, out *sim.Outcome) error {
	w := env.Stdout
	v := out.Violation
	fmt.Fprintf(w, "VIOLATION seed %d: %s\n", out.Seed, v)
	fmt.Fprintf(w, "world: %s\n", out.Params)
	repro := fmt.Sprintf("sharebench sim --seed %d --steps %d", cfg.Seed, cfg.Steps)
	if cfg.Draft {
		repro += " --knobs draft"
	}
	trace := out
	if f.shrinkTime > 0 {
		t0 := time.Now()
		kept, shrunk := sim.Shrink(cfg, out, f.shrinkTime)
		if shrunk != nil && shrunk.Violation != nil {
			trace = shrunk
			fmt.Fprintf(w, "shortest trace found: %d of %d steps (shrunk in %v), then %s\n",
				len(kept), cfg.Steps, time.Since(t0).Round(time.Millisecond), drainWord(shrunk.Violation.Step))
			fmt.Fprintf(w, "shrunk violation: %s\n", shrunk.Violation)
			fmt.Fprintf(w, "replay it:  %s --only %s -v\n", repro, joinInts(kept))
		}
	}
	fmt.Fprintln(w, "trace:")
	for _, l := range traceLines(trace) {
		fmt.Fprintf(w, "  %s\n", l)
	}
	fmt.Fprintf(w, "repro: %s\n", repro)
	return withCode(reports.ExitAnomaly, fmt.Errorf("seed %d: %s (repro: %s)", out.Seed, v.Check, repro))
}

func drainWord(step int) string {
	if step < 0 {
		return "the drain and the verifier"
	}
	return "the violation"
}

// traceLines keeps a trace printable: every scheduled step, and of a long
// drain its last lines and the verdicts.
func traceLines(out *sim.Outcome) []string {
	var sched, drain, tail []string
	for _, l := range out.Log {
		switch {
		case strings.HasPrefix(l, "drain."):
			drain = append(drain, l)
		case strings.HasPrefix(l, "drain:") || strings.HasPrefix(l, "verify "):
			tail = append(tail, l)
		default:
			sched = append(sched, l)
		}
	}
	const keep = 25
	if len(drain) > keep {
		drain = append([]string{fmt.Sprintf("... %d drain steps before these ...", len(drain)-keep)}, drain[len(drain)-keep:]...)
	}
	return append(append(sched, drain...), tail...)
}

func joinInts(xs []int) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = strconv.Itoa(x)
	}
	return strings.Join(parts, ",")
}
