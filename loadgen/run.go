// This file holds Run, the top of a benchmark run: every mode (and repeat)
// in turn against one target, each with fresh topics, then the result.

package loadgen

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/sharebench/sharebench/loadgen/result"
	"github.com/sharebench/sharebench/loadgen/targets"
	"github.com/sharebench/sharebench/vocab"
)

// Run runs cfg's workload in every mode against cfg.Target and returns the
// result; with an OutDir it also writes the run's artifacts there. A mode
// the target cannot run is listed as unsupported, not an error. When ctx
// is cancelled, Run stops the running mode, marks it interrupted, writes
// the result of what ran and returns an error wrapping ErrInterrupted.
func Run(ctx context.Context, cfg Config) (*result.Result, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if err := cfg.checkFaults(); err != nil {
		return nil, err
	}
	spec := cfg.Workload
	specJSON, _ := json.Marshal(spec)
	// The YAML is for people; a spec that cannot be written as YAML still
	// runs, and the report falls back to the JSON.
	specYAML, _ := spec.YAML()
	info := cfg.Target.Info()
	env := environment(info, cfg.Commit)
	if c := spec.Compression.OrNone(); c != vocab.CompressionNone && info.StoresRecords {
		env.Notes = append(env.Notes, fmt.Sprintf("compression.type %s is not applied: the %s target stores records, not the batches producers write, so its producers run uncompressed", c, info.Target))
	}
	res := &result.Result{
		Schema:      result.Schema,
		Env:         env,
		Compression: spec.Compression.OrNone(),
		Workload:    cfg.WorkloadRef,
		Spec:        specJSON,
		SpecYAML:    string(specYAML),
		SpecNotes:   cfg.WorkloadNotes,
		Seed:        cfg.Seed,
		Args:        cfg.Args,
		Flags:       cfg.Flags,
		TopicPrefix: cfg.RunID,
		Started:     time.Now().UTC(),
		OpenLoop:    spec.ProducerRate > 0,
		Rate:        float64(spec.ProducerRate),
		Duration:    spec.TestDuration(),
		Warmup:      spec.Warmup(),
		Repeats:     cfg.Repeats,
	}
	if cfg.OutDir != "" {
		if err := os.MkdirAll(cfg.OutDir, 0o755); err != nil {
			return nil, fmt.Errorf("loadgen: output directory: %w", err)
		}
	}
	for rep := 0; rep < cfg.Repeats; rep++ {
		for _, m := range cfg.Modes {
			if ctx.Err() != nil {
				// An interrupt ends the run: what it never started is
				// listed, so no report can take the run for complete.
				res.NotRun = append(res.NotRun, result.ModeRef{Mode: m, Repeat: rep})
				continue
			}
			mr := runOne(ctx, &cfg, m, rep)
			if ctx.Err() != nil {
				// Stopped by an interrupt: keep what the mode measured,
				// marked, and run nothing more.
				mr.Interrupted = true
				mr.Error = "interrupted before the mode finished"
			}
			res.Modes = append(res.Modes, mr)
		}
	}
	res.Finished = time.Now().UTC()
	res.Interrupted = ctx.Err() != nil
	if cfg.OutDir != "" {
		if err := result.Write(result.ResultPath(cfg.OutDir), res); err != nil {
			return res, err
		}
	}
	if err := ctx.Err(); err != nil {
		return res, fmt.Errorf("%w: %w", ErrInterrupted, err)
	}
	return res, nil
}

// ErrInterrupted is wrapped by Run's error when its context was cancelled
// (an interrupt): the result holds the completed modes and the interrupted
// one, marked, and is written to OutDir all the same.
var ErrInterrupted = errors.New("loadgen: run interrupted")

// runOne runs one mode once and never fails the whole run: errors land in
// the mode's result.
func runOne(ctx context.Context, cfg *Config, m vocab.Mode, rep int) result.ModeResult {
	if err := cfg.Target.Supports(ctx, m); err != nil {
		if errors.Is(err, targets.ErrUnsupported) {
			return result.ModeResult{Mode: m, Repeat: rep, Unsupported: err.Error()}
		}
		return result.ModeResult{Mode: m, Repeat: rep, Error: err.Error()}
	}
	mr, err := newModeRun(cfg, m, rep)
	if err != nil {
		return result.ModeResult{Mode: m, Repeat: rep, Error: err.Error()}
	}
	out, err := mr.run(ctx)
	if err != nil {
		out.Error = err.Error()
	}
	if td, ok := cfg.Target.(Teardowner); ok {
		// The mode is measured and verified: free its topics, so a run of
		// many modes holds one mode's data at a time.
		_ = td.Teardown(ctx, mr.tcfg)
	}
	return out
}

// Teardowner is implemented by targets that can drop a mode's topics once
// the mode is done (the in-process engine, which holds them in memory).
type Teardowner interface {
	Teardown(ctx context.Context, cfg targets.Config) error
}

// environment records where the run happened.
func environment(info targets.Info, commit string) result.Env {
	return result.Env{
		Commit:        commit,
		GoVersion:     runtime.Version(),
		OS:            runtime.GOOS,
		Arch:          runtime.GOARCH,
		CPU:           cpuModel(),
		NumCPU:        runtime.NumCPU(),
		GOMAXPROCS:    runtime.GOMAXPROCS(0),
		Target:        info.Target,
		Embedded:      info.Embedded,
		Brokers:       info.Brokers,
		BrokerVersion: info.BrokerVersion,
		Notes:         info.Notes,
	}
}

// cpuModel reads the CPU model name where the OS tells it.
func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return runtime.GOARCH
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "model name") {
			if i := strings.IndexByte(line, ':'); i >= 0 {
				return strings.TrimSpace(line[i+1:])
			}
		}
	}
	return runtime.GOARCH
}
