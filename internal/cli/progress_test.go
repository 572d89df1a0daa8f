// This file tests the terminal progress writer: every line it draws fits
// the terminal's width, a new mode starts a new line, and the width comes
// from $COLUMNS when the output is no terminal.

package cli

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestTTYProgressFitsWidth(t *testing.T) {
	t.Parallel()
	long := "classic-eos-r10 drain   123.4/130s  pending 123456  out 123456/s  p99 1.23ms  redel 123456  abort 123456"
	for _, width := range []int{20, 40, 80, 132} {
		var b bytes.Buffer
		p := &ttyProgress{w: &b, width: width}
		p.Write([]byte(long + "\n"))
		p.Write([]byte("classic-eos-r10 verifying 5000 inputs and 5000 outputs\n"))
		p.Write([]byte("explicit      load      1.0/3s  in   2000/s  out   1990/s  p99 1.2ms\n"))
		p.finish()
		for _, seg := range strings.Split(strings.ReplaceAll(b.String(), "\n", "\r\033[K"), "\r\033[K") {
			if n := utf8.RuneCountInString(seg); n > width-1 {
				t.Errorf("width %d: a %d-column line: %q", width, n, seg)
			}
		}
		if got := strings.Count(b.String(), "\n"); got != 2 {
			t.Errorf("width %d: %d newlines, want 2 (one per mode): %q", width, got, b.String())
		}
	}
}

func TestTerminalWidthFromColumns(t *testing.T) {
	t.Parallel()
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == "COLUMNS" {
				return v
			}
			return ""
		}
	}
	if w := terminalWidth(&bytes.Buffer{}, env("100")); w != 100 {
		t.Errorf("COLUMNS=100: width %d", w)
	}
	if w := terminalWidth(&bytes.Buffer{}, env("x")); w != defaultWidth {
		t.Errorf("COLUMNS=x: width %d, want %d", w, defaultWidth)
	}
}
