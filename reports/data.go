// This file prepares runs for reporting: it groups a result's modes and
// repeats, decodes their histograms once and extracts per-repeat metrics.

package reports

import (
	"fmt"
	"math"
	"slices"
	"strings"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/sharebench/sharebench/loadgen/result"
)

// runData is one run prepared for rendering and comparison.
type runData struct {
	run      *Run
	label    string
	modes    []*modeData // in order of first appearance in the result
	warnings []string
}

// modeData is every repeat of one mode in one run.
type modeData struct {
	mode        string
	repeats     []*repeatData // measured repeats: neither unsupported nor failed
	unsupported string
	errors      []string // "repeat N: …" for failed repeats
	interrupted []int    // repeats an interrupt stopped before they finished
	notRun      []int    // repeats an interrupted run never started
}

// unfinished reports whether some repeat of the mode has no verdict
// because it failed, was interrupted or never ran.
func (md *modeData) unfinished() bool {
	return md != nil && len(md.errors)+len(md.interrupted)+len(md.notRun) > 0
}

// unfinishedWhy says which repeats have no verdict and why, as in
// "interrupted before it finished" (every repeat) or "1 of 2 repeats never
// ran (the run was interrupted first)".
func (md *modeData) unfinishedWhy() string {
	var why []string
	if n := len(md.interrupted); n > 0 {
		why = append(why, repeatsWord(n, len(md.repeats)+len(md.errors)+n+len(md.notRun))+"interrupted before it finished")
	}
	if n := len(md.notRun); n > 0 {
		why = append(why, repeatsWord(n, len(md.repeats)+len(md.errors)+len(md.interrupted)+n)+"never ran (the run was interrupted first)")
	}
	if n := len(md.errors); n > 0 {
		why = append(why, repeatsWord(n, len(md.repeats)+n+len(md.interrupted)+len(md.notRun))+"failed before its verdict")
	}
	return strings.Join(why, "; ")
}

// noMeasurement says why some repeats of the mode were not measured:
// the errors of those that failed, and those an interrupt stopped or kept
// from starting.
func (md *modeData) noMeasurement() string {
	var why []string
	if len(md.errors) > 0 {
		why = append(why, fmt.Sprintf("%d repeats failed (%s)", len(md.errors), strings.Join(md.errors, "; ")))
	}
	if n := len(md.interrupted); n > 0 {
		why = append(why, fmt.Sprintf("%d repeats interrupted before they finished", n))
	}
	if n := len(md.notRun); n > 0 {
		why = append(why, fmt.Sprintf("%d repeats never ran (the run was interrupted first)", n))
	}
	return strings.Join(why, "; ")
}

// repeatsWord is "" when n is every repeat of total, else "n of total
// repeats ".
func repeatsWord(n, total int) string {
	if n == total {
		return ""
	}
	return fmt.Sprintf("%d of %d repeats ", n, total)
}

// repeatData is one measured repeat with its decoded histograms.
type repeatData struct {
	m      *result.ModeResult
	hists  map[string]*hdrhistogram.Histogram // decoded; absent when missing or broken
	values map[Metric]float64                 // NaN when not measured
}

// decodedHists are the histograms reports decode: the ones they plot and
// compare.
var decodedHists = []string{result.HistEndToEnd, result.HistCommit, result.HistProduce, result.HistSendLag}

