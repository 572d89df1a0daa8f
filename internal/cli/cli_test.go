// This file tests the command line through Main with buffers for stdout and
// stderr: runs of a tiny workload in every output format, one run of the
// real 'quick' built-in, and bad input, which must give exit code 2 (or 1
// for an unreachable cluster) and one clear line, never a panic.

package cli_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/sharebench/sharebench/internal/cli"
	"github.com/sharebench/sharebench/loadgen/result"
	"github.com/sharebench/sharebench/reports"
	"github.com/sharebench/sharebench/vocab"
	"github.com/sharebench/sharebench/workloads"
)

// tinyWorkload runs explicit and transactional for half a second each.
const tinyWorkload = "testdata/tiny.yaml"

type outcome struct {
	code           int
	stdout, stderr string
}

// sharebench runs the command line with args and returns what it printed.
// A panic fails the test with the command that caused it.
func sharebench(t *testing.T, args ...string) (o outcome) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	env := &cli.Env{Stdout: &stdout, Stderr: &stderr, Getenv: func(string) string { return "" }}
	defer func() {
		if r := recover(); r != nil {
			t.Fatalf("sharebench %s panicked: %v", strings.Join(args, " "), r)
		}
	}()
	o.code = cli.Main(append([]string{"sharebench"}, args...), env)
	o.stdout, o.stderr = stdout.String(), stderr.String()
	return o
}

func (o outcome) String() string {
	return fmt.Sprintf("exit %d\n--- stdout:\n%s--- stderr:\n%s", o.code, o.stdout, o.stderr)
}

// lines returns the non-empty lines of s.
func lines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.TrimSpace(l) != "" {
			out = append(out, l)
		}
	}
	return out
}

func TestRunTinyWorkloadText(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	o := sharebench(t, "run", "--workload", tinyWorkload, "--out", out, "--quiet", "--no-report", "--seed", "7")
	if o.code != reports.ExitOK {
		t.Fatalf("run: %v", o)
	}
	ls := lines(o.stdout)
	if len(ls) < 4 {
		t.Fatalf("want a header, a table head and two mode rows on stdout: %v", o)
	}
	checkFootnotes(t, ls[4:])
	if !strings.HasPrefix(ls[0], "workload "+tinyWorkload+" · target engine · open loop, 1000 records/s · 500ms measured after 0s warm-up · seed 7") {
		t.Errorf("header line %q", ls[0])
	}
	if f := strings.Fields(ls[1]); len(f) == 0 || f[0] != "mode" || !strings.HasSuffix(ls[1], "exactly-once") {
		t.Errorf("table head %q", ls[1])
	}
	for i, mode := range []string{"explicit", "transactional"} {
		f := strings.Fields(ls[2+i])
		if len(f) < 2 || f[0] != mode || f[len(f)-1] != "PASS" {
			t.Errorf("row for %s: %q, want it to pass", mode, ls[2+i])
		}
	}
	// --quiet: no progress lines, only the seed line, the target's note
	// and where the artifacts are.
	if !strings.Contains(o.stderr, "seed 7 (repeat with: sharebench run --workload "+tinyWorkload+" --seed 7") {
		t.Errorf("stderr lacks the repro line: %v", o)
	}
	if strings.Contains(o.stderr, "e2e p99") {
		t.Errorf("progress lines despite --quiet: %v", o)
	}
	if !strings.Contains(o.stderr, "artifacts in "+out) {
		t.Errorf("stderr does not say where the artifacts are: %v", o)
	}
	if _, err := result.Read(filepath.Join(out, result.FileName)); err != nil {
		t.Errorf("result.json: %v", err)
	}
	if _, err := os.Stat(filepath.Join(out, "report")); !os.IsNotExist(err) {
		t.Errorf("--no-report, yet a report: %v", err)
	}
}

