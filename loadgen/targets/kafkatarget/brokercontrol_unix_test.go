//go:build unix

// This file checks that a broker-control command that runs past its timeout
// fails the fault with what it printed, and that stopping it never stops a
// broker it started in a session of its own, as scripts/kafka/control
// starts brokers.

package kafkatarget

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sharebench/sharebench/loadgen/targets"
	"github.com/sharebench/sharebench/vocab"
)

// readPid waits for the pid a command writes to path (the command is
// started; the file appears once its first lines ran).
func readPid(t *testing.T, path string) int {
	t.Helper()
	for range 200 {
		b, err := os.ReadFile(path)
		if s := strings.TrimSpace(string(b)); err == nil && s != "" {
			pid, err := strconv.Atoi(s)
			if err != nil {
				t.Fatalf("%s holds %q, not a pid", path, s)
			}
			return pid
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("the command never wrote %s", path)
	return 0
}

func alive(pid int) bool { return syscall.Kill(pid, 0) == nil }

func TestBrokerControlTimeoutLeavesTheBroker(t *testing.T) {
	for _, tc := range []struct {
		name string
		// start is the shell line that starts the stand-in broker in its
		// own session and writes its pid to $PIDFILE.
		start string
	}{
		{"output redirected", `setsid sleep 300 </dev/null >/dev/null 2>&1 & echo $! > "$PIDFILE"`},
		// A daemon that keeps the command's output open must not hold the
		// fault past the timeout either.
		{"output held open", `setsid sleep 300 & echo $! > "$PIDFILE"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig(t, 2)
			_, bc, _, _ := newThreeBrokers(t, cfg)
			dir := t.TempDir()
			pidFile := filepath.Join(dir, "broker.pid")
			shPidFile := filepath.Join(dir, "sh.pid")
			t.Setenv("PIDFILE", pidFile)
			bc.cmd = tc.start + `; echo $$ > ` + shPidFile + `; echo "node {broker}: started pid $(cat "$PIDFILE")"; sleep 300`
			bc.run, bc.timeout = runShell, 500*time.Millisecond

			_, err := bc.ApplyIn(ctxT(t), targets.FaultScope{Config: cfg, Workers: 1}, vocab.FaultBrokerRestart, map[string]string{"broker": "1"})
			pid := readPid(t, pidFile)
			t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
			if err == nil {
				t.Fatal("ApplyIn returned no error for a command that ran past its timeout")
			}
			for _, want := range []string{"deadline exceeded", "started pid"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("ApplyIn error %q does not say %q (the timeout, and the command's own output)", err, want)
				}
			}
			if !alive(pid) {
				t.Errorf("the broker stand-in (pid %d), started in its own session, was killed with the timed-out command", pid)
			}
			if sh := readPid(t, shPidFile); alive(sh) {
				t.Errorf("the timed-out command itself (sh, pid %d) is still running", sh)
			}
		})
	}
}
