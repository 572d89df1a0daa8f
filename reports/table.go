// This file builds the per-mode summary table shared by report.html and
// summary.md, and the number formatting both use.

package reports

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/sharebench/sharebench/loadgen/result"
	"github.com/sharebench/sharebench/reports/stats"
	"github.com/sharebench/sharebench/vocab"
)

// column is one numeric column of the summary table.
type column struct {
	head   string
	values func(md *modeData) []float64
	format func(float64) string
}

var summaryColumns = []column{
	{"throughput (outputs/s)", func(md *modeData) []float64 { return md.values(MetricThroughput) }, formatNumber},
	{"e2e p50 (ms)", msValues(MetricE2EP50), formatNumber},
	{"e2e p99 (ms)", msValues(MetricE2EP99), formatNumber},
	{"e2e p99.9 (ms)", msValues(MetricE2EP999), formatNumber},
	{"e2e p99.99 (ms)", histMs(result.HistEndToEnd, 0.9999), formatNumber},
	{"e2e max (ms)", histMs(result.HistEndToEnd, 1), formatNumber},
	{"commit p99 (ms)", msValues(MetricCommitP99), formatNumber},
	{"CPU per record (µs)", func(md *modeData) []float64 {
		vs := md.values(MetricCPUPerRecord)
		for i := range vs {
			vs[i] /= 1e3
		}
		return vs
	}, formatNumber},
	{"redeliveries", countValues(func(m *result.ModeResult) int64 { return m.Redeliveries }), formatCount},
	{"aborts", countValues(func(m *result.ModeResult) int64 { return m.Aborts }), formatCount},
	{"fenced aborts", countValues(func(m *result.ModeResult) int64 { return m.FencedAborts }), formatCount},
	{"aborts per rebalance", perRepeat((*result.ModeResult).AbortsPerRebalance), formatNumber},
	{"lock expiries", countValues(func(m *result.ModeResult) int64 { return m.LockExpiries }), formatCount},
}

func msValues(m Metric) func(*modeData) []float64 {
	return func(md *modeData) []float64 {
		vs := md.values(m)
		for i := range vs {
			vs[i] /= 1e6
		}
		return vs
	}
}

// histMs is the q-quantile (1: the maximum) of histogram name of each
// repeat, in ms; the tail columns that the gate does not compare.
func histMs(name string, q float64) func(*modeData) []float64 {
	return func(md *modeData) []float64 {
		out := make([]float64, 0, len(md.repeats))
		for _, rp := range md.repeats {
			out = append(out, rp.quantileNs(name, q)/1e6)
		}
		return out
	}
}

// perRepeat is f of each repeat.
func perRepeat(f func(*result.ModeResult) float64) func(*modeData) []float64 {
	return func(md *modeData) []float64 {
		out := make([]float64, 0, len(md.repeats))
		for _, rp := range md.repeats {
			out = append(out, f(rp.m))
		}
		return out
	}
}

func countValues(f func(*result.ModeResult) int64) func(*modeData) []float64 {
	return func(md *modeData) []float64 { return md.counts(f) }
}

// summaryCell is one table cell: the median, its ratio to the first run's
// and every repeat's value (for a tooltip).
type summaryCell struct {
	Text, Ratio, Title string
}

// summaryRow is one (mode, run) row.
type summaryRow struct {
	Mode, Run    string
	First        bool // first row of its mode
	Repeats      int
	Status       string // set instead of cells when nothing was measured
	Cells        []summaryCell
	Verdict      string
	VerdictClass string // pass, fail or none
}

// summaryTable is the table with its header.
type summaryTable struct {
	Heads    []string
	MultiRun bool
	Rows     []summaryRow
}

// buildTable makes one row per mode and run, modes in order of first
// appearance, runs in the order given; later runs carry ratios to the first.
func buildTable(runs []*runData) summaryTable {
	t := summaryTable{MultiRun: len(runs) > 1}
	for _, c := range summaryColumns {
		t.Heads = append(t.Heads, c.head)
	}
	for _, mode := range modeNames(runs) {
		var baseMedians []float64
		for ri, rd := range runs {
			md := rd.find(mode)
			row := summaryRow{Mode: mode, Run: rd.label, First: ri == 0}
			switch {
			case md == nil:
				row.Status = "not run"
			case len(md.repeats) == 0 && md.unsupported != "" && !md.unfinished():
				row.Status = "unsupported: " + md.unsupported
			case len(md.repeats) == 0 && len(md.interrupted)+len(md.notRun) > 0:
				row.Status = md.unfinishedWhy()
			case len(md.repeats) == 0:
				row.Status = "failed: " + strings.Join(md.errors, "; ")
			}
			if md != nil {
				row.Repeats = len(md.repeats)
			}
			medians := make([]float64, len(summaryColumns))
			for ci, c := range summaryColumns {
				medians[ci] = math.NaN()
				if row.Status != "" {
					continue
				}
				vals := c.values(md)
				med := stats.Median(vals)
				medians[ci] = med
				cell := summaryCell{Text: c.format(med)}
				if len(vals) > 1 {
					parts := make([]string, len(vals))
					for i, v := range vals {
						parts[i] = c.format(v)
					}
					cell.Title = "median of " + strconv.Itoa(len(vals)) + " repeats: " + strings.Join(parts, ", ")
				}
				if ri > 0 && baseMedians != nil {
					cell.Ratio = formatRatio(med, baseMedians[ci])
				}
				row.Cells = append(row.Cells, cell)
			}
			if ri == 0 {
				baseMedians = medians
			}
			switch {
			case row.Status == "":
				row.Verdict, row.VerdictClass = verdictText(verdictOf(md))
				if md.unfinished() {
					row.Verdict, row.VerdictClass = unfinishedVerdict(md)
				}
			case md.unfinished():
				// A mode with no verdict at all is not judged: never PASS.
				row.Verdict, row.VerdictClass = "INCONCLUSIVE: no verdict", "fail"
			default:
				row.VerdictClass = "none"
			}
			t.Rows = append(t.Rows, row)
		}
	}
	t.dropEmptyColumns()
	return t
}

