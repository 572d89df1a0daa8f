//go:build unix

// This file runs the broker-control command on Unix: in its own process
// group, so a timeout or a cancelled run stops the whole command.

package kafkatarget

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// runShell runs line with sh -c and env added, in its own process group so
// a timeout or a cancelled context stops the whole command.
func runShell(ctx context.Context, line string, env []string, timeout time.Duration) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", line)
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil && err != nil {
		err = fmt.Errorf("%w after %v", ctx.Err(), timeout)
	}
	return string(out), err
}
