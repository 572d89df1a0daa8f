// This file writes the command-line reference (docs/cli.md) from the
// command table itself: every command's --help, so the manual cannot
// drift from the flags.

package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"
)

// WriteReference writes the Markdown reference of every command: the main
// help, then each command's --help, in the command table's order. Hidden
// commands come last, marked as such.
func WriteReference(w io.Writer) error {
	var b bytes.Buffer
	b.WriteString("# sharebench command-line reference\n\n")
	b.WriteString("Every command's `--help`, generated from the command table by\n")
	b.WriteString("`go test ./internal/cli -run TestCLIReference -update`; a test fails when\n")
	b.WriteString("this file and the flags differ. Exit codes are at the end of each help.\n\n")
	env := &Env{Getenv: func(string) string { return "" }}
	var main bytes.Buffer
	mainUsage(&main, commands())
	b.WriteString("## sharebench\n\n```\n" + main.String() + "```\n")
	all := commands()
	ordered := make([]command, 0, len(all))
	for _, c := range all {
		if c.summary != "" {
			ordered = append(ordered, c)
		}
	}
	for _, c := range all {
		if c.summary == "" {
			ordered = append(ordered, c)
		}
	}
	for _, c := range ordered {
		var out, errOut bytes.Buffer
		env.Stdout, env.Stderr = &out, &errOut
		if err := c.run(env, []string{"--help"}); err != nil && !isHelp(err) {
			return fmt.Errorf("cli: %s --help: %w", c.name, err)
		}
		title := "## sharebench " + c.name
		if c.summary == "" {
			title += " (hidden: a helper the documentation names)"
		}
		fmt.Fprintf(&b, "\n%s\n\n", title)
		if c.summary != "" {
			fmt.Fprintf(&b, "%s.\n\n", strings.ToUpper(c.summary[:1])+c.summary[1:])
		}
		b.WriteString("```\n" + out.String() + "```\n")
	}
	var list bytes.Buffer
	env.Stdout = &list
	if err := workloadsCmd(env, nil); err != nil {
		return fmt.Errorf("cli: workloads: %w", err)
	}
	b.WriteString("\n## Built-in workloads\n\n`sharebench workloads` lists them; `sharebench workloads --show NAME` prints one as YAML.\n\n```\n" + list.String() + "```\n")
	_, err := w.Write(b.Bytes())
	return err
}

// isHelp reports whether a command's error is its --help having printed.
func isHelp(err error) bool { return errors.Is(err, pflag.ErrHelp) }
