// This file holds the progress writer for terminals: the load generator
// prints one plain line per second, which a terminal shows as one line per
// mode rewritten in place; pipes and files get the plain lines.

package cli

import (
	"bytes"
	"io"
	"os"
	"strings"
)

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// ttyProgress rewrites the current line while lines keep the same first
// word (the mode), and starts a new line when it changes.
type ttyProgress struct {
	w    io.Writer
	mode string
	open bool // a line is on screen without its newline
}

func (t *ttyProgress) Write(p []byte) (int, error) {
	for _, line := range bytes.Split(bytes.TrimRight(p, "\n"), []byte("\n")) {
		s := string(line)
		mode, _, _ := strings.Cut(strings.TrimSpace(s), " ")
		if t.open && mode != t.mode {
			io.WriteString(t.w, "\n")
		}
		io.WriteString(t.w, "\r\033[K"+s)
		t.mode, t.open = mode, true
	}
	return len(p), nil
}

// finish ends the last progress line.
func (t *ttyProgress) finish() {
	if t.open {
		io.WriteString(t.w, "\n")
		t.open = false
	}
}
