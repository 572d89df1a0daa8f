package reports_test

import (
	"bufio"
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/sharebench/sharebench/loadgen/result"
	"github.com/sharebench/sharebench/reports"
)

// side builds one side of a comparison: a run of the given fixture whose
// latency samples come from latSeed (equal on both sides, so only
// throughput differs between them).
func side(t *testing.T, name string, seed uint64, repeats int, throughput, noise float64) *reports.Run {
	t.Helper()
	return fixtureRun(t, name, fixture{seed: seed, latSeed: 99, repeats: repeats,
		modes: []string{"explicit", "transactional"}, samples: 1000, throughput: throughput, latency: 1, noise: noise})
}

var defaultGate = reports.GateOptions{MaxThroughputDrop: 0.05, MaxP99Rise: 0.10, Alpha: 0.05}

// check finds one check of a gate result.
func check(t *testing.T, g reports.GateResult, mode string, m reports.Metric) reports.Check {
	t.Helper()
	for _, c := range g.Checks {
		if c.Mode == mode && c.Metric == m {
			return c
		}
	}
	t.Fatalf("no check for mode %s metric %s in %+v", mode, m, g.Checks)
	return reports.Check{}
}

func gateText(t *testing.T, g reports.GateResult) string {
	t.Helper()
	var b strings.Builder
	if err := g.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestGateIdenticalRunsPass(t *testing.T) {
	t.Parallel()
	base := side(t, "base", 1, 5, 1, 0.01)
	cand := side(t, "cand", 1, 5, 1, 0.01)
	g := reports.Gate(reports.Compare([]*reports.Run{base}, []*reports.Run{cand}), defaultGate)
	if code := g.ExitCode(); code != reports.ExitOK || len(g.Regressions()) != 0 {
		t.Fatalf("identical runs: exit %d, regressions %+v, want 0 and none\n%s", code, g.Regressions(), gateText(t, g))
	}
	for _, c := range g.Checks {
		if c.Ratio != 1 {
			t.Errorf("%s %s: ratio %v, want 1", c.Mode, c.Metric, c.Ratio)
		}
		if c.Status == reports.CheckRegression || c.Status == reports.CheckWithinNoise {
			t.Errorf("%s %s: status %s on identical runs", c.Mode, c.Metric, c.Status)
		}
	}
}

func TestGateThroughputDropIsRegression(t *testing.T) {
	t.Parallel()
	base := side(t, "base", 1, 5, 1, 0.01)
	cand := side(t, "cand", 2, 5, 0.8, 0.01)
	cmp := reports.Compare([]*reports.Run{base}, []*reports.Run{cand})
	g := reports.Gate(cmp, defaultGate)
	if code := g.ExitCode(); code != reports.ExitRegression {
		t.Fatalf("20%% throughput drop: exit %d, want %d\n%s", code, reports.ExitRegression, gateText(t, g))
	}
	for _, mode := range []string{"explicit", "transactional"} {
		c := check(t, g, mode, reports.MetricThroughput)
		if c.Status != reports.CheckRegression || c.Ratio > 0.85 || c.Ratio < 0.75 || c.P >= 0.05 || !(c.Lo <= c.Ratio && c.Ratio <= c.Hi) {
			t.Errorf("%s throughput: %+v, want a significant regression near 0.8 inside its interval", mode, c)
		}
		if !regexp.MustCompile(`fell (19|20|21)\.[0-9]%`).MatchString(c.Why) || !strings.Contains(c.Why, "5.0% drop limit") {
			t.Errorf("%s throughput: explanation %q does not give the drop and the limit", mode, c.Why)
		}
		if c := check(t, g, mode, reports.MetricE2EP99); c.Status != reports.CheckOK {
			t.Errorf("%s e2e p99 (identical histograms): status %s, want ok", mode, c.Status)
		}
	}
	text := gateText(t, g)
	for _, want := range []string{"gate: FAIL (exit 4): regression", "REGRESSION", "throughput fell"} {
		if !strings.Contains(text, want) {
			t.Errorf("gate text lacks %q:\n%s", want, text)
		}
	}
}

func TestGateSmallDropWithinNoisePasses(t *testing.T) {
	t.Parallel()
	base := side(t, "base", 1, 5, 1, 0.03)
	cand := side(t, "cand", 2, 5, 0.98, 0.03)
	g := reports.Gate(reports.Compare([]*reports.Run{base}, []*reports.Run{cand}), defaultGate)
	if code := g.ExitCode(); code != reports.ExitOK {
		t.Fatalf("2%% drop: exit %d, want 0\n%s", code, gateText(t, g))
	}
	if c := check(t, g, "explicit", reports.MetricThroughput); c.Status == reports.CheckRegression || c.Ratio < 0.9 || c.Ratio > 1.05 {
		t.Errorf("explicit throughput: %+v, want no regression near 0.98", c)
	}
}

func TestGateForbiddenAnomaly(t *testing.T) {
	t.Parallel()
	base := side(t, "base", 1, 5, 1, 0.01)
	f := fixture{seed: 1, latSeed: 99, repeats: 5, modes: []string{"explicit", "transactional"}, samples: 1000, throughput: 1, latency: 1, noise: 0.01, forbidden: true}
	cand := fixtureRun(t, "cand", f)
	g := reports.Gate(reports.Compare([]*reports.Run{base}, []*reports.Run{cand}), defaultGate)
	if code := g.ExitCode(); code != reports.ExitAnomaly {
		t.Fatalf("forbidden duplicate: exit %d, want %d\n%s", code, reports.ExitAnomaly, gateText(t, g))
	}
	if len(g.Forbidden) != 1 || g.Forbidden[0].Mode != "transactional" || g.Forbidden[0].Kind != "duplicate" || g.Forbidden[0].Run != "cand" {
		t.Errorf("Forbidden = %+v, want the transactional duplicate of cand", g.Forbidden)
	}
	if text := gateText(t, g); !strings.Contains(text, "FORBIDDEN cand: mode transactional repeat 1: duplicate ×1") {
		t.Errorf("gate text does not name the anomaly:\n%s", text)
	}
	// A forbidden anomaly in the baseline is not the candidate's fault.
	g = reports.Gate(reports.Compare([]*reports.Run{cand}, []*reports.Run{base}), defaultGate)
	if code := g.ExitCode(); code != reports.ExitOK {
		t.Errorf("forbidden anomaly only in the baseline: exit %d, want 0", code)
	}
}

func TestGateOneRepeatNeedsSignificance(t *testing.T) {
	t.Parallel()
	base := side(t, "base", 1, 1, 1, 0.01)
	cand := side(t, "cand", 2, 1, 0.8, 0.01)
	cmp := reports.Compare([]*reports.Run{base}, []*reports.Run{cand})

	g := reports.Gate(cmp, defaultGate)
	c := check(t, g, "explicit", reports.MetricThroughput)
	if g.ExitCode() != reports.ExitUsage || c.Status != reports.CheckNotEnoughRepeats {
		t.Fatalf("one repeat a side, default options: exit %d, status %s; want %d and %q\n%s", g.ExitCode(), c.Status, reports.ExitUsage, reports.CheckNotEnoughRepeats, gateText(t, g))
	}
	if text := gateText(t, g); !strings.Contains(text, "not enough repeats") || !strings.Contains(text, "1/1 repeats cannot reach p < 0.05") ||
		!strings.Contains(text, "at least 4 repeats a side are needed") || !strings.Contains(text, "--threshold-only") {
		t.Errorf("gate text does not say why it failed and how many repeats are needed:\n%s", text)
	}

	opts := defaultGate
	opts.ThresholdOnly = true
	g = reports.Gate(cmp, opts)
	if c := check(t, g, "explicit", reports.MetricThroughput); g.ExitCode() != reports.ExitRegression || c.Status != reports.CheckRegression || !strings.Contains(c.Why, "threshold alone") {
		t.Errorf("one repeat a side, ThresholdOnly: exit %d, %+v; want 4 and a threshold-only regression", g.ExitCode(), c)
	}
}

// TestGateTooFewRepeatsFails holds even identical sides: with 3 repeats a
// side no p-value can fall below 0.05, so the gate fails and says 4 are
// needed, whatever the metrics; --threshold-only passes them.
func TestGateTooFewRepeatsFails(t *testing.T) {
	t.Parallel()
	base := side(t, "base", 1, 3, 1, 0.01)
	cand := side(t, "cand", 1, 3, 1, 0.01)
	cmp := reports.Compare([]*reports.Run{base}, []*reports.Run{cand})
	g := reports.Gate(cmp, defaultGate)
	if code := g.ExitCode(); code != reports.ExitUsage {
		t.Fatalf("3 repeats a side: exit %d, want %d\n%s", code, reports.ExitUsage, gateText(t, g))
	}
	if text := gateText(t, g); !strings.Contains(text, "gate: FAIL (exit 2): too few repeats") || !strings.Contains(text, "--repeat 4") {
		t.Errorf("gate text:\n%s", text)
	}
	if n := reports.RepeatsNeeded(0.05); n != 4 {
		t.Errorf("RepeatsNeeded(0.05) = %d, want 4", n)
	}
	opts := defaultGate
	opts.ThresholdOnly = true
	if g := reports.Gate(cmp, opts); g.ExitCode() != reports.ExitOK {
		t.Errorf("3 repeats a side, identical, --threshold-only: exit %d, want 0\n%s", g.ExitCode(), gateText(t, g))
	}
}

func TestGateLostModeIsRegression(t *testing.T) {
	t.Parallel()
	base := side(t, "base", 1, 3, 1, 0.01)
	cand := side(t, "cand", 1, 3, 1, 0.01)
	var kept []result.ModeResult
	for _, m := range cand.Result.Modes {
		if m.Mode == "transactional" {
			m = result.ModeResult{Mode: m.Mode, Repeat: m.Repeat, Error: "engine crashed"}
		}
		kept = append(kept, m)
	}
	cand.Result.Modes = kept
	g := reports.Gate(reports.Compare([]*reports.Run{base}, []*reports.Run{cand}), defaultGate)
	c := check(t, g, "transactional", "")
	if g.ExitCode() != reports.ExitRegression || c.Status != reports.CheckRegression || !strings.Contains(c.Why, "engine crashed") {
		t.Errorf("mode lost in the candidate: exit %d, %+v; want 4 naming the error", g.ExitCode(), c)
	}
}

func TestGateNothingToCompare(t *testing.T) {
	t.Parallel()
	if code := reports.Gate(nil, defaultGate).ExitCode(); code != reports.ExitUsage {
		t.Errorf("nil comparison: exit %d, want %d", code, reports.ExitUsage)
	}
	if code := reports.Gate(reports.Compare(nil, nil), reports.GateOptions{}).ExitCode(); code != reports.ExitUsage {
		t.Errorf("empty comparison: exit %d, want %d", code, reports.ExitUsage)
	}
	g := reports.Gate(reports.Compare([]*reports.Run{nil}, []*reports.Run{{Name: "x"}}), reports.GateOptions{Alpha: 7})
	if g.ExitCode() != reports.ExitUsage || g.Options.Alpha != reports.DefaultAlpha {
		t.Errorf("nil runs and a bad alpha: exit %d, alpha %v; want %d and the default", g.ExitCode(), g.Options.Alpha, reports.ExitUsage)
	}
	if text := gateText(t, g); !strings.Contains(text, "option Alpha = 7 is out of range") || !strings.Contains(text, "has no result; skipped") {
		t.Errorf("gate text does not explain the bad input:\n%s", text)
	}
}

var (
	benchLine   = regexp.MustCompile(`^BenchmarkSharebench/mode=[^/ ]+-[0-9]+\t1(\t[0-9.]+ [a-z0-9/-]+)+$`)
	benchMetric = regexp.MustCompile(`\t[0-9.]+ (records/s|e2e-p50-ns|e2e-p99-ns|e2e-p999-ns|commit-p99-ns|cpu-ns/record)`)
)

func TestCompareWriteBench(t *testing.T) {
	t.Parallel()
	base := side(t, "base", 1, 3, 1, 0.01)
	cand := side(t, "cand", 2, 3, 0.9, 0.01)
	cmp := reports.Compare([]*reports.Run{base}, []*reports.Run{cand})
	var b strings.Builder
	if err := cmp.WriteBench(&b); err != nil {
		t.Fatal(err)
	}
	benches, metrics, sides := 0, 0, map[string]bool{}
	sc := bufio.NewScanner(strings.NewReader(b.String()))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "Benchmark"):
			if !benchLine.MatchString(line) {
				t.Errorf("not a benchmark line benchstat reads: %q", line)
			}
			benches++
			metrics += len(benchMetric.FindAllString(line, -1))
		case strings.HasPrefix(line, "side: "):
			sides[strings.TrimPrefix(line, "side: ")] = true
		case !regexp.MustCompile(`^[a-z]+: \S`).MatchString(line):
			t.Errorf("unexpected line %q", line)
		}
	}
	// 2 sides × 2 modes × 3 repeats, 6 metrics each (the fixture records
	// CPU time).
	if benches != 12 || metrics != 72 || !sides["baseline"] || !sides["candidate"] {
		t.Errorf("%d benchmark lines with %d metrics and sides %v, want 12 lines, 72 metrics and both sides", benches, metrics, sides)
	}
	if !regexp.MustCompile(`(?m)^BenchmarkSharebench/mode=explicit-[0-9]+\t1\t[0-9.]+ records/s\t`).MatchString(b.String()) {
		t.Errorf("no explicit throughput line:\n%s", b.String())
	}

	var text strings.Builder
	if err := cmp.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"baseline:  base", "candidate: cand", "explicit", "throughput", "e2e p99.9", "commit p99", "3/3"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("comparison text lacks %q:\n%s", want, text.String())
		}
	}
}

