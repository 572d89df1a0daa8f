// This file holds the end-to-end tests of Run: a short quick-like workload
// in every mode against the engine target and against an embedded kfake
// cluster, with the figures, artifacts and verdicts checked for presence
// and consistency (never for speed); and runs against the in-memory target
// that pin the measurement rules (lag from the intended time, the measured
// window) and the configuration errors.

package loadgen

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/sharebench/sharebench/loadgen/result"
	"github.com/sharebench/sharebench/loadgen/targets/enginetarget"
	"github.com/sharebench/sharebench/loadgen/targets/kafkatarget"
	"github.com/sharebench/sharebench/loadgen/verify"
	"github.com/sharebench/sharebench/vocab"
	"github.com/sharebench/sharebench/workloads"
)

// runTimeout is a safety net for a hung run, never an assertion of speed.
const runTimeout = 2 * time.Minute

// testSeed seeds every run of these tests; failures print it.
const testSeed = 20260401

// quickSpec is the built-in 'quick' workload cut short: 1s measured after a
// 200ms warm-up per mode.
func quickSpec(t testing.TB, modes ...string) *workloads.Spec {
	t.Helper()
	s := workloads.New("quick-test")
	s.PartitionsPerTopic = 4
	s.Consumers = 4
	s.ProducersPerTopic = 2
	s.ProducerRate = 2000
	s.TestLength = time.Second
	s.WarmupLength = 200 * time.Millisecond
	s.DrainTimeout = 30 * time.Second
	s.Transaction = workloads.Transaction{MaxRecords: 100, MaxDuration: 50 * time.Millisecond}
	if len(modes) > 0 {
		s.ModeNames = modes
	}
	s.Defaults()
	if err := s.Validate(); err != nil {
		t.Fatalf("quick-like spec: %v", err)
	}
	return s
}

func runCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	t.Cleanup(cancel)
	return ctx
}

func repro(t testing.TB) string {
	return fmt.Sprintf("repro: go test ./loadgen -run '^%s$' -count=1 (seed %d)", t.Name(), testSeed)
}

// exactlyOnce reports whether mode promises exactly-once.
func exactlyOnce(m string) bool {
	return m == string(vocab.Transactional) || m == string(vocab.ClassicEOS)
}

// checkRun checks the figures, artifacts and verdict of every supported
// mode of res, written to dir with DumpLedgers.
func checkRun(t *testing.T, res *result.Result, dir string, spec *workloads.Spec, wantModes []vocab.Mode, unsupported map[vocab.Mode]string) {
	t.Helper()
	if res.Schema != result.Schema || res.Seed != testSeed || !res.OpenLoop || res.Rate != float64(spec.ProducerRate) {
		t.Errorf("result header: schema %q seed %d open %v rate %v", res.Schema, res.Seed, res.OpenLoop, res.Rate)
	}
	if res.Duration != spec.TestDuration() || res.Warmup != spec.Warmup() || res.Env.GoVersion == "" || res.Env.GOMAXPROCS == 0 {
		t.Errorf("result header: duration %v warmup %v env %+v", res.Duration, res.Warmup, res.Env)
	}
	if len(res.Modes) != len(wantModes) {
		t.Fatalf("%d modes in the result, want %d", len(res.Modes), len(wantModes))
	}

	// result.json holds the same result.
	read, err := result.Read(filepath.Join(dir, result.FileName))
	if err != nil {
		t.Fatalf("reading result.json: %v", err)
	}
	if len(read.Modes) != len(res.Modes) {
		t.Fatalf("result.json holds %d modes, want %d", len(read.Modes), len(res.Modes))
	}

	for i, m := range res.Modes {
		mode := wantModes[i]
		t.Run(string(mode), func(t *testing.T) {
			if m.Mode != mode {
				t.Fatalf("mode %d is %q, want %q", i, m.Mode, mode)
			}
			if want, ok := unsupported[mode]; ok {
				if m.Unsupported == "" || !strings.Contains(m.Unsupported, want) {
					t.Fatalf("Unsupported = %q, want a message naming %q", m.Unsupported, want)
				}
				if m.Error != "" || m.Histograms != nil || m.Verify != nil {
					t.Errorf("an unsupported mode carries figures: %+v", m)
				}
				return
			}
			checkMode(t, m, dir, spec)
			// The file holds the same figures.
			r := read.Modes[i]
			if r.TotalInputs != m.TotalInputs || r.TotalOutputs != m.TotalOutputs || !reflect.DeepEqual(r.Histograms, m.Histograms) ||
				!reflect.DeepEqual(r.Series, m.Series) || r.Verify.Pass != m.Verify.Pass {
				t.Errorf("result.json differs from the returned result for %s", mode)
			}
		})
	}
}