func TestRunTinyWorkloadJSONAndVerify(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	args := []string{"run", "--workload", tinyWorkload, "--out", out, "--quiet", "--no-report", "--seed", "11", "--format", "json", "--dump-ledgers"}
	o := sharebench(t, args...)
	if o.code != reports.ExitOK {
		t.Fatalf("run: %v", o)
	}
	var r result.Result
	if err := json.Unmarshal([]byte(o.stdout), &r); err != nil {
		t.Fatalf("stdout is not a JSON result: %v\n%v", err, o)
	}
	if r.Schema != result.Schema || r.Seed != 11 || r.Workload != tinyWorkload || r.Env.Target != "engine" || len(r.Modes) != 2 {
		t.Fatalf("result: schema %q seed %d workload %q target %q modes %d", r.Schema, r.Seed, r.Workload, r.Env.Target, len(r.Modes))
	}
	// The result records the command line it was given and every flag.
	if want := append([]string{"sharebench"}, args...); !reflect.DeepEqual(r.Args, want) {
		t.Errorf("args %q, want %q", r.Args, want)
	}
	if r.Flags["format"] != "json" || r.Flags["seed"] != "11" || r.Flags["target"] != "engine" {
		t.Errorf("flags %v", r.Flags)
	}
	for _, m := range r.Modes {
		if m.Verify == nil || !m.Verify.Pass || m.TotalInputs == 0 || m.TotalOutputs != m.TotalInputs {
			t.Errorf("%s: verdict %+v, %d inputs, %d outputs", m.Mode, m.Verify, m.TotalInputs, m.TotalOutputs)
		}
	}
	// The file holds the same document.
	f, err := result.Read(filepath.Join(out, result.FileName))
	if err != nil || f.Seed != r.Seed || len(f.Modes) != len(r.Modes) {
		t.Fatalf("result.json: %v, %+v", err, f)
	}

	// verify re-judges the dumped ledgers and agrees.
	v := sharebench(t, "verify", "--in", out)
	if v.code != reports.ExitOK {
		t.Fatalf("verify: %v", v)
	}
	for _, mode := range []string{"explicit", "transactional"} {
		if !strings.Contains(v.stdout, mode) {
			t.Errorf("verify output does not mention %s: %v", mode, v)
		}
	}
	if v := sharebench(t, "verify", "--in", out, "--mode", "explicit"); v.code != reports.ExitOK || strings.Contains(v.stdout, "transactional") {
		t.Errorf("verify --mode explicit: %v", v)
	}
}

// footnote is a line under the table: a warning about one mode. A run on a
// busy machine may miss its schedule and say so; that is not a failure.
var footnote = regexp.MustCompile(`^(implicit|explicit|deferred|transactional|classic-eos): warning: `)

func checkFootnotes(t *testing.T, ls []string) {
	t.Helper()
	for _, l := range ls {
		if !footnote.MatchString(l) {
			t.Errorf("unexpected line under the table: %q", l)
		}
	}
}

// benchLine is the Go benchmark line format benchstat reads: a name, an
// iteration count, then value-unit pairs.
var benchLine = regexp.MustCompile(`^Benchmark\S+\s+\d+\s+`)

func TestRunTinyWorkloadBench(t *testing.T) {
	t.Parallel()
	o := sharebench(t, "run", "--workload", tinyWorkload, "--out", t.TempDir(), "--quiet", "--no-report", "--seed", "3", "--format", "bench")
	if o.code != reports.ExitOK {
		t.Fatalf("run: %v", o)
	}
	var bench []string
	for _, l := range lines(o.stdout) {
		switch {
		case strings.HasPrefix(l, "Benchmark"):
			if !benchLine.MatchString(l) {
				t.Errorf("not a benchmark line: %q", l)
			}
			// Every value is followed by its unit.
			f := strings.Fields(l)
			if len(f)%2 != 0 {
				t.Errorf("benchmark line %q: values and units do not pair up", l)
			}
			bench = append(bench, l)
		case strings.HasPrefix(l, "goos: "), strings.HasPrefix(l, "goarch: "), strings.HasPrefix(l, "pkg: "), strings.HasPrefix(l, "cpu: "):
		default:
			t.Errorf("stdout line is neither a benchmark line nor a benchstat header: %q", l)
		}
	}
	if len(bench) != 2 || !strings.Contains(bench[0], "/mode=explicit-") || !strings.Contains(bench[1], "/mode=transactional-") {
		t.Fatalf("want one benchmark line per mode: %v", o)
	}
	if !strings.HasPrefix(bench[0], "BenchmarkSharebench/workload=testdata_tiny/target=engine/") || !strings.Contains(bench[0], " records/s") {
		t.Errorf("benchmark line %q", bench[0])
	}
}

