// This file holds the load generator's own benchmarks: the closed-loop
// pipeline against the in-memory no-op target (the load generator alone)
// and, beside it, the same pipeline against the engine target in
// transactional mode. Their ratio says whether the load generator could be
// the bottleneck of an engine run: it must be at least 5.
// BenchmarkLoadgenHeadroom runs the two back to back in every iteration
// and reports the ratio itself, so machine noise hits both sides alike.
//
//	go test ./loadgen -run '^$' -bench 'LoadgenHeadroom' -benchtime 3x

package loadgen

import (
	"syscall"
	"testing"
	"time"

	"github.com/sharebench/sharebench/loadgen/targets"
	"github.com/sharebench/sharebench/loadgen/targets/enginetarget"
	"github.com/sharebench/sharebench/vocab"
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

// pipelineTally sums transactional pipeline runs.
type pipelineTally struct {
	outputs, inputs, total int64
	measured, cpu          time.Duration
}

// run runs the transactional pipeline once against a new target.
func (p *pipelineTally) run(b *testing.B, spec *workloads.Spec, newTarget func() targets.Target) {
	tgt := newTarget()
	before := cpuTime()
	res, err := Run(b.Context(), Config{Workload: spec, Target: tgt, Modes: []vocab.Mode{vocab.Transactional}, Seed: 1})
	p.cpu += cpuTime() - before
	tgt.Close()
	if err != nil {
		b.Fatal(err)
	}
	m := res.Modes[0]
	if m.Error != "" || m.Verify == nil || !m.Verify.Pass {
		b.Fatalf("error %q verdict %+v", m.Error, m.Verify)
	}
	p.outputs += m.OutputsVisible
	p.inputs += m.InputsProduced
	p.measured += time.Duration(m.MeasuredNs)
	p.total += m.TotalOutputs
}

// rate is the outputs made visible per second of the measured windows.
func (p *pipelineTally) rate() float64 { return float64(p.outputs) / p.measured.Seconds() }

// cpuPerRecord holds up when other processes share the machine, which a
// rate does not: it counts whole runs (set-up, drain, verification) over
// every output.
func (p *pipelineTally) cpuPerRecord() float64 { return float64(p.cpu) / float64(p.total) }

// benchPipeline runs the transactional pipeline once per iteration and
// reports the outputs made visible per second of the measured window.
func benchPipeline(b *testing.B, newTarget func() targets.Target) {
	spec := benchSpec(b)
	var p pipelineTally
	for b.Loop() {
		p.run(b, spec, newTarget)
	}
	b.ReportMetric(p.rate(), "records/s")
	b.ReportMetric(float64(p.inputs)/p.measured.Seconds(), "inputs/s")
	b.ReportMetric(p.cpuPerRecord(), "cpu-ns/record")
}

// BenchmarkLoadgenHeadroom runs the engine pipeline and the no-op one back
// to back in every iteration and reports how many times the engine's
// transactional throughput the load generator sustains (headroom-x, by
// records/s) and how many times cheaper per record it is (cpu-x).
func BenchmarkLoadgenHeadroom(b *testing.B) {
	spec := benchSpec(b)
	var eng, noop pipelineTally
	for b.Loop() {
		eng.run(b, spec, newEngineTarget(b))
		noop.run(b, spec, func() targets.Target { return newMemTarget() })
	}
	b.ReportMetric(eng.rate(), "engine-records/s")
	b.ReportMetric(noop.rate(), "noop-records/s")
	b.ReportMetric(noop.rate()/eng.rate(), "headroom-x")
	b.ReportMetric(eng.cpuPerRecord()/noop.cpuPerRecord(), "cpu-x")
}

// newEngineTarget returns a constructor of in-process engine targets.
func newEngineTarget(b *testing.B) func() targets.Target {
	return func() targets.Target {
		t, err := enginetarget.New(enginetarget.Options{})
		if err != nil {
			b.Fatal(err)
		}
		return t
	}
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
	benchPipeline(b, func() targets.Target { return newMemTarget() })
}

// BenchmarkLoadgenEngineTransactional is the same pipeline against the
// in-process engine.
func BenchmarkLoadgenEngineTransactional(b *testing.B) {
	benchPipeline(b, newEngineTarget(b))
}
