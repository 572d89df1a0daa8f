// This file holds Gate: the CI verdict on a Comparison and its exit code.

package reports

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"

	"github.com/sharebench/sharebench/reports/stats"
)

// Gate defaults, used for zero-valued options.
const (
	DefaultMaxThroughputDrop = 0.05
	DefaultMaxP99Rise        = 0.10
	DefaultAlpha             = 0.05
)

// GateOptions are the gate's thresholds. A zero field takes its default.
type GateOptions struct {
	// MaxThroughputDrop is the largest tolerated fall of the median
	// throughput, as a fraction (0.05: 5%), in records/s and in records
	// per CPU-second (the CPU per record may rise by 1/(1-drop)).
	// Default 0.05.
	MaxThroughputDrop float64
	// MaxP99Rise is the largest tolerated rise of the median end-to-end p99
	// and commit p99, as a fraction (0.10: 10%). Default 0.10.
	MaxP99Rise float64
	// Alpha is the significance level of the Mann–Whitney test (of the
	// Wilcoxon signed-rank test in a paired comparison). Default 0.05.
	Alpha float64
	// ThresholdOnly gates on the thresholds alone when the repeats are too
	// few for significance (one per side, or so few that no p-value can
	// fall below Alpha). The default, false, requires significance: a gate
	// whose repeats cannot reach it fails (ExitUsage), saying how many
	// repeats a side are needed.
	ThresholdOnly bool
}

// CheckStatus is the outcome of one gated metric.
type CheckStatus string

// Check outcomes. CheckRegression fails the gate, and so does
// CheckNotEnoughRepeats (with ExitUsage).
const (
	CheckOK               CheckStatus = "ok"                 // within the threshold
	CheckImproved         CheckStatus = "improved"           // better beyond the threshold, significantly
	CheckWithinNoise      CheckStatus = "within noise"       // worse than the threshold but not significant
	CheckNotEnoughRepeats CheckStatus = "not enough repeats" // significance impossible with these repeats: fails without ThresholdOnly
	CheckRegression       CheckStatus = "REGRESSION"
	CheckNoData           CheckStatus = "no data"
	CheckNotGated         CheckStatus = "not gated" // reported by compare, no threshold
)

// Check is one mode and metric as the gate saw it.
type Check struct {
	Mode   string
	Metric Metric // "" for a whole-mode check (a mode the candidate lost)
	Status CheckStatus
	// Ratio is candidate/baseline (median over repeats), [Lo, Hi] its
	// interval, P the Mann–Whitney p-value, Limit the ratio beyond which
	// the metric is worse than its threshold.
	Ratio, Lo, Hi, P, Limit float64
	// Why explains the status in one sentence.
	Why string
}

// GateResult is the gate's verdict.
type GateResult struct {
	Options   GateOptions // as applied, defaults filled in
	Paired    bool        // the comparison was paired (CompareOptions.Paired)
	Checks    []Check
	Forbidden []Finding
	Notes     []string
}

// gatedLimit returns the ratio limit of metric m, or false when m is not
// gated.
func (o GateOptions) gatedLimit(m Metric) (float64, bool) {
	switch m {
	case MetricThroughput:
		return 1 - o.MaxThroughputDrop, true
	case MetricE2EP99, MetricCommitP99:
		return 1 + o.MaxP99Rise, true
	case MetricCPUPerRecord:
		// The throughput one CPU-second buys: a closed loop's records/s
		// follows whatever CPU the neighbours leave, the CPU each record
		// costs much less so.
		return 1 / (1 - o.MaxThroughputDrop), true
	}
	return math.NaN(), false
}

// withDefaults fills zero fields and replaces invalid ones, saying so.
func (o GateOptions) withDefaults() (GateOptions, []string) {
	var notes []string
	fix := func(v *float64, def float64, name string, ok func(float64) bool) {
		switch {
		case *v == 0:
			*v = def
		case !ok(*v):
			notes = append(notes, fmt.Sprintf("option %s = %v is out of range; using %v", name, *v, def))
			*v = def
		}
	}
	frac := func(v float64) bool { return v > 0 && v < 1 }
	fix(&o.MaxThroughputDrop, DefaultMaxThroughputDrop, "MaxThroughputDrop", frac)
	fix(&o.MaxP99Rise, DefaultMaxP99Rise, "MaxP99Rise", func(v float64) bool { return v > 0 && !math.IsInf(v, 0) })
	fix(&o.Alpha, DefaultAlpha, "Alpha", frac)
	return o, notes
}

