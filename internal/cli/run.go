// This file holds `sharebench run`, `sharebench workloads` and
// `sharebench verify`.

package cli

import (
	"context"
	"errors"
	"fmt"
	iofs "io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/pflag"

	"github.com/sharebench/sharebench/loadgen"
	"github.com/sharebench/sharebench/loadgen/result"
	"github.com/sharebench/sharebench/loadgen/sink"
	"github.com/sharebench/sharebench/loadgen/targets"
	"github.com/sharebench/sharebench/loadgen/targets/enginetarget"
	"github.com/sharebench/sharebench/loadgen/targets/kafkatarget"
	"github.com/sharebench/sharebench/loadgen/verify"
	"github.com/sharebench/sharebench/reports"
	"github.com/sharebench/sharebench/vocab"
	"github.com/sharebench/sharebench/workloads"
)

type runFlags struct {
	workload string
	target   string
	modes    string
	duration time.Duration
	warmup   time.Duration
	rate     int
	// replicationFactor and minInsyncReplicas override the workload's.
	replicationFactor int
	minInsyncReplicas int
	seed              int64
	out               string
	format            string
	// ombDriver is an OMB driver file (--omb-driver); driver what it sets.
	ombDriver     string
	driver        *workloads.Driver
	dumpLedgers   bool
	requireFaults bool
	force         bool
	wide          bool
	quiet         bool
	repeat        int
	noReport      bool
	shards        int
	knobs         string
	dataDir       string
	sink          string
	tempDataDir   string // made by the run for a workload's engine-side faults, removed after it
	flush         string
	kafka         kafkaFlags
	share         shareFlags
	compression   string
}

const runExamples = `  sharebench run                                    # built-in 'quick', every mode, embedded engine
  sharebench run --workload ctp-latency --modes explicit,transactional
  sharebench run --workload my.yaml --duration 30s --rate 5000 --seed 42
  sharebench run --workload chaos --dump-ledgers    # faults; verifier verdict per mode
  sharebench run --workload chaos --data-dir /tmp/sb --flush always   # with engine restarts, coordinator crashes, failovers
  sharebench run --target kafka                     # embedded kfake cluster
  sharebench run --target kafka --brokers 127.0.0.1:9092 --modes implicit,explicit,deferred,classic-eos
  sharebench run --format bench > new.txt && benchstat old.txt new.txt`

func (f *runFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.workload, "workload", workloads.DefaultName, "built-in workload name or YAML file (see 'sharebench workloads')")
	fs.StringVar(&f.target, "target", "engine", "system under test: engine (in-process reference engine) or kafka")
	fs.StringVar(&f.modes, "modes", "", "comma-separated modes (implicit, explicit, deferred, transactional, classic-eos) or all (default: the workload's)")
	fs.DurationVar(&f.duration, "duration", 0, "length of each mode's measurement window (default: the workload's)")
	fs.DurationVar(&f.warmup, "warmup", 0, "warm-up per mode: the measurement window opens after it, once every worker has received records and an open loop's consumers have caught up (settled what was produced within one warm-up); nothing before counts (default: the workload's)")
	fs.IntVar(&f.rate, "rate", 0, "input records/s over all producers; 0 is a closed loop (default: the workload's)")
	fs.IntVar(&f.replicationFactor, "replication-factor", 0, "replication.factor of the run's topics; 0: the cluster's default (default: the workload's replicationFactor)")
	fs.StringVar(&f.compression, "compression", "", "compression.type of every producer of the run, the input producers and the workers' output producers: none, gzip, snappy, lz4 or zstd; the engine target stores records, not batches, and notes it ran uncompressed (default: the workload's compression.type, else none)")
	fs.IntVar(&f.minInsyncReplicas, "min-insync-replicas", 0, "min.insync.replicas of the run's topics; 0: the cluster's default (default: the workload's minInsyncReplicas)")
	fs.Int64Var(&f.seed, "seed", 0, "seed of every random choice (default: time-based, printed)")
	fs.StringVar(&f.out, "out", "", "directory for result.json, .hlog files, ledgers and the report (default results/<UTC timestamp>)")
	fs.BoolVar(&f.force, "force", false, "with --out: replace the run already in that directory (its result.json, .hlog files, ledgers and report; nothing else)")
	fs.StringVar(&f.ombDriver, "omb-driver", "", "an OpenMessaging Benchmark Kafka driver file (driver-kafka/*.yaml): replicationFactor and min.insync.replicas set the workload's; linger.ms, batch.size, compression.type, max.in.flight.requests.per.connection and max.partition.fetch.bytes tune the kafka target's clients; a setting sharebench cannot honour is refused (docs/omb.md)")
	fs.StringVar(&f.format, "format", "text", "output format: text, json, bench (Go benchmark lines for benchstat) or omb (text, and each mode as an OpenMessaging Benchmark result, MODE.omb.json beside result.json, for OMB's chart script)")
	fs.BoolVar(&f.wide, "wide", false, "text format: the wide table (every column) even on a terminal narrower than it; a pipe or file always gets it")
	fs.BoolVar(&f.dumpLedgers, "dump-ledgers", false, "write ledgers/<mode>/inputs.jsonl and outputs.jsonl for 'sharebench verify'")
	fs.BoolVar(&f.requireFaults, "require-faults", false, "a mode whose faults did not all land (a broker that could not be resolved, a control command that failed or timed out) is INCONCLUSIVE (exit 5), not PASS: for runs that exist to test those faults")
	fs.BoolVar(&f.quiet, "quiet", false, "no progress lines")
	fs.IntVar(&f.repeat, "repeat", 1, "run each mode N times, interleaved, keeping every repeat")
	fs.BoolVar(&f.noReport, "no-report", false, "do not write report/ (plots, report.html, summary.md) into the run directory")
	fs.IntVar(&f.shards, "shards", 0, "engine target: lock shards (default: 4×GOMAXPROCS)")
	fs.StringVar(&f.knobs, "knobs", "safe", "engine target: KIP-1289 decision knobs: safe, draft, or a comma list of "+knobList)
	f.share.register(fs)
	fs.StringVar(&f.dataDir, "data-dir", "", "engine target: make the engine durable in DIR (an empty or sharebench-made directory; recovered if it holds data) and enable the engine-restart, coordinator-crash and share-failover faults (default: in memory)")
	fs.StringVar(&f.sink, "sink", "", "ackOnly workloads (the checkpoint model): the external two-phase sink: memory (in-process; durable under --data-dir/sink when --data-dir is given) or a postgres:// URL (PREPARE TRANSACTION; scripts/postgres/up starts a server) (default memory)")
	fs.StringVar(&f.flush, "flush", "always", "engine target with --data-dir: when the logs are fsynced: always (before each call returns, group commit), interval:DURATION (e.g. interval:10ms) or never")
	f.kafka.register(fs)
}