// checkMode checks one supported mode's figures for presence and
// consistency.
func checkMode(t *testing.T, m result.ModeResult, dir string, spec *workloads.Spec) {
	t.Helper()
	if m.Error != "" || m.Unsupported != "" {
		t.Fatalf("mode failed: error %q unsupported %q", m.Error, m.Unsupported)
	}
	v := m.Verify
	if v == nil {
		t.Fatal("no verdict")
	}
	if !v.Pass {
		t.Errorf("verdict FAIL: forbidden %v counts %v witnesses %+v notes %v; %s", v.Forbidden, v.Counts, v.Witnesses, v.Notes, repro(t))
	}
	if m.DrainTimedOut {
		t.Errorf("the drain timed out after %v", time.Duration(m.DrainNs))
	}

	// Counts.
	if m.TotalInputs <= 0 || m.InputsProduced <= 0 || m.InputsProduced > m.TotalInputs || m.InputRate <= 0 {
		t.Errorf("inputs: total %d in window %d rate %.0f", m.TotalInputs, m.InputsProduced, m.InputRate)
	}
	if m.OutputsVisible <= 0 || m.OutputsVisible > m.TotalOutputs || m.Throughput <= 0 {
		t.Errorf("outputs: total %d visible in window %d throughput %.0f", m.TotalOutputs, m.OutputsVisible, m.Throughput)
	}
	if m.MeasuredNs != int64(spec.TestDuration()) {
		t.Errorf("MeasuredNs %d, want %d", m.MeasuredNs, int64(spec.TestDuration()))
	}
	if m.Processed < m.TotalInputs {
		t.Errorf("processed %d of %d inputs", m.Processed, m.TotalInputs)
	}
	dups := v.Counts[vocab.KindDuplicate]
	switch {
	case exactlyOnce(m.Mode.String()) && m.TotalOutputs != m.TotalInputs:
		t.Errorf("exactly-once mode: %d outputs for %d inputs; %s", m.TotalOutputs, m.TotalInputs, repro(t))
	case dups == 0 && m.TotalOutputs != m.TotalInputs:
		t.Errorf("no duplicates found, yet %d outputs for %d inputs; %s", m.TotalOutputs, m.TotalInputs, repro(t))
	case m.TotalOutputs < m.TotalInputs:
		t.Errorf("%d outputs for %d inputs: fewer outputs than inputs and no loss found", m.TotalOutputs, m.TotalInputs)
	}
	if v.Inputs != m.TotalInputs || v.Outputs < m.TotalOutputs {
		t.Errorf("verifier saw %d inputs and %d outputs; the run produced %d and read %d", v.Inputs, v.Outputs, m.TotalInputs, m.TotalOutputs)
	}

	// Histograms.
	e2e, ok := m.Histograms[result.HistEndToEnd]
	if !ok || e2e.Count <= 0 || e2e.Count > m.TotalOutputs || e2e.Unit != "ns" || e2e.EncodedV2 == "" {
		t.Errorf("end-to-end histogram %+v: want samples, at most one per output (%d)", e2e, m.TotalOutputs)
	}
	if !(e2e.Min <= e2e.P50 && e2e.P50 <= e2e.P99 && e2e.P99 <= e2e.P999 && e2e.P999 <= e2e.Max) {
		t.Errorf("end-to-end percentiles out of order: %+v", e2e)
	}
	if d, err := DecodeHist(e2e); err != nil || d.Count() != e2e.Count {
		t.Errorf("end-to-end histogram does not decode to its count: %v", err)
	}
	// One send lag and one produce service time per input intended inside
	// the window; one commit and one poll-to-commit sample per commit (or
	// ack) done inside it.
	for _, name := range []string{result.HistSendLag, result.HistProduce} {
		if h := m.Histograms[name]; h.Count+h.Overflow != m.InputsProduced {
			t.Errorf("%s histogram holds %d samples, want one per input of the window (%d)", name, h.Count+h.Overflow, m.InputsProduced)
		}
	}
	wantCommits := m.WindowCommits
	if m.Mode == vocab.Implicit {
		wantCommits = 0 // no commit call
	}
	if h := m.Histograms[result.HistCommit]; h.Count != wantCommits {
		t.Errorf("commit histogram holds %d samples for %d commits in the window", h.Count, wantCommits)
	}
	if m.Mode != vocab.Implicit && m.WindowCommits > m.Commits {
		t.Errorf("%d commits in the window, %d in all", m.WindowCommits, m.Commits)
	}
	if m.Mode != vocab.Implicit && m.Commits == 0 {
		t.Errorf("no commits in mode %s", m.Mode)
	}
	if h, ok := m.Histograms[result.HistPollCommit]; !ok || h.Count != m.WindowCommits {
		t.Errorf("%s histogram %+v: want one sample per commit of the window (%d)", result.HistPollCommit, h, m.WindowCommits)
	}

	// The window lasts the measured duration, after the warm-up.
	if m.WindowStartNs < int64(spec.Warmup()) || m.WindowEndNs-m.WindowStartNs != m.MeasuredNs {
		t.Errorf("window [%d, %d) ns: want a start after the %v warm-up and a length of %d", m.WindowStartNs, m.WindowEndNs, spec.Warmup(), m.MeasuredNs)
	}

	// The series: contiguous buckets from the mode's start, cut at the
	// window's start and end, adding up to the totals.
	checkSeries(t, m)

	// The interval logs hold exactly the samples of result.json.
	checkHlogParity(t, m, dir, m.Mode.String())

	// The dumped ledgers give the in-run verdict again.
	ld := filepath.Join(dir, "ledgers", m.Mode.String())
	for _, f := range []string{verify.InputsFile, verify.OutputsFile} {
		if st, err := os.Stat(filepath.Join(ld, f)); err != nil || st.Size() == 0 {
			t.Fatalf("ledger %s: %v (want a non-empty file)", f, err)
		}
	}
	again, err := verify.VerifyDir(m.Mode, ld, verify.Options{DeliveryLimit: spec.DeliveryLimit})
	if err != nil {
		t.Fatalf("VerifyDir: %v", err)
	}
	if again.Pass != v.Pass || !reflect.DeepEqual(again.Counts, v.Counts) || !reflect.DeepEqual(again.Forbidden, v.Forbidden) ||
		!reflect.DeepEqual(again.Allowed, v.Allowed) || again.Inputs != v.Inputs || again.Outputs != v.Outputs ||
		!reflect.DeepEqual(again.Witnesses, v.Witnesses) {
		t.Errorf("VerifyDir disagrees with the in-run verdict:\n  dir %+v\n  run %+v", again, v)
	}
}

