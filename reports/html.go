// This file renders report.html: one self-contained page (plots inlined as
// PNG data URIs, styles inline, no script, no external reference).

package reports

import (
	"bytes"
	_ "embed"
	"encoding/base64"
	"fmt"
	"html/template"
	"math"
	"slices"
	"strings"
)

//go:embed report.html.tmpl
var reportTemplateText string

var reportTemplate = template.Must(template.New("report.html").Funcs(template.FuncMap{
	"join": strings.Join,
}).Parse(reportTemplateText))

// figureView is one plot on the page.
type figureView struct {
	Name, Title, Caption string
	Src                  template.URL // data:image/png;base64,…
	Width, Height        int          // CSS pixels
}

// reportView is everything the page shows: a summary a reader takes in at
// a glance (verdict, table, the anomaly and noise lines, two plots), then
// the details.
type reportView struct {
	Title, Subtitle       string
	Verdict, VerdictClass string
	MultiRun              bool
	Env                   envTable
	Workloads             []workloadView
	Table                 summaryTable
	TableNote             string
	AnomalyLine           string
	NoiseLines            []string
	NoiseRows             []noiseRow
	SummaryFigures        []figureView
	PairFigures           []figureView
	DetailFigures         []figureView
	AnomalyFigures        []figureView
	Faults                []faultRow
	Witnesses             []witnessGroup
	Warnings              []string
}

// title names the report after its workload(s): their own names, never
// the path of the file they were read from.
func title(runs []*runData) string {
	var names []string
	for _, w := range buildWorkloads(runs) {
		if !slices.Contains(names, w.Name) {
			names = append(names, w.Name)
		}
	}
	return "sharebench report: " + strings.Join(names, ", ")
}

func subtitle(runs []*runData) string {
	var labels []string
	for _, rd := range runs {
		labels = append(labels, rd.label)
	}
	if len(runs) == 1 {
		return "Run " + labels[0] + " (" + runs[0].run.Dir + ")"
	}
	return "Runs " + strings.Join(labels, ", ") + "; ratios (×) are against " + labels[0]
}

// tableNote explains how the table's numbers were made, for the page
// (html) or for summary.md.
func tableNote(runs []*runData, html bool) string {
	s := "Each cell is the median over the mode's repeats"
	if html {
		s += " (hover for every repeat)"
	}
	s += ". Latency is measured from the intended send time (coordinated omission corrected), from the decoded HdrHistograms; " +
		"warm-up is excluded. Counts are per repeat."
	if len(runs) > 1 {
		s += " Ratios (×) are against " + runs[0].label + "; use sharebench compare for confidence intervals and p-values."
	}
	return s
}

func buildReportView(runs []*runData, figs []renderedFigure, warnings []string) reportView {
	v := reportView{
		Title:     title(runs),
		Subtitle:  subtitle(runs),
		MultiRun:  len(runs) > 1,
		Env:       buildEnv(runs),
		Workloads: buildWorkloads(runs),
		Table:     buildTable(runs),
		TableNote: tableNote(runs, true),
		Faults:    buildFaults(runs),
		Witnesses: buildWitnesses(runs),
		Warnings:  warnings,
	}
	v.Verdict, v.VerdictClass = overallVerdict(runs)
	v.AnomalyLine, _ = anomalySummary(runs)
	v.NoiseLines, v.NoiseRows = noiseNote(runs)
	for _, f := range figs {
		fv := figureView{
			Name: f.name, Title: f.title, Caption: f.caption,
			Src:    template.URL("data:image/png;base64," + base64.StdEncoding.EncodeToString(f.png)),
			Width:  int(math.Round(f.w.Points() * 96 / 72)),
			Height: int(math.Round(f.h.Points() * 96 / 72)),
		}
		switch f.place {
		case placeSummary:
			v.SummaryFigures = append(v.SummaryFigures, fv)
		case placePair:
			v.PairFigures = append(v.PairFigures, fv)
		case placeAnomaly:
			v.AnomalyFigures = append(v.AnomalyFigures, fv)
		default:
			v.DetailFigures = append(v.DetailFigures, fv)
		}
	}
	return v
}

func renderHTML(v reportView) ([]byte, error) {
	var b bytes.Buffer
	if err := reportTemplate.Execute(&b, v); err != nil {
		return nil, fmt.Errorf("reports: rendering report.html: %w", err)
	}
	return b.Bytes(), nil
}