func runCmd(env *Env, args []string) error {
	var f runFlags
	fs := newFlags(env, "run", "[flags]", runExamples)
	f.register(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	spec, notes, err := loadRunWorkload(env, fs, &f)
	if err != nil {
		return err
	}
	modes, err := checkRunFlags(fs, &f, spec)
	if err != nil {
		return err
	}
	formatter, err := runFormatter(env, &f)
	if err != nil {
		return err
	}
	if !fs.Changed("seed") {
		f.seed = time.Now().UnixNano() % 1_000_000_000
	}
	if err := prepareOut(&f); err != nil {
		return err
	}
	ctx, cancel := interruptible(env)
	defer cancel()
	tgt, faultRunner, closeTarget, err := openRunTarget(ctx, env, &f, spec, modes)
	if err != nil {
		return err
	}
	defer closeTarget()
	printRunStart(env, fs, &f, spec, modes, tgt.Info())
	snk, err := openSink(ctx, &f, spec)
	if err != nil {
		return err
	}
	if snk != nil {
		defer snk.Close()
		fmt.Fprintf(env.Stderr, "sharebench run: checkpoint model: sink %s\n", snk.Name())
	}
	cfg := runConfig(fs, &f, args, spec, notes, modes)
	cfg.Target, cfg.FaultRunner, cfg.Sink = tgt, faultRunner, snk
	res, err := runWithProgress(ctx, env, &f, cfg)
	interrupted := errors.Is(err, loadgen.ErrInterrupted)
	if err != nil && !interrupted {
		return runErr(err)
	}
	if err := writeRunOutputs(env, &f, formatter, res); err != nil {
		return err
	}
	if interrupted {
		return interruptedErr(res, f.out)
	}
	return runVerdict(res, f)
}

// loadRunWorkload loads --workload and --omb-driver, printing their notes,
// and applies the flags that override the workload.
func loadRunWorkload(env *Env, fs *pflag.FlagSet, f *runFlags) (*workloads.Spec, []string, error) {
	spec, notes, err := workloads.LoadWithNotes(f.workload)
	if err != nil {
		return nil, nil, withCode(reports.ExitUsage, err)
	}
	for _, n := range notes {
		fmt.Fprintf(env.Stderr, "sharebench run: note: %s: %s\n", f.workload, n)
	}
	if f.ombDriver != "" {
		d, notes, err := workloads.LoadDriver(f.ombDriver)
		if err != nil {
			return nil, nil, withCode(reports.ExitUsage, err)
		}
		for _, n := range notes {
			fmt.Fprintf(env.Stderr, "sharebench run: note: %s: %s\n", f.ombDriver, n)
		}
		d.ApplyTo(spec)
		f.driver = d
	}
	if err := applyOverrides(fs, f, spec); err != nil {
		return nil, nil, err
	}
	return spec, notes, nil
}

// checkRunFlags checks --modes, --shards, --sink and --repeat, before
// anything is made, and returns the modes asked for (nil: the workload's).
func checkRunFlags(fs *pflag.FlagSet, f *runFlags, spec *workloads.Spec) ([]vocab.Mode, error) {
	if fs.Changed("modes") && strings.TrimSpace(f.modes) == "" {
		return nil, usageErr("--modes is empty; name the modes (for example --modes explicit,transactional) or pass --modes all, or leave the flag out for the workload's")
	}
	if fs.Changed("shards") && f.shards <= 0 {
		return nil, usageErr("--shards %d: must be at least 1 (leave the flag out for the default, 4×GOMAXPROCS)", f.shards)
	}
	modes, err := parseModes(f.modes)
	if err != nil {
		return nil, err
	}
	if err := checkSinkFlag(f, spec); err != nil {
		return nil, err
	}
	if f.repeat < 1 {
		return nil, usageErr("--repeat %d: must be at least 1", f.repeat)
	}
	return modes, nil
}

// runFormatter is the formatter of --format on stdout: omb prints the text
// table and also writes each mode as an OMB TestResult beside result.json;
// the text table fits a terminal unless --wide.
func runFormatter(env *Env, f *runFlags) (loadgen.Formatter, error) {
	stdoutFormat := f.format
	if f.format == formatOMB {
		stdoutFormat = "text"
	}
	formatter, err := loadgen.NewFormatter(stdoutFormat)
	if err != nil {
		return nil, usageErr("--format: unknown format %q (valid: text, json, bench, omb)", f.format)
	}
	if _, text := formatter.(loadgen.TextFormatter); text && !f.wide && isTerminal(env.Stdout) {
		formatter = loadgen.TextFormatter{Width: terminalWidth(env.Stdout, env.Getenv)}
	}
	return formatter, nil
}

// interruptible is a context that env.Interrupt cancels.
func interruptible(env *Env) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.Background())
	if env.Interrupt != nil {
		go func() {
			select {
			case <-env.Interrupt:
				cancel()
			case <-ctx.Done():
			}
		}()
	}
	return ctx, cancel
}

