// This file holds Compare: a candidate's runs against a baseline's, per
// mode and metric, with the median ratio, its bootstrap confidence interval
// and the Mann–Whitney p-value, printable as a table or as Go benchmark
// lines for benchstat.

package reports

import (
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/sharebench/sharebench/loadgen/result"
	"github.com/sharebench/sharebench/reports/stats"
)

// Compare's statistics settings. The bootstrap seed is fixed so the same
// inputs always give the same intervals.
const (
	CompareConfidence = 0.95
	compareIterations = stats.DefaultIterations
	compareSeed1      = 0x73686172 // "shar"
	compareSeed2      = 0x6562656e // "eben"
)

// Comparison is a candidate compared with a baseline, mode by mode.
type Comparison struct {
	Baseline, Candidate []string // run labels
	Confidence          float64  // of every interval, e.g. 0.95
	Modes               []ModeComparison
	// Paired says the runs were compared pair by pair (CompareOptions).
	Paired bool
	// Notes are things a reader should know: failed repeats, modes only
	// one side ran, undecodable histograms.
	Notes []string

	baseRuns, candRuns []*runData
}

// ModeComparison is one mode.
type ModeComparison struct {
	Mode string
	// Repeats measured on each side, over all of its runs.
	BaselineRepeats, CandidateRepeats int
	// Missing says why one side has no measurement of this mode (then
	// Metrics is empty); "" when both have.
	Missing string
	Metrics []MetricComparison
	// Forbidden lists the candidate's exactly-once anomalies this mode does
	// not allow (or failed verdicts).
	Forbidden []Finding
}

// MetricComparison is one metric of one mode.
type MetricComparison struct {
	Metric Metric
	// Baseline and Candidate hold one value per measured repeat (units:
	// Metric.Unit).
	Baseline, Candidate             []float64
	BaselineMedian, CandidateMedian float64
	// Ratio is CandidateMedian / BaselineMedian; [Lo, Hi] its bootstrap
	// interval at the comparison's confidence (NaN when undefined).
	Ratio, Lo, Hi float64
	// P is the two-sided Mann–Whitney U p-value of the repeats (paired:
	// the Wilcoxon signed-rank p-value of the pairs' log ratios); MinP the
	// smallest p these sample sizes can produce: when MinP ≥ alpha no
	// difference can be significant, however large.
	P, MinP float64
	// Pairs is the number of pairs with a value on both sides (paired
	// comparisons only; then Ratio is the median of the pairs' ratios).
	Pairs int
}

// CompareOptions say how Compare treats the runs.
type CompareOptions struct {
	// Paired pairs the i-th baseline run with the i-th candidate run, and
	// in them the repeats of a mode with the same repeat number: a design
	// where a pair's two runs shared their conditions (they ran at the same
	// time on the same machine, as scripts/ab-gate.sh's concurrent pairs
	// do). Each pair gives one ratio, candidate/baseline; Ratio is their
	// median, its interval a bootstrap over the pairs, and P the Wilcoxon
	// signed-rank test of their logs, so what varies from one pair to the
	// next (the machine's load) cancels within each pair. Needs as many
	// baseline as candidate runs, and 6 pairs for p < 0.05.
	Paired bool
}

// PairsNeeded is the smallest number of pairs whose two-sided signed-rank
// test can reach p < alpha (6 for alpha 0.05).
func PairsNeeded(alpha float64) int {
	n := 1
	for stats.MinSignedRankP(n) >= alpha && n < 1000 {
		n++
	}
	return n
}

// Finding is a forbidden anomaly kind found in one repeat.
type Finding struct {
	Run    string
	Mode   string
	Repeat int
	Kind   string // "" when the verdict failed without naming a kind
	Count  int64
}

func (f Finding) String() string {
	kind := f.Kind
	if kind == "" {
		kind = "verifier verdict FAIL"
	}
	return fmt.Sprintf("%s: mode %s repeat %d: %s ×%d", f.Run, f.Mode, f.Repeat, kind, f.Count)
}

