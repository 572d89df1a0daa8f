//go:build !unix

package kafkatarget

import "os/exec"

// ownGroup does nothing where there are no process groups: cancelling
// the command stops the shell only.
func ownGroup(*exec.Cmd) {}
