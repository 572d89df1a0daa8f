//go:build cpudemo

// This file holds the cpudemo build: a candidate that costs more CPU per
// record, for demonstrating that the A/B gate catches a throughput
// regression (scripts/ab-gate.sh, docs/ci-gate.md). Built with -tags
// cpudemo, every worker poll on the engine target spins, on the worker's
// goroutine, SHAREBENCH_CPU_COST (default 15%) of the CPU time the process
// has spent per record so far without the spin, times the poll's records:
// the cost follows the machine and the workload, so the candidate costs
// that much more CPU per record wherever it runs. Normal builds do not
// contain this file and targetWrap stays nil.

package cli

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/sharebench/sharebench/loadgen"
	"github.com/sharebench/sharebench/loadgen/pipeline"
	"github.com/sharebench/sharebench/loadgen/targets"
	"github.com/sharebench/sharebench/reports"
)

// cpuCostEnv names the variable that sets the extra cost.
const cpuCostEnv = "SHAREBENCH_CPU_COST"

// defaultCPUCost is the extra CPU per record when cpuCostEnv is unset.
const defaultCPUCost = 0.15

func init() {
	cost := defaultCPUCost
	if v := os.Getenv(cpuCostEnv); v != "" {
		f, err := strconv.ParseFloat(strings.TrimSuffix(v, "%"), 64)
		if err != nil || f < 0 || f > 1000 {
			fmt.Fprintf(os.Stderr, "sharebench: %s=%q: not a percentage like 15%%; set it to one or unset it\n", cpuCostEnv, v)
			os.Exit(reports.ExitUsage)
		}
		cost = f / 100
	}
	fmt.Fprintf(os.Stderr, "sharebench: cpudemo build: every record polled on the engine target costs %.0f%% more CPU (%s)\n", cost*100, cpuCostEnv)
	if cost == 0 {
		return
	}
	burn := &cpuBurner{cost: cost}
	targetWrap = func(t targets.Target) targets.Target {
		full, ok := t.(cpuDemoTarget)
		if !ok {
			fmt.Fprintln(os.Stderr, "sharebench: cpudemo build: the target is not the engine; no extra cost")
			return t
		}
		return &costlyTarget{cpuDemoTarget: full, burn: burn}
	}
}

// cpuDemoTarget is the engine target's method set the wrapper keeps.
type cpuDemoTarget interface {
	targets.Target
	loadgen.Drainer
	loadgen.StatsReporter
	loadgen.Teardowner
}

type costlyTarget struct {
	cpuDemoTarget
	burn *cpuBurner
}

func (t *costlyTarget) NewWorker(ctx context.Context, cfg targets.Config, m pipeline.Mode, id int) (targets.Worker, error) {
	w, err := t.cpuDemoTarget.NewWorker(ctx, cfg, m, id)
	if err != nil {
		return nil, err
	}
	return &costlyWorker{Worker: w, burn: t.burn}, nil
}

type costlyWorker struct {
	targets.Worker
	burn *cpuBurner
}

func (w *costlyWorker) Poll(ctx context.Context, max int) ([]*targets.Record, error) {
	recs, err := w.Worker.Poll(ctx, max)
	if len(recs) > 0 {
		w.burn.spend(len(recs))
	}
	return recs, err
}

// cpuBurner spins cost × (the process's CPU time per record, without the
// spins) for each record.
type cpuBurner struct {
	cost    float64
	records atomic.Int64
	spun    atomic.Int64 // ns spun so far
}

func (b *cpuBurner) spend(n int) {
	recs := b.records.Add(int64(n))
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return
	}
	cpu := ru.Utime.Nano() + ru.Stime.Nano() - b.spun.Load()
	if cpu <= 0 || recs <= 0 {
		return
	}
	d := time.Duration(b.cost * float64(cpu) / float64(recs) * float64(n))
	start := time.Now()
	for time.Since(start) < d {
	}
	b.spun.Add(int64(time.Since(start)))
}
