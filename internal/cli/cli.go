// Package cli implements the sharebench command line: one function per
// subcommand over the library packages, with pflag flags, help with
// examples, and the exit codes docs/running.md documents. cmd/sharebench only
// calls Main.
package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"regexp"
	"runtime"
	"runtime/debug"
	"strings"
	"syscall"

	"github.com/spf13/pflag"

	"github.com/sharebench/sharebench/reports"
)

// exitError carries an exit code with its message.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func usageErr(format string, args ...any) error {
	return &exitError{reports.ExitUsage, fmt.Errorf(format, args...)}
}

func withCode(code int, err error) error {
	if err == nil {
		return nil
	}
	return &exitError{code, err}
}

type command struct {
	name    string
	summary string
	run     func(env *Env, args []string) error
}

// Env is what a command reads and writes; tests substitute it.
type Env struct {
	Stdout, Stderr io.Writer
	// Getenv reads environment variables (secrets for real clusters).
	Getenv func(string) string
	// Interrupt, when non-nil, is closed to stop a run early.
	Interrupt <-chan struct{}
}

// commands is the command table: every subcommand, in the order the main
// help lists them. A command without a summary is left out of that list.
func commands() []command {
	return []command{
		{"run", "run a workload in every acknowledgement mode and report", runCmd},
		{"workloads", "list the built-in workloads", workloadsCmd},
		{"verify", "verify dumped ledgers of a run directory", verifyCmd},
		{"report", "render plots, report.html and summary.md from run directories", reportCmd},
		{"compare", "compare a candidate run with a baseline, metric by metric", compareCmd},
		{"gate", "fail (exit 4) on a significant regression or (exit 3) a forbidden anomaly", gateCmd},
		{"sim", "deterministic simulation of the engine: every invariant after every step", simCmd},
		{"serve", "run the reference engine as a Kafka-protocol broker on loopback", serveCmd},
		{"version", "print the version", versionCmd},
		// Hidden: documented in docs/real-kafka.md.
		{"peer", "", peerCmd},
	}
}

// Main runs the command line and returns the exit code.
func Main(args []string, env *Env) int {
	if env == nil {
		env = &Env{Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv}
	}
	all := commands()
	if len(args) >= 3 && args[1] == "help" {
		// `sharebench help run` is `sharebench run --help`.
		return Main([]string{args[0], args[2], "--help"}, env)
	}
	if len(args) >= 2 && args[1] == "--version" {
		// `sharebench --version` is `sharebench version`.
		return Main(append([]string{args[0], "version"}, args[2:]...), env)
	}
	if len(args) < 2 || args[1] == "-h" || args[1] == "--help" || args[1] == "help" {
		mainUsage(env.Stdout, all)
		if len(args) < 2 {
			return reports.ExitUsage
		}
		return reports.ExitOK
	}
	for _, c := range all {
		if c.name == args[1] {
			err := c.run(env, args[2:])
			if err == nil {
				return reports.ExitOK
			}
			if errors.Is(err, pflag.ErrHelp) {
				return reports.ExitOK
			}
			for _, line := range strings.Split(userMessage(err), "\n") {
				fmt.Fprintf(env.Stderr, "sharebench %s: %s\n", c.name, line)
			}
			var ee *exitError
			if errors.As(err, &ee) {
				return ee.code
			}
			return reports.ExitRuntime
		}
	}
	fmt.Fprintf(env.Stderr, "sharebench: unknown command %q; run 'sharebench --help' for the list\n", args[1])
	return reports.ExitUsage
}