// hlogTotal reads an HdrHistogram interval log and returns its samples.
// checkSeries checks that m's series buckets tile its timeline from 0,
// with bounds at the window's start and end, flags that match, and counts
// that add up to the totals.
func checkSeries(t *testing.T, m result.ModeResult) {
	t.Helper()
	if len(m.Series) == 0 {
		t.Fatal("empty series")
	}
	var in, out int64
	cutStart, cutEnd := false, false
	for i, s := range m.Series {
		if i == 0 && s.StartNs != 0 || i > 0 && s.StartNs != m.Series[i-1].EndNs || s.EndNs <= s.StartNs || s.EndNs-s.StartNs > int64(time.Second) {
			t.Errorf("series[%d] [%d, %d): want contiguous buckets of at most 1s from 0", i, s.StartNs, s.EndNs)
		}
		if s.T != int(s.StartNs/int64(time.Second)) {
			t.Errorf("series[%d]: T %d for a start of %d ns", i, s.T, s.StartNs)
		}
		if s.Warmup != (s.EndNs <= m.WindowStartNs) || s.Drain != (s.StartNs >= m.WindowEndNs) {
			t.Errorf("series[%d] [%d, %d): warm-up %v drain %v for the window [%d, %d)", i, s.StartNs, s.EndNs, s.Warmup, s.Drain, m.WindowStartNs, m.WindowEndNs)
		}
		cutStart = cutStart || s.StartNs == m.WindowStartNs
		cutEnd = cutEnd || s.StartNs == m.WindowEndNs
		in += s.Inputs
		out += s.Outputs
	}
	if !cutStart || (!cutEnd && m.Series[len(m.Series)-1].EndNs > m.WindowEndNs) {
		t.Errorf("no bucket starts at the window's start %d or end %d", m.WindowStartNs, m.WindowEndNs)
	}
	if in != m.TotalInputs || out != m.TotalOutputs {
		t.Errorf("series sums: %d inputs and %d outputs, want %d and %d", in, out, m.TotalInputs, m.TotalOutputs)
	}
}

