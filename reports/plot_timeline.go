// This file draws a mode's timeline: output throughput and end-to-end p99
// per second (median over repeats), with fault events, the end of warm-up
// and the measurement window's opening and closing marked.

package reports

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/sharebench/sharebench/loadgen/result"
	"github.com/sharebench/sharebench/reports/stats"
)

// secondAgg is one bucket of a mode's series, aggregated over repeats.
type secondAgg struct {
	k                 int     // bucket index, 0 at the window's start
	from, to          float64 // bounds, seconds since the mode started (median over repeats)
	output, input     float64 // median records/s
	p99ms             float64 // median of the repeats' non-zero p99, ms; NaN if none
	warmup, drain     bool
	faults            []string
	outputsN, inputsN int
}

// mid is the bucket's midpoint, where its values are plotted.
func (s secondAgg) mid() float64 { return (s.from + s.to) / 2 }

// bucketOf returns a series bucket's bounds (seconds since the mode
// started) and its index counted from the window's start: results with
// window bounds cut their buckets at the window, older ones in whole
// seconds from the start.
func bucketOf(m *result.ModeResult, i int) (k int, from, to float64) {
	s := m.Series[i]
	if s.EndNs <= s.StartNs {
		return s.T, float64(s.T), float64(s.T + 1)
	}
	first := 0
	for j, t := range m.Series {
		if t.StartNs == m.WindowStartNs {
			first = j
			break
		}
	}
	return i - first, float64(s.StartNs) / 1e9, float64(s.EndNs) / 1e9
}

