// This file draws grouped bar charts: throughput and end-to-end latency
// percentiles per mode (one bar per run, whiskers across repeats), and the
// verifier's findings per mode.

package reports

import (
	"fmt"
	"image/color"
	"math"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/sharebench/sharebench/reports/stats"
	"github.com/sharebench/sharebench/vocab"
)

// bar is one bar: its value, an optional whisker and label above it.
type bar struct {
	value      float64 // NaN: no bar
	lo, hi     float64 // whisker; NaN: none
	fill, edge color.Color
	label      string
	labelColor color.Color
}

// groupedBars draws groups of bars side by side in data coordinates, group
// g centred on g, so whiskers and labels line up with their bars. With
// horizontal set the groups run down the y axis and bars grow rightwards.
type groupedBars struct {
	groups     [][]bar // groups[g][s]
	width      float64 // total width of a group, in data units
	horizontal bool
}

func (gb *groupedBars) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	// pos maps (position, value) data coordinates onto the canvas.
	pos := func(at, v float64) vg.Point {
		if gb.horizontal {
			return vg.Point{X: trX(v), Y: trY(at)}
		}
		return vg.Point{X: trX(at), Y: trY(v)}
	}
	edge := draw.LineStyle{Width: vg.Points(0.8)}
	whisker := draw.LineStyle{Color: inkColor, Width: vg.Points(1.2)}
	label := textStyle(8, inkColor)
	if gb.horizontal {
		label.XAlign, label.YAlign = draw.XLeft, draw.YCenter
	} else {
		label.XAlign, label.YAlign = draw.XCenter, draw.YBottom
	}
	base := 0.0
	if gb.horizontal {
		base = math.Max(base, p.X.Min)
	} else {
		base = math.Max(base, p.Y.Min)
	}
	for g, bars := range gb.groups {
		n := float64(len(bars))
		w := gb.width / math.Max(n, 1)
		for s, b := range bars {
			lo := float64(g) - gb.width/2 + float64(s)*w
			hi := lo + w
			mid := (lo + hi) / 2
			top := base
			if !math.IsNaN(b.value) {
				top = b.value
				pts := []vg.Point{pos(lo, base), pos(hi, base), pos(hi, b.value), pos(lo, b.value)}
				c.FillPolygon(b.fill, c.ClipPolygonXY(pts))
				edge.Color = b.edge
				c.StrokeLines(edge, c.ClipLinesXY(append(pts, pts[0]))...)
			}
			if !math.IsNaN(b.lo) && !math.IsNaN(b.hi) && b.hi > b.lo {
				capW := w / 4
				c.StrokeLines(whisker, c.ClipLinesXY(
					[]vg.Point{pos(mid, b.lo), pos(mid, b.hi)},
					[]vg.Point{pos(mid-capW, b.lo), pos(mid+capW, b.lo)},
					[]vg.Point{pos(mid-capW, b.hi), pos(mid+capW, b.hi)},
				)...)
				top = math.Max(top, b.hi)
			}
			if b.label != "" {
				sty := label
				if b.labelColor != nil {
					sty.Color = b.labelColor
				}
				pt := pos(mid, top)
				if gb.horizontal {
					pt.X += vg.Points(3)
				} else {
					pt.Y += vg.Points(2)
				}
				c.FillText(sty, pt, b.label)
			}
		}
	}
}

// valueMax is the largest bar or whisker end.
func (gb *groupedBars) valueMax() float64 {
	m := 0.0
	for _, bars := range gb.groups {
		for _, b := range bars {
			for _, v := range []float64{b.value, b.hi} {
				if !math.IsNaN(v) && !math.IsInf(v, 0) {
					m = math.Max(m, v)
				}
			}
		}
	}
	return m
}

// barOf summarises samples as a bar: the median, whiskers min–max when
// there are several.
func barOf(samples []float64, scale float64, fill, edge color.Color) bar {
	b := bar{value: math.NaN(), lo: math.NaN(), hi: math.NaN(), fill: fill, edge: edge}
	vals := make([]float64, 0, len(samples))
	for _, v := range samples {
		if !math.IsNaN(v) {
			vals = append(vals, v*scale)
		}
	}
	if len(vals) == 0 {
		return b
	}
	b.value = stats.Median(vals)
	if len(vals) > 1 {
		b.lo, b.hi = slices.Min(vals), slices.Max(vals)
	}
	return b
}

// metricBars builds one group per mode and one bar per run of metric m.
func metricBars(runs []*runData, pal palette, modes []string, m Metric, scale float64) *groupedBars {
	gb := &groupedBars{width: 0.8}
	for _, mode := range modes {
		var group []bar
		for ri, rd := range runs {
			var samples []float64
			if md := rd.find(mode); md != nil {
				samples = md.values(m)
			}
			group = append(group, barOf(samples, scale, tint(pal.of(mode), ri, len(runs)), pal.of(mode)))
		}
		gb.groups = append(gb.groups, group)
	}
	return gb
}

// addRunLegend adds one grey swatch per run, tinted like its bars.
func addRunLegend(p *plot.Plot, runs []*runData) {
	for ri, rd := range runs {
		p.Legend.Add(shortLabel(rd.label), swatch{fill: tint(mutedColor, ri, len(runs)), edge: mutedColor})
	}
}