// checkHlogParity decodes every interval log of mode name with
// hdrhistogram-go's log reader and compares it with result.json: a log
// exists exactly for the histograms with samples, and holds the same
// count, p50, p99, p99.9 and max (HdrHistogram's percentile definition).
func checkHlogParity(t *testing.T, m result.ModeResult, dir, name string) {
	t.Helper()
	for _, hn := range []string{result.HistEndToEnd, result.HistSendLag, result.HistProduce, result.HistCommit, result.HistPollCommit} {
		path := filepath.Join(dir, fmt.Sprintf("%s.%s.hlog", name, hn))
		want := m.Histograms[hn]
		if want.Count == 0 {
			if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("%s: written for a histogram without samples (%v)", path, err)
			}
			continue
		}
		got := hlogMerged(t, path)
		if got.TotalCount() != want.Count {
			t.Errorf("%s: %d samples, result.json %d", path, got.TotalCount(), want.Count)
		}
		for _, pc := range []struct {
			p    float64
			want int64
		}{{50, want.P50}, {99, want.P99}, {99.9, want.P999}} {
			if v := result.ValueAtPercentile(got, pc.p); v != pc.want {
				t.Errorf("%s: p%v %d, result.json %d", path, pc.p, v, pc.want)
			}
		}
		if got.Max() != want.Max {
			t.Errorf("%s: max %d, result.json %d", path, got.Max(), want.Max)
		}
	}
}

// hlogMerged reads an interval log and merges its intervals.
func hlogMerged(t *testing.T, path string) *hdrhistogram.Histogram {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("interval log: %v", err)
	}
	defer f.Close()
	r := hdrhistogram.NewHistogramLogReader(f)
	merged := hdrhistogram.New(1, histMax, 3)
	for {
		h, err := r.NextIntervalHistogram()
		if err != nil {
			t.Fatalf("reading %s: %v", path, err)
		}
		if h == nil {
			return merged
		}
		merged.Merge(h)
	}
}

func hlogTotal(t *testing.T, path string) int64 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("interval log: %v", err)
	}
	defer f.Close()
	r := hdrhistogram.NewHistogramLogReader(f)
	var n int64
	for {
		h, err := r.NextIntervalHistogram()
		if err != nil {
			t.Fatalf("reading %s: %v", path, err)
		}
		if h == nil {
			return n
		}
		n += h.TotalCount()
	}
}

