// This file holds what the tests share: the broker from SHAREBENCH_KAFKA
// (skip when unset, fail when unreachable), one `sharebench run` through
// cli.Main with its result.json, and the verdict checks.

package kafkait

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sharebench/sharebench/internal/cli"
	"github.com/sharebench/sharebench/loadgen/result"
	"github.com/sharebench/sharebench/loadgen/targets/kafkatarget"
	"github.com/sharebench/sharebench/loadgen/verify"
	"github.com/sharebench/sharebench/reports"
	"github.com/sharebench/sharebench/vocab"
)

// envBrokers names the broker the tier runs against.
const envBrokers = "SHAREBENCH_KAFKA"

// pingTimeout bounds the one reachability check of the broker. Generous: a
// freshly started broker on a busy 2-core machine can take seconds to answer.
const pingTimeout = 20 * time.Second

var reach struct {
	once sync.Once
	err  error
}

// brokers returns SHAREBENCH_KAFKA. Unset, the test skips with how to turn
// the tier on; set but unreachable, the test fails.
func brokers(t *testing.T) string {
	t.Helper()
	b := os.Getenv(envBrokers)
	if b == "" {
		t.Skipf("real-Kafka tier is off: start a broker with scripts/kafka/up and set %s=127.0.0.1:9092 (see internal/kafkait/doc.go)", envBrokers)
	}
	reach.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*pingTimeout)
		defer cancel()
		tg, err := kafkatarget.New(ctx, kafkatarget.Options{Brokers: []string{b}, PingTimeout: pingTimeout})
		if err != nil {
			reach.err = err
			return
		}
		tg.Close()
	})
	if reach.err != nil {
		t.Fatalf("%s=%s is set but the broker is unreachable (start it with scripts/kafka/up): %v", envBrokers, b, reach.err)
	}
	return b
}

// run is one `sharebench run` through cli.Main.
type run struct {
	code   int
	stdout string
	stderr string
	out    string         // the run directory
	res    *result.Result // nil when no result.json was written
}

// sharebenchRun runs `sharebench run --target kafka --brokers B args...`
// with a fresh output directory and reads its result.json.
func sharebenchRun(t *testing.T, args ...string) run {
	t.Helper()
	return sharebenchRunAt(t, brokers(t), args...)
}

// sharebenchRunAt is sharebenchRun against the given brokers.
func sharebenchRunAt(t *testing.T, brokers string, args ...string) run {
	t.Helper()
	r := run{out: t.TempDir()}
	argv := append([]string{"sharebench", "run", "--target", "kafka", "--brokers", brokers,
		"--out", r.out, "--quiet", "--no-report"}, args...)
	var stdout, stderr bytes.Buffer
	start := time.Now()
	r.code = cli.Main(argv, &cli.Env{Stdout: &stdout, Stderr: &stderr, Getenv: os.Getenv})
	r.stdout, r.stderr = stdout.String(), stderr.String()
	t.Logf("%s\n  exit %d after %v\n%s%s", strings.Join(argv[1:], " "), r.code, time.Since(start).Round(100*time.Millisecond), indent(r.stdout), indent(r.stderr))
	if res, err := result.Read(filepath.Join(r.out, result.FileName)); err == nil {
		r.res = res
	} else if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("reading the result: %v", err)
	}
	return r
}

func indent(s string) string {
	if s == "" {
		return ""
	}
	return "  | " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n  | ") + "\n"
}

// workload returns the path of a workload file under testdata.
func workload(name string) string { return filepath.Join("testdata", name) }

// informational are the verifier's kinds that are reported but never an
// anomaly (docs/design.md §7).
var informational = vocab.Informational()

// checkMode checks the one result of mode in r: it ran, the drain finished
// (every input has a committed output or was rejected), the verifier passed,
// and it found no kind beyond what the mode allows.
func checkMode(t *testing.T, r run, mode string) *result.ModeResult {
	t.Helper()
	if r.code != reports.ExitOK {
		t.Errorf("exit code %d, want %d", r.code, reports.ExitOK)
	}
	if r.res == nil {
		t.Fatalf("no %s in %s", result.FileName, r.out)
	}
	var m *result.ModeResult
	for i := range r.res.Modes {
		if r.res.Modes[i].Mode == vocab.Mode(mode) {
			m = &r.res.Modes[i]
		}
	}
	if m == nil {
		t.Fatalf("the result has no mode %s", mode)
	}
	if m.Unsupported != "" || m.Error != "" {
		t.Fatalf("mode %s: unsupported %q, error %q", mode, m.Unsupported, m.Error)
	}
	if m.TotalInputs == 0 || m.TotalOutputs == 0 {
		t.Errorf("mode %s: %d inputs, %d outputs; want both above 0", mode, m.TotalInputs, m.TotalOutputs)
	}
	if m.DrainTimedOut {
		t.Errorf("mode %s: the drain timed out after %v: not every input got a committed output", mode, time.Duration(m.DrainNs))
	}
	v := m.Verify
	if v == nil {
		t.Fatalf("mode %s: no verdict", mode)
	}
	allowed, err := verify.Allowed(vocab.Mode(mode))
	if err != nil {
		t.Fatal(err)
	}
	if !v.Pass || len(v.Forbidden) > 0 {
		t.Errorf("mode %s: verifier pass=%v, forbidden %v (counts %v, witnesses %v)", mode, v.Pass, v.Forbidden, v.Counts, v.Witnesses)
	}
	for kind, n := range v.Counts {
		if n > 0 && !slices.Contains(allowed, kind) && !slices.Contains(informational, kind) {
			t.Errorf("mode %s: %d %s, which the mode does not allow (allowed: %v)", mode, n, kind, allowed)
		}
	}
	t.Logf("mode %s: %d inputs, %d outputs, throughput %.0f/s, redeliveries %d, aborts %d, crashes %d, drain %v, counts %v, notes %v",
		mode, m.TotalInputs, m.TotalOutputs, m.Throughput, m.Redeliveries, m.Aborts, m.WorkerCrashes,
		time.Duration(m.DrainNs).Round(100*time.Millisecond), v.Counts, v.Notes)
	return m
}

// seedFor gives each test its own seed (and so its own topic names).
func seedFor(name string) string {
	var h uint32 = 2166136261
	for _, c := range name {
		h = (h ^ uint32(c)) * 16777619
	}
	return fmt.Sprint(h % 1_000_000)
}

// checkJudged checks that the verifier judged every input of a classic-eos
// run against the group's committed offsets (the broker's own record of what
// is done), so "lost" and "unresolved" were really looked for.
func checkJudged(t *testing.T, m *result.ModeResult) {
	t.Helper()
	for _, n := range m.Verify.Notes {
		if strings.Contains(n, "no final state") {
			t.Errorf("mode %s: the verifier could not judge every input: %s", m.Mode, n)
		}
	}
}