// dropEmptyColumns removes the columns no measured row has a value in
// (aborts per rebalance without membership churn): a column of dashes
// only widens the table. With no measured row every column stays.
func (t *summaryTable) dropEmptyColumns() {
	keep := make([]bool, len(t.Heads))
	measured := false
	for _, r := range t.Rows {
		if r.Status != "" {
			continue
		}
		measured = true
		for ci, c := range r.Cells {
			if c.Text != "—" {
				keep[ci] = true
			}
		}
	}
	if !measured {
		return
	}
	var heads []string
	for ci, h := range t.Heads {
		if keep[ci] {
			heads = append(heads, h)
		}
	}
	t.Heads = heads
	for ri := range t.Rows {
		r := &t.Rows[ri]
		if r.Status != "" {
			continue
		}
		var cells []summaryCell
		for ci, c := range r.Cells {
			if keep[ci] {
				cells = append(cells, c)
			}
		}
		r.Cells = cells
	}
}

// unfinishedVerdict is the verifier column of a mode some of whose
// repeats have no verdict (failed, interrupted or never ran): a FAIL stays
// FAIL, anything else is INCONCLUSIVE, since the repeats without a
// verdict proved nothing.
func unfinishedVerdict(md *modeData) (string, string) {
	v := verdictOf(md)
	text, class := verdictText(v)
	why := md.unfinishedWhy()
	switch {
	case v.failed > 0:
		return text + " (" + why + ")", class
	case v.inconclusive > 0:
		return text + "; " + why, "fail"
	}
	return "INCONCLUSIVE: " + why, "fail"
}

// verdictText is the verifier column: PASS, or FAIL with the forbidden
// kinds, or "not verified"; when some faults did not land, how many did
// ("PASS · 3 of 5 faults landed").
func verdictText(v verdict) (text, class string) {
	text, class = judgementText(v)
	if note := result.FaultsNote(v.faultsLanded, v.faultsFired); v.verified > 0 && note != "" {
		text += " · " + note
	}
	return text, class
}

// judgementText is the verifier's part of the verifier column.
func judgementText(v verdict) (text, class string) {
	switch {
	case v.verified == 0:
		return "not verified", "none"
	case v.failed > 0:
		text = "FAIL"
		if len(v.forbidden) > 0 {
			text += ": " + strings.Join(vocab.Names(v.forbidden), ", ")
		}
		if v.repeats > 1 && v.failed < v.verified {
			text += fmt.Sprintf(" (%d of %d repeats)", v.failed, v.verified)
		}
		return text, "fail"
	}
	if v.inconclusive > 0 {
		text = "INCONCLUSIVE"
		if v.unjudged > 0 {
			text += fmt.Sprintf(": %d unjudged", v.unjudged)
		}
		if v.repeats > 1 {
			text += fmt.Sprintf(" (%d of %d repeats)", v.inconclusive, v.verified)
		}
		return text, "fail"
	}
	text = "PASS"
	var allowed []string
	for _, k := range anomalyKinds {
		if n := v.counts[k]; n > 0 {
			allowed = append(allowed, fmt.Sprintf("%s %d", k, n))
		}
	}
	if len(allowed) > 0 {
		text += " (allowed: " + strings.Join(allowed, ", ") + ")"
	}
	return text, "pass"
}

// formatRatio is "×0.95" for cand/base, or "" when undefined.
func formatRatio(cand, base float64) string {
	if math.IsNaN(cand) || math.IsNaN(base) || base == 0 {
		return ""
	}
	return fmt.Sprintf("×%.2f", cand/base)
}

// formatNumber prints three significant digits, thousands separated above
// 1000; NaN is "—".
func formatNumber(v float64) string {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return "—"
	case math.Abs(v) >= 1000:
		return thousands(int64(math.Round(v)))
	case math.Abs(v) >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case math.Abs(v) >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case math.Abs(v) >= 1:
		return strconv.FormatFloat(v, 'f', 2, 64)
	case v == 0:
		return "0"
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}

// formatCount prints a count (a median may end in .5).
func formatCount(v float64) string {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return "—"
	case v == math.Trunc(v):
		return thousands(int64(v))
	}
	return thousands(int64(v)) + strconv.FormatFloat(math.Abs(v-math.Trunc(v)), 'f', 1, 64)[1:]
}

// thousands formats n with comma separators.
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
