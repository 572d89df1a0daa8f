// This file tests the report of a run that did not finish: interrupted
// (a mode stopped, modes never started) or with a mode that failed before
// its verdict. Its headline, table and summary say INCONCLUSIVE and name
// every mode without a verdict, never PASS; a forbidden anomaly stays FAIL.

package reports_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/sharebench/sharebench/loadgen/result"
	"github.com/sharebench/sharebench/reports"
)

func TestGenerateUnfinishedRun(t *testing.T) {
	t.Parallel()
	base := fixture{seed: 3, repeats: 1, modes: []string{"implicit", "explicit", "transactional", "deferred"},
		samples: 200, throughput: 1, latency: 1, noise: 0.01}
	// interrupt stops explicit and leaves the modes after it unstarted, as
	// loadgen.Run records an interrupt.
	interrupt := func(r *result.Result) {
		r.Interrupted = true
		i := slices.IndexFunc(r.Modes, func(m result.ModeResult) bool { return m.Mode == "explicit" })
		r.Modes[i].Interrupted, r.Modes[i].Error, r.Modes[i].Verify = true, "interrupted before the mode finished", nil
		for _, m := range r.Modes[i+1:] {
			r.NotRun = append(r.NotRun, result.ModeRef{Mode: m.Mode, Repeat: m.Repeat})
		}
		r.Modes = r.Modes[:i+1]
	}
	for _, tc := range []struct {
		name     string
		fixture  fixture
		edit     func(r *result.Result)
		headline string   // the banner and summary.md's first line
		rows     []string // in summary.md
		absent   []string // in neither file
	}{
		{name: "interrupted", fixture: base, edit: interrupt,
			headline: "Exactly-once verifier: INCONCLUSIVE — the run was interrupted: explicit interrupted before it finished; " +
				"transactional never ran (the run was interrupted first); deferred never ran (the run was interrupted first)",
			rows: []string{
				"| implicit | 1 |", // measured and verified: its row keeps its figures
				"| explicit | 0 | — | — | — | — | — | — | — | — | — | — | — | — | ❌ **INCONCLUSIVE: no verdict** — interrupted before it finished |",
				"| transactional | 0 | — | — | — | — | — | — | — | — | — | — | — | — | ❌ **INCONCLUSIVE: no verdict** — never ran (the run was interrupted first) |",
				"| deferred | 0 | — | — | — | — | — | — | — | — | — | — | — | — | ❌ **INCONCLUSIVE: no verdict** — never ran (the run was interrupted first) |",
			},
			absent: []string{"Exactly-once verifier: PASS", "failed: "}},
		{name: "a mode failed before its verdict", fixture: base,
			edit: func(r *result.Result) {
				r.Modes[1].Error, r.Modes[1].Verify, r.Modes[1].Histograms = "engine: crashed; restart it from its data directory", nil, nil
			},
			headline: "Exactly-once verifier: INCONCLUSIVE — the run is unfinished: explicit failed before its verdict",
			rows:     []string{"❌ **INCONCLUSIVE: no verdict** — failed: repeat 1: engine: crashed; restart it from its data directory |"},
			absent:   []string{"Exactly-once verifier: PASS"}},
		{name: "one repeat of two interrupted", fixture: fixture{seed: 3, repeats: 2, modes: []string{"implicit", "explicit"}, samples: 200, throughput: 1, latency: 1, noise: 0.01},
			edit: func(r *result.Result) {
				r.Interrupted = true
				r.Modes[3].Interrupted, r.Modes[3].Error, r.Modes[3].Verify = true, "interrupted before the mode finished", nil
			},
			headline: "Exactly-once verifier: INCONCLUSIVE — the run was interrupted: explicit 1 of 2 repeats interrupted before it finished",
			rows:     []string{"❌ **INCONCLUSIVE: 1 of 2 repeats interrupted before it finished** |"},
			absent:   []string{"Exactly-once verifier: PASS"}},
		{name: "a forbidden anomaly in an interrupted run stays FAIL", fixture: func() fixture { f := base; f.forbidden = true; return f }(),
			edit: func(r *result.Result) {
				interrupt(r)
				// transactional ran first here, with its anomaly.
				r.Modes = append(r.Modes, newFixture(t, fixture{seed: 3, repeats: 1, modes: []string{"transactional"}, samples: 200, throughput: 1, latency: 1, forbidden: true}).Modes...)
				r.NotRun = slices.DeleteFunc(r.NotRun, func(m result.ModeRef) bool { return m.Mode == "transactional" })
			},
			headline: "Exactly-once verifier: FAIL — transactional: duplicate",
			rows:     []string{"| deferred | 0 |"},
			absent:   []string{"Exactly-once verifier: PASS"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := newFixture(t, tc.fixture)
			tc.edit(r)
			files, err := reports.Generate(t.TempDir(), &reports.Run{Name: "run", Dir: "fixture/run", Result: r})
			if err != nil {
				t.Fatalf("Generate: %v", err)
			}
			page, md := read(t, files.HTML), read(t, files.Markdown)
			if want := `<div class="banner fail">` + tc.headline + `</div>`; !strings.Contains(page, want) {
				t.Errorf("report.html's banner is not\n  %s\n%s", want, bannerOf(page))
			}
			first := strings.SplitN(md, "\n", 4)
			if want := "❌ **" + tc.headline + "**"; len(first) < 3 || first[2] != want {
				t.Errorf("summary.md's headline is not\n  %s\n%s", want, md)
			}
			for _, row := range tc.rows {
				if !strings.Contains(md, row) {
					t.Errorf("summary.md lacks %q:\n%s", row, md)
				}
			}
			for _, modeRow := range r.NotRun {
				if !strings.Contains(page, `<tr data-mode="`+modeRow.Mode.String()+`"`) {
					t.Errorf("report.html has no row for %s, which never ran", modeRow.Mode)
				}
			}
			for _, no := range tc.absent {
				if strings.Contains(page, no) || strings.Contains(md, no) {
					t.Errorf("the report says %q", no)
				}
			}
		})
	}
}

// bannerOf returns the banner line of report.html, for a failure message.
func bannerOf(page string) string {
	for _, l := range strings.Split(page, "\n") {
		if strings.Contains(l, `class="banner`) {
			return "  got " + l
		}
	}
	return "  (no banner)"
}
