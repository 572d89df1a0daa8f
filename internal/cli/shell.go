// This file runs the user's broker-control command through the shell.

package cli

import (
	"os/exec"
	"time"
)

// runShell runs line with sh -c, bounded to two minutes.
func runShell(line string) (string, error) {
	cmd := exec.Command("sh", "-c", line)
	done := make(chan struct{})
	var out []byte
	var err error
	go func() { out, err = cmd.CombinedOutput(); close(done) }()
	select {
	case <-done:
		return string(out), err
	case <-time.After(2 * time.Minute):
		_ = cmd.Process.Kill()
		<-done
		return string(out), err
	}
}
