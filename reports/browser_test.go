package reports_test

import (
	"context"
	"encoding/json"
	"html"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/sharebench/sharebench/reports"
)

// chromium finds a Chromium binary, or returns "".
func chromium() string {
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	for _, p := range []string{"/usr/bin/chromium", "/usr/bin/chromium-browser"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return ""
}

// pageProbe is appended to a copy of the report (the report itself has no
// script): once the page has loaded it measures what a reader sees and
// writes it, as JSON, into the body's data-probe attribute, which
// --dump-dom prints.
const pageProbe = `<script>
window.addEventListener("load", function () {
  var imgs = Array.prototype.slice.call(document.images);
  var ok = function (i) { return i.complete && i.naturalWidth > 0; };
  var text = function (sel) { var e = document.querySelector(sel); return e ? e.textContent : ""; };
  var summary = document.getElementById("summary");
  var lines = Array.prototype.slice.call(document.querySelectorAll("#summary p"))
    .filter(function (p) { return p.textContent.indexOf("No anomalies") === 0; });
  var figs = {};
  Array.prototype.slice.call(document.querySelectorAll("figure")).forEach(function (f) {
    var img = f.querySelector("img");
    figs[f.id] = { loaded: !!img && ok(img), inSummary: summary.contains(f) };
  });
  document.body.setAttribute("data-probe", JSON.stringify({
    images: imgs.length,
    broken: imgs.filter(function (i) { return !ok(i); }).length,
    summaryBottom: summary ? Math.ceil(summary.getBoundingClientRect().bottom + window.scrollY) : -1,
    pageHeight: document.documentElement.scrollHeight,
    yaml: text("pre.yaml"),
    noAnomalyLines: lines.length,
    noise: text("#noise-note"),
    figures: figs
  }));
});
</script>`

var probeAttr = regexp.MustCompile(`data-probe="([^"]*)"`)

// probe is what pageProbe measured.
type probe struct {
	Images, Broken int
	SummaryBottom  int
	PageHeight     int
	YAML           string
	NoAnomalyLines int
	Noise          string
	Figures        map[string]struct{ Loaded, InSummary bool }
}

// maxSummaryPx bounds the summary: verdict, table, notes and its two plots
// fit a screen or two, before the details.
const maxSummaryPx = 2000

// TestReportInChromium opens report.html in headless Chromium, at a desktop
// width, and checks what a reader sees: every plot decodes, the summary
// ends within maxSummaryPx, it holds one "no anomalies" line and the noise
// note, the workload shows as YAML, the produce and send-lag spectra are
// drawn, and a mode without findings gets no anomaly chart.
func TestReportInChromium(t *testing.T) {
	if testing.Short() {
		t.Skip("starts headless Chromium; skipped with -short")
	}
	bin := chromium()
	if bin == "" {
		t.Skip("no chromium or chromium-browser found: install Debian's chromium to run this test; .ci/run installs it")
	}
	four := smallRun()
	four.modes = []string{"implicit", "explicit", "deferred", "transactional"}
	cand := four
	cand.seed = 2
	for _, tc := range []struct {
		name string
		runs []*reports.Run
	}{
		{"stored run", []*reports.Run{loadStored(t)}},
		{"two runs of four modes", []*reports.Run{fixtureRun(t, "base", four), fixtureRun(t, "cand", cand)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files, pr := renderInChromium(t, bin, tc.runs...)
			t.Logf("summary ends at %d px of a %d px page; %d images", pr.SummaryBottom, pr.PageHeight, pr.Images)
			if want := len(files.Plots) / 2; pr.Images != want || pr.Broken != 0 {
				t.Errorf("Chromium saw %d images, %d broken; want %d, none broken", pr.Images, pr.Broken, want)
			}
			if pr.SummaryBottom <= 0 || pr.SummaryBottom > maxSummaryPx {
				t.Errorf("the summary ends at %d px (page %d px), want within %d px", pr.SummaryBottom, pr.PageHeight, maxSummaryPx)
			}
			if !strings.Contains(pr.YAML, "lockDuration: 30s") || strings.Contains(pr.YAML, "30000000000") {
				t.Errorf("the workload block does not show the YAML with Go durations:\n%s", pr.YAML)
			}
			if pr.NoAnomalyLines != 1 {
				t.Errorf("%d \"No anomalies\" lines in the summary, want 1", pr.NoAnomalyLines)
			}
			if !strings.Contains(pr.Noise, "load average") || !strings.Contains(pr.Noise, "busy") {
				t.Errorf("noise note = %q, want the load average and the CPU share", pr.Noise)
			}
			for id, inSummary := range map[string]bool{
				"fig-spectrum-end_to_end": true, "fig-bars-latency": true,
				"fig-spectrum-produce": false, "fig-spectrum-send_lag": false, "fig-anomalies-explicit": false,
			} {
				f, ok := pr.Figures[id]
				switch {
				case !ok:
					t.Errorf("no figure %s", id)
				case !f.Loaded:
					t.Errorf("figure %s: its image did not load", id)
				case f.InSummary != inSummary:
					t.Errorf("figure %s in the summary: %v, want %v", id, f.InSummary, inSummary)
				}
			}
			for _, id := range []string{"fig-anomalies-implicit", "fig-anomalies-transactional"} {
				if _, ok := pr.Figures[id]; ok {
					t.Errorf("figure %s drawn for a mode without findings", id)
				}
			}
		})
	}
}

// renderInChromium generates the report of runs, opens it with the probe
// in Chromium 1280 px wide and returns what the probe measured.
func renderInChromium(t *testing.T, bin string, runs ...*reports.Run) (reports.Files, probe) {
	t.Helper()
	dir := t.TempDir()
	files, err := reports.Generate(filepath.Join(dir, "report"), runs...)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	page := read(t, files.HTML)
	if !strings.Contains(page, "</body>") {
		t.Fatal("report.html has no </body>")
	}
	probePath := filepath.Join(dir, "report", "probe.html")
	if err := os.WriteFile(probePath, []byte(strings.Replace(page, "</body>", pageProbe+"</body>", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	// The deadline only stops a hung browser; nothing is timed.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--headless", "--disable-gpu", "--no-sandbox", "--disable-dev-shm-usage",
		"--no-first-run", "--hide-scrollbars", "--window-size=1280,1000", "--user-data-dir="+filepath.Join(dir, "profile"),
		"--virtual-time-budget=10000", "--dump-dom", "file://"+probePath)
	cmd.Env = append(os.Environ(), "HOME="+dir)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s --dump-dom: %v\n%s", bin, err, stderr.String())
	}
	m := probeAttr.FindSubmatch(out)
	if m == nil {
		t.Fatalf("the probe did not run: no data-probe attribute in Chromium's DOM (%d bytes); stderr:\n%s", len(out), stderr.String())
	}
	var pr probe
	if err := json.Unmarshal([]byte(html.UnescapeString(string(m[1]))), &pr); err != nil {
		t.Fatalf("the probe's JSON: %v\n%s", err, m[1])
	}
	return files, pr
}