// openRunTarget gives the engine a temporary data directory if the
// workload's faults need one, checks the target flags and opens the
// target; closeTarget closes it and then removes that directory.
func openRunTarget(ctx context.Context, env *Env, f *runFlags, spec *workloads.Spec, modes []vocab.Mode) (tgt targets.Target, fr loadgen.FaultRunner, closeTarget func(), err error) {
	if err := tempDataDir(env, f, spec); err != nil {
		return nil, nil, nil, err
	}
	removeTemp := func() {
		if f.tempDataDir != "" {
			os.RemoveAll(f.tempDataDir)
		}
	}
	noteEngineDriver(env, f)
	if err := f.validate(); err != nil {
		removeTemp()
		return nil, nil, nil, err
	}
	tgt, fr, err = openTarget(ctx, env, f, modes)
	if err != nil {
		removeTemp()
		return nil, nil, nil, err
	}
	return tgt, fr, func() { tgt.Close(); removeTemp() }, nil
}

// printRunStart prints the run's first lines: the workload, target and
// seed with the repro command, the target's notes, and how long the run
// will take.
func printRunStart(env *Env, fs *pflag.FlagSet, f *runFlags, spec *workloads.Spec, modes []vocab.Mode, info targets.Info) {
	fmt.Fprintf(env.Stderr, "sharebench run: workload %s, target %s, seed %d (repeat with: sharebench run --workload %s --seed %d%s)\n",
		spec.Name, info.Target, f.seed, shellQuote(f.workload), f.seed, reproFlags(fs))
	for _, n := range info.Notes {
		fmt.Fprintf(env.Stderr, "sharebench run: %s\n", n)
	}
	fmt.Fprintf(env.Stderr, "sharebench run: %s\n", runTime(spec, modes, f.repeat))
}

// runConfig is the load generator's configuration of the run, but for
// its target, fault runner and sink.
func runConfig(fs *pflag.FlagSet, f *runFlags, args []string, spec *workloads.Spec, notes []string, modes []vocab.Mode) loadgen.Config {
	return loadgen.Config{
		Workload: spec, WorkloadRef: f.workload, WorkloadNotes: notes, Modes: modes, Seed: f.seed,
		Repeats: f.repeat, OutDir: f.out, DumpLedgers: f.dumpLedgers, RequireFaults: f.requireFaults,
		// The arguments Main was given, not os.Args, which differ when
		// Main is called from a test or an embedding program.
		Args: append([]string{"sharebench", "run"}, args...), Flags: flagValues(fs), Commit: commit(),
	}
}

