//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

// This file is the fallback where the process's CPU time is not read.

package loadgen

func processCPUNs() int64 { return -1 }
