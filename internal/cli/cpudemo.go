//go:build cpudemo && linux

// This file holds the cpudemo build: a candidate that costs more CPU per
// record, for demonstrating that the A/B gate catches a throughput
// regression (scripts/ab-gate.sh, docs/ci-gate.md). Built with -tags
// cpudemo (Linux only: it reads the per-thread CPU clock), the worker polls
// on the engine target spin, on the workers' goroutines, until the process
// has spent SHAREBENCH_CPU_COST (default 15%) more CPU than its own since
// the mode's first records (cpuBurner): the cost follows the machine and
// the workload, so the candidate costs that much more CPU per record
// wherever it runs. At each mode's end it prints what it spun against the
// process's own CPU. Normal builds do not contain this file and targetWrap
// stays nil.

package cli

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"github.com/sharebench/sharebench/loadgen"
	"github.com/sharebench/sharebench/loadgen/targets"
	"github.com/sharebench/sharebench/reports"
	"github.com/sharebench/sharebench/vocab"
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

func (t *costlyTarget) NewWorker(ctx context.Context, cfg targets.Config, m vocab.Mode, id int) (targets.Worker, error) {
	w, err := t.cpuDemoTarget.NewWorker(ctx, cfg, m, id)
	if err != nil {
		return nil, err
	}
	if t.burn.stale.CompareAndSwap(true, false) || t.burn.start.Load() == nil {
		t.burn.mark()
	}
	return &costlyWorker{Worker: w, burn: t.burn}, nil
}

// Teardown ends a mode: it says what the spins cost against the process's
// own CPU in the mode (the check that the candidate costs what it claims),
// and the next mode measures its own per-record cost.
func (t *costlyTarget) Teardown(ctx context.Context, cfg targets.Config) error {
	if m := t.burn.start.Load(); m != nil && !m.pending {
		// As of the last poll with records: the drain and verification
		// after it are not the hot path.
		own, spun := t.burn.lastOwn.Load(), t.burn.spun.Load()-m.spun
		if own > 0 {
			fmt.Fprintf(os.Stderr, "sharebench: cpudemo build: %s: %d records, the process's own CPU %v up to the last poll, spun %v more (+%.1f%%)\n",
				cfg.InputTopic, t.burn.records.Load()-m.records, time.Duration(own), time.Duration(spun), 100*float64(spun)/float64(own))
		}
	}
	t.burn.stale.Store(true)
	return t.cpuDemoTarget.Teardown(ctx, cfg)
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

// cpuBurner makes the process spend cost × its own CPU time (without the
// spins) more, on the polling workers' goroutines, from each mode's first
// polled records on: after every poll it spins off what it owes, cost ×
// the process's own CPU since the mode's first records minus what it has
// spun since. Owing in total, not per poll, keeps the extra at cost
// exactly however the per-record CPU moves. CPU time, not wall time, is
// what it measures on both sides: on a loaded machine a spin timed by the
// wall clock is descheduled part of the time and costs less CPU than it
// lasts. So a spin runs locked to its OS thread until that thread's CPU
// clock has advanced by the amount owed. One worker spins at a time (the
// others go on; the next poll pays what is still owed). Each mode starts
// afresh (the first worker after a Teardown), so one mode's drain and
// verification are not charged to the next.
type cpuBurner struct {
	cost    float64
	records atomic.Int64
	spun    atomic.Int64 // thread CPU ns spent spinning so far
	start   atomic.Pointer[burnMark]
	stale   atomic.Bool  // a mode ended: the next worker restarts the mark
	lastOwn atomic.Int64 // the process's own CPU since the mark, at the last spend
	spinner sync.Mutex   // held by the worker spinning
}

// burnMark is where the current mode's cost is counted from; pending
// until the mode's first polled records.
type burnMark struct {
	pending            bool
	cpu, spun, records int64
}

// mark restarts the count at the mode's next polled records.
func (b *cpuBurner) mark() {
	b.lastOwn.Store(0)
	b.start.Store(&burnMark{pending: true})
}

func (b *cpuBurner) spend(n int) {
	recs := b.records.Add(int64(n))
	m := b.start.Load()
	if m == nil {
		return
	}
	if m.pending {
		b.start.CompareAndSwap(m, &burnMark{cpu: cpuClock(clockProcessCPU), spun: b.spun.Load(), records: recs})
		return
	}
	if !b.spinner.TryLock() {
		return
	}
	defer b.spinner.Unlock()
	spun := b.spun.Load() - m.spun
	own := cpuClock(clockProcessCPU) - m.cpu - spun
	if own <= 0 {
		return
	}
	b.lastOwn.Store(own)
	owed := int64(b.cost*float64(own)) - spun
	if owed <= 0 {
		return
	}
	runtime.LockOSThread()
	t0 := cpuClock(clockThreadCPU)
	t := t0
	for t-t0 < owed {
		spinSink = spinWork(spinSink)
		t = cpuClock(clockThreadCPU)
	}
	runtime.UnlockOSThread()
	b.spun.Add(t - t0)
}

// spinSink keeps spinWork's result alive so the compiler keeps the work.
var spinSink uint64

// spinWork is a few hundred nanoseconds of arithmetic between clock reads.
func spinWork(x uint64) uint64 {
	for range 256 {
		x = x*6364136223846793005 + 1442695040888963407
	}
	return x
}

// The clocks cpuClock reads (Linux clock ids).
const (
	clockProcessCPU = 2 // CLOCK_PROCESS_CPUTIME_ID
	clockThreadCPU  = 3 // CLOCK_THREAD_CPUTIME_ID
)

// cpuClock reads a CPU-time clock in nanoseconds (0 if it cannot).
func cpuClock(id uintptr) int64 {
	var ts syscall.Timespec
	if _, _, e := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, id, uintptr(unsafe.Pointer(&ts)), 0); e != 0 {
		return 0
	}
	return ts.Nano()
}