// TestCheckComparableRefusesMismatch refuses runs of another workload,
// rate, target or mode set, naming each difference.
func TestCheckComparableRefusesMismatch(t *testing.T) {
	t.Parallel()
	base := side(t, "base", 1, 1, 1, 0.01)
	if err := reports.CheckComparable([]*reports.Run{base}, []*reports.Run{side(t, "cand", 2, 1, 1, 0.01)}); err != nil {
		t.Fatalf("same workload, rate, target and modes: %v", err)
	}
	for _, tc := range []struct {
		name   string
		change func(r *result.Result)
		want   string
	}{
		{"workload", func(r *result.Result) { r.Workload, r.Spec = "omb-1kb", []byte(`{"name":"omb-1kb"}`) }, "workload read-process-write"},
		{"rate", func(r *result.Result) { r.Rate = 50000 }, "rate 2000 records/s"},
		{"closed-loop", func(r *result.Result) { r.OpenLoop, r.Rate = false, 0 }, "closed loop"},
		{"target", func(r *result.Result) { r.Env.Target = "kafka" }, "target engine"},
		{"modes", func(r *result.Result) { r.Modes = r.Modes[:1] }, "modes explicit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cand := side(t, "cand", 2, 1, 1, 0.01)
			tc.change(cand.Result)
			err := reports.CheckComparable([]*reports.Run{base}, []*reports.Run{cand})
			if !errors.Is(err, reports.ErrMismatch) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("CheckComparable = %v, want ErrMismatch naming %q", err, tc.want)
			}
		})
	}
}

