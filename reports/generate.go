// This file holds Generate: every plot, report.html and summary.md for one
// run or several overlaid runs.

package reports

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Files lists what Generate wrote.
type Files struct {
	HTML     string   // report.html
	Markdown string   // summary.md
	Plots    []string // plots/*.svg and plots/*.png
	// Warnings are problems with the input that did not stop the report
	// (an undecodable histogram, samples above a histogram's range); the
	// report lists them too.
	Warnings []string
}

// Generate writes report.html, summary.md and plots/ into outDir (created
// if needed; existing files of the same names are replaced). With several
// runs the plots overlay them, labelled by run name, and the tables show
// each value's ratio to the first run's.
func Generate(outDir string, runs ...*Run) (Files, error) {
	var files Files
	if outDir == "" {
		return files, errors.New("reports: no output directory given")
	}
	if len(runs) == 0 {
		return files, errors.New("reports: no runs to report; pass at least one directory written by sharebench run")
	}
	for i, r := range runs {
		if r == nil || r.Result == nil {
			return files, fmt.Errorf("reports: run %d has no result; load it with reports.Load", i+1)
		}
	}
	plotDir := filepath.Join(outDir, "plots")
	if err := os.MkdirAll(plotDir, 0o755); err != nil {
		return files, fmt.Errorf("reports: creating output directory: %w", err)
	}

	names := labels(runs)
	data := make([]*runData, len(runs))
	for i, r := range runs {
		data[i] = prepare(r, names[i])
		files.Warnings = append(files.Warnings, data[i].warnings...)
	}

	figs := planFigures(data)
	var rendered []renderedFigure
	for _, f := range figs {
		rf, err := f.render(plotDir)
		if err != nil {
			return files, err
		}
		rendered = append(rendered, rf)
		files.Plots = append(files.Plots, rf.svgPath, rf.pngPath)
	}

	page, err := renderHTML(buildReportView(data, rendered, files.Warnings))
	if err != nil {
		return files, err
	}
	files.HTML = filepath.Join(outDir, "report.html")
	if err := os.WriteFile(files.HTML, page, 0o644); err != nil {
		return files, fmt.Errorf("reports: writing report: %w", err)
	}
	files.Markdown = filepath.Join(outDir, "summary.md")
	if err := os.WriteFile(files.Markdown, renderMarkdown(data), 0o644); err != nil {
		return files, fmt.Errorf("reports: writing summary: %w", err)
	}
	return files, nil
}

// planFigures lists the report's plots: in the summary the end-to-end
// spectrum and the latency bars; in the details the commit, produce and
// send-lag spectra and a timeline per measured mode (two a row), the
// throughput bars and
// an anomaly chart per mode with verifier findings (a clean mode gets a
// line of the summary instead of a chart of zeros). File names are made
// unique should two mode names map to the same one.
func planFigures(runs []*runData) []figure {
	pal := newPalette(modeNames(runs))
	spectra := spectrumFigures(runs, pal)
	e2e, lat := spectra[0], latencyBarsFigure(runs, pal)
	e2e.place, lat.place = placeSummary, placeSummary
	figs := []figure{e2e, lat}
	for _, f := range spectra[1:] {
		f.place = placePair
		figs = append(figs, f)
	}
	figs = append(figs, throughputBarsFigure(runs, pal))
	for _, mode := range measuredModes(runs) {
		f := timelineFigure(runs, pal, mode)
		f.place = placePair
		figs = append(figs, f)
	}
	_, charted := anomalySummary(runs)
	for _, mode := range charted {
		f := anomalyFigure(runs, pal, mode)
		f.place = placeAnomaly
		figs = append(figs, f)
	}
	seen := map[string]int{}
	for i := range figs {
		seen[figs[i].name]++
		if n := seen[figs[i].name]; n > 1 {
			figs[i].name = fmt.Sprintf("%s-%d", figs[i].name, n)
		}
	}
	return figs
}