// aggregateSeries takes the per-bucket median over md's repeats; buckets
// are matched by their place relative to the window's start.
func aggregateSeries(md *modeData) []secondAgg {
	type acc struct {
		out, in, p99, from, to []float64
		warmup, drain          bool
		faults                 []string
	}
	byK := map[int]*acc{}
	for _, rp := range md.repeats {
		for i, s := range rp.m.Series {
			if s.T < 0 {
				continue
			}
			k, from, to := bucketOf(rp.m, i)
			a := byK[k]
			if a == nil {
				a = &acc{}
				byK[k] = a
			}
			a.from, a.to = append(a.from, from), append(a.to, to)
			a.out = append(a.out, float64(s.OutputRate))
			a.in = append(a.in, float64(s.InputRate))
			if s.P99 > 0 {
				a.p99 = append(a.p99, float64(s.P99)/1e6)
			}
			a.warmup = a.warmup || s.Warmup
			a.drain = a.drain || s.Drain
			for _, f := range s.Faults {
				if !slices.Contains(a.faults, f) {
					a.faults = append(a.faults, f)
				}
			}
		}
	}
	ks := make([]int, 0, len(byK))
	for k := range byK {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	out := make([]secondAgg, 0, len(ks))
	for _, k := range ks {
		a := byK[k]
		out = append(out, secondAgg{
			k: k, from: stats.Median(a.from), to: stats.Median(a.to),
			output: stats.Median(a.out), input: stats.Median(a.in), p99ms: stats.Median(a.p99),
			warmup: a.warmup, drain: a.drain, faults: a.faults, outputsN: len(a.out), inputsN: len(a.in),
		})
	}
	return out
}

// windowBounds returns the median window start and end over md's repeats
// in seconds since the mode started; ok is false for results without them.
func windowBounds(md *modeData) (start, end float64, ok bool) {
	var ss, es []float64
	for _, rp := range md.repeats {
		if rp.m.WindowEndNs > rp.m.WindowStartNs {
			ss = append(ss, float64(rp.m.WindowStartNs)/1e9)
			es = append(es, float64(rp.m.WindowEndNs)/1e9)
		}
	}
	if len(ss) == 0 {
		return 0, 0, false
	}
	return stats.Median(ss), stats.Median(es), true
}

// faultMark is one marked instant on a timeline.
type faultMark struct {
	at    float64 // seconds since the mode's start
	label string
}

// modeFaults lists md's fault events (from every repeat, deduplicated to
// 10 ms); when a run recorded none as events, the per-second fault names of
// the series stand in, placed at the start of their second.
func modeFaults(md *modeData, series []secondAgg) []faultMark {
	var out []faultMark
	seen := map[string]bool{}
	for _, rp := range md.repeats {
		for _, f := range rp.m.Faults {
			at := float64(f.AtNs) / 1e9
			key := fmt.Sprintf("%.2f/%s", at, f.Kind)
			if seen[key] {
				continue
			}
			seen[key] = true
			label := f.Kind
			if f.Broker != "" {
				label += " → broker " + f.Broker
			}
			out = append(out, faultMark{at: at, label: label})
			// A fault with a length of its own (a broker down, paused or
			// restarting) is marked where it ended too.
			if f.EndNs > f.AtNs+int64(100*time.Millisecond) && (f.Broker != "" || f.Kind == "network-partition") {
				out = append(out, faultMark{at: float64(f.EndNs) / 1e9, label: "end " + label})
			}
		}
	}
	if len(out) == 0 {
		for _, s := range series {
			if len(s.faults) > 0 {
				out = append(out, faultMark{at: s.from, label: strings.Join(s.faults, ", ")})
			}
		}
	}
	slices.SortFunc(out, func(a, b faultMark) int {
		switch {
		case a.at < b.at:
			return -1
		case a.at > b.at:
			return 1
		}
		return strings.Compare(a.label, b.label)
	})
	return out
}

// timelineFigure draws mode's throughput (top) and p99 (bottom) panels.
func timelineFigure(runs []*runData, pal palette, mode string) figure {
	title := mode + ": throughput and end-to-end p99 over time"
	fig := figure{
		name:  "timeline-" + fileSafe(mode),
		title: title,
		caption: "Outputs visible per second and the end-to-end p99 of the measurement window's outputs seen in that second " +
			"(median over repeats, plotted mid-bucket; buckets are whole seconds aligned with the window, cut at its start and end, " +
			"rates per second of the bucket's length). Red dashed lines: fault events (a broker fault at its start and where it ended, naming the broker it hit); grey: the measurement window opens (after the warm-up, " +
			"once every worker has received records) and closes (the producers stop; the drain follows).",
		w: 8 * vg.Inch, h: 6.4 * vg.Inch,
	}
	top := newPlot("throughput", "", "outputs/s")
	bottom := newPlot("end-to-end p99", "time since the mode started (s)", "p99 (ms)")
	top.Legend.Left = false
	bottom.Legend.Left = false
	col := pal.of(mode)
	xmin, xmax := 0.0, 1.0
	ymaxTop, ymaxBottom := 0.0, 0.0
	var faults []faultMark
	var warmupEnd, drainStart []float64
	for ri, rd := range runs {
		md := rd.find(mode)
		if md == nil || len(md.repeats) == 0 {
			continue
		}
		series := aggregateSeries(md)
		suffix := ""
		if len(runs) > 1 {
			suffix = " · " + rd.label
		}
		var out, in plotter.XYs
		var p99 []plotter.XYs // split at seconds without a p99
		var seg plotter.XYs
		sawWarmup, marked, drained := false, false, false
		ws, we, haveWindow := windowBounds(md)
		if haveWindow {
			warmupEnd = append(warmupEnd, ws)
			drainStart = append(drainStart, we)
			marked, drained = true, true
		}
		for _, s := range series {
			x := s.mid()
			xmax = math.Max(xmax, s.to)
			out = append(out, plotter.XY{X: x, Y: s.output})
			in = append(in, plotter.XY{X: x, Y: s.input})
			ymaxTop = math.Max(ymaxTop, math.Max(s.output, s.input))
			if math.IsNaN(s.p99ms) {
				if len(seg) > 0 {
					p99 = append(p99, seg)
					seg = nil
				}
			} else {
				seg = append(seg, plotter.XY{X: x, Y: s.p99ms})
				ymaxBottom = math.Max(ymaxBottom, s.p99ms)
			}
			if s.warmup {
				sawWarmup = true
			} else if sawWarmup && !marked {
				marked = true
				warmupEnd = append(warmupEnd, s.from)
			}
			if s.drain && !drained {
				drained = true
				drainStart = append(drainStart, s.from)
			}
		}
		if len(seg) > 0 {
			p99 = append(p99, seg)
		}
		if ri == 0 && len(in) > 0 {
			if l, err := plotter.NewLine(in); err == nil {
				l.LineStyle = draw.LineStyle{Color: mutedColor, Width: vg.Points(1), Dashes: []vg.Length{vg.Points(2), vg.Points(2)}}
				top.Add(l)
				top.Legend.Add(shortLabel("input rate"+suffix), l)
			}
		}
		if len(out) > 0 {
			if l, err := plotter.NewLine(out); err == nil {
				l.LineStyle = lineStyle(col, ri)
				top.Add(l)
				top.Legend.Add(shortLabel("outputs"+suffix), l)
			}
		}
		for i, seg := range p99 {
			l, err := plotter.NewLine(seg)
			if err != nil {
				continue
			}
			l.LineStyle = lineStyle(col, ri)
			bottom.Add(l)
			if len(seg) == 1 { // a lone second: show it as a dot
				if sc, err := plotter.NewScatter(seg); err == nil {
					sc.GlyphStyle = draw.GlyphStyle{Color: col, Radius: vg.Points(2.5), Shape: draw.CircleGlyph{}}
					bottom.Add(sc)
				}
			}
			if i == 0 {
				bottom.Legend.Add(shortLabel("p99"+suffix), l)
			}
		}
		faults = append(faults, modeFaults(md, series)...)
	}
	var fx []float64
	var fl []string
	for _, f := range faults {
		fx = append(fx, f.at)
		fl = append(fl, f.label)
		xmax = math.Max(xmax, f.at)
	}
	faultLines := marks{xs: fx, labels: fl, text: faultColor, style: draw.LineStyle{
		Color: faultColor, Width: vg.Points(1.5), Dashes: []vg.Length{vg.Points(4), vg.Points(2)}}}
	phase := marks{text: mutedColor, style: draw.LineStyle{Color: mutedColor, Width: vg.Points(1)}}
	for _, x := range uniq(warmupEnd) {
		phase.xs = append(phase.xs, x)
		phase.labels = append(phase.labels, "window opens")
	}
	for _, x := range uniq(drainStart) {
		phase.xs = append(phase.xs, x)
		phase.labels = append(phase.labels, "window closes, drain")
	}
	for _, p := range []*plot.Plot{top, bottom} {
		p.X.Min, p.X.Max = xmin, xmax
		p.Add(phase, faultLines)
	}
	if len(fx) > 0 {
		top.Legend.Add("fault", faultLines)
	}
	top.Y.Min, top.Y.Max = 0, math.Max(1, ymaxTop*1.15)
	bottom.Y.Min, bottom.Y.Max = 0, math.Max(1, ymaxBottom*1.15)
	if ymaxTop == 0 {
		top.Add(note{text: "no per-second series recorded", color: mutedColor})
	}
	if ymaxBottom == 0 {
		bottom.Add(note{text: "no p99 samples in the series", color: mutedColor})
	}
	for _, p := range []*plot.Plot{top, bottom} {
		p.X.Tick.Marker = secondTicks{}
	}
	// The legends go in a strip right of the panels, clear of the marks'
	// labels and the data.
	legends := []plot.Legend{top.Legend, bottom.Legend}
	for _, p := range []*plot.Plot{top, bottom} {
		p.Legend = plot.NewLegend()
	}
	const legendW = 1.9 * vg.Inch
	fig.draw = func(dc draw.Canvas) {
		dc = drawTitled(dc, title)
		tiles := draw.Tiles{Rows: 2, Cols: 1, PadY: vg.Points(10), PadLeft: vg.Points(6), PadRight: vg.Points(10), PadBottom: vg.Points(4)}
		cs := plot.Align([][]*plot.Plot{{top}, {bottom}}, tiles, draw.Crop(dc, 0, -legendW, 0, 0))
		for i, p := range []*plot.Plot{top, bottom} {
			p.Draw(cs[i][0])
			lc := cs[i][0]
			lc.Min.X, lc.Max.X = dc.Max.X-legendW+vg.Points(4), dc.Max.X-vg.Points(4)
			lc.Max.Y -= vg.Points(24) // level with the panel's data, below its title
			l := legends[i]
			l.Top, l.Left = true, true
			l.Draw(lc)
		}
	}
	return fig
}

// uniq returns the distinct values of xs, sorted.
func uniq(xs []float64) []float64 {
	out := slices.Clone(xs)
	slices.Sort(out)
	return slices.Compact(out)
}