// prepare groups r's modes and decodes what the report needs. Damaged data
// becomes a warning, never an error.
func prepare(run *Run, label string) *runData {
	rd := &runData{run: run, label: label}
	if run == nil || run.Result == nil {
		return rd
	}
	byMode := map[string]*modeData{}
	for i := range run.Result.Modes {
		m := &run.Result.Modes[i]
		name := m.Mode.String()
		if name == "" {
			name = "(unnamed)"
		}
		md := byMode[name]
		if md == nil {
			md = &modeData{mode: name}
			byMode[name] = md
			rd.modes = append(rd.modes, md)
		}
		switch {
		case m.Unsupported != "":
			md.unsupported = m.Unsupported
			continue
		case m.Interrupted:
			md.interrupted = append(md.interrupted, m.Repeat)
			continue
		case m.Error != "":
			md.errors = append(md.errors, fmt.Sprintf("repeat %d: %s", m.Repeat, m.Error))
			continue
		}
		rp := &repeatData{m: m, hists: map[string]*hdrhistogram.Histogram{}}
		for _, name := range decodedHists {
			h, ok := m.Histograms[name]
			if !ok || h.EncodedV2 == "" {
				continue
			}
			dh, err := h.Decode()
			if err != nil {
				rd.warnings = append(rd.warnings, fmt.Sprintf("%s: mode %s repeat %d: histogram %s cannot be decoded (%v); using its summary", label, md.mode, m.Repeat, name, err))
				continue
			}
			rp.hists[name] = dh
		}
		for name, h := range m.Histograms {
			if h.Overflow > 0 {
				rd.warnings = append(rd.warnings, fmt.Sprintf("%s: mode %s repeat %d: %d %s samples were above the histogram's range (counted, not in the percentiles)", label, md.mode, m.Repeat, h.Overflow, name))
			}
		}
		rp.values = map[Metric]float64{}
		for _, metric := range Metrics() {
			rp.values[metric] = rp.metric(metric)
		}
		md.repeats = append(md.repeats, rp)
	}
	for _, ref := range run.Result.NotRun {
		md := byMode[ref.Mode.String()]
		if md == nil {
			md = &modeData{mode: ref.Mode.String()}
			byMode[ref.Mode.String()] = md
			rd.modes = append(rd.modes, md)
		}
		md.notRun = append(md.notRun, ref.Repeat)
	}
	slices.Sort(rd.warnings)
	return rd
}

// metric extracts one metric of a repeat; NaN when it was not measured.
func (rp *repeatData) metric(m Metric) float64 {
	if m == MetricThroughput {
		if v := rp.m.Throughput; v >= 0 && !math.IsInf(v, 0) {
			return v
		}
		return math.NaN()
	}
	if m == MetricCPUPerRecord {
		if rp.m.CPUNs <= 0 || rp.m.OutputsVisible <= 0 {
			return math.NaN()
		}
		return float64(rp.m.CPUNs) / float64(rp.m.OutputsVisible)
	}
	name, q, ok := m.histQuantile()
	if !ok {
		return math.NaN()
	}
	return rp.quantileNs(name, q)
}

// quantileNs is the q-quantile of histogram name in ns (q 1: its maximum,
// HdrHistogram's highest equivalent value of the largest sample): from the
// decoded histogram when there is one, else from the summary; NaN when
// neither holds a sample.
func (rp *repeatData) quantileNs(name string, q float64) float64 {
	if h := rp.hists[name]; h != nil && h.TotalCount() > 0 {
		return float64(result.ValueAtPercentile(h, q*100))
	}
	s, ok := rp.m.Histograms[name]
	if !ok || s.Count <= 0 {
		return math.NaN()
	}
	var v int64
	switch q {
	case 0.5:
		v = s.P50
	case 0.9:
		v = s.P90
	case 0.99:
		v = s.P99
	case 0.999:
		v = s.P999
	case 0.9999:
		v = s.P9999
	case 1:
		v = s.Max
	default:
		return math.NaN()
	}
	return float64(v)
}

// values returns metric m of every measured repeat (NaN ones included).
func (md *modeData) values(m Metric) []float64 {
	out := make([]float64, 0, len(md.repeats))
	for _, rp := range md.repeats {
		out = append(out, rp.values[m])
	}
	return out
}

// counts returns a per-repeat count picked by f.
func (md *modeData) counts(f func(*result.ModeResult) int64) []float64 {
	out := make([]float64, 0, len(md.repeats))
	for _, rp := range md.repeats {
		out = append(out, float64(f(rp.m)))
	}
	return out
}

// merged merges histogram name over the mode's repeats; nil when no
// repeat has it decoded.
func (md *modeData) merged(name string) *hdrhistogram.Histogram {
	var out *hdrhistogram.Histogram
	for _, rp := range md.repeats {
		h := rp.hists[name]
		if h == nil || h.TotalCount() == 0 {
			continue
		}
		if out == nil {
			out = h.Clone()
			continue
		}
		out.Merge(h)
	}
	return out
}

// find returns the mode named name, or nil.
func (rd *runData) find(name string) *modeData {
	for _, md := range rd.modes {
		if md.mode == name {
			return md
		}
	}
	return nil
}

// modeNames returns the union of the runs' modes, in order of first
// appearance (first run first).
func modeNames(runs []*runData) []string {
	var out []string
	for _, rd := range runs {
		for _, md := range rd.modes {
			if !slices.Contains(out, md.mode) {
				out = append(out, md.mode)
			}
		}
	}
	return out
}
