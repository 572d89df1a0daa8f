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
func ModeRunName(mode string, repeat, repeats int) string {
	if repeats > 1 {
		return fmt.Sprintf("%s-r%d", mode, repeat)
	}
	return mode
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

// LedgerModes lists the modes (directory names, "explicit-r2" for a
// repeat) with ledgers in runDir, sorted.
func LedgerModes(runDir string) ([]string, error) {
	entries, err := os.ReadDir(LedgersDir(runDir))
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		if e.IsDir() {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	return names, nil
}
