//go:build !unix

// This file runs the broker-control command where there are no process
// groups: a timeout or a cancelled run stops the shell only.

package kafkatarget

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"time"
)

// runShell runs line with sh -c and env added.
func runShell(ctx context.Context, line string, env []string, timeout time.Duration) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", line)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil && err != nil {
		err = fmt.Errorf("%w after %v", ctx.Err(), timeout)
	}
	return string(out), err
}
