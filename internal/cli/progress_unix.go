//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

// This file asks a Unix terminal its width (TIOCGWINSZ).

package cli

import (
	"os"
	"syscall"
	"unsafe"
)

// ttyColumns returns the columns of the terminal f, or 0.
func ttyColumns(f *os.File) int {
	var ws struct{ row, col, x, y uint16 }
	_, _, errno := syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), uintptr(syscall.TIOCGWINSZ), uintptr(unsafe.Pointer(&ws)))
	if errno != 0 {
		return 0
	}
	return int(ws.col)
}
