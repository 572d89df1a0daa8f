package reports_test

import (
	"bytes"
	"encoding/base64"
	"encoding/xml"
	"errors"
	"html"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/sharebench/sharebench/loadgen/result"
	"github.com/sharebench/sharebench/reports"
)

// checkFiles verifies every file Generate reported: it exists, SVGs parse
// as XML, PNGs decode.
func checkFiles(t *testing.T, files reports.Files) {
	t.Helper()
	for _, p := range []string{files.HTML, files.Markdown} {
		if st, err := os.Stat(p); err != nil || st.Size() == 0 {
			t.Errorf("%s: missing or empty (%v)", p, err)
		}
	}
	var svgs, pngs int
	for _, p := range files.Plots {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Errorf("plot %s: %v", p, err)
			continue
		}
		switch filepath.Ext(p) {
		case ".svg":
			svgs++
			dec := xml.NewDecoder(bytes.NewReader(b))
			sawSVG := false
			for {
				tok, err := dec.Token()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Errorf("plot %s is not well-formed XML: %v", p, err)
					break
				}
				if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "svg" {
					sawSVG = true
				}
			}
			if !sawSVG {
				t.Errorf("plot %s has no <svg> element", p)
			}
		case ".png":
			pngs++
			img, err := png.Decode(bytes.NewReader(b))
			if err != nil {
				t.Errorf("plot %s does not decode as PNG: %v", p, err)
			} else if img.Bounds().Dx() < 600 {
				t.Errorf("plot %s is %d px wide, want a readable size", p, img.Bounds().Dx())
			}
		default:
			t.Errorf("unexpected plot file %s", p)
		}
	}
	if svgs == 0 || svgs != pngs {
		t.Errorf("%d SVG and %d PNG plots, want the same non-zero number", svgs, pngs)
	}
}

var imgTag = regexp.MustCompile(`<img\b[^>]*>`)
var srcAttr = regexp.MustCompile(`\bsrc="([^"]*)"`)