// runWithProgress runs the modes, with progress lines on stderr unless
// --quiet (redrawn in place on a terminal).
func runWithProgress(ctx context.Context, env *Env, f *runFlags, cfg loadgen.Config) (*result.Result, error) {
	var tty *ttyProgress
	if !f.quiet {
		cfg.Progress = env.Stderr
		if isTerminal(env.Stderr) {
			tty = &ttyProgress{w: env.Stderr, width: terminalWidth(env.Stderr, env.Getenv)}
			cfg.Progress = tty
		}
	}
	res, err := loadgen.Run(ctx, cfg)
	if tty != nil {
		tty.finish()
	}
	return res, err
}

// runErr is the error of a run that did not finish, naming the flags that
// give what it lacked; a bad configuration is a usage error.
func runErr(err error) error {
	err = runFlagHints(err)
	if errors.Is(err, loadgen.ErrBadConfig) {
		return withCode(reports.ExitUsage, err)
	}
	return err
}

// writeRunOutputs prints the result in --format, writes the OMB results
// and the report, and says where the artifacts are.
func writeRunOutputs(env *Env, f *runFlags, formatter loadgen.Formatter, res *result.Result) error {
	if err := formatter.Format(env.Stdout, res); err != nil {
		return err
	}
	if f.format == formatOMB {
		files, err := reports.WriteOMB(f.out, res)
		if err != nil {
			return err
		}
		fmt.Fprintf(env.Stderr, "sharebench run: %d OMB results (bin/create_charts.py reads them): %s\n", len(files), strings.Join(files, " "))
	}
	if !f.noReport {
		if err := renderReport(f.out, result.ReportDir(f.out)); err != nil {
			fmt.Fprintf(env.Stderr, "sharebench run: report: %v\n", err)
		}
	}
	fmt.Fprintf(env.Stderr, "sharebench run: artifacts in %s\n", f.out)
	return nil
}

// interruptedErr is the exit-130 error of an interrupted run: how many
// modes completed, and which never ran.
func interruptedErr(res *result.Result, out string) error {
	done := 0
	for _, m := range res.Modes {
		if !m.Interrupted {
			done++
		}
	}
	never := ""
	if n := len(res.NotRun); n > 0 {
		names := make([]string, 0, n)
		for _, m := range res.NotRun {
			names = append(names, result.ModeRunName(m.Mode, m.Repeat, res.Repeats))
		}
		never = fmt.Sprintf("; %s never ran (listed as not_run)", strings.Join(names, ", "))
	}
	return withCode(reports.ExitInterrupted, fmt.Errorf("interrupted: %d completed modes and the interrupted one (marked) are in %s%s", done, result.ResultPath(out), never))
}

// prepareOut makes the run's output directory: a new one under results/
// when --out is not given, else --out, which must not hold a run already
// (its files would be partly replaced, partly left) unless --force, which
// removes that run's files first.
func prepareOut(f *runFlags) error {
	if f.out == "" {
		dir, err := result.NewRunDir("results", time.Now())
		if err != nil {
			return withCode(reports.ExitRuntime, fmt.Errorf("the output directory: %v; pass --out DIR", err))
		}
		f.out = dir
		return nil
	}
	held, err := result.RunArtifacts(f.out)
	if err != nil {
		return usageErr("--out %s: %v", f.out, err)
	}
	if len(held) == 0 {
		return nil
	}
	if !f.force {
		return usageErr("--out %s already holds a run (%s); pass another --out, or --force to replace that run", f.out, strings.Join(held, ", "))
	}
	if err := result.RemoveRun(f.out); err != nil {
		return withCode(reports.ExitRuntime, fmt.Errorf("--force: removing the run in %s: %v", f.out, err))
	}
	return nil
}

// formatOMB is the --format that also writes OMB results.
const formatOMB = "omb"

// tempDataDir gives the engine a temporary data directory when the
// workload has engine-side faults (engine restarts, coordinator crashes,
// failovers) and no --data-dir was given, and says so; openRunTarget's
// closeTarget removes it after the run.
func tempDataDir(env *Env, f *runFlags, spec *workloads.Spec) error {
	if f.target != "engine" || f.dataDir != "" {
		return nil
	}
	var kinds []string
	for _, fl := range spec.Faults {
		if enginetarget.NeedsDataDir(fl.Kind) && !slices.Contains(kinds, string(fl.Kind)) {
			kinds = append(kinds, string(fl.Kind))
		}
	}
	if len(kinds) == 0 {
		return nil
	}
	dir, err := os.MkdirTemp("", "sharebench-data-")
	if err != nil {
		return withCode(reports.ExitRuntime, fmt.Errorf("a temporary data directory for the %s faults: %v; pass --data-dir DIR", strings.Join(kinds, ", "), err))
	}
	f.dataDir, f.tempDataDir = dir, dir
	fmt.Fprintf(env.Stderr, "sharebench run: the %s faults need a durable engine: data in the temporary directory %s, removed after the run (--data-dir DIR keeps it)\n",
		strings.Join(kinds, ", "), dir)
	return nil
}

