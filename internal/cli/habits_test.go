// This file tests the command line's fit with its users' habits: help for
// a command, error lines that name the flag or file and never an internal
// package, progress lines under 80 columns, the chaos workload with no
// other flag, and Kafka's flag names.

package cli_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/sharebench/sharebench/loadgen/result"
	"github.com/sharebench/sharebench/reports"
)

func TestHelpCommand(t *testing.T) {
	t.Parallel()
	o := sharebench(t, "help", "run")
	if o.code != reports.ExitOK || !strings.Contains(o.stdout, "Usage: sharebench run") || !strings.Contains(o.stdout, "--bootstrap-server") {
		t.Fatalf("help run: %v", o)
	}
	o = sharebench(t, "help", "gate")
	if o.code != reports.ExitOK || !strings.Contains(o.stdout, "--threshold-only") || !strings.Contains(o.stdout, "--allow-mismatch") {
		t.Fatalf("help gate: %v", o)
	}
}

// internalPrefix matches a library package prefix in an error line.
var internalPrefix = regexp.MustCompile(`(^|: |; )(loadgen|workloads|target|result|reports|engine|verify|stats|bad configuration)( target)?: `)

func TestErrorLinesNameNoPackage(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"run", "--modes", "sometimes"},
		{"run", "--format", "xml"},
		{"run", "--workload", "testdata/bad-type.yaml"},
		{"run", "--workload", "testdata/nope.yaml"},
		{"run", "--target", "kafka", "--command-config", "testdata/nope.properties"},
		{"run", "--command-config", "x.properties"},
		{"compare", "--baseline", "testdata/nope", "--candidate", "testdata/nope"},
	} {
		o := sharebench(t, args...)
		ls := lines(o.stderr)
		if o.code != reports.ExitUsage || len(ls) != 1 {
			t.Errorf("%v: want exit 2 and one line: %v", args, o)
			continue
		}
		msg := strings.TrimPrefix(ls[0], "sharebench "+args[0]+": ")
		if internalPrefix.MatchString(msg) {
			t.Errorf("%v: the error line names an internal package: %q", args, ls[0])
		}
	}
}

func TestProgressLinesFit80Columns(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs two modes for 1.2s each")
	}
	o := sharebench(t, "run", "--workload", tinyWorkload, "--duration", "1200ms", "--out", t.TempDir(), "--no-report")
	if o.code != reports.ExitOK {
		t.Fatalf("run: %v", o)
	}
	progress, verifying := 0, 0
	for _, l := range lines(o.stderr) {
		if !strings.HasPrefix(l, "explicit ") && !strings.HasPrefix(l, "transactional ") {
			continue
		}
		progress++
		if strings.Contains(l, "verifying") {
			verifying++
		}
		if n := utf8.RuneCountInString(l); n >= 80 {
			t.Errorf("a %d-column progress line: %q", n, l)
		}
	}
	if progress == 0 || verifying != 2 {
		t.Errorf("%d progress lines, %d saying verifying (want one per mode):\n%s", progress, verifying, o.stderr)
	}
}

// TestChaosWithoutDataDir runs the chaos built-in without --data-dir: its
// engine-side faults get a temporary data directory, said on the output
// and removed after the run.
func TestChaosWithoutDataDir(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs the chaos workload's 10s")
	}
	out := t.TempDir()
	o := sharebench(t, "run", "--workload", "chaos", "--modes", "transactional", "--out", out, "--quiet", "--no-report")
	if o.code != reports.ExitOK {
		t.Fatalf("chaos: %v", o)
	}
	m := regexp.MustCompile(`temporary directory (\S+), removed after the run`).FindStringSubmatch(o.stderr)
	if m == nil {
		t.Fatalf("the run does not say where its data went: %v", o)
	}
	if _, err := os.Stat(m[1]); !os.IsNotExist(err) {
		t.Errorf("temporary data directory %s left behind (%v)", m[1], err)
	}
	res, err := result.Read(filepath.Join(out, result.FileName))
	if err != nil {
		t.Fatal(err)
	}
	faults := map[string]bool{}
	for _, f := range res.Modes[0].Faults {
		faults[f.Kind] = true
	}
	if !faults["engine-restart"] || !faults["coordinator-crash"] {
		t.Errorf("engine-side faults did not run: %v", faults)
	}
}

func TestFaultTheTargetCannotRun(t *testing.T) {
	t.Parallel()
	o := sharebench(t, "run", "--workload", "chaos", "--target", "kafka", "--out", t.TempDir(), "--quiet")
	ls := lines(o.stderr)
	if o.code != reports.ExitUsage || !strings.Contains(o.stderr, "needs control of the kafka target") || !strings.Contains(o.stderr, "--broker-control") {
		t.Fatalf("want exit 2 and the fault named before any load: %v", o)
	}
	if n := strings.Count(o.stderr, "needs control"); n != 1 {
		t.Errorf("the refusal is printed %d times, want once: %v", n, o)
	}
	for _, l := range ls {
		if strings.HasPrefix(l, "implicit ") || strings.HasPrefix(l, "explicit ") {
			t.Errorf("load ran before the refusal: %q", l)
		}
	}
}

