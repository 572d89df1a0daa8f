// This file holds the look shared by every plot (white panel, dark text,
// mid-tone colour-blind-safe colours, Liberation Sans), the tickers for log
// axes, and figure rendering to SVG and PNG.

package reports

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/sharebench/sharebench/vocab"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Colours. Every plot is drawn on a white panel with dark ink, so the
// figures read the same on a light or a dark page; data colours are the
// Okabe–Ito palette's mid tones (colour-blind safe), dark enough on white.
var (
	panelColor = color.White
	inkColor   = color.RGBA{R: 0x1f, G: 0x23, B: 0x28, A: 0xff}
	mutedColor = color.RGBA{R: 0x59, G: 0x63, B: 0x6e, A: 0xff}
	gridColor  = color.RGBA{R: 0xdd, G: 0xe2, B: 0xe7, A: 0xff}
	faultColor = color.RGBA{R: 0xb3, G: 0x1d, B: 0x28, A: 0xff}
	passColor  = color.RGBA{R: 0x1a, G: 0x7f, B: 0x37, A: 0xff}

	// modePalette: fixed colours for the modes of docs/design.md §5, so a mode has
	// the same colour in every report.
	modePalette = map[string]color.Color{
		string(vocab.Implicit):      color.RGBA{R: 0x00, G: 0x72, B: 0xb2, A: 0xff}, // blue
		string(vocab.Explicit):      color.RGBA{R: 0xe6, G: 0x9f, B: 0x00, A: 0xff}, // orange
		string(vocab.Deferred):      color.RGBA{R: 0x00, G: 0x9e, B: 0x73, A: 0xff}, // green
		string(vocab.Transactional): color.RGBA{R: 0xcc, G: 0x79, B: 0xa7, A: 0xff}, // reddish purple
		string(vocab.ClassicEOS):    color.RGBA{R: 0xd5, G: 0x5e, B: 0x00, A: 0xff}, // vermillion
	}
	// extraPalette colours other modes, in order of appearance.
	extraPalette = []color.Color{
		color.RGBA{R: 0x56, G: 0xb4, B: 0xe9, A: 0xff}, // sky blue
		color.RGBA{R: 0x7f, G: 0x3c, B: 0x8d, A: 0xff}, // purple
		color.RGBA{R: 0x8c, G: 0x56, B: 0x4b, A: 0xff}, // brown
		color.RGBA{R: 0x6e, G: 0x77, B: 0x81, A: 0xff}, // grey
	}
	// runDashes tells runs apart on line plots: solid, dashed, dotted,
	// dash-dot, then again.
	runDashes = [][]vg.Length{
		nil,
		{vg.Points(7), vg.Points(3)},
		{vg.Points(1.5), vg.Points(2.5)},
		{vg.Points(7), vg.Points(2.5), vg.Points(1.5), vg.Points(2.5)},
	}
)

const (
	lineWidth = 2 // points
	pngDPI    = 150
)

// palette assigns each mode its colour.
type palette map[string]color.Color

func newPalette(modes []string) palette {
	p := palette{}
	next := 0
	for _, m := range modes {
		if c, ok := modePalette[m]; ok {
			p[m] = c
			continue
		}
		p[m] = extraPalette[next%len(extraPalette)]
		next++
	}
	return p
}

func (p palette) of(mode string) color.Color {
	if c, ok := p[mode]; ok {
		return c
	}
	return mutedColor
}

// tint returns c lightened toward white for run i of n (run 0 is c itself,
// the last run is c mixed half with white), so bars of later runs read as
// paler versions of the mode's colour.
func tint(c color.Color, i, n int) color.Color {
	if i <= 0 || n <= 1 {
		return c
	}
	f := 0.55 * float64(i) / float64(n-1)
	r, g, b, _ := c.RGBA()
	mix := func(v uint32) uint8 { return uint8(float64(v>>8) + f*(255-float64(v>>8))) }
	return color.RGBA{R: mix(r), G: mix(g), B: mix(b), A: 0xff}
}

func dashes(run int) []vg.Length { return runDashes[run%len(runDashes)] }

func sans(size vg.Length) font.Font {
	return font.Font{Typeface: "Liberation", Variant: "Sans", Size: size}
}

// newPlot returns a plot in the house style: white panel, dark ink, light
// grid, Liberation Sans.
func newPlot(title, xLabel, yLabel string) *plot.Plot {
	p := plot.New()
	p.BackgroundColor = panelColor
	p.Title.Text = title
	p.Title.TextStyle.Font = sans(12)
	p.Title.TextStyle.Color = inkColor
	p.Title.Padding = vg.Points(6)
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font = sans(10.5)
		a.Label.TextStyle.Color = inkColor
		a.Tick.Label.Font = sans(9)
		a.Tick.Label.Color = inkColor
		a.LineStyle.Color = inkColor
		a.Tick.LineStyle.Color = inkColor
	}
	p.X.Label.Text = xLabel
	p.Y.Label.Text = yLabel
	p.Legend.TextStyle.Font = sans(9)
	p.Legend.TextStyle.Color = inkColor
	p.Legend.Top = true
	p.Legend.ThumbnailWidth = vg.Points(24)
	g := plotter.NewGrid()
	g.Vertical.Color, g.Horizontal.Color = gridColor, gridColor
	g.Vertical.Width, g.Horizontal.Width = vg.Points(0.6), vg.Points(0.6)
	p.Add(g)
	return p
}