// Compare compares candidate runs with baseline runs. The repeats of all
// runs on a side are pooled per mode. Nil runs are skipped with a note.
func Compare(baseline, candidate []*Run) *Comparison {
	c, _ := CompareWith(baseline, candidate, CompareOptions{})
	return c
}

// CompareWith is Compare with options. A paired comparison of sides with
// different numbers of runs, or with a nil run, is an error naming the
// counts.
func CompareWith(baseline, candidate []*Run, o CompareOptions) (*Comparison, error) {
	if o.Paired {
		if len(baseline) != len(candidate) {
			return nil, fmt.Errorf("%d baseline runs and %d candidate runs; a paired comparison pairs the i-th of each, so give as many of each", len(baseline), len(candidate))
		}
		for i := range baseline {
			if baseline[i] == nil || baseline[i].Result == nil || candidate[i] == nil || candidate[i].Result == nil {
				return nil, fmt.Errorf("pair %d has a run without a result", i+1)
			}
		}
	}
	c := &Comparison{Confidence: CompareConfidence, Paired: o.Paired}
	all := append(append([]*Run{}, baseline...), candidate...)
	names := labels(all)
	for i, r := range all {
		if r == nil || r.Result == nil {
			c.Notes = append(c.Notes, fmt.Sprintf("run %d has no result; skipped", i+1))
			continue
		}
		rd := prepare(r, names[i])
		c.Notes = append(c.Notes, rd.warnings...)
		if i < len(baseline) {
			c.Baseline = append(c.Baseline, rd.label)
			c.baseRuns = append(c.baseRuns, rd)
		} else {
			c.Candidate = append(c.Candidate, rd.label)
			c.candRuns = append(c.candRuns, rd)
		}
	}
	rng := rand.New(rand.NewPCG(compareSeed1, compareSeed2))
	for _, mode := range modeNames(append(append([]*runData{}, c.baseRuns...), c.candRuns...)) {
		mc := ModeComparison{Mode: mode}
		base, baseWhy := pooled(c.baseRuns, mode)
		cand, candWhy := pooled(c.candRuns, mode)
		mc.BaselineRepeats, mc.CandidateRepeats = len(base), len(cand)
		for _, rd := range c.candRuns {
			mc.Forbidden = append(mc.Forbidden, findings(rd, mode)...)
			if md := rd.find(mode); md != nil && len(md.repeats) > 0 && md.unfinished() {
				c.Notes = append(c.Notes, fmt.Sprintf("%s: mode %s: %s", rd.label, mode, md.noMeasurement()))
			}
		}
		switch {
		case len(base) == 0 && len(cand) == 0:
			mc.Missing = "neither side measured it (" + baseWhy + ")"
		case len(base) == 0:
			mc.Missing = "baseline has no measurement (" + baseWhy + ")"
		case len(cand) == 0:
			mc.Missing = "candidate has no measurement (" + candWhy + ")"
		}
		if mc.Missing == "" {
			for _, m := range Metrics() {
				b, k := metricSamples(base, m), metricSamples(cand, m)
				if len(b) == 0 && len(k) == 0 {
					continue // not recorded by this mode, e.g. no commit histogram
				}
				if o.Paired {
					mc.Metrics = append(mc.Metrics, comparePaired(m, b, k, pairedRatios(c.baseRuns, c.candRuns, mode, m), rng))
					continue
				}
				mc.Metrics = append(mc.Metrics, compareMetric(m, b, k, rng))
			}
		}
		c.Modes = append(c.Modes, mc)
	}
	return c, nil
}

// pairedRatios is candidate/baseline of metric m for every pair of runs
// (by position) and repeat (by repeat number) that measured it on both
// sides.
func pairedRatios(base, cand []*runData, mode string, m Metric) []float64 {
	var b, k []float64
	for i := range min(len(base), len(cand)) {
		bm, km := base[i].find(mode), cand[i].find(mode)
		if bm == nil || km == nil {
			continue
		}
		for _, br := range bm.repeats {
			for _, kr := range km.repeats {
				if kr.m.Repeat == br.m.Repeat {
					b = append(b, br.values[m])
					k = append(k, kr.values[m])
				}
			}
		}
	}
	return stats.PairedRatios(b, k)
}

