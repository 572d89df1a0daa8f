//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

// This file reads the process's CPU time (user and system) for the
// window's CPU cost per record.

package loadgen

import "syscall"

// processCPUNs returns the CPU time the process has used, or -1.
func processCPUNs() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return -1
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