// runTime says how long the run will take at least, before it starts.
func runTime(spec *workloads.Spec, modes []vocab.Mode, repeats int) string {
	n := len(modes)
	if n == 0 {
		n = len(spec.Modes())
	}
	per := spec.Warmup() + spec.TestDuration()
	total := time.Duration(n*repeats) * per
	s := fmt.Sprintf("%s × %s × (%v warm-up + %v measured): about %v in all, plus each mode's set-up, drain (up to %v) and verification",
		plural(n, "mode"), plural(repeats, "repeat"), spec.Warmup(), spec.TestDuration(), total.Round(time.Second), spec.DrainTimeout)
	if b := spec.BacklogRecords(); b > 0 && spec.ProducerRate > 0 {
		build := time.Duration(float64(b) / float64(spec.ProducerRate) * float64(time.Second))
		s += fmt.Sprintf(", and its consumer backlog of %d records (about %v to build at %d/s, then its drain, before the window opens)", b, build.Round(time.Second), spec.ProducerRate)
	}
	return s
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// runVerdict maps the result to the exit code: 3 for a forbidden
// exactly-once anomaly, 1 for a mode that failed to run.
func runVerdict(res *result.Result, f runFlags) error {
	var failed, unjudged, faultsOnly, errs []string
	for _, m := range res.Modes {
		switch {
		case m.Verify == nil:
		case m.Verify.Inconclusive():
			// Inconclusive with nothing unjudged is --require-faults's
			// verdict on faults that did not land.
			if why, note := inconclusiveWhy(m), m.FaultsNote(); why == "" && note != "" {
				faultsOnly = append(faultsOnly, fmt.Sprintf("%s (%s%s)", m.Mode, note, firstFailedFault(m)))
			} else {
				unjudged = append(unjudged, fmt.Sprintf("%s (%s)", m.Mode, why))
			}
		case !m.Verify.Pass:
			failed = append(failed, fmt.Sprintf("%s (%s)", m.Mode, strings.Join(vocab.Names(m.Verify.Forbidden), ", ")))
		}
		if m.Error != "" {
			errs = append(errs, m.Mode.String()+": "+m.Error)
		}
	}
	if len(failed) > 0 {
		return withCode(reports.ExitAnomaly, fmt.Errorf("forbidden exactly-once anomalies in %s; witnesses are in %s, reproduce with --seed %d",
			strings.Join(failed, "; "), result.ResultPath(f.out), f.seed))
	}
	if len(errs) > 0 {
		return withCode(reports.ExitRuntime, fmt.Errorf("%s", strings.Join(errs, "; ")))
	}
	if len(unjudged) > 0 {
		return withCode(reports.ExitInconclusive, fmt.Errorf("inconclusive: the verifier could not judge %s; a longer --drain or a target that reports share state settles it (details in %s, reproduce with --seed %d)",
			strings.Join(unjudged, "; "), result.ResultPath(f.out), f.seed))
	}
	if len(faultsOnly) > 0 {
		return withCode(reports.ExitInconclusive, fmt.Errorf("inconclusive by --require-faults: not every fault landed in %s; each fault's outcome is in %s, reproduce with --seed %d",
			strings.Join(faultsOnly, "; "), result.ResultPath(f.out), f.seed))
	}
	return nil
}

// firstFailedFault is ": " and the detail of m's first fault that did not
// land, or "" when every fault landed.
func firstFailedFault(m result.ModeResult) string {
	for _, ev := range m.Faults {
		if ev.Failed {
			return ": " + ev.Kind + " " + ev.Detail
		}
	}
	return ""
}

// inconclusiveWhy says why a mode's verdict is INCONCLUSIVE.
func inconclusiveWhy(m result.ModeResult) string {
	var why []string
	if m.DrainTimedOut {
		why = append(why, "drain timed out")
	}
	if m.DrainInterrupted {
		why = append(why, "drain interrupted")
	}
	reasons := make([]string, 0, len(m.Verify.UnjudgedReasons))
	for r, n := range m.Verify.UnjudgedReasons {
		if n > 0 {
			reasons = append(reasons, fmt.Sprintf("%d %s", n, r))
		}
	}
	sort.Strings(reasons)
	return strings.Join(append(why, reasons...), "; ")
}

// reproFlags lists the flags that shape the run, for the repro line.
func reproFlags(fs *pflag.FlagSet) string {
	var b strings.Builder
	fs.Visit(func(fl *pflag.Flag) {
		switch fl.Name {
		case "seed", "workload", "out", "force", "format", "wide", "quiet", "no-report", "dump-ledgers", "sasl-password-file":
			return
		}
		fmt.Fprintf(&b, " --%s %s", fl.Name, shellQuote(fl.Value.String()))
	})
	return b.String()
}

// shellQuote quotes v for a POSIX shell when it is empty or holds a
// character the shell would read, so a pasted repro line means what ran.
func shellQuote(v string) string {
	if v != "" && strings.IndexFunc(v, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_.,:/=+@%", r))
	}) < 0 {
		return v
	}
	return "'" + strings.ReplaceAll(v, "'", `'\''`) + "'"
}

