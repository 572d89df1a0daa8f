//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package engine_test

import "syscall"

// processCPU returns the CPU time the process has used in ns, or -1.
func processCPU() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return -1
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