// Gate judges a comparison. A metric regresses when it is worse than its
// threshold and the difference is significant (p < Alpha); throughput (in
// records/s, and in records per CPU-second through the CPU per record),
// end-to-end p99 and commit p99 are gated, p50 and p99.9 are reported only.
// Any forbidden exactly-once anomaly in the candidate fails the gate
// (exit 3), and so does a mode the baseline measured but the candidate did
// not (exit 4).
func Gate(cmp *Comparison, opts GateOptions) GateResult {
	o, notes := opts.withDefaults()
	g := GateResult{Options: o, Notes: notes}
	if cmp == nil {
		g.Notes = append(g.Notes, "nothing to gate: no comparison")
		return g
	}
	g.Notes = append(g.Notes, cmp.Notes...)
	g.Paired = cmp.Paired
	for _, mc := range cmp.Modes {
		g.Forbidden = append(g.Forbidden, mc.Forbidden...)
		if mc.Missing != "" {
			ch := Check{Mode: mc.Mode, Status: CheckNoData, Why: mc.Missing,
				Ratio: math.NaN(), Lo: math.NaN(), Hi: math.NaN(), P: math.NaN(), Limit: math.NaN()}
			if mc.BaselineRepeats > 0 && mc.CandidateRepeats == 0 {
				ch.Status = CheckRegression
				ch.Why = "the baseline measured this mode but the " + mc.Missing
			}
			g.Checks = append(g.Checks, ch)
			continue
		}
		for _, m := range mc.Metrics {
			g.Checks = append(g.Checks, o.check(mc.Mode, m, cmp.Paired))
		}
	}
	return g
}

// check judges one metric.
func (o GateOptions) check(mode string, m MetricComparison, paired bool) Check {
	ch := Check{Mode: mode, Metric: m.Metric, Ratio: m.Ratio, Lo: m.Lo, Hi: m.Hi, P: m.P}
	limit, gated := o.gatedLimit(m.Metric)
	ch.Limit = limit
	if len(m.Baseline) == 0 || len(m.Candidate) == 0 || math.IsNaN(m.Ratio) || math.IsInf(m.Ratio, 0) {
		ch.Status = CheckNoData
		ch.Why = fmt.Sprintf("no ratio: %d baseline and %d candidate values", len(m.Baseline), len(m.Candidate))
		if gated && len(m.Baseline) > 0 && len(m.Candidate) == 0 {
			ch.Status = CheckRegression
			ch.Why = "the baseline measured it but the candidate did not"
		}
		return ch
	}
	change := describeChange(m.Metric, m.Ratio)
	if !gated {
		ch.Status = CheckNotGated
		ch.Why = change + "; reported, not gated"
		return ch
	}
	worse := m.Ratio < limit
	better := m.Ratio > 1/limit
	threshold := describeLimit(m.Metric, o) + " limit"
	if !m.Metric.HigherIsBetter() {
		worse, better = m.Ratio > limit, m.Ratio < 1/limit
	}
	significant := m.P < o.Alpha
	cannot := m.MinP >= o.Alpha
	switch {
	case cannot && !o.ThresholdOnly && paired:
		ch.Status = CheckNotEnoughRepeats
		ch.Why = fmt.Sprintf("%s, but %d pairs cannot reach p < %v (smallest possible p %s): run at least %d pairs, or pass --threshold-only",
			change, m.Pairs, o.Alpha, formatP(m.MinP), PairsNeeded(o.Alpha))
	case cannot && !o.ThresholdOnly:
		ch.Status = CheckNotEnoughRepeats
		ch.Why = fmt.Sprintf("%s, but %d/%d repeats cannot reach p < %v (smallest possible p %s): run at least %d repeats a side (sharebench run --repeat %d), or pass --threshold-only",
			change, len(m.Baseline), len(m.Candidate), o.Alpha, formatP(m.MinP), RepeatsNeeded(o.Alpha), RepeatsNeeded(o.Alpha))
	case cannot && worse:
		ch.Status = CheckRegression
		ch.Why = fmt.Sprintf("%s, beyond the %s; gated on the threshold alone (--threshold-only): %d/%d repeats cannot reach p < %v",
			change, threshold, len(m.Baseline), len(m.Candidate), o.Alpha)
	case !worse && better && significant:
		ch.Status = CheckImproved
		ch.Why = fmt.Sprintf("%s, p = %s", change, formatP(m.P))
	case !worse:
		ch.Status = CheckOK
		ch.Why = fmt.Sprintf("%s, within the %s", change, threshold)
	case significant:
		ch.Status = CheckRegression
		ch.Why = fmt.Sprintf("%s, beyond the %s, p = %s < %v", change, threshold, formatP(m.P), o.Alpha)
	default:
		ch.Status = CheckWithinNoise
		ch.Why = fmt.Sprintf("%s, beyond the %s, but not significant (p = %s ≥ %v)", change, threshold, formatP(m.P), o.Alpha)
	}
	return ch
}

// RepeatsNeeded is the smallest number of repeats a side whose two-sided
// Mann–Whitney test can reach p < alpha (4 for alpha 0.05).
func RepeatsNeeded(alpha float64) int {
	n := 1
	for stats.MinPValue(n, n) >= alpha && n < 1000 {
		n++
	}
	return n
}

