// This file tests the engine target's durability flags: a run with
// --data-dir and each --flush policy, the engine-side faults it enables,
// and bad values, which give exit code 2 and one line naming the fix.

package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sharebench/sharebench/reports"
)

func TestRunDataDir(t *testing.T) {
	t.Parallel()
	for _, flush := range []string{"always", "interval:5ms", "never"} {
		t.Run(flush, func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(t.TempDir(), "data")
			o := sharebench(t, "run", "--workload", tinyWorkload, "--data-dir", dir, "--flush", flush,
				"--out", t.TempDir(), "--quiet", "--no-report")
			if o.code != reports.ExitOK {
				t.Fatalf("run with --data-dir: %v", o)
			}
			if !strings.Contains(o.stderr, "data directory "+dir) {
				t.Fatalf("the run does not say where its data directory is: %v", o)
			}
			if _, err := os.Stat(filepath.Join(dir, "SHAREBENCH")); err != nil {
				t.Fatalf("no data directory written: %v", err)
			}
		})
	}
}

func TestRunDataDirBadInput(t *testing.T) {
	t.Parallel()
	foreign := t.TempDir()
	if err := os.WriteFile(filepath.Join(foreign, "notes.txt"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--flush", "never"}, "--flush applies with --data-dir"},
		{[]string{"--data-dir", t.TempDir(), "--flush", "sometimes"}, "--flush"},
		{[]string{"--data-dir", t.TempDir(), "--flush", "interval:-3s"}, "interval:DURATION"},
		{[]string{"--data-dir", foreign}, "not a sharebench data directory"},
		{[]string{"--target", "kafka", "--data-dir", t.TempDir()}, "--data-dir and --flush apply to --target engine"},
	} {
		args := append([]string{"run", "--workload", tinyWorkload, "--out", t.TempDir(), "--quiet", "--no-report"}, tc.args...)
		o := sharebench(t, args...)
		if o.code != reports.ExitUsage {
			t.Errorf("%v: exit %d, want %d: %v", tc.args, o.code, reports.ExitUsage, o)
			continue
		}
		ls := lines(o.stderr)
		if len(ls) != 1 || !strings.Contains(ls[0], tc.want) {
			t.Errorf("%v: want one line containing %q: %v", tc.args, tc.want, o)
		}
	}
}