func mainUsage(w io.Writer, all []command) {
	fmt.Fprintln(w, "sharebench — benchmark and verifier for transactional acknowledgements in Kafka share groups (KIP-932, KIP-1289)")
	fmt.Fprintln(w, "\nUsage: sharebench COMMAND [flags]\n\nCommands:")
	for _, c := range all {
		if c.summary == "" {
			continue // hidden (peer: documented in docs/real-kafka.md)
		}
		fmt.Fprintf(w, "  %-10s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nExamples:\n  sharebench run                         # every mode, built-in 'quick' workload, embedded engine\n  sharebench run --workload chaos --modes transactional,explicit\n  sharebench run --target kafka --brokers 127.0.0.1:9092\n\nRun 'sharebench help COMMAND' (or 'sharebench COMMAND --help') for a command's flags.")
	fmt.Fprintln(w, "\n"+exitCodesHelp)
}

// exitCodesHelp is the exit-code table every --help prints.
const exitCodesHelp = `Exit codes: 0 ok · 1 runtime error · 2 bad usage or input (flag, workload, ledger;
  compare/gate: runs that differ, too few repeats) · 3 a forbidden exactly-once anomaly ·
  4 the gate found a regression · 5 inconclusive: no forbidden anomaly, but the verifier
  could not judge the run (the drain timed out, or inputs it could not judge; the notes
  say which), or a fault did not land under --require-faults · 130 interrupted (SIGINT/SIGTERM; what was measured is written)`

// newFlags returns a flag set whose usage prints the command's examples.
func newFlags(env *Env, name, usage, examples string) *pflag.FlagSet {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	fs.SortFlags = false
	fs.Usage = func() {
		fmt.Fprintf(env.Stdout, "Usage: sharebench %s %s\n\nFlags:\n", name, usage)
		fs.SetOutput(env.Stdout)
		fs.PrintDefaults()
		fs.SetOutput(env.Stderr)
		if examples != "" {
			fmt.Fprintf(env.Stdout, "\nExamples:\n%s\n", examples)
		}
		fmt.Fprintf(env.Stdout, "\n%s\n", exitCodesHelp)
	}
	return fs
}

// parseFlags parses args, mapping flag errors to exit code 2.
func parseFlags(fs *pflag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return err
		}
		return usageErr("%v (see 'sharebench %s --help')", err, fs.Name())
	}
	if fs.NArg() > 0 {
		return usageErr("unexpected argument %q (see 'sharebench %s --help')", fs.Arg(0), fs.Name())
	}
	return nil
}

// pkgPrefix matches the package prefixes of library errors at the start of
// a message or of one of its parts: the command line names flags and files,
// never its internal packages.
var pkgPrefix = regexp.MustCompile(`(^|: |; |\()(loadgen: bad configuration|loadgen|workloads|target|result|reports|engine target|kafka target|engine|verify|stats): `)

// userMessage is err's text without library package prefixes, on every
// line of it (a workload file's problems are one a line).
func userMessage(err error) string {
	lines := strings.Split(err.Error(), "\n")
	for i, msg := range lines {
		for {
			next := pkgPrefix.ReplaceAllString(msg, "$1")
			if next == msg {
				break
			}
			msg = next
		}
		lines[i] = msg
	}
	return strings.Join(lines, "\n")
}

// MainWithSignals is Main with SIGINT and SIGTERM stopping a run early
// (the run writes what it measured and exits 130); a second signal exits
// at once.
func MainWithSignals(args []string) int {
	interrupt := make(chan struct{})
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-sig
		close(interrupt)
		<-sig
		os.Exit(reports.ExitInterrupted)
	}()
	return Main(args, &Env{Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv, Interrupt: interrupt})
}

// Version, when set at build time with -ldflags "-X ...cli.Version=v1.2.3",
// overrides the module version the binary's build information carries.
var Version = ""

func versionCmd(env *Env, args []string) error {
	fs := newFlags(env, "version", "", "  sharebench version\n  sharebench --version")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "sharebench %s (commit %s, %s %s/%s)\n", version(), commit(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return nil
}

// version is the module version: Version when the build set it, else the
// one `go install module@version` records in the build information, else
// "devel" (a build from a checkout records "(devel)").
func version() string {
	if Version != "" {
		return Version
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	return versionOf(bi.Main.Version)
}

// versionOf maps a build's recorded module version to the one printed.
func versionOf(v string) string {
	if v == "" || v == "(devel)" {
		return "devel"
	}
	return v
}

// commit returns the source commit from the binary's build information
// (vcs.revision, with "-dirty" when vcs.modified), else "unknown". It never
// asks git: the current directory may be another repository.
func commit() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	return commitOf(bi.Settings)
}

// commitOf reads the commit from build settings.
func commitOf(settings []debug.BuildSetting) string {
	rev, dirty := "", false
	for _, s := range settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return "unknown"
	}
	rev = rev[:min(12, len(rev))]
	if dirty {
		rev += "-dirty"
	}
	return rev
}
