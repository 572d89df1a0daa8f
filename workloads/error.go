// This file holds Error, the one error type for bad workload input.

package workloads

import (
	"strconv"
	"strings"
)

// Error reports bad workload input: a malformed or unknown file, an unknown
// field, a value of the wrong type, or an impossible setting. Its text is one
// line: "workloads: FILE:LINE: field "FIELD": what is wrong; the fix". File,
// Line and Field are empty or zero when they do not apply (a Spec built in Go
// has no file). The CLI maps it to exit code 2 through errors.As.
type Error struct {
	File  string // the file or workload name as given to Parse or Load
	Line  int    // 1-based line in File, 0 when unknown
	Field string // dotted path of the field, like "faults[2].params.phase"
	Msg   string // what is wrong; the fix

	// alt lists other field paths whose line may locate a cross-field error
	// when Field itself is not in the file.
	alt []string
	// err is the cause, if any, for errors.Is and errors.As.
	err error
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("workloads: ")
	if e.File != "" {
		b.WriteString(e.File)
		if e.Line > 0 {
			b.WriteByte(':')
			b.WriteString(strconv.Itoa(e.Line))
		}
		b.WriteString(": ")
	}
	if e.Field != "" {
		b.WriteString("field ")
		b.WriteString(strconv.Quote(e.Field))
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Unwrap returns the underlying cause, such as an fs.ErrNotExist from Load.
func (e *Error) Unwrap() error { return e.err }

// Errors lists every problem of one workload file, in file order; its
// text is one line per problem. errors.As finds the first *Error.
type Errors []*Error

func (es Errors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// Unwrap returns the problems, for errors.Is and errors.As.
func (es Errors) Unwrap() []error {
	out := make([]error, len(es))
	for i, e := range es {
		out[i] = e
	}
	return out
}

// errorsOf returns the one *Error itself, or the list.
func errorsOf(es []*Error) error {
	if len(es) == 1 {
		return es[0]
	}
	return Errors(es)
}