// TestGateCPUPerRecordIsThroughput: a candidate whose records cost 15%
// more CPU fails on the throughput one CPU-second buys, even when its
// records/s (here identical) hides it.
func TestGateCPUPerRecordIsThroughput(t *testing.T) {
	t.Parallel()
	base := side(t, "base", 1, 5, 1, 0.01)
	cand := side(t, "cand", 1, 5, 1, 0.01)
	for i := range base.Result.Modes {
		b, c := &base.Result.Modes[i], &cand.Result.Modes[i]
		b.CPUNs = int64(float64(b.OutputsVisible) * 4000 * (1 + 0.01*float64(i)))
		c.CPUNs = int64(float64(c.OutputsVisible) * 4600 * (1 + 0.01*float64(i)))
	}
	g := reports.Gate(reports.Compare([]*reports.Run{base}, []*reports.Run{cand}), defaultGate)
	c := check(t, g, "explicit", reports.MetricCPUPerRecord)
	if g.ExitCode() != reports.ExitRegression || c.Status != reports.CheckRegression || !strings.Contains(c.Why, "records per CPU-second") {
		t.Fatalf("+15%% CPU per record: exit %d, %+v\n%s", g.ExitCode(), c, gateText(t, g))
	}
	if c := check(t, g, "explicit", reports.MetricThroughput); c.Status != reports.CheckOK {
		t.Errorf("records/s is identical, yet %+v", c)
	}
}

