package serve_test

import (
	"bytes"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sharebench/sharebench/internal/cli"
	"github.com/sharebench/sharebench/loadgen/result"
	"github.com/sharebench/sharebench/loadgen/verify"
	"github.com/sharebench/sharebench/vocab"
)

// chaosSeed is the seed of TestChaosAgainstDurableServe's run.
const chaosSeed = "16"

// engineFaults are the chaos workload's engine-side faults: through the
// kafka target each runs the broker-control command, here
// scripts/serve-control over the admin endpoint.
var engineFaults = []string{"coordinator-crash", "share-failover", "engine-restart"}

// TestChaosAgainstDurableServe runs testdata/serve-chaos-short.yaml (the
// chaos workload's faults, network partitions aside, in 6s) through the
// kafka target against a server whose engine is durable, its engine-side
// faults sent by scripts/serve-control to the admin endpoint. Every mode
// must drain and pass: transactional and classic-eos with no anomaly at
// all, the others with only the duplicates at-least-once allows. The modes
// run in parallel, each against a server of its own: a run mostly waits
// (on rebalances, lock expiries, the drain), so together they take about
// as long as the slowest alone.
func TestChaosAgainstDurableServe(t *testing.T) {
	if testing.Short() {
		t.Skip("a chaos run over the wire in every mode (about 30s)")
	}
	control, err := filepath.Abs("../scripts/serve-control")
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range []string{"implicit", "explicit", "deferred", "transactional", "classic-eos"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			chaosMode(t, control, mode)
		})
	}
}

func chaosMode(t *testing.T, control, mode string) {
	_, s, a := durableServeWithAdmin(t)
	out := t.TempDir()
	args := []string{"sharebench", "run", "--workload", "testdata/serve-chaos-short.yaml", "--target", "kafka",
		"--brokers", s.Addr(), "--broker-control", "SHAREBENCH_SERVE_ADMIN=" + a.Addr() + " " + control + " {action}",
		"--modes", mode, "--seed", chaosSeed, "--out", out, "--no-report", "--quiet"}
	var stdout, stderr bytes.Buffer
	env := &cli.Env{Stdout: &stdout, Stderr: &stderr, Getenv: func(string) string { return "" }}
	began := time.Now()
	code := cli.Main(args, env)
	t.Logf("%s in %v (exit %d)\n%s", strings.Join(args[1:], " "), time.Since(began).Round(time.Second), code, stdout.String())
	if code != 0 {
		t.Errorf("exit %d, want 0\nstderr:\n%s", code, stderr.String())
	}
	defer func() {
		if t.Failed() {
			t.Logf("repeat with: sharebench serve --data-dir DIR --admin-listen 127.0.0.1:9093 & sharebench run --workload serve/testdata/serve-chaos-short.yaml --target kafka --brokers 127.0.0.1:9092 --broker-control 'scripts/serve-control {action}' --modes %s --seed %s", mode, chaosSeed)
		}
	}()
	res, err := result.Read(filepath.Join(out, result.FileName))
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(res.Modes, func(m result.ModeResult) bool { return m.Mode == vocab.Mode(mode) })
	if i < 0 {
		t.Fatalf("mode %s: not in the result", mode)
	}
	m := res.Modes[i]
	if m.Error != "" || m.Unsupported != "" {
		t.Fatalf("mode %s: error %q, unsupported %q", mode, m.Error, m.Unsupported)
	}
	if m.DrainTimedOut {
		t.Errorf("mode %s: the drain timed out after %v", mode, time.Duration(m.DrainNs))
	}
	v := m.Verify
	if v == nil {
		t.Fatalf("mode %s: no verdict", mode)
	}
	allowed, err := verify.Allowed(vocab.Mode(mode))
	if err != nil {
		t.Fatal(err)
	}
	if !v.Pass || v.Verdict != verify.VerdictPass || len(v.Forbidden) > 0 || v.Unjudged > 0 {
		t.Errorf("mode %s: verdict %s (pass %v), forbidden %v, %d unjudged, counts %v", mode, v.Verdict, v.Pass, v.Forbidden, v.Unjudged, v.Counts)
	}
	for kind, n := range v.Counts {
		if n > 0 && !slices.Contains(allowed, kind) && !slices.Contains(vocab.Informational(), kind) {
			t.Errorf("mode %s: %d %s, which the mode does not allow (allowed: %v)", mode, n, kind, allowed)
		}
	}
	ran := map[string]bool{}
	for _, f := range m.Faults {
		if slices.Contains(engineFaults, f.Kind) {
			if f.Failed {
				t.Errorf("mode %s: %s failed: %s", mode, f.Kind, f.Detail)
			}
			ran[f.Kind] = true
		}
	}
	for _, k := range engineFaults {
		if !ran[k] {
			t.Errorf("mode %s: the %s fault did not run", mode, k)
		}
	}
}
