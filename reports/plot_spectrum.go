// This file draws the latency percentile spectrum: latency against
// percentile on the 1/(1−p) scale, one line per mode and run, from the
// decoded HdrHistograms merged over each mode's repeats.

package reports

import (
	"fmt"
	"math"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/sharebench/sharebench/loadgen/result"
)

// spectrumPointsPerDecade is the resolution of a spectrum line.
const spectrumPointsPerDecade = 40

// spectrum returns the (1/(1−p), latency ms) points of h, from p = 0 up to
// the last percentile the sample count can resolve, then the maximum.
func spectrum(h *hdrhistogram.Histogram) plotter.XYs {
	n := float64(h.TotalCount())
	var xys plotter.XYs
	add := func(x float64, ns int64) {
		if ns > 0 {
			xys = append(xys, plotter.XY{X: x, Y: float64(ns) / 1e6})
		}
	}
	for k := 0; ; k++ {
		x := math.Pow(10, float64(k)/spectrumPointsPerDecade)
		if x > n {
			break
		}
		add(x, result.ValueAtPercentile(h, 100*(1-1/x)))
	}
	add(math.Max(n, 2), h.Max())
	return xys
}

// spectrumFigure plots histogram hist of every mode of every run under
// title; the caption says what the histogram measures, then extra.
func spectrumFigure(runs []*runData, pal palette, hist, title, what, extra string) figure {
	name := "spectrum-" + fileSafe(hist)
	fig := figure{
		name:  name,
		title: title,
		caption: fmt.Sprintf("%s (%s histogram) at each percentile, merged over each mode's repeats; "+
			"the x axis is 1/(1−p), so each step right is ten times rarer.%s", what, hist, extra),
		w: 8 * vg.Inch, h: 4.8 * vg.Inch,
	}
	yLabel := "latency (ms, log scale)"
	if hist == result.HistSendLag {
		yLabel = "lag (ms, log scale)"
	}
	p := newPlot(title, "percentile", yLabel)
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	p.X.Tick.Marker, p.Y.Tick.Marker = percentileTicks{}, log125Ticks{}
	p.Legend.Left = true
	xmax, ymin, ymax := 10.0, math.Inf(1), math.Inf(-1)
	lines := 0
	for ri, rd := range runs {
		for _, mode := range modeNames(runs) {
			md := rd.find(mode)
			if md == nil {
				continue
			}
			h := md.merged(hist)
			if h == nil {
				continue
			}
			xys := spectrum(h)
			if len(xys) == 0 {
				continue
			}
			if len(xys) == 1 {
				xys = append(xys, plotter.XY{X: 2, Y: xys[0].Y})
			}
			l, err := plotter.NewLine(xys)
			if err != nil {
				continue
			}
			l.LineStyle = lineStyle(pal.of(mode), ri)
			p.Add(l)
			label := mode
			if len(runs) > 1 {
				label = mode + " · " + rd.label
			}
			p.Legend.Add(shortLabel(label), l)
			lines++
			for _, xy := range xys {
				xmax = math.Max(xmax, xy.X)
				ymin = math.Min(ymin, xy.Y)
				ymax = math.Max(ymax, xy.Y)
			}
		}
	}
	// Whole decades on x, so the last tick (99.9%, 99.99%, …) is drawn.
	p.X.Min, p.X.Max = 1, math.Pow(10, math.Ceil(math.Log10(xmax)))
	if lines == 0 {
		p.Y.Min, p.Y.Max = 0.1, 100
		p.Add(note{text: "no " + hist + " samples recorded", color: mutedColor})
	} else {
		p.Y.Min, p.Y.Max = ymin/1.15, ymax*1.15
	}
	fig.draw = func(dc draw.Canvas) { p.Draw(margin(dc)) }
	return fig
}

// spectrumFigures are the end-to-end, commit, produce and send-lag
// spectra.
func spectrumFigures(runs []*runData, pal palette) []figure {
	return []figure{
		spectrumFigure(runs, pal, result.HistEndToEnd, "End-to-end latency by percentile",
			"End-to-end latency, from an input's intended send time to its output visible to a read_committed reader", ""),
		spectrumFigure(runs, pal, result.HistCommit, "Commit latency by percentile",
			"Commit (or acknowledgement) call latency", ""),
		spectrumFigure(runs, pal, result.HistProduce, "Produce latency by percentile",
			"Input produce call service time, from the send to its acknowledgement", ""),
		spectrumFigure(runs, pal, result.HistSendLag, "Send lag by percentile",
			"Send lag, how late each input was sent after its intended time",
			" Near zero, the schedule was met; a tail is load the producers could not send on time "+
				"(end-to-end latency still counts from the intended time, so it includes the lag)."),
	}
}
