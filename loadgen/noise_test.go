package loadgen

import (
	"os"
	"reflect"
	"runtime"
	"testing"
	"time"

	"github.com/sharebench/sharebench/workloads"
)

func TestParseLoadAvg(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		in   string
		want []float64
	}{
		{"0.52 0.58 0.59 1/467 12345\n", []float64{0.52, 0.58, 0.59}},
		{"12.00 7.5 3 9/900 1", []float64{12, 7.5, 3}},
		{"", nil},
		{"0.52 0.58", nil},
		{"0.52 x 0.59 1/467 12345", nil},
		{"-1 0 0 1/1 1", nil},
	} {
		if got := parseLoadAvg(tt.in); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("parseLoadAvg(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestNoiseBetween(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	a := noiseProbe{at: at, cpuNs: int64(time.Second), loadAvg: []float64{1, 2, 3}, procs: 4}
	b := noiseProbe{at: at.Add(2 * time.Second), cpuNs: int64(5 * time.Second), loadAvg: []float64{4, 5, 6}}
	n := noiseBetween(a, b)
	// 4 s of CPU over 2 s of wall time on 4 Ps: half of them.
	if n.CPUShare != 0.5 || n.GOMAXPROCS != 4 || !reflect.DeepEqual(n.LoadAvgStart, a.loadAvg) || !reflect.DeepEqual(n.LoadAvgEnd, b.loadAvg) {
		t.Errorf("noiseBetween = %+v, want CPU share 0.5 of 4 Ps and the two load averages", n)
	}
	b.cpuNs = -1
	if n := noiseBetween(a, b); n.CPUShare != -1 {
		t.Errorf("CPU share without a CPU time = %v, want -1 (unknown)", n.CPUShare)
	}
}

// TestRunRecordsNoiseAndYAML checks that a run records, beside its
// figures, the noise of each window and the workload as YAML that reads
// back as the spec that ran.
func TestRunRecordsNoiseAndYAML(t *testing.T) {
	t.Parallel()
	spec := quickSpec(t, "implicit")
	spec.TestLength = 500 * time.Millisecond
	notes := []string{"a note on how the file was read"}
	res, err := Run(runCtx(t), Config{Workload: spec, WorkloadNotes: notes, Target: newMemTarget(), Seed: testSeed})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	back, err := workloads.Parse("recorded.yaml", []byte(res.SpecYAML))
	if err != nil {
		t.Fatalf("the recorded workload_yaml does not parse: %v\n%s", err, res.SpecYAML)
	}
	if !reflect.DeepEqual(back, spec) {
		t.Errorf("workload_yaml reads back as\n%+v\nwant the spec that ran\n%+v", back, spec)
	}
	if !reflect.DeepEqual(res.SpecNotes, notes) {
		t.Errorf("workload_notes = %q, want %q", res.SpecNotes, notes)
	}
	for _, m := range res.Modes {
		n := m.Noise
		if n == nil {
			t.Fatalf("%s: no noise recorded for a window that opened", m.Mode)
		}
		if n.GOMAXPROCS != runtime.GOMAXPROCS(0) {
			t.Errorf("%s: noise GOMAXPROCS %d, want %d", m.Mode, n.GOMAXPROCS, runtime.GOMAXPROCS(0))
		}
		if processCPUNs() >= 0 && !(n.CPUShare > 0) {
			t.Errorf("%s: CPU share %v where the process's CPU time is known, want above 0", m.Mode, n.CPUShare)
		}
		if _, err := os.Stat(loadAvgFile); err == nil && (len(n.LoadAvgStart) != 3 || len(n.LoadAvgEnd) != 3) {
			t.Errorf("%s: load averages %v → %v, want three each where %s exists", m.Mode, n.LoadAvgStart, n.LoadAvgEnd, loadAvgFile)
		}
	}
}