// checkHTML verifies the page is self-contained and every image decodes.
func checkHTML(t *testing.T, page string, wantImages int) {
	t.Helper()
	if strings.Contains(page, "ZgotmplZ") {
		t.Error("report.html contains ZgotmplZ: html/template rejected a value")
	}
	for _, ext := range []string{`src="http`, `href="http`, `<link`, `<script`, `url(`} {
		if strings.Contains(page, ext) {
			t.Errorf("report.html contains %q: it must not reference anything outside itself", ext)
		}
	}
	imgs := imgTag.FindAllString(page, -1)
	if len(imgs) != wantImages {
		t.Errorf("report.html has %d <img>, want %d (one per plot)", len(imgs), wantImages)
	}
	for i, tag := range imgs {
		m := srcAttr.FindStringSubmatch(tag)
		if m == nil {
			t.Errorf("<img> %d has no src", i)
			continue
		}
		src := html.UnescapeString(m[1]) // as a browser reads the attribute
		const prefix = "data:image/png;base64,"
		if !strings.HasPrefix(src, prefix) {
			t.Errorf("<img> %d src starts %.40q, want a PNG data URI", i, src)
			continue
		}
		raw, err := base64.StdEncoding.DecodeString(src[len(prefix):])
		if err != nil {
			t.Errorf("<img> %d data URI is not base64: %v", i, err)
			continue
		}
		if _, err := png.Decode(bytes.NewReader(raw)); err != nil {
			t.Errorf("<img> %d data URI is not a PNG: %v", i, err)
		}
		if !strings.Contains(tag, `alt="`) {
			t.Errorf("<img> %d has no alt text", i)
		}
	}
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestGenerateStoredFixture(t *testing.T) {
	t.Parallel()
	run := loadStored(t)
	out := t.TempDir()
	files, err := reports.Generate(out, run)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	checkFiles(t, files)
	if len(files.Warnings) != 0 {
		t.Errorf("warnings on a clean fixture: %q", files.Warnings)
	}
	// 4 spectra + 2 bar charts + a timeline per mode + an anomaly chart for
	// explicit, the one mode with findings.
	wantPlots := 4 + 2 + 3 + 1
	if got := len(files.Plots); got != 2*wantPlots {
		t.Errorf("%d plot files, want %d", got, 2*wantPlots)
	}
	for _, name := range []string{"spectrum-end_to_end", "spectrum-commit", "spectrum-produce", "spectrum-send_lag",
		"bars-throughput", "bars-latency", "timeline-explicit", "anomalies-explicit"} {
		if _, err := os.Stat(filepath.Join(out, "plots", name+".svg")); err != nil {
			t.Errorf("plot %s.svg missing: %v", name, err)
		}
	}
	// A mode the verifier found nothing in gets no chart of zeros.
	for _, name := range []string{"anomalies-implicit", "anomalies-transactional"} {
		if _, err := os.Stat(filepath.Join(out, "plots", name+".svg")); err == nil {
			t.Errorf("plot %s.svg drawn for a mode without findings", name)
		}
	}
	page := read(t, files.HTML)
	checkHTML(t, page, wantPlots)
	for _, mode := range []string{"implicit", "explicit", "transactional"} {
		if !strings.Contains(page, `<tr data-mode="`+mode+`"`) {
			t.Errorf("report.html has no table row for mode %s", mode)
		}
	}
	for _, want := range []string{
		"0123456789ab", "go1.26.8", "Fixture CPU @ 2.00GHz", "GOMAXPROCS", "engine (embedded)", "broker version",
		"read-process-write",
		"partitionsPerTopic: 3", "lockDuration: 30s", "testDuration: 4s", // the spec as YAML, durations as Go durations
		"e2e p99.99 (ms)", "e2e max (ms)", "CPU per record (µs)",
		`<p id="anomaly-line" class="line">No anomalies in implicit, transactional: every verifier count is zero.`,
		"1-minute load average 1.30–2.10 at the opening and closing of 6 windows on 2 CPUs", "of its 2 Ps busy",
		"1.40 / 0.90 / 0.70",                                 // the noise of one window, in the details
		"worker-crash", "worker 1 after produce, before ack", // faults timeline
		"4711", "p1 @ 1234", // the duplicate's witness
		"PASS (allowed: duplicate 2)", "Exactly-once verifier: PASS",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
	for _, unwanted := range []string{"30000000000", "aborts per rebalance"} {
		if strings.Contains(page, unwanted) {
			t.Errorf("report.html shows %q (raw nanoseconds, or a column without a value)", unwanted)
		}
	}
	md := read(t, files.Markdown)
	for _, want := range []string{
		"| mode | repeats | throughput (outputs/s) | e2e p50 (ms) | e2e p99 (ms) | e2e p99.9 (ms) | e2e p99.99 (ms) | e2e max (ms) | commit p99 (ms) | CPU per record (µs) | redeliveries | aborts | fenced aborts | lock expiries | verifier |",
		"| implicit | 2 |", "| explicit | 2 |", "| transactional | 2 |", "commit 0123456789ab",
		"No anomalies in implicit, transactional", "**Noise:** 1-minute load average",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("summary.md lacks %q:\n%s", want, md)
		}
	}
	if svg := read(t, filepath.Join(out, "plots", "anomalies-explicit.svg")); !strings.Contains(svg, "duplicate") {
		t.Error("anomalies-explicit.svg does not chart the duplicates")
	}
	if svg := read(t, filepath.Join(out, "plots", "timeline-explicit.svg")); !strings.Contains(svg, "worker-crash") {
		t.Error("timeline-explicit.svg does not label the fault")
	}
	if svg := read(t, filepath.Join(out, "plots", "spectrum-end_to_end.svg")); !strings.Contains(svg, "99.9%") {
		t.Error("spectrum-end_to_end.svg has no 99.9% tick")
	}
}

func TestGenerateOverlay(t *testing.T) {
	t.Parallel()
	base := loadStored(t)
	f := smallRun()
	f.seed, f.throughput, f.latency, f.forbidden = 2, 0.9, 1.2, true
	cand := fixtureRun(t, "candidate", f)
	// The same workload at another rate: two YAML blocks, one name.
	cand.Result.SpecYAML = strings.Replace(cand.Result.SpecYAML, "producerRate: 2000", "producerRate: 1800", 1)
	files, err := reports.Generate(t.TempDir(), base, cand)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	checkFiles(t, files)
	page := read(t, files.HTML)
	if !strings.Contains(page, "<h1>sharebench report: read-process-write</h1>") {
		t.Error("report.html of two runs of one workload is not titled by its name, once")
	}
	if n := strings.Count(page, `<pre class="yaml">`); n != 2 {
		t.Errorf("report.html has %d YAML blocks, want one per distinct spec (2)", n)
	}
	// 4 spectra, 2 bar charts, 3 timelines, and anomaly charts for explicit
	// (both runs' allowed duplicates) and transactional (the candidate's
	// forbidden one).
	checkHTML(t, page, 4+2+3+2)
	for _, mode := range []string{"implicit", "explicit", "transactional"} {
		for _, run := range []string{"run-small", "candidate"} {
			if !strings.Contains(page, `<tr data-mode="`+mode+`" data-run="`+run+`"`) {
				t.Errorf("report.html has no row for mode %s run %s", mode, run)
			}
		}
	}
	for _, want := range []string{"×0.9", "×1.2", "FAIL: duplicate", "ratios (×) are against run-small", "sb-tx-0"} {
		if !strings.Contains(page, want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
	for _, name := range []string{"spectrum-end_to_end", "timeline-explicit", "bars-throughput"} {
		svg := read(t, filepath.Join(filepath.Dir(files.HTML), "plots", name+".svg"))
		if !strings.Contains(svg, "candidate") || !strings.Contains(svg, "run-small") {
			t.Errorf("%s.svg does not label both runs", name)
		}
	}
	md := read(t, files.Markdown)
	if !strings.Contains(md, "| explicit | candidate | 2 |") || !strings.Contains(md, "(×0.9") {
		t.Errorf("summary.md lacks the candidate's rows with ratios:\n%s", md)
	}
}

// TestGenerateDamagedInput: broken histograms, empty series, unsupported
// and failed modes make warnings and notes, not errors or panics.
func TestGenerateDamagedInput(t *testing.T) {
	t.Parallel()
	r := newFixture(t, smallRun())
	h := r.Modes[0].Histograms[result.HistEndToEnd]
	h.EncodedV2 = "not base64 at all!"
	h.Overflow = 3
	r.Modes[0].Histograms[result.HistEndToEnd] = h
	r.Modes[1].Series = nil
	r.Modes[2].Histograms = nil
	r.Modes[3].Verify = nil
	r.Modes = append(r.Modes,
		result.ModeResult{Mode: "classic-eos", Repeat: 1, Unsupported: "the target has no consumer groups; use --target kafka"},
		result.ModeResult{Mode: "deferred", Repeat: 1, Error: "worker pool: context deadline exceeded"},
		result.ModeResult{Mode: "weird mode/with spaces", Repeat: 1, Throughput: 5,
			Histograms: map[string]result.Histogram{result.HistEndToEnd: {Count: 1, P50: 0, P99: 0}},
			Series:     []result.Second{{T: -3, OutputRate: -1}}},
	)
	// A result without workload_yaml shows its spec as recorded.
	r.Spec, r.SpecYAML = []byte("not json"), ""
	files, err := reports.Generate(t.TempDir(), &reports.Run{Result: r})
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	checkFiles(t, files)
	if len(files.Warnings) < 2 {
		t.Errorf("warnings = %q, want the broken histogram and the overflow", files.Warnings)
	}
	page := read(t, files.HTML)
	// 4 spectra, 2 bar charts, a timeline per measured mode (the weird one
	// too) and the explicit duplicates' chart; the weird mode is unverified.
	checkHTML(t, page, 4+2+4+1)
	for _, want := range []string{"cannot be decoded", "above the histogram", "unsupported: the target has no consumer groups",
		"failed: repeat 1: worker pool: context deadline exceeded", "not json", "run 1", "Not verified: weird mode/with spaces."} {
		if !strings.Contains(page, want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
}

func TestGenerateEmptyRun(t *testing.T) {
	t.Parallel()
	files, err := reports.Generate(t.TempDir(), &reports.Run{Name: "empty", Result: &result.Result{Schema: result.Schema}})
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	checkFiles(t, files)
	if page := read(t, files.HTML); !strings.Contains(page, "Exactly-once verifier: not run") {
		t.Error("an empty run's report does not say the verifier did not run")
	}
}

func TestGenerateBadArguments(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		out  string
		runs []*reports.Run
	}{
		{"no runs", dir, nil},
		{"nil run", dir, []*reports.Run{nil}},
		{"run without result", dir, []*reports.Run{{Name: "x"}}},
		{"no output directory", "", []*reports.Run{{Name: "x", Result: &result.Result{}}}},
	} {
		_, err := reports.Generate(tc.out, tc.runs...)
		if err == nil || !strings.HasPrefix(err.Error(), "reports: ") {
			t.Errorf("%s: error = %v, want a reports: error", tc.name, err)
		}
	}
}

// TestGenerateNamesTheWorkload titles the report by the workload's own name,
// never the path of its file, and shows how an OpenMessaging Benchmark file
// was read beside the YAML that ran.
func TestGenerateNamesTheWorkload(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name      string
		workload  string
		spec      string // workload_spec JSON
		notes     []string
		wantTitle string
		wantPage  []string
	}{
		{"an OMB file", "workloads/testdata/omb/1-topic-16-partitions-1kb.yaml",
			`{"name":"1-producer-1-consumers-on-1-topic"}`,
			[]string{"consumerPerSubscription 1 is translated to consumers 1 (workers per mode)"},
			"sharebench report: 1-producer-1-consumers-on-1-topic",
			[]string{"(read from workloads/testdata/omb/1-topic-16-partitions-1kb.yaml)", "How the file was read:",
				"<li>consumerPerSubscription 1 is translated to consumers 1 (workers per mode)</li>"}},
		{"a file whose spec has no name", "runs/my-load.yml", `{}`, nil, "sharebench report: my-load",
			[]string{"(read from runs/my-load.yml)"}},
		{"a built-in", "quick", `{"name":"quick"}`, nil, "sharebench report: quick", nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			run := fixtureRun(t, "run", smallRun())
			run.Result.Workload, run.Result.Spec, run.Result.SpecNotes = tt.workload, []byte(tt.spec), tt.notes
			files, err := reports.Generate(t.TempDir(), run)
			if err != nil {
				t.Fatalf("Generate: %v", err)
			}
			page := read(t, files.HTML)
			for _, want := range append([]string{"<title>" + tt.wantTitle + "</title>", "<h1>" + tt.wantTitle + "</h1>"}, tt.wantPage...) {
				if !strings.Contains(page, want) {
					t.Errorf("report.html lacks %q", want)
				}
			}
			if tt.workload != "quick" && strings.Contains(page, "<h1>sharebench report: "+tt.workload) {
				t.Errorf("report.html is titled by the workload's path %s", tt.workload)
			}
			if md := read(t, files.Markdown); !strings.HasPrefix(md, "### "+tt.wantTitle+"\n") {
				t.Errorf("summary.md starts %.80q, want the title %q", md, tt.wantTitle)
			}
		})
	}
}
