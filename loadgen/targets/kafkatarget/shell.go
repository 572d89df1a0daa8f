package kafkatarget

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"time"
)

// pipeGrace bounds how long runShell waits for the command's output after
// the command itself ended or was stopped: a process it left running that
// still holds its output (a daemon started without redirecting it) must
// not hold the fault, and the run, with it.
const pipeGrace = 2 * time.Second

// runShell runs line with sh -c and env added; a timeout or a cancelled
// context stops the command (where the platform has process groups, the
// whole command: see ownGroup) and returns what it printed so far. What
// the command started in a session of its own (a broker started with
// setsid) is not the command's and is left running.
func runShell(ctx context.Context, line string, env []string, timeout time.Duration) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", line)
	cmd.Env = append(os.Environ(), env...)
	cmd.WaitDelay = pipeGrace
	ownGroup(cmd)
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil && err != nil {
		err = fmt.Errorf("%w after %v", ctx.Err(), timeout)
	}
	return string(out), err
}