func TestRunEngineEveryMode(t *testing.T) {
	t.Parallel()
	tgt, err := enginetarget.New(enginetarget.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tgt.Close() })
	spec := quickSpec(t)
	dir := t.TempDir()
	res, err := Run(runCtx(t), Config{Workload: spec, WorkloadRef: "quick-test", Target: tgt, Seed: testSeed, OutDir: dir, DumpLedgers: true})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if res.Env.Target != "engine" || !res.Env.Embedded {
		t.Errorf("env target %q embedded %v", res.Env.Target, res.Env.Embedded)
	}
	checkRun(t, res, dir, spec, vocab.AllModes(), nil)
}

func TestRunKafkaEmbeddedEveryMode(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("-short: skips the embedded kfake cluster run")
	}
	tgt, err := kafkatarget.New(runCtx(t), kafkatarget.Options{})
	if err != nil {
		t.Fatalf("starting the embedded cluster: %v", err)
	}
	t.Cleanup(func() { tgt.Close() })
	spec := quickSpec(t)
	dir := t.TempDir()
	modes := []vocab.Mode{vocab.Implicit, vocab.Explicit, vocab.Deferred, vocab.Transactional, vocab.ClassicEOS}
	res, err := Run(runCtx(t), Config{Workload: spec, WorkloadRef: "quick-test", Target: tgt, Modes: modes, Seed: testSeed, OutDir: dir, DumpLedgers: true})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if res.Env.Target != "kafka" || !res.Env.Embedded || res.Env.Brokers == "" {
		t.Errorf("env target %q embedded %v brokers %q", res.Env.Target, res.Env.Embedded, res.Env.Brokers)
	}
	// No released broker (nor kfake) has KIP-1289: the mode is listed as
	// unsupported with a pointer to deferred, and nothing of it runs.
	checkRun(t, res, dir, spec, modes, map[vocab.Mode]string{vocab.Transactional: "the deferred mode"})
	if _, err := os.Stat(filepath.Join(dir, "ledgers", string(vocab.Transactional))); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("ledgers written for the unsupported mode: %v", err)
	}
}

// TestRunLagFromIntendedTime runs against a target whose produce calls take
// 300ms: the schedule of 1000 records/s is not met, yet every scheduled
// record is sent, and its send lag and end-to-end latency count from its
// intended time (coordinated omission corrected).
func TestRunLagFromIntendedTime(t *testing.T) {
	t.Parallel()
	const delay = 300 * time.Millisecond
	tgt := newMemTarget()
	tgt.produceDelay = delay
	spec := quickSpec(t, "explicit")
	spec.ProducersPerTopic = 1
	spec.ProducerRate = 1000
	spec.WarmupLength = 0
	spec.Consumers = 1
	res, err := Run(runCtx(t), Config{Workload: spec, Target: tgt, Seed: testSeed})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	m := res.Modes[0]
	if m.Error != "" || m.Verify == nil || !m.Verify.Pass {
		t.Fatalf("mode: error %q verdict %+v", m.Error, m.Verify)
	}
	// One producer at 1000/s until the window closes: intended times 0,
	// 1ms, ... up to the window's end. A slow target delays them; those
	// still unsent when the window closes are counted, never lost from
	// the books: sent and unsent are the schedule.
	if want := (m.WindowEndNs + int64(time.Millisecond) - 1) / int64(time.Millisecond); m.TotalInputs+m.Unsent != want {
		t.Errorf("%d inputs sent and %d unsent, want the %d of the schedule up to the window's end at %v", m.TotalInputs, m.Unsent, want, time.Duration(m.WindowEndNs))
	}
	if m.Unsent > 0 && !slices.ContainsFunc(m.Notes, func(n string) bool { return strings.Contains(n, "never sent") }) {
		t.Errorf("%d inputs unsent and no note says so: %q", m.Unsent, m.Notes)
	}
	lag, svc, e2e := m.Histograms[result.HistSendLag], m.Histograms[result.HistProduce], m.Histograms[result.HistEndToEnd]
	// A histogram's min reads the lowest value of its bucket: up to 0.1%
	// (three significant figures) below the sample.
	floor := delay - delay/1000
	// A batch is formed at t and sent again no earlier than t+delay; its
	// successor's first record was due by t+1ms, so it lags by at least
	// delay-1ms.
	if time.Duration(lag.Max) < delay-time.Millisecond { // wallclock: a lower bound: load only lengthens it
		t.Errorf("send lag max %v, want at least %v", time.Duration(lag.Max), delay-time.Millisecond)
	}
	if time.Duration(svc.Min) < floor { // wallclock: a lower bound: load only lengthens it
		t.Errorf("produce service time min %v, want at least the target's %v", time.Duration(svc.Min), delay)
	}
	// An output is visible only after its input's produce call returned:
	// at least delay after the intended time.
	if e2e.Count == 0 || time.Duration(e2e.Min) < floor { // wallclock: a lower bound: load only lengthens it
		t.Errorf("end-to-end: %d samples, min %v; want every sample at least %v", e2e.Count, time.Duration(e2e.Min), delay)
	}
	if m.SendLagWarning == "" {
		t.Errorf("no send-lag warning with a send lag p99 of %v", time.Duration(lag.P99))
	}
}