// whiskerNote says what the whiskers show, if any bar has one.
func whiskerNote(runs []*runData) string {
	for _, rd := range runs {
		for _, md := range rd.modes {
			if len(md.repeats) > 1 {
				return " Bars show the median over repeats; whiskers span the minimum to the maximum."
			}
		}
	}
	return " One repeat per mode: no whiskers."
}

// measuredModes is the modes with at least one measured repeat.
func measuredModes(runs []*runData) []string {
	var out []string
	for _, mode := range modeNames(runs) {
		for _, rd := range runs {
			if md := rd.find(mode); md != nil && len(md.repeats) > 0 {
				out = append(out, mode)
				break
			}
		}
	}
	return out
}

// barPlot sets up a vertical grouped bar plot over modes, for a panel
// about width wide.
func barPlot(title, yLabel string, modes []string, gb *groupedBars, runs []*runData, width vg.Length) *plot.Plot {
	p := newPlot(title, "", yLabel)
	p.Add(gb)
	if len(modes) > 0 {
		p.NominalX(modes...)
		slantIfCrowded(p, modes, width)
	}
	p.X.Min, p.X.Max = -0.5, math.Max(0.5, float64(len(modes))-0.5)
	p.Y.Min, p.Y.Max = 0, math.Max(1e-9, gb.valueMax()*1.18)
	if gb.valueMax() == 0 {
		p.Y.Max = 1
		p.Add(note{text: "no measurements", color: mutedColor})
	}
	p.Legend.Left = false
	addRunLegend(p, runs)
	return p
}

// slantIfCrowded slants the mode names under the bars when they would not
// fit side by side in a panel about width wide.
func slantIfCrowded(p *plot.Plot, names []string, width vg.Length) {
	// The y axis, its label and the padding take about 70 points.
	perGroup := (width - vg.Points(70)) / vg.Length(len(names))
	for _, n := range names {
		if p.X.Tick.Label.Width(n) > perGroup*0.9 {
			p.X.Tick.Label.Rotation = math.Pi / 6
			p.X.Tick.Label.XAlign = draw.XRight
			p.X.Tick.Label.YAlign = draw.YCenter
			return
		}
	}
}

// throughputBarsFigure: throughput per mode, one bar per run.
func throughputBarsFigure(runs []*runData, pal palette) figure {
	modes := measuredModes(runs)
	title := "Throughput by mode"
	gb := metricBars(runs, pal, modes, MetricThroughput, 1)
	p := barPlot(title, "throughput (outputs/s)", modes, gb, runs, 8*vg.Inch)
	return figure{
		name: "bars-throughput", title: title,
		caption: "Outputs visible per second over the measured window." + whiskerNote(runs),
		w:       8 * vg.Inch, h: 4.2 * vg.Inch,
		draw: func(dc draw.Canvas) { p.Draw(margin(dc)) },
	}
}

// latencyBarsFigure: p50, p99 and p99.9 end-to-end per mode, side by side.
func latencyBarsFigure(runs []*runData, pal palette) figure {
	modes := measuredModes(runs)
	title := "End-to-end latency by mode"
	var panels []*plot.Plot
	for _, m := range []Metric{MetricE2EP50, MetricE2EP99, MetricE2EP999} {
		gb := metricBars(runs, pal, modes, m, 1e-6)
		p := barPlot(m.Label(), "latency (ms)", modes, gb, runs, 10*vg.Inch/3)
		if len(panels) > 0 {
			p.Legend = plot.NewLegend() // the first panel carries it
		}
		panels = append(panels, p)
	}
	return figure{
		name: "bars-latency", title: title,
		caption: "End-to-end latency percentiles per repeat, from the intended send time." + whiskerNote(runs),
		w:       10 * vg.Inch, h: 4.2 * vg.Inch,
		draw: func(dc draw.Canvas) {
			dc = drawTitled(dc, title)
			tiles := draw.Tiles{Rows: 1, Cols: len(panels), PadX: vg.Points(14), PadLeft: vg.Points(6), PadRight: vg.Points(14), PadBottom: vg.Points(4)}
			cs := plot.Align([][]*plot.Plot{panels}, tiles, dc)
			for i, p := range panels {
				p.Draw(cs[0][i])
			}
		},
	}
}

// Verifier vocabulary (docs/design.md §7), in the order the anomaly charts list it.
var (
	anomalyKinds       = []vocab.Finding{vocab.KindLost, vocab.KindDuplicate, vocab.KindAbortedRead, vocab.KindTornTransaction, vocab.KindUnresolved, vocab.KindOverDelivered, vocab.KindArchivedUnprocessed}
	informationalKinds = vocab.Informational()
)

// isInformational reports whether kind is reported but never an anomaly.
func isInformational(kind vocab.Finding) bool { return slices.Contains(informationalKinds, kind) }

