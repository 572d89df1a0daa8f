//go:build unix

package kafkatarget

import (
	"os/exec"
	"syscall"
)

// ownGroup starts cmd in its own process group and makes cancelling it
// kill the group, so a timeout stops every process the command started.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
}