// TestRunSubSecondWindow measures a window shorter than a second: the
// inputs produced in it are counted from the send times, not from whole
// seconds of the series.
func TestRunSubSecondWindow(t *testing.T) {
	t.Parallel()
	spec := quickSpec(t, "transactional", "implicit")
	spec.TestLength = 500 * time.Millisecond
	spec.WarmupLength = 0
	res, err := Run(runCtx(t), Config{Workload: spec, Target: newMemTarget(), Seed: testSeed})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	for _, m := range res.Modes {
		if m.Error != "" || m.Verify == nil || !m.Verify.Pass {
			t.Fatalf("%s: error %q verdict %+v", m.Mode, m.Error, m.Verify)
		}
		if m.InputsProduced <= 0 || m.InputsProduced > m.TotalInputs || m.InputRate <= 0 {
			t.Errorf("%s: %d inputs in the window (rate %.0f/s) of %d", m.Mode, m.InputsProduced, m.InputRate, m.TotalInputs)
		}
		if m.TotalOutputs != m.TotalInputs {
			t.Errorf("%s: %d outputs for %d inputs", m.Mode, m.TotalOutputs, m.TotalInputs)
		}
	}
}

// TestRunDoneWithAPollBeforeTheNext holds the loadgen to targets.Worker's
// Poll contract, which lets a target reuse a poll's records at the next
// poll: in every mode, with rejects, aborts and redeliveries, no record is
// acked, staged or renewed after a later poll of its worker, and the
// verdict still passes although the no-op target rewrites every reused
// record.
func TestRunDoneWithAPollBeforeTheNext(t *testing.T) {
	t.Parallel()
	spec := quickSpec(t, "implicit", "explicit", "deferred", "transactional", "classic-eos")
	spec.TestLength = 500 * time.Millisecond
	spec.RejectRatio = 0.05
	spec.AbortRatio = 0.2
	if err := spec.Validate(); err != nil {
		t.Fatal(err)
	}
	tgt := newMemTarget()
	tgt.checkPolls = true
	res, err := Run(runCtx(t), Config{Workload: spec, Target: tgt, Seed: testSeed})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	for _, m := range res.Modes {
		if m.Error != "" || m.Verify == nil || !m.Verify.Pass {
			t.Errorf("%s: error %q verdict %+v", m.Mode, m.Error, m.Verify)
		}
	}
	if n := tgt.stale.Load(); n > 0 {
		t.Errorf("%d records acked, staged or renewed after a later poll of their worker", n)
	}
	if res.Modes[3].Aborts == 0 {
		t.Errorf("transactional: no aborts at abort ratio %.1f: the abort path went untested", spec.AbortRatio)
	}
}

