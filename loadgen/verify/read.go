// This file holds the ledger readers: ReadLedgers streams a ledger directory
// into a Verifier line by line, and VerifyDir verifies one directory. A
// corrupt line is reported by file and line number.

package verify

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/sharebench/sharebench/loadgen/result"
)

// maxLineBytes bounds one ledger line; real lines are about 150 bytes.
const maxLineBytes = 1 << 20

// ErrCorruptLedger is matched (errors.Is) by the *LedgerError that reading a
// malformed ledger line returns.
var ErrCorruptLedger = errors.New("verify: corrupt ledger")

// LedgerError is a ledger line the verifier cannot use.
type LedgerError struct {
	Path   string // the ledger file
	Line   int    // 1-based line number
	Reason string // what is wrong with the line
	Err    error  // the decoding error, if any
}

func (e *LedgerError) Error() string {
	return fmt.Sprintf("verify: %s:%d: %s; re-run with --dump-ledgers", e.Path, e.Line, e.Reason)
}

func (e *LedgerError) Unwrap() error { return e.Err }

func (e *LedgerError) Is(target error) bool { return target == ErrCorruptLedger }

// ReadLedgers streams dir/inputs.jsonl and then dir/outputs.jsonl into v,
// one line at a time (blank lines are skipped). It stops at the first
// unreadable file or corrupt line, returning a *LedgerError naming the file
// and line for the latter; v then holds what was read before it.
func ReadLedgers(dir string, v *Verifier) error {
	var in Input
	err := readLines(filepath.Join(dir, InputsFile), func(line []byte) (string, error) {
		if err := decodeInput(line, &in); err != nil {
			return fmt.Sprintf("invalid JSON (%v)", err), err
		}
		if in.ID == 0 {
			return "input id is 0 or missing (ids start at 1)", nil
		}
		v.AddInput(in)
		return "", nil
	})
	if err != nil {
		return err
	}
	var o Output
	return readLines(filepath.Join(dir, OutputsFile), func(line []byte) (string, error) {
		if err := decodeOutput(line, &o); err != nil {
			return fmt.Sprintf("invalid JSON (%v)", err), err
		}
		if o.InputID == 0 {
			return "output id is 0 or missing (ids start at 1)", nil
		}
		v.AddOutput(o)
		return "", nil
	})
}

// readLines calls add for each non-blank line of path. add returns a
// non-empty reason (and optionally the cause) for a corrupt line.
func readLines(path string, add func(line []byte) (reason string, err error)) error {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("verify: no ledger (run with --dump-ledgers to write ledgers): %w", err)
	}
	if err != nil {
		return fmt.Errorf("verify: reading ledger: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), maxLineBytes)
	n := 0
	for sc.Scan() {
		n++
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		if reason, err := add(line); reason != "" {
			return &LedgerError{Path: path, Line: n, Reason: reason, Err: err}
		}
	}
	if err := sc.Err(); errors.Is(err, bufio.ErrTooLong) {
		return &LedgerError{Path: path, Line: n + 1, Reason: fmt.Sprintf("line longer than %d bytes", maxLineBytes), Err: err}
	} else if err != nil {
		return fmt.Errorf("verify: reading ledger %s after line %d: %w", path, n, err)
	}
	return nil
}

// VerifyDir verifies mode's ledgers in dir (inputs.jsonl, outputs.jsonl).
// It fails fast for an unknown mode (ErrUnknownMode) and returns any error
// of ReadLedgers.
func VerifyDir(mode, dir string, opts Options) (*result.Verification, error) {
	if _, err := Allowed(mode); err != nil {
		return nil, err
	}
	v := New(mode, opts)
	if err := ReadLedgers(dir, v); err != nil {
		return nil, err
	}
	return v.Finish(), nil
}