// comparePaired compares metric m pair by pair: ratio the median of the
// pairs' ratios, p the signed-rank test of their logs.
func comparePaired(m Metric, base, cand, ratios []float64, rng *rand.Rand) MetricComparison {
	mc := MetricComparison{
		Metric: m, Baseline: base, Candidate: cand,
		BaselineMedian: stats.Median(base), CandidateMedian: stats.Median(cand),
		Pairs: len(ratios),
	}
	mc.Ratio, mc.Lo, mc.Hi, mc.P = stats.PairedRatioTest(ratios, CompareConfidence, rng, compareIterations)
	mc.MinP = stats.MinSignedRankP(len(ratios))
	return mc
}

// pooled gathers mode's measured repeats over runs; when there are none it
// says why.
func pooled(runs []*runData, mode string) ([]*repeatData, string) {
	var out []*repeatData
	var why []string
	for _, rd := range runs {
		md := rd.find(mode)
		switch {
		case md == nil:
			why = append(why, rd.label+": not run")
		case len(md.repeats) > 0:
			out = append(out, md.repeats...)
		case md.unsupported != "":
			why = append(why, rd.label+": unsupported: "+md.unsupported)
		default:
			why = append(why, rd.label+": "+md.noMeasurement())
		}
	}
	if len(runs) == 0 {
		why = append(why, "no runs")
	}
	return out, strings.Join(why, "; ")
}

func metricSamples(reps []*repeatData, m Metric) []float64 {
	var out []float64
	for _, rp := range reps {
		if v := rp.values[m]; !math.IsNaN(v) {
			out = append(out, v)
		}
	}
	return out
}

func compareMetric(m Metric, base, cand []float64, rng *rand.Rand) MetricComparison {
	mc := MetricComparison{
		Metric: m, Baseline: base, Candidate: cand,
		BaselineMedian: stats.Median(base), CandidateMedian: stats.Median(cand),
	}
	mc.Ratio, mc.Lo, mc.Hi = stats.MedianRatioCI(base, cand, CompareConfidence, rng, compareIterations)
	_, mc.P = stats.MannWhitneyU(base, cand)
	mc.MinP = stats.MinPValue(len(base), len(cand))
	if len(base) == 0 || len(cand) == 0 {
		mc.P = math.NaN()
	}
	return mc
}

// findings lists the forbidden anomalies of mode in one candidate run.
func findings(rd *runData, mode string) []Finding {
	md := rd.find(mode)
	if md == nil {
		return nil
	}
	var out []Finding
	for _, rp := range md.repeats {
		v := rp.m.Verify
		if v == nil {
			continue
		}
		for _, k := range v.Forbidden {
			out = append(out, Finding{Run: rd.label, Mode: mode, Repeat: rp.m.Repeat, Kind: string(k), Count: v.Counts[k]})
		}
		if !v.Pass && len(v.Forbidden) == 0 {
			// INCONCLUSIVE (or an incomplete verdict): no proof, so the
			// candidate cannot pass.
			out = append(out, Finding{Run: rd.label, Mode: mode, Repeat: rp.m.Repeat, Kind: strings.ToLower(v.VerdictName())})
		}
	}
	return out
}

// formatMetric prints a value of m with its unit for people.
func formatMetric(m Metric, v float64) string {
	if math.IsNaN(v) {
		return "—"
	}
	switch m {
	case MetricThroughput:
		return formatNumber(v) + " /s"
	case MetricCPUPerRecord:
		return formatNumber(v/1e3) + " µs"
	}
	return formatNumber(v/1e6) + " ms"
}

func formatP(p float64) string {
	switch {
	case math.IsNaN(p):
		return "—"
	case p < 0.001:
		return "<0.001"
	}
	return strconv.FormatFloat(p, 'f', 3, 64)
}