func TestRunClosedLoop(t *testing.T) {
	t.Parallel()
	spec := quickSpec(t, "classic-eos", "deferred")
	spec.ProducerRate = 0
	spec.TestLength = 500 * time.Millisecond
	res, err := Run(runCtx(t), Config{Workload: spec, Target: newMemTarget(), Seed: testSeed})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if res.OpenLoop || res.Rate != 0 {
		t.Errorf("closed loop recorded as open %v rate %v", res.OpenLoop, res.Rate)
	}
	for _, m := range res.Modes {
		if m.Error != "" || m.Verify == nil || !m.Verify.Pass || m.DrainTimedOut {
			t.Fatalf("%s: error %q drain timed out %v verdict %+v", m.Mode, m.Error, m.DrainTimedOut, m.Verify)
		}
		if m.TotalOutputs != m.TotalInputs || m.TotalInputs == 0 {
			t.Errorf("%s: %d outputs for %d inputs", m.Mode, m.TotalOutputs, m.TotalInputs)
		}
		if m.SendLagWarning != "" {
			t.Errorf("%s: a closed loop has no schedule to miss, yet: %s", m.Mode, m.SendLagWarning)
		}
	}
}

func TestRunRepeatsInterleaved(t *testing.T) {
	t.Parallel()
	spec := quickSpec(t)
	spec.TestLength = 200 * time.Millisecond
	spec.WarmupLength = 0
	dir := t.TempDir()
	modes := []vocab.Mode{vocab.Explicit, vocab.Transactional}
	res, err := Run(runCtx(t), Config{Workload: spec, Target: newMemTarget(), Modes: modes, Repeats: 2, Seed: testSeed, OutDir: dir, DumpLedgers: true})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	var got []string
	for _, m := range res.Modes {
		got = append(got, fmt.Sprintf("%s#%d", m.Mode, m.Repeat))
	}
	if want := []string{"explicit#0", "transactional#0", "explicit#1", "transactional#1"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("modes ran %v, want %v", got, want)
	}
	for _, name := range []string{"explicit-r0", "transactional-r1"} {
		if _, err := os.Stat(filepath.Join(dir, "ledgers", name, verify.InputsFile)); err != nil {
			t.Errorf("ledgers of %s: %v", name, err)
		}
		if _, err := os.Stat(filepath.Join(dir, name+"."+result.HistEndToEnd+".hlog")); err != nil {
			t.Errorf("interval log of %s: %v", name, err)
		}
	}
}

func TestRunBadConfig(t *testing.T) {
	t.Parallel()
	small := quickSpec(t)
	small.MessageSizeBytes = HeaderBytes - 1
	for _, tc := range []struct {
		name string
		cfg  Config
	}{
		{"no-workload", Config{Target: newMemTarget()}},
		{"no-target", Config{Workload: quickSpec(t)}},
		{"message-below-header", Config{Workload: small, Target: newMemTarget()}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Run(context.Background(), tc.cfg)
			if !errors.Is(err, ErrBadConfig) || res != nil {
				t.Fatalf("Run = %v, %v; want ErrBadConfig", res, err)
			}
		})
	}
	if _, err := NewFormatter("xml"); !errors.Is(err, ErrBadConfig) {
		t.Errorf("NewFormatter(xml) = %v, want ErrBadConfig", err)
	}
}

func TestFormatDuration(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{
		{0, "0ns"}, {999, "999ns"}, {1000, "1µs"}, {1234, "1.23µs"}, {999_499, "999µs"},
		{1_500_000, "1.5ms"}, {12_345_678, "12.3ms"}, {time.Second, "1s"}, {90 * time.Second, "90s"},
	} {
		if got := FormatDuration(tc.d); got != tc.want {
			t.Errorf("FormatDuration(%d) = %q, want %q", int64(tc.d), got, tc.want)
		}
	}
}

