// This file holds Run, one loaded run directory, and Load.

package reports

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/sharebench/sharebench/loadgen/result"
)

// Run is one run directory: its result and the name reports label it with.
type Run struct {
	// Name labels the run in plots and tables; Load derives it from the
	// directory name.
	Name string
	// Dir is the run directory.
	Dir string
	// Result is the decoded result.json.
	Result *result.Result
}

// ErrNoResult is matched (errors.Is) by the error Load returns for a
// directory without a result.json.
var ErrNoResult = errors.New("reports: no result.json")

// noResultError names the directory and the fix; it matches ErrNoResult
// and fs.ErrNotExist.
type noResultError struct{ dir string }

func (e *noResultError) Error() string {
	return fmt.Sprintf("reports: %s has no %s; pass a directory written by sharebench run", e.dir, result.FileName)
}

func (e *noResultError) Is(target error) bool {
	return target == ErrNoResult || target == fs.ErrNotExist
}

// Load reads dir/result.json. dir may also be the path of a result file
// itself. The run's Name is the directory's base name.
func Load(dir string) (*Run, error) {
	if dir == "" {
		return nil, &noResultError{dir: `""`}
	}
	dir, r, err := result.ReadRun(dir)
	if errors.Is(err, result.ErrNoRun) {
		return nil, &noResultError{dir: dir}
	}
	if err != nil {
		return nil, fmt.Errorf("reports: reading run %s: %w", dir, err)
	}
	return &Run{Name: runName(dir), Dir: dir, Result: r}, nil
}

// runName derives a label from a run directory: its base name.
func runName(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		abs = dir
	}
	name := filepath.Base(filepath.Clean(abs))
	if name == "." || name == string(filepath.Separator) || name == "" {
		return "run"
	}
	return name
}

// labels returns a unique, non-empty label per run: its Name, or "run N"
// when it has none; repeated names get " (2)", " (3)", ….
func labels(runs []*Run) []string {
	out := make([]string, len(runs))
	seen := map[string]int{}
	for i, r := range runs {
		name := ""
		if r != nil {
			name = r.Name
		}
		if name == "" {
			name = fmt.Sprintf("run %d", i+1)
		}
		seen[name]++
		if n := seen[name]; n > 1 {
			name = fmt.Sprintf("%s (%d)", name, n)
		}
		out[i] = name
	}
	return out
}