// flagValues records every flag's effective value (secrets excluded).
func flagValues(fs *pflag.FlagSet) map[string]string {
	m := map[string]string{}
	fs.VisitAll(func(fl *pflag.Flag) {
		if strings.Contains(fl.Name, "password") {
			return
		}
		m[fl.Name] = fl.Value.String()
	})
	return m
}

// applyOverrides applies --duration, --warmup, --rate, --replication-factor
// and --min-insync-replicas to the workload
// and re-validates it.
func applyOverrides(fs *pflag.FlagSet, f *runFlags, spec *workloads.Spec) error {
	if fs.Changed("duration") {
		if f.duration <= 0 {
			return usageErr("--duration %v: must be positive", f.duration)
		}
		spec.TestLength, spec.TestMinutes = f.duration, 0
	}
	if fs.Changed("warmup") {
		if f.warmup < 0 {
			return usageErr("--warmup %v: must not be negative", f.warmup)
		}
		spec.WarmupLength, spec.WarmupMinutes = f.warmup, 0
	}
	if fs.Changed("replication-factor") {
		spec.ReplicationFactor = f.replicationFactor
	}
	if fs.Changed("min-insync-replicas") {
		spec.MinInsyncReplicas = f.minInsyncReplicas
	}
	if fs.Changed("compression") {
		c, err := vocab.ParseCompression(f.compression)
		if err != nil || f.compression == "" {
			return usageErr("--compression %q: use %s", f.compression, strings.Join(vocab.Names(vocab.Compressions()), ", "))
		}
		spec.Compression = c
	}
	if fs.Changed("rate") {
		if f.rate < 0 {
			return usageErr("--rate %d: must not be negative (0 is a closed loop)", f.rate)
		}
		spec.ProducerRate = f.rate
		if f.rate == 0 {
			spec.RateDistribution = workloads.RateConstant
		}
	}
	if err := f.share.apply(fs, spec); err != nil {
		return err
	}
	if err := spec.Validate(); err != nil {
		return usageErr("the workload with your flags is not valid: %v", err)
	}
	return nil
}

func parseModes(s string) ([]vocab.Mode, error) {
	if s == "" {
		return nil, nil
	}
	if s == "all" {
		return append([]vocab.Mode(nil), vocab.AllModes()...), nil
	}
	var out []vocab.Mode
	for _, part := range strings.Split(s, ",") {
		m, err := vocab.ParseMode(strings.TrimSpace(part))
		if err != nil {
			var valid []string
			for _, m := range vocab.AllModes() {
				valid = append(valid, string(m))
			}
			return nil, usageErr("--modes: unknown mode %q (valid: %s, or all)", strings.TrimSpace(part), strings.Join(valid, ", "))
		}
		// A mode named twice would run twice under one label, the second
		// run's histograms overwriting the first's: --repeat is the way
		// to run a mode more than once.
		if slices.Contains(out, m) {
			return nil, usageErr("--modes: %s is named twice; name each mode once (--repeat N runs every mode N times)", m)
		}
		out = append(out, m)
	}
	return out, nil
}

const workloadsExamples = `  sharebench workloads
  sharebench workloads --show chaos > chaos.yaml   # start a workload of your own from a built-in`