// TestBenchFormatOmitsMissingMetrics: a mode without a commit call
// (implicit) prints no commit-p99-ns, never a 0.
func TestBenchFormatOmitsMissingMetrics(t *testing.T) {
	t.Parallel()
	spec := quickSpec(t, "implicit", "explicit")
	spec.TestLength = 300 * time.Millisecond
	spec.WarmupLength = 0
	res, err := Run(runCtx(t), Config{Workload: spec, Target: newMemTarget(), Seed: testSeed})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := (BenchFormatter{}).Format(&b, res); err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(b.String(), "\n") {
		switch {
		case strings.Contains(line, "mode=implicit") && strings.Contains(line, "commit-p99-ns"):
			t.Errorf("implicit has a commit metric: %q", line)
		case strings.Contains(line, "mode=explicit") && !strings.Contains(line, "commit-p99-ns"):
			t.Errorf("explicit lacks its commit metric: %q", line)
		}
	}
}

// TestRunReplacesAWedgedWorker: a worker whose producer can no longer begin
// a transaction is replaced once its begins have failed for a transaction
// timeout, and the run ends clean with every input processed: retried
// until the stop, it held its poll's records to the end.
func TestRunReplacesAWedgedWorker(t *testing.T) {
	t.Parallel()
	spec := quickSpec(t, "transactional", "classic-eos")
	spec.TransactionTimeout = time.Second
	if err := spec.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, mode := range spec.ModeNames {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			s := *spec
			s.ModeNames = []string{mode}
			tgt := newMemTarget()
			tgt.wedgeFirst = true
			res, err := Run(runCtx(t), Config{Workload: &s, Target: tgt, Seed: testSeed})
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			m := res.Modes[0]
			if m.Error != "" || m.Verify == nil || !m.Verify.Pass || m.DrainTimedOut {
				t.Fatalf("error %q drain timed out %v verdict %+v", m.Error, m.DrainTimedOut, m.Verify)
			}
			tgt.mu.Lock()
			made := tgt.made[0]
			tgt.mu.Unlock()
			if made < 2 {
				t.Errorf("worker 0 made %d times: the wedged worker was never replaced", made)
			}
			if !slices.ContainsFunc(m.Notes, func(n string) bool { return strings.Contains(n, "replaced after their begins failed for 1s") }) {
				t.Errorf("notes %q: none says a worker was replaced", m.Notes)
			}
		})
	}
}

// TestRunStopsBehindSchedule: against a target far slower than the
// schedule, the producers stop once the window is over instead of sending
// the backlog of the schedule for as long as it takes; what they never
// sent is counted, and sent plus unsent is the schedule.
func TestRunStopsBehindSchedule(t *testing.T) {
	t.Parallel()
	tgt := newMemTarget()
	tgt.produceDelay = 1500 * time.Millisecond // behind by more than lateSendLimit after one call
	spec := quickSpec(t, "explicit")
	spec.ProducersPerTopic = 1
	spec.ProducerRate = 1000
	spec.WarmupLength = 0
	spec.TestLength = time.Second
	spec.Consumers = 1
	res, err := Run(runCtx(t), Config{Workload: spec, Target: tgt, Seed: testSeed})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	m := res.Modes[0]
	if m.Error != "" {
		t.Fatalf("mode error: %s", m.Error)
	}
	if m.Unsent == 0 {
		t.Fatalf("a producer 1.5s a call behind a 1000/s schedule sent everything (%d inputs): it did not stop at the window's end", m.TotalInputs)
	}
	if want := (m.WindowEndNs + int64(time.Millisecond) - 1) / int64(time.Millisecond); m.TotalInputs+m.Unsent != want {
		t.Errorf("%d sent + %d unsent, want the %d of the schedule up to the window's end", m.TotalInputs, m.Unsent, want)
	}
}