// verdict is a mode's verifier outcome summed over its repeats.
type verdict struct {
	verified, failed int // repeats with a verification; of those, failed
	inconclusive     int // repeats whose verdict is INCONCLUSIVE
	unjudged         int64
	repeats          int
	faultsLanded     int // faults applied, over the repeats
	faultsFired      int // faults that fired, applied or not
	counts           map[vocab.Finding]int64
	forbidden        []vocab.Finding // kinds forbidden and found, sorted
	allowed          []vocab.Finding // kinds the mode allows (union)
}

func verdictOf(md *modeData) verdict {
	v := verdict{counts: map[vocab.Finding]int64{}}
	if md == nil {
		return v
	}
	v.repeats = len(md.repeats)
	for _, rp := range md.repeats {
		vr := rp.m.Verify
		if vr == nil {
			continue
		}
		landed, fired := rp.m.FaultsLanded()
		v.faultsLanded += landed
		v.faultsFired += fired
		v.verified++
		switch {
		case len(vr.Forbidden) > 0 || !vr.Pass && !vr.Inconclusive():
			v.failed++
		case vr.Inconclusive():
			v.inconclusive++
			v.unjudged += vr.Unjudged
		}
		for k, n := range vr.Counts {
			v.counts[k] += n
		}
		for _, k := range vr.Forbidden {
			if !slices.Contains(v.forbidden, k) {
				v.forbidden = append(v.forbidden, k)
			}
		}
		for _, k := range vr.Allowed {
			if !slices.Contains(v.allowed, k) {
				v.allowed = append(v.allowed, k)
			}
		}
	}
	slices.Sort(v.forbidden)
	slices.Sort(v.allowed)
	return v
}

// anomalies is the total count of anomaly (not informational) kinds.
func (v verdict) anomalies() int64 {
	var n int64
	for k, c := range v.counts {
		if !isInformational(k) {
			n += c
		}
	}
	return n
}

// kindsFor lists the vocabulary plus any other kind a run reported.
func kindsFor(vs []verdict) []vocab.Finding {
	kinds := append(slices.Clone(anomalyKinds), informationalKinds...)
	var extra []vocab.Finding
	for _, v := range vs {
		for k := range v.counts {
			if !slices.Contains(kinds, k) && !slices.Contains(extra, k) {
				extra = append(extra, k)
			}
		}
	}
	slices.Sort(extra)
	return append(kinds, extra...)
}

// anomalyFigure charts the verifier's counts by kind for one mode: one bar
// per run, the count written beside every bar (zeros too) and forbidden
// findings in red.
func anomalyFigure(runs []*runData, pal palette, mode string) figure {
	var vs []verdict
	verified := false
	for _, rd := range runs {
		v := verdictOf(rd.find(mode))
		if v.verified > 0 {
			verified = true
		}
		vs = append(vs, v)
	}
	kinds := kindsFor(vs)
	var total int64
	for _, v := range vs {
		total += v.anomalies()
	}
	title := mode + ": verifier findings"
	switch {
	case !verified:
		title += " (not verified)"
	case total == 0:
		title += " (no anomalies)"
	}
	gb := &groupedBars{width: 0.8, horizontal: true}
	// Kinds read top to bottom: the first kind sits at the highest y.
	names := make([]string, len(kinds))
	for gi := range kinds {
		k := kinds[len(kinds)-1-gi]
		name := string(k)
		switch {
		case isInformational(k):
			name += " (info)"
		case len(vs) > 0 && slices.Contains(vs[0].allowed, k):
			name += " (allowed)"
		}
		names[gi] = name
		var group []bar
		// Runs top to bottom within a group, too.
		for ri := len(runs) - 1; ri >= 0; ri-- {
			v := vs[ri]
			n := v.counts[k]
			b := bar{value: float64(n), lo: math.NaN(), hi: math.NaN(), fill: tint(pal.of(mode), ri, len(runs)), edge: pal.of(mode), label: fmt.Sprint(n)}
			if v.verified == 0 {
				b.value, b.label = math.NaN(), "—"
			}
			if slices.Contains(v.forbidden, k) {
				b.label += " forbidden"
				b.labelColor = faultColor
			}
			group = append(group, b)
		}
		gb.groups = append(gb.groups, group)
	}
	p := newPlot(title, "count (summed over repeats)", "")
	p.Add(gb)
	p.NominalY(names...)
	p.Y.Min, p.Y.Max = -0.5, float64(len(kinds))-0.5
	p.X.Min, p.X.Max = 0, math.Max(1, gb.valueMax()*1.25)
	p.X.Tick.Marker = countTicks{}
	switch {
	case !verified:
		p.Add(note{text: "not verified", color: mutedColor})
	case total == 0:
		p.Add(note{text: "no anomalies", color: passColor})
	}
	p.Legend.Left = false
	p.Legend.Top = false
	addRunLegend(p, runs)
	return figure{
		name: "anomalies-" + fileSafe(mode), title: title,
		caption: "Verifier findings by kind (docs/design.md §7), summed over repeats; every count is printed, zeros included. " +
			"Red: a kind this mode does not allow. \"info\" kinds are reported but are not anomalies.",
		w: 8 * vg.Inch, h: 4.4 * vg.Inch,
		draw: func(dc draw.Canvas) { p.Draw(margin(dc)) },
	}
}
