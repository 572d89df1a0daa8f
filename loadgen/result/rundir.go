// This file holds the run directory's layout: where sharebench run writes
// each file and where every reader finds it. Nothing else joins these
// names.
//
//	RUN_DIR/result.json               the Result (ResultPath)
//	RUN_DIR/<mode>.<histogram>.hlog   a mode's per-second histograms (HlogPath)
//	RUN_DIR/<mode>.omb.json           a mode as an OMB TestResult, with --format omb (OMBPath)
//	RUN_DIR/ledgers/<mode>/           a mode's ledgers, with --dump-ledgers (LedgerDir)
//	RUN_DIR/report/                   the rendered report (ReportDir)

package result

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/sharebench/sharebench/vocab"
)

const (
	ledgersDirName = "ledgers"
	reportDirName  = "report"
	hlogExt        = ".hlog"
	ombExt         = ".omb.json"
)

// ResultPath is the path of the run's result file.
func ResultPath(runDir string) string { return filepath.Join(runDir, FileName) }

// HlogPath is the path of mode's interval histogram log of histogram hist
// (one of the Hist* names).
func HlogPath(runDir, mode, hist string) string {
	return filepath.Join(runDir, mode+"."+hist+hlogExt)
}

// OMBPath is the path of mode's result in the OpenMessaging Benchmark's
// TestResult form.
func OMBPath(runDir, mode string) string { return filepath.Join(runDir, mode+ombExt) }

// ModeRunName names one run of mode in the run directory's files: the
// mode, and its repeat (counted from 0, as ModeResult.Repeat) when the
// run repeats each mode.
func ModeRunName(mode vocab.Mode, repeat, repeats int) string {
	if repeats > 1 {
		return fmt.Sprintf("%s-r%d", mode, repeat)
	}
	return mode.String()
}

// LedgersDir holds one directory of ledgers per mode (LedgerDir).
func LedgersDir(runDir string) string { return filepath.Join(runDir, ledgersDirName) }

// LedgerDir is the directory of mode's ledgers.
func LedgerDir(runDir, mode string) string { return filepath.Join(runDir, ledgersDirName, mode) }

// ReportDir is where sharebench run renders the run's report.
func ReportDir(runDir string) string { return filepath.Join(runDir, reportDirName) }

// ErrNoRun is wrapped by ReadRun's error for a path that holds no result
// file.
var ErrNoRun = errors.New("result: no result file")

// ReadRun reads a run: path is a run directory or the path of its result
// file. It returns the run directory and its Result; a path without a
// result file wraps ErrNoRun (and fs.ErrNotExist).
func ReadRun(path string) (runDir string, r *Result, err error) {
	runDir, file := path, ResultPath(path)
	if st, err := os.Stat(path); err == nil && !st.IsDir() {
		runDir, file = filepath.Dir(path), path
	}
	if _, err := os.Stat(file); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return runDir, nil, fmt.Errorf("%w in %s: %w", ErrNoRun, runDir, err)
		}
		return runDir, nil, fmt.Errorf("result: %w", err)
	}
	r, err = Read(file)
	return runDir, r, err
}

// ModeRun returns the mode run whose ledger directory is named name
// (ModeRunName), or nil when r records none.
func (r *Result) ModeRun(name string) *ModeResult {
	for i := range r.Modes {
		m := &r.Modes[i]
		if m.Unsupported == "" && ModeRunName(m.Mode, m.Repeat, r.Repeats) == name {
			return m
		}
	}
	return nil
}

// LedgerModes lists the entries of runDir's ledgers directory, sorted:
// one directory per mode ("explicit-r2" for a repeat). An entry that is
// not a directory is listed too, so that a reader reports it as a broken
// ledger instead of skipping it.
func LedgerModes(runDir string) ([]string, error) {
	entries, err := os.ReadDir(LedgersDir(runDir))
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	return names, nil
}

// RunArtifacts lists what a run wrote into dir (the result file, .hlog
// files, OMB result files, the ledgers and the report directories), by name, sorted; none
// when dir does not exist or holds no run. A run into a directory that
// holds one would replace some of these and leave the rest, so a
// directory with any of them is not a fresh output directory.
func RunArtifacts(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("result: %w", err)
	}
	var names []string
	for _, e := range entries {
		n := e.Name()
		if n == FileName || n == ledgersDirName || n == reportDirName || filepath.Ext(n) == hlogExt || strings.HasSuffix(n, ombExt) {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names, nil
}

// RemoveRun removes what RunArtifacts lists from dir, and nothing else:
// files of the user's beside a run stay.
func RemoveRun(dir string) error {
	names, err := RunArtifacts(dir)
	if err != nil {
		return err
	}
	for _, n := range names {
		if err := os.RemoveAll(filepath.Join(dir, n)); err != nil {
			return fmt.Errorf("result: %w", err)
		}
	}
	return nil
}

// NewRunDir makes a new, empty run directory under parent named by t
// (UTC, to the millisecond), adding "-2", "-3", … when that name is taken,
// so two runs started in one millisecond, or in one parent by two
// processes, never share a directory.
func NewRunDir(parent string, t time.Time) (string, error) {
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return "", fmt.Errorf("result: %w", err)
	}
	base := filepath.Join(parent, t.UTC().Format("20060102T150405.000Z"))
	for i := 1; ; i++ {
		dir := base
		if i > 1 {
			dir = fmt.Sprintf("%s-%d", base, i)
		}
		err := os.Mkdir(dir, 0o755)
		if err == nil {
			return dir, nil
		}
		if !errors.Is(err, fs.ErrExist) || i >= 1000 {
			return "", fmt.Errorf("result: %w", err)
		}
	}
}
