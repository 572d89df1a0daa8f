package kafkatarget

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"time"
)

// runShell runs line with sh -c and env added; a timeout or a cancelled
// context stops the command (where the platform has process groups, the
// whole command: see ownGroup).
func runShell(ctx context.Context, line string, env []string, timeout time.Duration) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", line)
	cmd.Env = append(os.Environ(), env...)
	ownGroup(cmd)
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil && err != nil {
		err = fmt.Errorf("%w after %v", ctx.Err(), timeout)
	}
	return string(out), err
}
