// This file tests SIGINT on a real process: the test binary runs the
// command line again as a subprocess (TestHelperMain), is interrupted in
// its second mode, and must keep the first mode's figures, mark the second
// interrupted, render a report that says INCONCLUSIVE and exit 130.

package cli_test

import (
	"bufio"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sharebench/sharebench/internal/cli"
	"github.com/sharebench/sharebench/loadgen/result"
	"github.com/sharebench/sharebench/reports"
)

// TestHelperMain is the subprocess: it runs the command line given in
// SHAREBENCH_HELPER_ARGS (tab-separated) with real signal handling.
func TestHelperMain(t *testing.T) {
	args := os.Getenv("SHAREBENCH_HELPER_ARGS")
	if args == "" {
		t.Skip("runs only as the subprocess of TestInterruptKeepsMeasuredModes")
	}
	os.Exit(cli.MainWithSignals(append([]string{"sharebench"}, strings.Split(args, "\t")...)))
}

func TestInterruptKeepsMeasuredModes(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs a subprocess for several seconds")
	}
	dir := filepath.Join(t.TempDir(), "run")
	seen := interruptRun(t, []string{"run", "--workload", tinyWorkload, "--duration", "3s", "--seed", "7", "--out", dir}, syscall.SIGINT,
		// The second mode's first progress line: the first mode is done.
		func(line string) bool {
			return strings.HasPrefix(line, "transactional ") && !strings.Contains(line, "verifying")
		})
	res, err := result.Read(filepath.Join(dir, result.FileName))
	if err != nil {
		t.Fatalf("result.json after the interrupt: %v\nstderr:\n%s", err, strings.Join(seen, "\n"))
	}
	if !res.Interrupted || len(res.Modes) != 2 {
		t.Fatalf("interrupted %v, %d modes; want the completed mode and the interrupted one", res.Interrupted, len(res.Modes))
	}
	done, stopped := res.Modes[0], res.Modes[1]
	if done.Mode != "explicit" || done.Interrupted || done.Error != "" || done.Verify == nil || !done.Verify.Pass || done.Histograms[result.HistEndToEnd].Count == 0 {
		t.Errorf("the completed mode: %+v", done)
	}
	if stopped.Mode != "transactional" || !stopped.Interrupted {
		t.Errorf("the interrupted mode is not marked: mode %s interrupted %v", stopped.Mode, stopped.Interrupted)
	}
	if _, err := os.Stat(filepath.Join(dir, "report", "report.html")); err != nil {
		t.Errorf("no report after the interrupt: %v", err)
	}
	// The report does not take the run for complete: the first mode
	// passed, but the run is INCONCLUSIVE and names the stopped mode.
	if md, err := os.ReadFile(filepath.Join(dir, "report", "summary.md")); err != nil {
		t.Errorf("no summary.md after the interrupt: %v", err)
	} else if want := "Exactly-once verifier: INCONCLUSIVE — the run was interrupted: transactional interrupted before it finished"; !strings.Contains(string(md), want) || strings.Contains(string(md), "Exactly-once verifier: PASS") {
		t.Errorf("summary.md does not say %q:\n%s", want, md)
	}
	if last := seen[len(seen)-1]; !strings.Contains(last, "interrupted") {
		t.Errorf("last line %q does not say the run was interrupted", last)
	}
}

// TestInterruptInTheDrain: SIGTERM in a long drain ends the run at once
// with its artifacts; result.json says the drain was interrupted (not that
// it timed out), and the verdict is not PASS.
func TestInterruptInTheDrain(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "run")
	interruptRun(t, []string{"run", "--workload", "testdata/slow-drain.yaml", "--seed", "7", "--out", dir, "--no-report"}, syscall.SIGTERM,
		func(line string) bool {
			return strings.HasPrefix(line, "explicit ") && strings.Contains(line, " drain ")
		})
	res, err := result.Read(filepath.Join(dir, result.FileName))
	if err != nil {
		t.Fatalf("result.json after the interrupt: %v", err)
	}
	m := res.Modes[0]
	if !m.Interrupted || !m.DrainInterrupted || m.DrainTimedOut || !strings.Contains(m.DrainNote, "interrupted") {
		t.Errorf("drain fields: interrupted %v drain_interrupted %v drain_timed_out %v note %q; want an interrupted drain, not a timed-out one",
			m.Interrupted, m.DrainInterrupted, m.DrainTimedOut, m.DrainNote)
	}
	if m.Verify != nil && m.Verify.Pass {
		t.Errorf("an interrupted drain was judged PASS: %+v", m.Verify)
	}
}

// interruptRun runs the command line args as a subprocess with real signal
// handling, sends sig at the first stderr line when returns true, and
// requires exit 130; it returns the stderr lines.
func interruptRun(t *testing.T, args []string, sig os.Signal, when func(line string) bool) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // a safety net, not an assertion
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestHelperMain$")
	cmd.Env = append(os.Environ(), "SHAREBENCH_HELPER_ARGS="+strings.Join(args, "\t"))
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = new(strings.Builder)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var seen []string
	sc := bufio.NewScanner(stderr)
	signalled := false
	for sc.Scan() {
		line := sc.Text()
		seen = append(seen, line)
		if !signalled && when(line) {
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			signalled = true
		}
	}
	err = cmd.Wait()
	var ee *exec.ExitError
	if !signalled || !errors.As(err, &ee) || ee.ExitCode() != reports.ExitInterrupted {
		t.Fatalf("signalled %v, exit %v; want exit %d\nstderr:\n%s", signalled, err, reports.ExitInterrupted, strings.Join(seen, "\n"))
	}
	return seen
}
