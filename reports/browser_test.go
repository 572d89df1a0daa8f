package reports_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
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

// imageProbe is appended to a copy of the report (the report itself has no
// script): once the page has loaded it records how many images there are
// and how many failed to decode.
const imageProbe = `<script>
window.addEventListener("load", function () {
  var imgs = Array.prototype.slice.call(document.images);
  var broken = imgs.filter(function (i) { return !i.complete || i.naturalWidth === 0; });
  document.body.setAttribute("data-images", String(imgs.length));
  document.body.setAttribute("data-broken-images", String(broken.length));
});
</script>`

var probeResult = regexp.MustCompile(`data-images="(\d+)" data-broken-images="(\d+)"`)

// TestReportImagesLoadInChromium opens report.html in headless Chromium
// and checks that every plot image decodes in a real browser.
func TestReportImagesLoadInChromium(t *testing.T) {
	if testing.Short() {
		t.Skip("starts headless Chromium; skipped with -short")
	}
	bin := chromium()
	if bin == "" {
		t.Skip("no chromium or chromium-browser found: install Debian's chromium to run this test; .ci/run installs it")
	}
	dir := t.TempDir()
	files, err := reports.Generate(filepath.Join(dir, "report"), loadStored(t))
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	page := read(t, files.HTML)
	if !strings.Contains(page, "</body>") {
		t.Fatal("report.html has no </body>")
	}
	probe := filepath.Join(dir, "report", "probe.html")
	if err := os.WriteFile(probe, []byte(strings.Replace(page, "</body>", imageProbe+"</body>", 1)), 0o644); err != nil {
		t.Fatal(err)
	}

	// The deadline only stops a hung browser; nothing is timed.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--headless", "--disable-gpu", "--no-sandbox", "--disable-dev-shm-usage",
		"--no-first-run", "--user-data-dir="+filepath.Join(dir, "profile"),
		"--virtual-time-budget=10000", "--dump-dom", "file://"+probe)
	cmd.Env = append(os.Environ(), "HOME="+dir)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s --dump-dom: %v\n%s", bin, err, stderr.String())
	}
	m := probeResult.FindSubmatch(out)
	if m == nil {
		t.Fatalf("the probe did not run: no data-images attribute in Chromium's DOM (%d bytes); stderr:\n%s", len(out), stderr.String())
	}
	images, _ := strconv.Atoi(string(m[1]))
	broken, _ := strconv.Atoi(string(m[2]))
	if want := len(files.Plots) / 2; images != want || broken != 0 {
		t.Errorf("Chromium saw %d images, %d broken; want %d, none broken", images, broken, want)
	}
}