// TestEveryWorkloadErrorInOneRun: each problem of a file on its own line,
// naming the file and line, in one run.
func TestEveryWorkloadErrorInOneRun(t *testing.T) {
	t.Parallel()
	o := sharebench(t, "run", "--workload", "testdata/two-errors.yaml")
	ls := lines(o.stderr)
	if o.code != reports.ExitUsage || len(ls) != 2 {
		t.Fatalf("want exit 2 and two lines: %v", o)
	}
	for i, want := range []string{"testdata/two-errors.yaml:2:", "testdata/two-errors.yaml:3:"} {
		if !strings.HasPrefix(ls[i], "sharebench run: "+want) {
			t.Errorf("line %d %q, want it to start with the command and %s", i, ls[i], want)
		}
	}
}

// writeRun writes a minimal run directory: one explicit repeat of a
// workload at a rate.
func writeRun(t *testing.T, workload string, rate float64, throughput float64) string {
	t.Helper()
	dir := t.TempDir()
	r := &result.Result{Workload: workload, Spec: []byte(`{"name":"` + workload + `"}`), OpenLoop: rate > 0, Rate: rate,
		Env: result.Env{Target: "engine"}, Repeats: 1,
		Modes: []result.ModeResult{{Mode: "explicit", Throughput: throughput, OutputsVisible: 1000, MeasuredNs: 1e9,
			Verify: &result.Verification{Pass: true}}}}
	if err := result.Write(filepath.Join(dir, result.FileName), r); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestCompareAndGateRefuseMismatch(t *testing.T) {
	t.Parallel()
	quick := writeRun(t, "quick", 2000, 2000)
	omb := writeRun(t, "omb-16", 50000, 50000)
	for _, cmd := range []string{"compare", "gate"} {
		o := sharebench(t, cmd, "--baseline", quick, "--candidate", omb)
		if o.code != reports.ExitUsage || !strings.Contains(o.stderr, "workload quick in") || !strings.Contains(o.stderr, "rate 2000 records/s in") ||
			!strings.Contains(o.stderr, "--allow-mismatch") {
			t.Errorf("%s of another workload and rate: want exit 2 naming both differences and the flag: %v", cmd, o)
		}
	}
	o := sharebench(t, "compare", "--baseline", quick, "--candidate", omb, "--allow-mismatch")
	if o.code != reports.ExitOK || !strings.Contains(o.stderr, "warning") {
		t.Errorf("compare --allow-mismatch: want exit 0 and a warning: %v", o)
	}
}

func TestGateTooFewRepeats(t *testing.T) {
	t.Parallel()
	base, cand := writeRun(t, "quick", 2000, 2000), writeRun(t, "quick", 2000, 1000)
	o := sharebench(t, "gate", "--baseline", base, "--candidate", cand)
	if o.code != reports.ExitUsage || !strings.Contains(o.stdout, "too few repeats") || !strings.Contains(o.stdout, "at least 4 repeats a side") ||
		!strings.Contains(o.stdout, "--threshold-only") {
		t.Errorf("gate with one repeat a side: want exit 2 saying 4 are needed and naming --threshold-only: %v", o)
	}
	o = sharebench(t, "gate", "--baseline", base, "--candidate", cand, "--threshold-only")
	if o.code != reports.ExitRegression {
		t.Errorf("gate --threshold-only, throughput halved: want exit 4: %v", o)
	}
}

// TestGatePaired: --paired pairs the i-th runs of each side: seven pairs
// whose level varies 3× between pairs, each candidate 10% slower than its
// baseline, fail on throughput; five pairs are too few; unequal sides
// are refused, naming the counts.
func TestGatePaired(t *testing.T) {
	t.Parallel()
	var args []string
	for i := range 7 {
		level := 1000 * (1 + float64((i*3)%7)/3)
		args = append(args, "--baseline", writeRun(t, "quick", 2000, level), "--candidate", writeRun(t, "quick", 2000, 0.9*level))
	}
	o := sharebench(t, append([]string{"gate", "--paired"}, args...)...)
	if o.code != reports.ExitRegression || !strings.Contains(o.stdout, "Wilcoxon signed-rank") || !strings.Contains(o.stdout, "REGRESSION") {
		t.Errorf("gate --paired, every pair 10%% slower: want exit 4 naming the signed-rank test: %v", o)
	}
	o = sharebench(t, append([]string{"gate", "--paired"}, args[:len(args)-8]...)...)
	if o.code != reports.ExitUsage || !strings.Contains(o.stdout, "at least 6 pairs") {
		t.Errorf("gate --paired with 5 pairs: want exit 2 saying 6 are needed: %v", o)
	}
	o = sharebench(t, append([]string{"gate", "--paired"}, args[:len(args)-2]...)...)
	if o.code != reports.ExitUsage || !strings.Contains(o.stderr, "7 baseline runs and 6 candidate runs") {
		t.Errorf("gate --paired with unequal sides: want exit 2 naming the counts: %v", o)
	}
}