func formatRatioCI(mc MetricComparison) (ratio, ci string) {
	ratio, ci = "—", "—"
	if !math.IsNaN(mc.Ratio) && !math.IsInf(mc.Ratio, 0) {
		ratio = strconv.FormatFloat(mc.Ratio, 'f', 3, 64)
	}
	if !math.IsNaN(mc.Lo) && !math.IsNaN(mc.Hi) {
		ci = fmt.Sprintf("[%.3f, %.3f]", mc.Lo, mc.Hi)
	}
	return ratio, ci
}

// WriteText writes the comparison as an aligned table.
func (c *Comparison) WriteText(w io.Writer) error {
	if c == nil {
		_, err := io.WriteString(w, "no comparison\n")
		return err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "baseline:  %s\ncandidate: %s\n", listOrNone(c.Baseline), listOrNone(c.Candidate))
	if c.Paired {
		fmt.Fprintf(&b, "paired: ratio = median over pairs of candidate/baseline; %.0f%% bootstrap interval; p = two-sided Wilcoxon signed-rank of the pairs' log ratios\n\n", c.Confidence*100)
	} else {
		fmt.Fprintf(&b, "ratio = candidate median / baseline median over repeats; %.0f%% bootstrap interval; p = two-sided Mann–Whitney U\n\n", c.Confidence*100)
	}
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "mode\tmetric\tbaseline\tcandidate\tratio\tinterval\tp\trepeats")
	for _, mc := range c.Modes {
		if mc.Missing != "" {
			fmt.Fprintf(tw, "%s\t%s\t\t\t\t\t\t%d/%d\n", mc.Mode, mc.Missing, mc.BaselineRepeats, mc.CandidateRepeats)
			continue
		}
		for _, m := range mc.Metrics {
			ratio, ci := formatRatioCI(m)
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d/%d\n", mc.Mode, m.Metric.Label(),
				formatMetric(m.Metric, m.BaselineMedian), formatMetric(m.Metric, m.CandidateMedian),
				ratio, ci, formatP(m.P), len(m.Baseline), len(m.Candidate))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, mc := range c.Modes {
		for _, f := range mc.Forbidden {
			fmt.Fprintf(&b, "forbidden anomaly in the candidate: %s\n", f)
		}
	}
	for _, n := range c.Notes {
		fmt.Fprintf(&b, "note: %s\n", n)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func listOrNone(s []string) string {
	if len(s) == 0 {
		return "(none)"
	}
	return strings.Join(s, ", ")
}

// WriteBench writes every repeat's metrics as Go benchmark lines
// (result.WriteBench), baseline then candidate, each side introduced by a
// "side:" configuration line, so
//
//	benchstat -col side bench.txt
//
// compares them in one table: no other configuration key differs between
// the sides (the commits and run names are in the text output). A line
// reads
//
//	BenchmarkSharebench/mode=explicit-2 1 12345 records/s 1234567 e2e-p50-ns ...
func (c *Comparison) WriteBench(w io.Writer) error {
	if c == nil {
		return nil
	}
	for _, side := range []struct {
		name string
		runs []*runData
	}{{"baseline", c.baseRuns}, {"candidate", c.candRuns}} {
		for _, rd := range side.runs {
			if err := writeBenchRun(w, side.name, rd); err != nil {
				return err
			}
		}
	}
	return nil
}

// writeBenchRun writes one run's configuration lines and benchmark lines.
func writeBenchRun(w io.Writer, side string, rd *runData) error {
	env := rd.run.Result.Env
	config := [][2]string{{"goos", env.OS}, {"goarch", env.Arch}, {"cpu", env.CPU}, {"target", env.Target.String()}, {"side", side}}
	var lines []result.BenchLine
	for _, md := range rd.modes {
		for _, rp := range md.repeats {
			l := result.BenchLine{Parts: [][2]string{{"mode", md.mode}}, Procs: env.GOMAXPROCS}
			for _, m := range Metrics() {
				if v := rp.values[m]; !math.IsNaN(v) {
					l.Metrics = append(l.Metrics, result.BenchMetric{Value: v, Unit: m.BenchUnit()})
				}
			}
			lines = append(lines, l)
		}
	}
	return result.WriteBench(w, config, lines)
}
