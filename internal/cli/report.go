// This file holds `sharebench report`, `sharebench compare` and
// `sharebench gate`, thin over package reports.

package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/sharebench/sharebench/reports"
)

// renderReport writes runDir's report (plots, report.html, summary.md)
// into outDir; run calls it after a run unless --no-report.
func renderReport(runDir, outDir string) error {
	r, err := reports.Load(runDir)
	if err != nil {
		return err
	}
	_, err = reports.Generate(outDir, r)
	return err
}

func loadRuns(dirs []string, flag string) ([]*reports.Run, error) {
	if len(dirs) == 0 {
		return nil, usageErr("%s is required: a run directory written by 'sharebench run'", flag)
	}
	var out []*reports.Run
	for _, d := range dirs {
		for _, part := range strings.Split(d, ",") {
			if part == "" {
				continue
			}
			r, err := reports.Load(part)
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) || errors.Is(err, reports.ErrNoResult) {
					return nil, usageErr("%v", err)
				}
				return nil, usageErr("%s: %v", part, err)
			}
			out = append(out, r)
		}
	}
	return out, nil
}

const reportExamples = `  sharebench report --in results/20261129T070000Z --out report/
  sharebench report --in results/base --in results/cand --out ab/   # overlays, with ratios to the first run`

func reportCmd(env *Env, args []string) error {
	fset := newFlags(env, "report", "--in RUN_DIR [--in RUN_DIR ...] --out DIR", reportExamples)
	in := fset.StringArray("in", nil, "run directory (repeat to overlay runs; the first is the reference)")
	out := fset.String("out", "", "directory for report.html, summary.md and plots/ (default: RUN_DIR/report for one run)")
	if err := parseFlags(fset, args); err != nil {
		return err
	}
	runs, err := loadRuns(*in, "--in")
	if err != nil {
		return err
	}
	dir := *out
	if dir == "" {
		if len(runs) > 1 {
			return usageErr("--out is required with several --in runs")
		}
		dir = runs[0].Dir + "/report"
	}
	files, err := reports.Generate(dir, runs...)
	if err != nil {
		return err
	}
	for _, w := range files.Warnings {
		fmt.Fprintf(env.Stderr, "sharebench report: warning: %s\n", w)
	}
	fmt.Fprintf(env.Stdout, "%s\n%s\n", files.HTML, files.Markdown)
	return nil
}

const compareExamples = `  sharebench run --repeat 5 --out results/base     # on the baseline build
  sharebench run --repeat 5 --out results/cand     # on the candidate build
  sharebench compare --baseline results/base --candidate results/cand
  sharebench compare --baseline results/base --candidate results/cand --format bench > ab.txt && benchstat -col side ab.txt`

func compareCmd(env *Env, args []string) error {
	fset := newFlags(env, "compare", "--baseline DIR --candidate DIR [--format text|bench]", compareExamples)
	base := fset.StringArray("baseline", nil, "baseline run directory (repeatable)")
	cand := fset.StringArray("candidate", nil, "candidate run directory (repeatable)")
	format := fset.String("format", "text", "text (a table) or bench (Go benchmark lines for benchstat)")
	allow := fset.Bool("allow-mismatch", false, "compare runs whose workload, rate, target or mode set differ (refused by default, exit 2)")
	paired := fset.Bool("paired", false, pairedUsage)
	if err := parseFlags(fset, args); err != nil {
		return err
	}
	if *format != "text" && *format != "bench" {
		return usageErr("--format %q: valid formats are text and bench", *format)
	}
	b, c, err := loadSides(env, *base, *cand, *allow)
	if err != nil {
		return err
	}
	cmp, err := reports.CompareWith(b, c, reports.CompareOptions{Paired: *paired})
	if err != nil {
		return usageErr("--paired: %v", err)
	}
	switch *format {
	case "text":
		return cmp.WriteText(env.Stdout)
	case "bench":
		return cmp.WriteBench(env.Stdout)
	}
	return usageErr("--format %q: valid formats are text and bench", *format)
}

// pairedUsage is --paired's help on compare and gate.
const pairedUsage = "the i-th --baseline and i-th --candidate ran as a pair under the same conditions (at the same time, as scripts/ab-gate.sh's concurrent pairs): test each pair's ratio with the Wilcoxon signed-rank test instead of Mann–Whitney over pooled repeats, so load that varies between pairs cancels; needs as many of each and at least 6 pairs for p < 0.05"