// lineStyle is the style of a data line: the mode's colour, the run's dash.
func lineStyle(c color.Color, run int) draw.LineStyle {
	return draw.LineStyle{Color: c, Width: vg.Points(lineWidth), Dashes: dashes(run)}
}

// textStyle is a text style in the house font.
func textStyle(size vg.Length, c color.Color) draw.TextStyle {
	return draw.TextStyle{Color: c, Font: sans(size), Handler: plot.DefaultTextHandler}
}

// note draws a message in the middle of the data area ("no anomalies",
// "no samples").
type note struct {
	text  string
	color color.Color
}

func (n note) Plot(c draw.Canvas, _ *plot.Plot) {
	sty := textStyle(14, n.color)
	sty.XAlign, sty.YAlign = draw.XCenter, draw.YCenter
	c.FillText(sty, c.Center(), n.text)
}

// log125Ticks labels a log axis at 1, 2 and 5 times powers of ten (and at
// every integer multiple when the range spans less than a decade), with
// unlabelled minor ticks in between.
type log125Ticks struct{}

func (log125Ticks) Ticks(min, max float64) []plot.Tick {
	if !(min > 0) || !(max > min) || math.IsInf(max, 0) {
		return nil
	}
	narrow := max/min < 10
	var ticks []plot.Tick
	for e := math.Floor(math.Log10(min)); e <= math.Ceil(math.Log10(max)); e++ {
		base := math.Pow(10, e)
		for m := 1; m <= 9; m++ {
			v := float64(m) * base
			if v < min*(1-1e-9) || v > max*(1+1e-9) {
				continue
			}
			t := plot.Tick{Value: v}
			if m == 1 || m == 2 || m == 5 || narrow {
				t.Label = formatTick(v)
			}
			ticks = append(ticks, t)
		}
	}
	return ticks
}

