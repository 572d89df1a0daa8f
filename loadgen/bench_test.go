// This file holds the load generator's own benchmarks: the closed-loop
// pipeline against the in-memory no-op target (the load generator alone)
// and, beside it, the same pipeline against the engine target in
// transactional mode. Their ratio says whether the load generator could be
// the bottleneck of an engine run: it should be well above 5.
//
//	go test ./loadgen -run '^$' -bench 'Loadgen' -count 3

package loadgen

import (
	"syscall"
	"testing"
	"time"

	"github.com/sharebench/sharebench/loadgen/target"
	enginetarget "github.com/sharebench/sharebench/loadgen/target/engine"
	"github.com/sharebench/sharebench/workloads"
)

// benchSpec is the closed-loop built-in ctp-throughput cut to 2s measured
// after a 200ms warm-up.
func benchSpec(b *testing.B) *workloads.Spec {
	s, ok := workloads.Lookup("ctp-throughput")
	if !ok {
		b.Fatal("no built-in ctp-throughput")
	}
	s.TestLength, s.TestMinutes = 2*time.Second, 0
	s.WarmupLength, s.WarmupMinutes = 200*time.Millisecond, 0
	if err := s.Validate(); err != nil {
		b.Fatal(err)
	}
	return s
}

// benchPipeline runs the transactional pipeline once per iteration and
// reports the outputs made visible per second of the measured window.
func benchPipeline(b *testing.B, newTarget func() target.Target) {
	spec := benchSpec(b)
	var outputs, inputs, total int64
	var measured, cpu time.Duration
	for b.Loop() {
		tgt := newTarget()
		before := cpuTime()
		res, err := Run(b.Context(), Config{Workload: spec, Target: tgt, Modes: []target.Mode{target.Transactional}, Seed: 1})
		cpu += cpuTime() - before
		tgt.Close()
		if err != nil {
			b.Fatal(err)
		}
		m := res.Modes[0]
		if m.Error != "" || m.Verify == nil || !m.Verify.Pass {
			b.Fatalf("error %q verdict %+v", m.Error, m.Verify)
		}
		outputs += m.OutputsVisible
		inputs += m.InputsProduced
		measured += time.Duration(m.MeasuredNs)
		total += m.TotalOutputs
	}
	b.ReportMetric(float64(outputs)/measured.Seconds(), "records/s")
	b.ReportMetric(float64(inputs)/measured.Seconds(), "inputs/s")
	// CPU per record holds up when other processes share the machine,
	// which records/s does not: it counts the whole run (set-up, drain,
	// verification) over every output.
	b.ReportMetric(float64(cpu)/float64(total), "cpu-ns/record")
}

// cpuTime returns the CPU time (user and system) the process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkLoadgenNoop measures the load generator alone: producers,
// workers and the reader pass records through memory.
func BenchmarkLoadgenNoop(b *testing.B) {
	benchPipeline(b, func() target.Target { return newMemTarget() })
}

// BenchmarkLoadgenEngineTransactional is the same pipeline against the
// in-process engine.
func BenchmarkLoadgenEngineTransactional(b *testing.B) {
	benchPipeline(b, func() target.Target {
		t, err := enginetarget.New(enginetarget.Options{})
		if err != nil {
			b.Fatal(err)
		}
		return t
	})
}