// TestRunQuickBuiltin runs the real default workload, every mode, as a
// user's first `sharebench run` would (about 15s).
func TestRunQuickBuiltin(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("-short: skips the 15-second run of the quick built-in")
	}
	out := t.TempDir()
	o := sharebench(t, "run", "--workload", "quick", "--out", out, "--quiet")
	if o.code != reports.ExitOK {
		t.Fatalf("run: %v", o)
	}
	ls := lines(o.stdout)
	if len(ls) < 7 || !strings.HasPrefix(ls[0], "workload quick · target engine · open loop, 2000 records/s · 2s measured after 500ms warm-up") {
		t.Fatalf("stdout: %v", o)
	}
	checkFootnotes(t, ls[7:])
	for i, mode := range vocab.ModeNames() {
		f := strings.Fields(ls[2+i])
		if len(f) < 2 || f[0] != mode || f[len(f)-1] != "PASS" {
			t.Errorf("row for %s: %q, want it to pass", mode, ls[2+i])
		}
	}
	if strings.Contains(o.stderr, "report:") {
		t.Errorf("the report failed: %v", o)
	}
	r, err := result.Read(filepath.Join(out, result.FileName))
	if err != nil || len(r.Modes) != 5 {
		t.Fatalf("result.json: %v", err)
	}
}

