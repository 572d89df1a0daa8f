// This file tests `sharebench sim`: passing seeds exit 0 with the
// verifier's summary, the draft knobs exit 3 with a shrunk trace and the
// one-line repro, bad flags exit 2.

package cli_test

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/sharebench/sharebench/internal/cli"
	"github.com/sharebench/sharebench/reports"
)

// simMain runs `sharebench sim args...` and returns the exit code and
// what it printed.
func simMain(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	env := &cli.Env{Stdout: &stdout, Stderr: &stderr, Getenv: func(string) string { return "" }}
	code := cli.Main(append([]string{"sharebench", "sim"}, args...), env)
	return code, stdout.String(), stderr.String()
}

func TestSimPasses(t *testing.T) {
	t.Parallel()
	code, out, errOut := simMain(t, "--seed", "3", "--seeds", "4", "--steps", "150")
	if code != reports.ExitOK {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	if !strings.Contains(errOut, "seeds 3..6 (4), 150 steps each, knobs safe") {
		t.Errorf("stderr does not name the seeds first: %q", errOut)
	}
	if !strings.HasPrefix(out, "ok: 4 seeds,") || !strings.Contains(out, "verifier transactional PASS") {
		t.Errorf("stdout:\n%s", out)
	}
}

func TestSimSameSeedSameLog(t *testing.T) {
	t.Parallel()
	_, a, _ := simMain(t, "--seed", "11", "--steps", "120", "-v")
	_, b, _ := simMain(t, "--seed", "11", "--steps", "120", "-v")
	strip := regexp.MustCompile(` in [0-9.]+[µm]?s;`)
	if strip.ReplaceAllString(a, "") != strip.ReplaceAllString(b, "") {
		t.Fatalf("two runs of seed 11 printed different logs:\n%s\n---\n%s", a, b)
	}
	if !strings.Contains(a, "#119 t=") {
		t.Errorf("-v should print every step:\n%s", a)
	}
}

// The draft knobs (docs/design.md §3.4) break invariants: exit 3, the violation,
// a shrunk trace with its replay command, and the one-line repro.
func TestSimDraftViolation(t *testing.T) {
	t.Parallel()
	code, out, _ := simMain(t, "--seeds", "10", "--steps", "300", "--knobs", "draft", "--shrink-time", "5s")
	if code != reports.ExitAnomaly {
		t.Fatalf("exit %d, want %d\n%s", code, reports.ExitAnomaly, out)
	}
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^VIOLATION seed \d+: I\d+ `),
		regexp.MustCompile(`(?m)^shortest trace found: \d+ of 300 steps`),
		regexp.MustCompile(`(?m)^replay it:  sharebench sim --seed \d+ --steps 300 --knobs draft --only [0-9,]+ -v$`),
		regexp.MustCompile(`(?m)^repro: sharebench sim --seed \d+ --steps 300 --knobs draft$`),
	} {
		if !want.MatchString(out) {
			t.Errorf("stdout lacks %v:\n%s", want, out)
		}
	}
}

func TestSimBadFlags(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"--knobs", "sloppy"},
		{"--seeds", "0"},
		{"--only", "3,x"},
		{"--only", "1", "--seeds", "2"},
	} {
		code, _, errOut := simMain(t, args...)
		if code != reports.ExitUsage || strings.Count(strings.TrimSpace(errOut), "\n") > 1 {
			t.Errorf("sim %v: exit %d, stderr %q; want exit 2 and one line", args, code, errOut)
		}
	}
}