// formatTick formats an axis value without trailing zeros or exponents.
func formatTick(v float64) string {
	if v >= 1 {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}

// countTicks labels a linear count axis at whole numbers only, stepping
// 1, 2 or 5 times a power of ten to keep about six labels.
type countTicks struct{}

func (countTicks) Ticks(min, max float64) []plot.Tick {
	return steppedTicks(min, max, 6, []float64{1, 2, 5})
}

// secondTicks labels a time axis in whole seconds, stepping 1, 2, 5, 10,
// 15, 30, 60, … seconds to keep about ten labels.
type secondTicks struct{}

func (secondTicks) Ticks(min, max float64) []plot.Tick {
	return steppedTicks(min, max, 10, []float64{1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600})
}

// steppedTicks places ticks at multiples of the smallest step (from steps,
// then powers of ten times the last pattern) that keeps at most want+1
// labels between min and max.
func steppedTicks(min, max float64, want int, steps []float64) []plot.Tick {
	if math.IsNaN(min) || math.IsNaN(max) || math.IsInf(min, 0) || math.IsInf(max, 0) || max <= min {
		return nil
	}
	step := 0.0
	for _, s := range steps {
		if (max-min)/s <= float64(want) {
			step = s
			break
		}
	}
	for mult := steps[len(steps)-1] * 10; step == 0; mult *= 10 {
		for _, s := range []float64{1, 2, 5} {
			if (max-min)/(s*mult) <= float64(want) {
				step = s * mult
				break
			}
		}
	}
	var ticks []plot.Tick
	for v := math.Ceil(min/step) * step; v <= max+step*1e-9; v += step {
		ticks = append(ticks, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', -1, 64)})
	}
	return ticks
}

// margin leaves room around a single-panel figure so tick labels at the
// edges are not cut off.
func margin(dc draw.Canvas) draw.Canvas {
	return draw.Crop(dc, vg.Points(6), -vg.Points(14), vg.Points(4), -vg.Points(4))
}

// shortLabel keeps legend entries to a readable length.
func shortLabel(s string) string {
	const max = 32
	if r := []rune(s); len(r) > max {
		return string(r[:max-1]) + "…"
	}
	return s
}

// percentileTicks labels the 1/(1−p) axis at 0%, 50%, 90%, 99%, 99.9%, ….
type percentileTicks struct{}

func (percentileTicks) Ticks(min, max float64) []plot.Tick {
	labels := []struct {
		x     float64
		label string
	}{
		{1, "0%"}, {2, "50%"}, {10, "90%"}, {100, "99%"}, {1e3, "99.9%"},
		{1e4, "99.99%"}, {1e5, "99.999%"}, {1e6, "99.9999%"}, {1e7, "99.99999%"},
	}
	var ticks []plot.Tick
	for _, l := range labels {
		if l.x >= min*(1-1e-9) && l.x <= max*(1+1e-9) {
			ticks = append(ticks, plot.Tick{Value: l.x, Label: l.label})
		}
	}
	return ticks
}

// marks draws labelled vertical lines across the data area: fault events,
// the end of warm-up, the start of the drain.
type marks struct {
	xs     []float64
	labels []string
	style  draw.LineStyle
	text   color.Color
}

func (m marks) Plot(c draw.Canvas, p *plot.Plot) {
	trX, _ := p.Transforms(&c)
	sty := textStyle(8, m.text)
	sty.Rotation = math.Pi / 2
	sty.XAlign, sty.YAlign = draw.XRight, draw.YTop
	for i, v := range m.xs {
		if v < p.X.Min || v > p.X.Max {
			continue
		}
		x := trX(v)
		c.StrokeLine2(m.style, x, c.Min.Y, x, c.Max.Y)
		if i < len(m.labels) && m.labels[i] != "" {
			c.FillText(sty, vg.Point{X: x + vg.Points(2), Y: c.Max.Y - vg.Points(2)}, m.labels[i])
		}
	}
}

// Thumbnail lets a marks entry appear in a legend.
func (m marks) Thumbnail(c *draw.Canvas) {
	y := c.Center().Y
	c.StrokeLine2(m.style, c.Min.X, y, c.Max.X, y)
}

// swatch is a legend entry for a filled bar colour.
type swatch struct{ fill, edge color.Color }

func (s swatch) Thumbnail(c *draw.Canvas) {
	pts := c.Rectangle.Path()
	c.SetColor(s.fill)
	c.Fill(pts)
	c.StrokeLines(draw.LineStyle{Color: s.edge, Width: vg.Points(0.8)}, []vg.Point{
		c.Min, {X: c.Max.X, Y: c.Min.Y}, c.Max, {X: c.Min.X, Y: c.Max.Y}, c.Min,
	})
}

// figure is one plot file: its name (the file base), a title and caption
// for the report, where the report places it, its size and how to draw it.
type figure struct {
	name    string
	title   string
	caption string
	place   placement
	w, h    vg.Length
	draw    func(dc draw.Canvas)
}

// placement is where report.html shows a figure.
type placement int

const (
	placeDetail  placement = iota // full width, in the details
	placeSummary                  // side by side in the summary, above the details
	placePair                     // side by side in the details' plots
	placeAnomaly                  // under Anomalies, in the details
)

// renderedFigure is a figure written to disk.
type renderedFigure struct {
	figure
	svgPath, pngPath string
	png              []byte
}

// render draws f once onto an SVG and a PNG canvas and writes both into
// dir. A panic inside the plotting library becomes an error.
func (f figure) render(dir string) (rf renderedFigure, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("reports: drawing plot %s: %v", f.name, r)
		}
	}()
	sc := vgsvg.New(f.w, f.h)
	ic := vgimg.NewWith(vgimg.UseWH(f.w, f.h), vgimg.UseDPI(pngDPI), vgimg.UseBackgroundColor(panelColor))
	dc := draw.NewCanvas(vg.MultiCanvas(sc, ic), f.w, f.h)
	dc.SetColor(panelColor)
	dc.Fill(dc.Rectangle.Path())
	f.draw(dc)

	var svg, png bytes.Buffer
	if _, err := sc.WriteTo(&svg); err != nil {
		return rf, fmt.Errorf("reports: encoding plot %s as SVG: %w", f.name, err)
	}
	if _, err := (vgimg.PngCanvas{Canvas: ic}).WriteTo(&png); err != nil {
		return rf, fmt.Errorf("reports: encoding plot %s as PNG: %w", f.name, err)
	}
	rf = renderedFigure{figure: f, png: png.Bytes()}
	rf.svgPath = filepath.Join(dir, f.name+".svg")
	rf.pngPath = filepath.Join(dir, f.name+".png")
	if err := os.WriteFile(rf.svgPath, svg.Bytes(), 0o644); err != nil {
		return rf, fmt.Errorf("reports: writing plot: %w", err)
	}
	if err := os.WriteFile(rf.pngPath, rf.png, 0o644); err != nil {
		return rf, fmt.Errorf("reports: writing plot: %w", err)
	}
	return rf, nil
}

// drawTitled draws a figure title across the top of dc and returns the
// canvas below it, for figures made of several aligned panels.
func drawTitled(dc draw.Canvas, title string) draw.Canvas {
	sty := textStyle(13, inkColor)
	sty.XAlign, sty.YAlign = draw.XCenter, draw.YTop
	dc.FillText(sty, vg.Point{X: dc.Center().X, Y: dc.Max.Y - vg.Points(6)}, title)
	return draw.Crop(dc, 0, 0, 0, -vg.Points(26))
}

// fileSafe turns a mode name into a file-name part.
func fileSafe(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	if b.Len() == 0 {
		return "_"
	}
	return b.String()
}
