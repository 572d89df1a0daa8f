// This file holds the progress writer for terminals: the load generator
// prints one plain line per second, which a terminal shows as one line per
// mode rewritten in place, cut to the terminal's width so it never wraps;
// pipes and files get the plain lines.

package cli

import (
	"bytes"
	"io"
	"os"
	"strconv"
	"strings"
	"unicode/utf8"
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

// defaultWidth is the width assumed when the terminal does not say.
const defaultWidth = 80

// terminalWidth returns the columns of the terminal behind w: from the
// terminal itself where the OS says, else $COLUMNS, else 80.
func terminalWidth(w io.Writer, getenv func(string) string) int {
	if f, ok := w.(*os.File); ok {
		if n := ttyColumns(f); n > 0 {
			return n
		}
	}
	if getenv != nil {
		if n, err := strconv.Atoi(getenv("COLUMNS")); err == nil && n > 0 {
			return n
		}
	}
	return defaultWidth
}

// ttyProgress rewrites the current line while lines keep the same first
// word (the mode), and starts a new line when it changes. Each line is cut
// to width-1 columns, so the cursor never reaches the last column (where
// some terminals wrap) and the line clear removes all of the old one.
type ttyProgress struct {
	w     io.Writer
	width int // columns; 0: defaultWidth
	mode  string
	open  bool // a line is on screen without its newline
}

func (t *ttyProgress) Write(p []byte) (int, error) {
	width := t.width
	if width <= 0 {
		width = defaultWidth
	}
	for _, line := range bytes.Split(bytes.TrimRight(p, "\n"), []byte("\n")) {
		s := fitWidth(string(line), width-1)
		mode, _, _ := strings.Cut(strings.TrimSpace(s), " ")
		if t.open && mode != t.mode {
			io.WriteString(t.w, "\n")
		}
		io.WriteString(t.w, "\r\033[K"+s)
		t.mode, t.open = mode, true
	}
	return len(p), nil
}

// fitWidth cuts s to at most n runes (every rune of a progress line is one
// column wide), ending a cut line with "…".
func fitWidth(s string, n int) string {
	if n < 1 {
		n = 1
	}
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// finish ends the last progress line.
func (t *ttyProgress) finish() {
	if t.open {
		io.WriteString(t.w, "\n")
		t.open = false
	}
}