const gateExamples = `  sharebench gate --baseline results/base --candidate results/cand
  sharebench gate --baseline results/base --candidate results/cand --max-throughput-drop 5% --max-p99-rise 10% --alpha 0.05
  sharebench gate --paired --baseline results/b1 --candidate results/c1 --baseline results/b2 --candidate results/c2   # one of each per pair, 6 pairs or more
  scripts/ab-gate.sh origin/main HEAD               # builds both, runs A/B/A/B, gates`

func gateCmd(env *Env, args []string) error {
	fset := newFlags(env, "gate", "--baseline DIR --candidate DIR [thresholds]", gateExamples)
	base := fset.StringArray("baseline", nil, "baseline run directory (repeatable)")
	cand := fset.StringArray("candidate", nil, "candidate run directory (repeatable)")
	drop := fset.String("max-throughput-drop", "5%", "largest tolerated throughput drop, in records/s and in records per CPU-second (CPU per record)")
	rise := fset.String("max-p99-rise", "10%", "largest tolerated rise of end-to-end p99 and commit p99")
	alpha := fset.Float64("alpha", 0.05, "significance level of the Mann–Whitney U test (with --paired, of the Wilcoxon signed-rank test)")
	thresholdOnly := fset.Bool("threshold-only", false, "gate on thresholds alone when the repeats are too few for significance (without it such a gate fails, exit 2)")
	allow := fset.Bool("allow-mismatch", false, "gate runs whose workload, rate, target or mode set differ (refused by default, exit 2)")
	paired := fset.Bool("paired", false, pairedUsage)
	if err := parseFlags(fset, args); err != nil {
		return err
	}
	d, err := parsePercent(*drop)
	if err != nil {
		return usageErr("--max-throughput-drop: %v", err)
	}
	r, err := parsePercent(*rise)
	if err != nil {
		return usageErr("--max-p99-rise: %v", err)
	}
	if *alpha <= 0 || *alpha >= 1 {
		return usageErr("--alpha %v: must be in (0, 1)", *alpha)
	}
	b, c, err := loadSides(env, *base, *cand, *allow)
	if err != nil {
		return err
	}
	cmp, err := reports.CompareWith(b, c, reports.CompareOptions{Paired: *paired})
	if err != nil {
		return usageErr("--paired: %v", err)
	}
	g := reports.Gate(cmp, reports.GateOptions{MaxThroughputDrop: d, MaxP99Rise: r, Alpha: *alpha, ThresholdOnly: *thresholdOnly})
	if err := g.WriteText(env.Stdout); err != nil {
		return err
	}
	if code := g.ExitCode(); code != 0 {
		return withCode(code, fmt.Errorf("the gate failed (exit %d); see the table above", code))
	}
	return nil
}

// loadSides loads both sides and refuses (exit 2) runs that do not
// compare like with like, unless allow; allowed, the mismatch is a
// warning.
func loadSides(env *Env, base, cand []string, allow bool) (b, c []*reports.Run, err error) {
	if b, err = loadRuns(base, "--baseline"); err != nil {
		return nil, nil, err
	}
	if c, err = loadRuns(cand, "--candidate"); err != nil {
		return nil, nil, err
	}
	if err := reports.CheckComparable(b, c); err != nil {
		if !allow {
			return nil, nil, usageErr("%v; pass --allow-mismatch to compare them anyway", err)
		}
		fmt.Fprintf(env.Stderr, "warning: %v (--allow-mismatch)\n", err)
	}
	return b, c, nil
}

// parsePercent reads "5%" or "0.05".
func parsePercent(s string) (float64, error) {
	var v float64
	if strings.HasSuffix(s, "%") {
		if _, err := fmt.Sscanf(strings.TrimSuffix(s, "%"), "%g", &v); err != nil {
			return 0, fmt.Errorf("%q is not a percentage like 5%%", s)
		}
		v /= 100
	} else if _, err := fmt.Sscanf(s, "%g", &v); err != nil {
		return 0, fmt.Errorf("%q is not a fraction like 0.05 or a percentage like 5%%", s)
	}
	if v < 0 || v >= 1 {
		return 0, fmt.Errorf("%q must be between 0%% and 100%%", s)
	}
	return v, nil
}