// TestBadInput checks that every kind of bad input gets its exit code and
// one line on stderr naming the problem, and never runs anything.
func TestBadInput(t *testing.T) {
	t.Parallel()
	noLedgers := t.TempDir()
	for _, tc := range []struct {
		name string
		args []string
		code int
		want []string // substrings of the error line
	}{
		{"unknown-flag", []string{"run", "--bogus"}, reports.ExitUsage, []string{"unknown flag: --bogus", "sharebench run --help"}},
		{"unknown-mode", []string{"run", "--modes", "explicit,sometimes"}, reports.ExitUsage, []string{`unknown mode "sometimes"`, "classic-eos"}},
		{"malformed-workload-type", []string{"run", "--workload", "testdata/bad-type.yaml"}, reports.ExitUsage, []string{"testdata/bad-type.yaml:5:", `"consumers"`}},
		{"malformed-workload-yaml", []string{"run", "--workload", "testdata/bad-syntax.yaml"}, reports.ExitUsage, []string{"testdata/bad-syntax.yaml:4:", "malformed YAML"}},
		{"missing-workload", []string{"run", "--workload", "testdata/nope.yaml"}, reports.ExitUsage, []string{"testdata/nope.yaml", "quick"}},
		{"negative-rate", []string{"run", "--rate=-5"}, reports.ExitUsage, []string{"--rate -5", "negative"}},
		{"negative-rate-separate", []string{"run", "--rate", "-5"}, reports.ExitUsage, []string{"--rate -5"}},
		{"zero-duration", []string{"run", "--duration", "0s"}, reports.ExitUsage, []string{"--duration"}},
		{"repeat-0", []string{"run", "--repeat", "0"}, reports.ExitUsage, []string{"--repeat 0"}},
		{"unknown-format", []string{"run", "--format", "xml"}, reports.ExitUsage, []string{`unknown format "xml"`}},
		{"unknown-target", []string{"run", "--target", "pulsar"}, reports.ExitUsage, []string{`--target "pulsar"`}},
		{"brokers-without-kafka", []string{"run", "--brokers", "127.0.0.1:9092"}, reports.ExitUsage, []string{"--target kafka"}},
		{"unknown-knob", []string{"run", "--knobs", "fast"}, reports.ExitUsage, []string{`unknown knob "fast"`}},
		{"extra-argument", []string{"run", "quick"}, reports.ExitUsage, []string{`unexpected argument "quick"`}},
		{"verify-no-in", []string{"verify"}, reports.ExitUsage, []string{"--in is required"}},
		{"verify-no-ledgers", []string{"verify", "--in", noLedgers}, reports.ExitUsage, []string{noLedgers + " has no ledgers", "--dump-ledgers"}},
		{"show-unknown", []string{"workloads", "--show", "nope"}, reports.ExitUsage, []string{`no built-in workload "nope"`, "quick"}},
		{"unknown-command", []string{"benchmark"}, reports.ExitUsage, []string{`unknown command "benchmark"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			o := sharebench(t, tc.args...)
			if o.code != tc.code {
				t.Fatalf("exit %d, want %d: %v", o.code, tc.code, o)
			}
			ls := lines(o.stderr)
			if len(ls) != 1 {
				t.Fatalf("want one line on stderr: %v", o)
			}
			if !strings.HasPrefix(ls[0], "sharebench") {
				t.Errorf("error line %q does not start with the command", ls[0])
			}
			for _, w := range tc.want {
				if !strings.Contains(ls[0], w) {
					t.Errorf("error line %q does not contain %q", ls[0], w)
				}
			}
			if o.stdout != "" {
				t.Errorf("stdout not empty: %v", o)
			}
		})
	}
}

// closedPort returns a loopback address nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

func TestRunKafkaUnreachable(t *testing.T) {
	t.Parallel()
	addr := closedPort(t)
	o := sharebench(t, "run", "--target", "kafka", "--brokers", addr, "--out", t.TempDir(), "--quiet")
	if o.code == reports.ExitOK {
		t.Fatalf("run against a closed port succeeded: %v", o)
	}
	ls := lines(o.stderr)
	if len(ls) != 1 || !strings.Contains(ls[0], "cannot reach brokers "+addr) || !strings.Contains(ls[0], "--brokers") {
		t.Fatalf("want one line naming the brokers and the fix: %v", o)
	}
	if strings.Contains(o.stderr, "goroutine ") || strings.Contains(o.stderr, "panic") {
		t.Fatalf("a stack trace: %v", o)
	}
}

func TestRunKafkaTransactionalUnsupported(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	o := sharebench(t, "run", "--target", "kafka", "--modes", "transactional", "--out", out, "--quiet")
	if o.code != reports.ExitUsage {
		t.Fatalf("exit %d, want %d: %v", o.code, reports.ExitUsage, o)
	}
	ls := lines(o.stderr)
	if len(ls) != 1 || !strings.Contains(ls[0], "mode transactional") || !strings.Contains(ls[0], "--modes deferred") {
		t.Fatalf("want one line naming the mode and deferred as the alternative: %v", o)
	}
	if _, err := os.Stat(filepath.Join(out, result.FileName)); !os.IsNotExist(err) {
		t.Errorf("a result was written for a run that failed fast: %v", err)
	}
}

func TestWorkloadsList(t *testing.T) {
	t.Parallel()
	o := sharebench(t, "workloads")
	if o.code != reports.ExitOK {
		t.Fatalf("workloads: %v", o)
	}
	ls := lines(o.stdout)
	if len(ls) == 0 || !strings.HasPrefix(ls[0], "NAME") {
		t.Fatalf("no header: %v", o)
	}
	var names []string
	for _, l := range ls[1:] {
		names = append(names, strings.Fields(l)[0])
	}
	if want := workloads.Names(); !reflect.DeepEqual(names, want) {
		t.Fatalf("listed %v, want every built-in %v", names, want)
	}
	if !strings.Contains(o.stdout, "closed loop") || !strings.Contains(o.stdout, "2000/s") {
		t.Errorf("rates not shown: %v", o)
	}
}

func TestWorkloadsShowParses(t *testing.T) {
	t.Parallel()
	for _, name := range workloads.Names() {
		o := sharebench(t, "workloads", "--show", name)
		if o.code != reports.ExitOK {
			t.Fatalf("workloads --show %s: %v", name, o)
		}
		got, err := workloads.Parse(name+".yaml", []byte(o.stdout))
		if err != nil {
			t.Fatalf("workloads --show %s prints YAML that does not parse: %v\n%s", name, err, o.stdout)
		}
		// A setting left to the target's default is omitted, not shown as
		// an empty value the reader would have to interpret.
		for _, line := range strings.Split(o.stdout, "\n") {
			if strings.HasSuffix(line, `: ""`) {
				t.Errorf("workloads --show %s prints an empty setting: %q", name, line)
			}
		}
		want, _ := workloads.Lookup(name)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("workloads --show %s parses to\n%+v\nwant the built-in\n%+v", name, got, want)
		}
	}
}

func TestVersionAndHelp(t *testing.T) {
	t.Parallel()
	o := sharebench(t, "version")
	if o.code != reports.ExitOK || !strings.HasPrefix(o.stdout, "sharebench devel (commit ") || !strings.Contains(o.stdout, runtime.Version()) {
		t.Errorf("version: %v", o)
	}
	if o := sharebench(t, "--help"); o.code != reports.ExitOK || !strings.Contains(o.stdout, "Commands:") || !strings.Contains(o.stdout, "verify") {
		t.Errorf("--help: %v", o)
	}
	if o := sharebench(t); o.code != reports.ExitUsage || !strings.Contains(o.stdout, "Usage: sharebench COMMAND") {
		t.Errorf("no command: %v", o)
	}
	o = sharebench(t, "run", "--help")
	if o.code != reports.ExitOK || !strings.Contains(o.stdout, "Usage: sharebench run") || !strings.Contains(o.stdout, "--workload") || !strings.Contains(o.stdout, "Examples:") {
		t.Errorf("run --help: %v", o)
	}
}

// TestRunInconclusive: a drain too short to finish leaves inputs unjudged;
// the run says INCONCLUSIVE in the table and exits 5, and verify on its
// dumped ledgers agrees.
func TestRunInconclusive(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	o := sharebench(t, "run", "--workload", "testdata/backlog.yaml", "--out", out, "--quiet", "--no-report", "--seed", "3", "--dump-ledgers")
	if o.code != reports.ExitInconclusive {
		t.Fatalf("run: exit %d, want %d (inconclusive)\n%v", o.code, reports.ExitInconclusive, o)
	}
	if !strings.Contains(o.stdout, "INCONCLUSIVE") || !strings.Contains(o.stderr, "inconclusive") {
		t.Errorf("the table or the error line does not say inconclusive:\n%v", o)
	}
	r, err := result.Read(filepath.Join(out, result.FileName))
	if err != nil {
		t.Fatal(err)
	}
	if m := r.Modes[0]; !m.DrainTimedOut || m.Verify == nil || m.Verify.Verdict != "INCONCLUSIVE" || m.Verify.Pass {
		t.Fatalf("mode %s: drain timed out %v, verdict %+v", m.Mode, m.DrainTimedOut, m.Verify)
	}
	if v := sharebench(t, "verify", "--in", out); v.code != reports.ExitInconclusive || !strings.Contains(v.stdout, "INCONCLUSIVE") {
		t.Errorf("verify: %v", v)
	}
}

// TestVerifyJudgesEachModeOnItsOwn: a corrupt ledger in one mode's
// directory is reported with its file and line, the other modes are still
// judged, and the exit code is 2.
func TestVerifyJudgesEachModeOnItsOwn(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	if o := sharebench(t, "run", "--workload", tinyWorkload, "--out", out, "--quiet", "--no-report", "--seed", "5", "--dump-ledgers"); o.code != reports.ExitOK {
		t.Fatalf("run: %v", o)
	}
	bad := filepath.Join(out, "ledgers", "explicit", "inputs.jsonl")
	b, err := os.ReadFile(bad)
	if err != nil {
		t.Fatal(err)
	}
	b = bytes.Replace(b, []byte(`"ACKNOWLEDGED"`), []byte(`"BOGUS"`), 1)
	if err := os.WriteFile(bad, b, 0o644); err != nil {
		t.Fatal(err)
	}
	v := sharebench(t, "verify", "--in", out)
	if v.code != reports.ExitUsage {
		t.Fatalf("verify: exit %d, want %d\n%v", v.code, reports.ExitUsage, v)
	}
	if !strings.Contains(v.stdout, "verify explicit: not judged") || !strings.Contains(v.stdout, "inputs.jsonl:1: final_state \"BOGUS\"") {
		t.Errorf("the broken mode is not reported with its file and line:\n%v", v)
	}
	if !strings.Contains(v.stdout, "verify transactional: PASS") {
		t.Errorf("the intact mode was not judged:\n%v", v)
	}
}

// TestRunRequireFaults: a broker fault that cannot land (the embedded kfake
// cluster names no controller) is counted beside the verdict, and with
// --require-faults the mode is INCONCLUSIVE, exit 5, with the fault's
// failure named.
func TestRunRequireFaults(t *testing.T) {
	t.Parallel()
	args := []string{"run", "--workload", "testdata/faults-cannot-land.yaml", "--target", "kafka", "--broker-control", "true", "--quiet", "--no-report", "--seed", "5"}
	plain := sharebench(t, append(args, "--out", t.TempDir())...)
	if plain.code != reports.ExitOK || !strings.Contains(plain.stdout, "PASS · 0 of 1 faults landed") {
		t.Fatalf("without --require-faults: want exit 0 and PASS · 0 of 1 faults landed\n%v", plain)
	}
	required := sharebench(t, append(args, "--out", t.TempDir(), "--require-faults")...)
	if required.code != reports.ExitInconclusive {
		t.Fatalf("with --require-faults: exit %d, want %d\n%v", required.code, reports.ExitInconclusive, required)
	}
	for _, want := range []string{"INCONCLUSIVE · 0 of 1 faults landed"} {
		if !strings.Contains(required.stdout, want) {
			t.Errorf("the table does not say %q\n%v", want, required)
		}
	}
	for _, want := range []string{"--require-faults", "broker-restart", "controller"} {
		if !strings.Contains(required.stderr, want) {
			t.Errorf("the error line does not name %q\n%v", want, required)
		}
	}
}