func workloadsCmd(env *Env, args []string) error {
	fs := newFlags(env, "workloads", "[--show NAME]", workloadsExamples)
	show := fs.String("show", "", "print the YAML of a built-in workload")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *show != "" {
		spec, ok := workloads.Lookup(*show)
		if !ok {
			return usageErr("no built-in workload %q (built-ins: %s)", *show, strings.Join(workloads.Names(), ", "))
		}
		b, err := spec.YAML()
		if err != nil {
			return err
		}
		_, err = env.Stdout.Write(b)
		return err
	}
	tw := tabwriter.NewWriter(env.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tMODES\tRATE\tDURATION\tDESCRIPTION")
	for _, s := range workloads.All() {
		rate := fmt.Sprintf("%d/s", s.ProducerRate)
		if s.ProducerRate == 0 {
			rate = "closed loop"
		}
		desc := s.Description
		if i := strings.Index(desc, ". "); i > 0 {
			desc = desc[:i+1]
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%v\t%s\n", s.Name, strings.Join(vocab.Names(s.Modes()), ","), rate, s.TestDuration(), desc)
	}
	return tw.Flush()
}

const verifyExamples = `  sharebench run --workload chaos --dump-ledgers --out results/chaos
  sharebench verify --in results/chaos
  sharebench verify --in results/chaos --mode transactional`

func verifyCmd(env *Env, args []string) error {
	fs := newFlags(env, "verify", "--in RUN_DIR [--mode MODE]", verifyExamples)
	in := fs.String("in", "", "run directory written with --dump-ledgers")
	only := fs.String("mode", "", "verify only this mode's ledgers")
	limit := fs.Int("delivery-limit", 0, "delivery limit for over-delivered (default: the one the ledgers record, else the run's workload's, else 5)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *in == "" {
		return usageErr("--in is required: the run directory written by 'sharebench run --dump-ledgers'")
	}
	names, err := ledgerModes(*in, *only)
	if err != nil {
		return err
	}
	run, err := recordedRun(env, *in)
	if err != nil {
		return err
	}
	// Each mode is judged on its own: a broken ledger is reported and the
	// other modes are still verified.
	var t verifyTally
	for _, name := range names {
		t.add(name, verifyLedgers(env, *in, name, *limit, run))
	}
	t.broken = append(t.broken, missingLedgers(env, *in, *only, run, names)...)
	return t.err()
}

// ledgerModes lists the mode runs with ledgers under the run directory
// in, only the one named only when it is given.
func ledgerModes(in, only string) ([]string, error) {
	names, err := result.LedgerModes(in)
	if err != nil {
		return nil, usageErr("%s has no ledgers (%v); re-run with 'sharebench run --dump-ledgers --out %s'", in, err, in)
	}
	if only != "" {
		names = slices.DeleteFunc(names, func(n string) bool { return n != only })
	}
	if len(names) == 0 {
		return nil, usageErr("no ledgers for mode %q under %s", only, result.LedgersDir(in))
	}
	return names, nil
}

// recordedRun reads the run directory's result.json: the counts it records
// are cross-checked against the ledgers. A run directory without one
// (nil) is judged from its ledgers alone, and says so.
func recordedRun(env *Env, in string) (*result.Result, error) {
	run, err := result.Read(result.ResultPath(in))
	switch {
	case errors.Is(err, iofs.ErrNotExist):
		fmt.Fprintf(env.Stdout, "verify: %s has no %s: the ledgers' counts are not cross-checked\n", in, result.FileName)
		return nil, nil
	case err != nil:
		return nil, usageErr("%v; the run directory's %s must be readable to cross-check its ledgers", err, result.FileName)
	}
	return run, nil
}

// verifyOutcome is how one mode run's ledgers were judged.
type verifyOutcome int

const (
	verifyPassed verifyOutcome = iota
	verifyFailed
	verifyBroken // not judged: the ledger cannot be read, or result.json contradicts it
	verifyUnjudged
)

// verifyLedgers judges one mode run's ledgers and prints the verdict, or
// why they were not judged.
func verifyLedgers(env *Env, in, name string, limit int, run *result.Result) verifyOutcome {
	dir := result.LedgerDir(in, name)
	v, err := verify.VerifyDir(modeOf(name), dir, verify.Options{DeliveryLimit: deliveryLimit(limit, in, dir)})
	if err == nil && run != nil {
		if rec := run.ModeRun(name); rec == nil {
			err = fmt.Errorf("verify: %s records no run of %s, so these ledgers are not the run's", result.ResultPath(in), name)
		} else {
			err = verify.CheckRecorded(dir, v, rec)
		}
	}
	if err != nil {
		fmt.Fprintf(env.Stdout, "verify %s: not judged: %v\n", name, err)
		return verifyBroken
	}
	verify.Format(env.Stdout, name, v)
	switch {
	case v.Inconclusive():
		return verifyUnjudged
	case !v.Pass:
		return verifyFailed
	}
	return verifyPassed
}

// missingLedgers lists, and prints, the mode runs the run verified with
// its ledgers dumped whose ledgers are missing.
func missingLedgers(env *Env, in, only string, run *result.Result, names []string) []string {
	if run == nil || run.Flags["dump-ledgers"] != "true" {
		return nil
	}
	var missing []string
	for _, m := range run.Modes {
		name := result.ModeRunName(m.Mode, m.Repeat, run.Repeats)
		if m.Verify == nil || slices.Contains(names, name) || only != "" && name != only {
			continue
		}
		fmt.Fprintf(env.Stdout, "verify %s: not judged: %s records its verdict, but %s is missing\n", name, result.ResultPath(in), result.LedgerDir(in, name))
		missing = append(missing, name)
	}
	return missing
}

// verifyTally collects the mode runs by outcome.
type verifyTally struct {
	failed, broken, unjudged []string
}

func (t *verifyTally) add(name string, o verifyOutcome) {
	switch o {
	case verifyFailed:
		t.failed = append(t.failed, name)
	case verifyBroken:
		t.broken = append(t.broken, name)
	case verifyUnjudged:
		t.unjudged = append(t.unjudged, name)
	}
}

// err is the worst outcome: an anomaly (exit 3), then ledgers that cannot
// be judged (2), then an inconclusive verdict (5).
func (t *verifyTally) err() error {
	switch {
	case len(t.failed) > 0:
		return withCode(reports.ExitAnomaly, fmt.Errorf("forbidden exactly-once anomalies in %s", strings.Join(t.failed, ", ")))
	case len(t.broken) > 0:
		return usageErr("ledgers of %s cannot be judged (see above); re-run with --dump-ledgers", strings.Join(t.broken, ", "))
	case len(t.unjudged) > 0:
		return withCode(reports.ExitInconclusive, fmt.Errorf("inconclusive: %s could not be judged (see the notes above)", strings.Join(t.unjudged, ", ")))
	}
	return nil
}

// deliveryLimit is the delivery limit a mode's ledgers in ledgerDir are
// judged with: --delivery-limit when given; else the one the ledger records
// (0 here: verify reads it from ledger.json); a v1 ledger records none, so
// the run's workload's, else Kafka's default 5.
func deliveryLimit(flag int, runDir, ledgerDir string) int {
	if flag != 0 {
		return flag
	}
	if meta, err := verify.ReadMeta(ledgerDir); err != nil || meta.Schema != verify.LedgerSchemaV1 {
		return 0
	}
	if r, err := result.Read(result.ResultPath(runDir)); err == nil {
		var spec workloads.Spec
		if jsonUnmarshal(r.Spec, &spec) == nil && spec.DeliveryLimit > 0 {
			return spec.DeliveryLimit
		}
	}
	return 5
}

// modeOf strips a repeat suffix ("explicit-r2" -> "explicit").
func modeOf(dirName string) vocab.Mode {
	for _, m := range vocab.AllModes() {
		if dirName == string(m) || strings.HasPrefix(dirName, string(m)+"-r") {
			return m
		}
	}
	return vocab.Mode(dirName)
}

// checkSinkFlag refuses --sink for a workload without the checkpoint model
// and a sink it does not know, before anything starts.
func checkSinkFlag(f *runFlags, spec *workloads.Spec) error {
	if !spec.AckOnly && f.sink != "" {
		return usageErr("--sink %q: workload %s does not use the checkpoint model (ackOnly: true); drop --sink or pick a checkpoint workload such as checkpoint", f.sink, spec.Name)
	}
	if err := sink.CheckURL(f.sink); err != nil {
		return withCode(reports.ExitUsage, fmt.Errorf("--sink: %w", err))
	}
	return nil
}

// openSink opens the checkpoint model's sink (--sink) for an ackOnly
// workload; other workloads get none.
func openSink(ctx context.Context, f *runFlags, spec *workloads.Spec) (sink.Sink, error) {
	if !spec.AckOnly {
		return nil, nil
	}
	dir := ""
	if f.dataDir != "" && (f.sink == "" || f.sink == "memory") {
		dir = filepath.Join(f.dataDir, "sink")
	}
	s, err := sink.Open(ctx, f.sink, dir)
	if err != nil {
		return nil, withCode(reports.ExitUsage, fmt.Errorf("--sink: %w", err))
	}
	return s, nil
}

// runFlagHints names the flags that give what a run's error says is
// missing: the packages below the CLI name the inputs, not the flags.
func runFlagHints(err error) error {
	var um *kafkatarget.UnsupportedModeError
	switch {
	case errors.As(err, &um):
		return &flagged{err.Error() + "; pass --modes " + strings.Join(um.InsteadNames(), ","), err}
	case errors.Is(err, loadgen.ErrNoFaultControl):
		return &flagged{err.Error() + "; for kafka pass --broker-control, for the engine run with --data-dir", err}
	case errors.Is(err, enginetarget.ErrNeedsDataDir):
		return &flagged{err.Error() + "; run with --data-dir", err}
	}
	return err
}
