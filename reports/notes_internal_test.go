package reports

import (
	"strings"
	"testing"

	"github.com/sharebench/sharebench/loadgen/result"
	"github.com/sharebench/sharebench/vocab"
)

// modeRun is a run of one repeat per mode, each verified with counts
// (nil: not verified) and noise.
func modeRun(label string, cpus int, modes map[string]*result.ModeResult) *runData {
	r := &result.Result{Schema: result.Schema, Env: result.Env{NumCPU: cpus}}
	for _, name := range []string{"implicit", "explicit", "transactional"} {
		if m := modes[name]; m != nil {
			m.Mode = vocab.Mode(name)
			r.Modes = append(r.Modes, *m)
		}
	}
	return prepare(&Run{Name: label, Result: r}, label)
}

func verified(counts map[vocab.Finding]int64) *result.Verification {
	return &result.Verification{Pass: true, Counts: counts}
}

func TestAnomalySummary(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name        string
		runs        []*runData
		wantLine    string
		wantCharted []string
	}{
		{"every mode clean", []*runData{modeRun("a", 2, map[string]*result.ModeResult{
			"implicit": {Verify: verified(nil)}, "transactional": {Verify: verified(map[vocab.Finding]int64{"lost": 0})}})},
			"No anomalies: the verifier found nothing of any kind in any mode (implicit, transactional).", nil},
		{"one mode with findings", []*runData{modeRun("a", 2, map[string]*result.ModeResult{
			"implicit": {Verify: verified(nil)}, "explicit": {Verify: verified(map[vocab.Finding]int64{"duplicate": 3})}})},
			"No anomalies in implicit: every verifier count is zero. Verifier findings in explicit are charted in the report's Anomalies section.",
			[]string{"explicit"}},
		{"informational findings are charted too", []*runData{modeRun("a", 2, map[string]*result.ModeResult{
			"explicit": {Verify: verified(map[vocab.Finding]int64{"rejected": 4})}})},
			"Verifier findings in explicit are charted in the report's Anomalies section.", []string{"explicit"}},
		{"not verified", []*runData{modeRun("a", 2, map[string]*result.ModeResult{
			"implicit": {Verify: verified(nil)}, "transactional": {}})},
			"No anomalies in implicit: every verifier count is zero. Not verified: transactional.", nil},
		{"findings in the second run only", []*runData{
			modeRun("a", 2, map[string]*result.ModeResult{"implicit": {Verify: verified(nil)}}),
			modeRun("b", 2, map[string]*result.ModeResult{"implicit": {Verify: verified(map[vocab.Finding]int64{"duplicate": 1})}})},
			"Verifier findings in implicit are charted in the report's Anomalies section.", []string{"implicit"}},
		{"nothing measured", []*runData{modeRun("a", 2, map[string]*result.ModeResult{
			"implicit": {Unsupported: "no"}})}, "", nil},
	} {
		line, charted := anomalySummary(tt.runs)
		if line != tt.wantLine || strings.Join(charted, ",") != strings.Join(tt.wantCharted, ",") {
			t.Errorf("%s: anomalySummary = %q, charted %q; want %q, %q", tt.name, line, charted, tt.wantLine, tt.wantCharted)
		}
	}
}

func TestNoiseNote(t *testing.T) {
	t.Parallel()
	noise := func(start, end []float64, share float64) *result.ModeResult {
		return &result.ModeResult{Noise: &result.Noise{LoadAvgStart: start, LoadAvgEnd: end, CPUShare: share, GOMAXPROCS: 2}}
	}
	for _, tt := range []struct {
		name string
		run  *runData
		want string
	}{
		{"quiet machine", modeRun("a", 4, map[string]*result.ModeResult{
			"implicit":      noise([]float64{0.5, 0.4, 0.3}, []float64{1.25, 0.5, 0.3}, 0.41),
			"transactional": noise([]float64{1.25, 0.5, 0.3}, []float64{1.5, 0.6, 0.3}, 0.63)}),
			"1-minute load average 0.50–1.50 at the opening and closing of 2 windows on 4 CPUs; sharebench kept 41–63% of its 2 Ps busy (CPU time ÷ wall time ÷ GOMAXPROCS in each window)."},
		{"oversubscribed", modeRun("a", 2, map[string]*result.ModeResult{
			"implicit": noise([]float64{3, 1, 1}, []float64{3, 1, 1}, 0.5)}),
			"1-minute load average 3.00 at the opening and closing of 1 window on 2 CPUs; sharebench kept 50% of its 2 Ps busy (CPU time ÷ wall time ÷ GOMAXPROCS in each window). " +
				"The load exceeded the 2 CPUs: runnable threads waited for a CPU, so the tail latencies may show the machine rather than the system under test."},
		{"an OS without load average or CPU time", modeRun("a", 2, map[string]*result.ModeResult{
			"implicit": noise(nil, nil, -1)}),
			"load average unknown (the OS does not report it); the process's CPU share unknown (the OS does not report its CPU time)."},
		{"a result from before noise was recorded", modeRun("a", 2, map[string]*result.ModeResult{
			"implicit": {}}),
			"not recorded (the result was written before sharebench recorded the load average and CPU share of each window)."},
	} {
		lines, rows := noiseNote([]*runData{tt.run})
		if got := strings.Join(lines, " "); got != tt.want {
			t.Errorf("%s: noiseNote =\n%q\nwant\n%q", tt.name, got, tt.want)
		}
		if tt.run.modes[0].repeats[0].m.Noise != nil && len(rows) != len(tt.run.modes) {
			t.Errorf("%s: %d noise rows, want one per window (%d)", tt.name, len(rows), len(tt.run.modes))
		}
	}
}