// describeChange says "throughput fell 20.0%" or "e2e p99 rose 3.1%".
func describeChange(m Metric, ratio float64) string {
	d := (ratio - 1) * 100
	switch {
	case d > 0:
		return fmt.Sprintf("%s rose %.1f%%", m.Label(), d)
	case d < 0:
		return fmt.Sprintf("%s fell %.1f%%", m.Label(), -d)
	}
	return m.Label() + " unchanged"
}

func describeLimit(m Metric, o GateOptions) string {
	switch m {
	case MetricThroughput:
		return fmt.Sprintf("%.1f%% drop", o.MaxThroughputDrop*100)
	case MetricCPUPerRecord:
		return fmt.Sprintf("%.1f%% drop of records per CPU-second", o.MaxThroughputDrop*100)
	}
	return fmt.Sprintf("%.1f%% rise", o.MaxP99Rise*100)
}

// Regressions returns the checks that fail the gate.
func (g GateResult) Regressions() []Check {
	var out []Check
	for _, c := range g.Checks {
		if c.Status == CheckRegression {
			out = append(out, c)
		}
	}
	return out
}

// tooFew reports whether a gated metric lacked the repeats for
// significance.
func (g GateResult) tooFew() bool {
	for _, c := range g.Checks {
		if c.Status == CheckNotEnoughRepeats {
			return true
		}
	}
	return false
}

// ExitCode is the process exit code for the verdict: ExitAnomaly when
// the candidate has a forbidden anomaly (it outranks a regression),
// ExitRegression for a regression, ExitUsage when the repeats cannot
// reach significance, ExitUsage when there was nothing to compare, else
// ExitOK.
func (g GateResult) ExitCode() int {
	switch {
	case len(g.Forbidden) > 0:
		return ExitAnomaly
	case len(g.Regressions()) > 0:
		return ExitRegression
	case g.tooFew():
		return ExitUsage
	}
	for _, c := range g.Checks {
		if c.Status != CheckNoData {
			return ExitOK
		}
	}
	return ExitUsage
}

// WriteText writes the verdict and every check with its explanation.
func (g GateResult) WriteText(w io.Writer) error {
	var b strings.Builder
	code := g.ExitCode()
	verdict := map[int]string{
		ExitOK:         "PASS",
		ExitUsage:      "FAIL (exit 2): nothing to compare — no mode was measured on both sides",
		ExitAnomaly:    "FAIL (exit 3): forbidden exactly-once anomaly in the candidate",
		ExitRegression: "FAIL (exit 4): regression",
	}[code]
	if code == ExitUsage && g.tooFew() && g.Paired {
		verdict = fmt.Sprintf("FAIL (exit 2): too few pairs to reach p < %v — at least %d pairs are needed, or pass --threshold-only to gate on the thresholds alone",
			g.Options.Alpha, PairsNeeded(g.Options.Alpha))
	} else if code == ExitUsage && g.tooFew() {
		n := RepeatsNeeded(g.Options.Alpha)
		verdict = fmt.Sprintf("FAIL (exit 2): too few repeats to reach p < %v — at least %d repeats a side are needed (sharebench run --repeat %d), or pass --threshold-only to gate on the thresholds alone",
			g.Options.Alpha, n, n)
	}
	fmt.Fprintf(&b, "gate: %s\n", verdict)
	sig := "required (p < alpha)"
	if g.Options.ThresholdOnly {
		sig = "required when the repeats allow it, else thresholds alone (--threshold-only)"
	}
	test := "Mann–Whitney U over the repeats"
	if g.Paired {
		test = "paired: Wilcoxon signed-rank over the pairs' log ratios"
	}
	fmt.Fprintf(&b, "limits: throughput drop %.1f%% (records/s and records per CPU-second), e2e/commit p99 rise %.1f%%; significance %s, alpha %v (%s)\n",
		g.Options.MaxThroughputDrop*100, g.Options.MaxP99Rise*100, sig, g.Options.Alpha, test)
	if len(g.Forbidden) == 0 {
		b.WriteString("exactly-once: no forbidden anomaly in the candidate\n")
	}
	for _, f := range g.Forbidden {
		fmt.Fprintf(&b, "exactly-once: FORBIDDEN %s\n", f)
	}
	b.WriteString("\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "mode\tmetric\tratio\tinterval\tp\tstatus\twhy")
	for _, c := range g.Checks {
		metric := c.Metric.Label()
		if c.Metric == "" {
			metric = "(mode)"
		}
		ratio, ci := formatRatioCI(MetricComparison{Ratio: c.Ratio, Lo: c.Lo, Hi: c.Hi})
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", c.Mode, metric, ratio, ci, formatP(c.P), c.Status, c.Why)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, n := range g.Notes {
		fmt.Fprintf(&b, "note: %s\n", n)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