// pairedSides builds n pairs of one-repeat runs whose level varies from
// pair to pair by up to 3× (a machine whose load changes between pairs),
// the candidate of each pair at ratio × its baseline's throughput.
func pairedSides(t *testing.T, n int, ratio float64) (base, cand []*reports.Run) {
	t.Helper()
	for i := range n {
		level := 0.5 + float64((i*7)%n)/float64(n)*1.5
		base = append(base, side(t, "base", uint64(10+i), 1, level, 0))
		cand = append(cand, side(t, "cand", uint64(10+i), 1, level*ratio, 0))
	}
	return base, cand
}

// TestGatePairedSeesThroughLoad: a 13% drop in every pair, hidden by load
// that moves each pair's level far more, fails the paired gate (the pairs'
// ratios all agree) while the pooled Mann–Whitney test cannot tell; an
// A/A of the same pairs passes paired.
func TestGatePairedSeesThroughLoad(t *testing.T) {
	t.Parallel()
	base, cand := pairedSides(t, 8, 0.87)
	paired, err := reports.CompareWith(base, cand, reports.CompareOptions{Paired: true})
	if err != nil {
		t.Fatal(err)
	}
	g := reports.Gate(paired, defaultGate)
	c := check(t, g, "explicit", reports.MetricThroughput)
	if g.ExitCode() != reports.ExitRegression || c.Status != reports.CheckRegression || c.P >= 0.05 || c.Ratio < 0.86 || c.Ratio > 0.88 {
		t.Fatalf("paired 13%% drop: exit %d, %+v\n%s", g.ExitCode(), c, gateText(t, g))
	}
	if !strings.Contains(gateText(t, g), "Wilcoxon signed-rank") {
		t.Errorf("the paired gate does not name its test:\n%s", gateText(t, g))
	}
	pooled := reports.Gate(reports.Compare(base, cand), defaultGate)
	if c := check(t, pooled, "explicit", reports.MetricThroughput); c.Status == reports.CheckRegression {
		t.Errorf("pooled Mann–Whitney over loads 3× apart found the 13%% drop significant (%+v): the fixture does not hide it", c)
	}
	aBase, aCand := pairedSides(t, 8, 1)
	aa, err := reports.CompareWith(aBase, aCand, reports.CompareOptions{Paired: true})
	if err != nil {
		t.Fatal(err)
	}
	if g := reports.Gate(aa, defaultGate); g.ExitCode() != reports.ExitOK {
		t.Errorf("paired A/A: exit %d\n%s", g.ExitCode(), gateText(t, g))
	}
}

// TestGatePairedNeedsPairs: five pairs cannot reach p < 0.05 (2/2^5), so
// the paired gate fails saying six are needed; unequal sides are refused.
func TestGatePairedNeedsPairs(t *testing.T) {
	t.Parallel()
	base, cand := pairedSides(t, 5, 0.87)
	cmp, err := reports.CompareWith(base, cand, reports.CompareOptions{Paired: true})
	if err != nil {
		t.Fatal(err)
	}
	g := reports.Gate(cmp, defaultGate)
	if txt := gateText(t, g); g.ExitCode() != reports.ExitUsage || !strings.Contains(txt, "at least 6 pairs") {
		t.Errorf("5 pairs: exit %d, want %d saying 6 pairs are needed\n%s", g.ExitCode(), reports.ExitUsage, txt)
	}
	if _, err := reports.CompareWith(base, cand[:4], reports.CompareOptions{Paired: true}); err == nil || !strings.Contains(err.Error(), "5 baseline runs and 4 candidate runs") {
		t.Errorf("5 vs 4 runs paired: err %v, want a refusal naming the counts", err)
	}
}
