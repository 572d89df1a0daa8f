package result_test

import (
	"errors"
	"io/fs"
	"path/filepath"
	"testing"
	"time"

	"github.com/sharebench/sharebench/loadgen/result"
)

// TestReadRunTakesDirOrFile: a run is read from its directory or from the
// path of its result file, and both name the same run directory; a
// directory without a result file is ErrNoRun.
func TestReadRunTakesDirOrFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := result.Write(result.ResultPath(dir), &result.Result{Workload: "r1"}); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{dir, result.ResultPath(dir)} {
		got, r, err := result.ReadRun(path)
		if err != nil || got != dir || r.Workload != "r1" {
			t.Errorf("ReadRun(%s) = %s, %+v, %v; want %s, run r1", path, got, r, err, dir)
		}
	}
	empty := t.TempDir()
	if _, _, err := result.ReadRun(empty); !errors.Is(err, result.ErrNoRun) || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ReadRun(empty dir) err = %v; want ErrNoRun and fs.ErrNotExist", err)
	}
	if got, want := result.LedgerDir(dir, "explicit"), filepath.Join(result.LedgersDir(dir), "explicit"); got != want {
		t.Errorf("LedgerDir = %s, want %s (inside LedgersDir)", got, want)
	}
}

// TestNewRunDirNeverCollides: runs started in one millisecond get
// directories of their own.
func TestNewRunDirNeverCollides(t *testing.T) {
	t.Parallel()
	parent := filepath.Join(t.TempDir(), "results")
	at := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	seen := map[string]bool{}
	for range 3 {
		dir, err := result.NewRunDir(parent, at)
		if err != nil {
			t.Fatal(err)
		}
		if seen[dir] {
			t.Fatalf("NewRunDir returned %s twice", dir)
		}
		seen[dir] = true
	}
	for _, want := range []string{"20261203T100000.000Z", "20261203T100000.000Z-2", "20261203T100000.000Z-3"} {
		if !seen[filepath.Join(parent, want)] {
			t.Errorf("no directory %s among %v", want, seen)
		}
	}
}
