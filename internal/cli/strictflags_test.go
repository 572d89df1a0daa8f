// This file tests that the flags a newcomer gets wrong are refused with one
// line naming the flag and the fix, and exit 2, before anything runs.

package cli_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sharebench/sharebench/loadgen/result"
	"github.com/sharebench/sharebench/reports"
)

func TestStrictFlags(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args []string
		want string // in the one error line
	}{
		{[]string{"run", "--modes", ""}, "--modes is empty"},
		{[]string{"run", "--modes", " "}, "--modes is empty"},
		{[]string{"run", "--modes", "explicit,explicit"}, "explicit is named twice"},
		{[]string{"run", "--modes", "explicit, transactional,explicit"}, "explicit is named twice"},
		{[]string{"run", "--shards", "0"}, "--shards 0: must be at least 1"},
		{[]string{"run", "--shards", "-1"}, "--shards -1: must be at least 1"},
		{[]string{"run", "--workload", "testdata/unset-var.yaml"}, "SHAREBENCH_TEST_SURELY_UNSET_DURATION is not set"},
	}
	for _, tc := range tests {
		o := sharebench(t, tc.args...)
		ls := lines(o.stderr)
		if o.code != reports.ExitUsage || len(ls) != 1 || !strings.Contains(ls[0], tc.want) {
			t.Errorf("%q: want exit 2 and one line containing %q, got %v", tc.args, tc.want, o)
		}
	}
}

func TestVersionFlag(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"--version"}, {"version"}} {
		o := sharebench(t, args...)
		// A test binary carries no module version: "devel".
		if o.code != reports.ExitOK || !strings.HasPrefix(o.stdout, "sharebench devel (commit ") {
			t.Errorf("%q: %v", args, o)
		}
	}
}

// TestOutHoldsRun: a run into a directory that holds one is refused,
// naming it, and nothing there changes; --force replaces that run's files
// and keeps the user's.
func TestOutHoldsRun(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	for name, body := range map[string]string{
		"result.json": "{}", "oldmode.e2e.hlog": "#", "notes.txt": "mine",
	} {
		if err := os.WriteFile(filepath.Join(out, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	o := sharebench(t, "run", "--workload", tinyWorkload, "--duration", "300ms", "--out", out, "--quiet", "--no-report")
	if ls := lines(o.stderr); o.code != reports.ExitUsage || len(ls) != 1 || !strings.Contains(ls[0], "already holds a run") || !strings.Contains(ls[0], "--force") {
		t.Fatalf("run into a run directory: want exit 2 and one line naming it and --force, got %v", o)
	}
	if b, _ := os.ReadFile(filepath.Join(out, "result.json")); string(b) != "{}" {
		t.Fatalf("the refused run changed result.json: %q", b)
	}
	o = sharebench(t, "run", "--workload", tinyWorkload, "--duration", "300ms", "--out", out, "--quiet", "--no-report", "--force")
	if o.code != reports.ExitOK {
		t.Fatalf("run --force: %v", o)
	}
	if _, err := os.Stat(filepath.Join(out, "oldmode.e2e.hlog")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("--force left the old run's .hlog file (stat: %v)", err)
	}
	if b, err := os.ReadFile(filepath.Join(out, "notes.txt")); err != nil || string(b) != "mine" {
		t.Errorf("--force touched a file that is not the run's: %q, %v", b, err)
	}
	if _, err := result.Read(filepath.Join(out, result.FileName)); err != nil {
		t.Errorf("--force: no new result: %v", err)
	}
}
