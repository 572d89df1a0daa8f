// This file holds the output formatters of a run: one Formatter interface
// with text (a table for people), JSON (the result document) and bench
// (Go benchmark lines that benchstat reads) implementations.

package loadgen

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/sharebench/sharebench/loadgen/result"
)

// Formatter writes a run's result.
type Formatter interface {
	Format(w io.Writer, r *result.Result) error
}

// NewFormatter returns the formatter named text, json or bench.
func NewFormatter(name string) (Formatter, error) {
	switch name {
	case "text", "":
		return TextFormatter{}, nil
	case "json":
		return JSONFormatter{}, nil
	case "bench":
		return BenchFormatter{}, nil
	}
	return nil, fmt.Errorf("%w: unknown format %q (valid: text, json, bench)", ErrBadConfig, name)
}

// TextFormatter prints the header and one table row per mode.
type TextFormatter struct{}

// Format implements Formatter.
func (TextFormatter) Format(w io.Writer, r *result.Result) error {
	loop := fmt.Sprintf("open loop, %.0f records/s", r.Rate)
	if !r.OpenLoop {
		loop = "closed loop (max throughput)"
	}
	fmt.Fprintf(w, "workload %s · target %s · %s · %v measured after %v warm-up · seed %d\n",
		r.Workload, targetName(r.Env), loop, r.Duration, r.Warmup, r.Seed)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "mode\tthroughput/s\te2e p50\te2e p99\te2e p99.9\tcommit p99\tredeliveries\taborts\tfenced aborts\tlock expiries\texactly-once\t")
	for _, m := range r.Modes {
		name := m.Mode
		if r.Repeats > 1 {
			name = fmt.Sprintf("%s #%d", m.Mode, m.Repeat+1)
		}
		switch {
		case m.Unsupported != "":
			fmt.Fprintf(tw, "%s\t-\t-\t-\t-\t-\t-\t-\t-\t-\tunsupported\t\n", name)
			continue
		case m.Error != "" && m.Histograms == nil:
			fmt.Fprintf(tw, "%s\t-\t-\t-\t-\t-\t-\t-\t-\t-\t%s\t\n", name, verdict(m))
			continue
		}
		e2e, commit := m.Histograms[result.HistEndToEnd], m.Histograms[result.HistCommit]
		fmt.Fprintf(tw, "%s\t%.0f\t%s\t%s\t%s\t%s\t%d\t%d\t%d\t%d\t%s\t\n", name, m.Throughput,
			lat(e2e.P50, e2e.Count), lat(e2e.P99, e2e.Count), lat(e2e.P999, e2e.Count), lat(commit.P99, commit.Count),
			m.Redeliveries, m.Aborts, m.FencedAborts, m.LockExpiries, verdict(m))
	}
	// The mode runs an interrupt kept from starting get a row too: a run
	// that lists only what it ran reads as complete.
	for _, ref := range r.NotRun {
		name := ref.Mode
		if r.Repeats > 1 {
			name = fmt.Sprintf("%s #%d", ref.Mode, ref.Repeat+1)
		}
		fmt.Fprintf(tw, "%s\t-\t-\t-\t-\t-\t-\t-\t-\t-\tINCONCLUSIVE: never ran\t\n", name)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, m := range r.Modes {
		switch {
		case m.Unsupported != "":
			fmt.Fprintf(w, "%s: %s\n", m.Mode, m.Unsupported)
		case m.Interrupted:
			fmt.Fprintf(w, "%s: %s: no verdict\n", m.Mode, m.Error)
		case m.Error != "":
			fmt.Fprintf(w, "%s: error: %s\n", m.Mode, m.Error)
		}
		if m.Rebalances > 0 {
			fmt.Fprintf(w, "%s: %d rebalances by membership churn, %d aborts fenced by a stale member epoch: %.2f per rebalance\n", m.Mode, m.Rebalances, m.FencedAborts, m.AbortsPerRebalance())
		}
		if m.SendLagWarning != "" {
			fmt.Fprintf(w, "%s: warning: %s\n", m.Mode, m.SendLagWarning)
		}
		if m.DrainTimedOut {
			fmt.Fprintf(w, "%s: warning: the drain timed out after %v with inputs still unresolved\n", m.Mode, time.Duration(m.DrainNs).Round(time.Millisecond))
		}
	}
	for _, ref := range r.NotRun {
		fmt.Fprintf(w, "%s: never ran: the run was interrupted first\n", ref.Mode)
	}
	return nil
}

func targetName(env result.Env) string {
	s := env.Target
	if env.Target == "kafka" {
		switch {
		case env.Embedded:
			s += " (embedded kfake)"
		case env.BrokerVersion != "":
			s += " " + env.BrokerVersion
		}
	}
	return s
}

func lat(ns, count int64) string {
	if count == 0 {
		return "-"
	}
	return FormatDuration(time.Duration(ns))
}

// verdict is the exactly-once column: PASS, FAIL with the forbidden
// anomalies, or INCONCLUSIVE with how many inputs were left unjudged (and
// "drain" when the drain timed out) or because an interrupt stopped the
// mode before its verdict; allowed anomalies are shown in brackets.
func verdict(m result.ModeResult) string {
	v := m.Verify
	switch {
	case v == nil && m.Interrupted:
		return "INCONCLUSIVE: interrupted"
	case v == nil && m.Error != "":
		return "error"
	case v == nil:
		return "-"
	}
	if v.Inconclusive() {
		var why []string
		if v.Unjudged > 0 {
			why = append(why, fmt.Sprintf("%d unjudged", v.Unjudged))
		}
		if m.DrainTimedOut {
			why = append(why, "drain timed out")
		}
		return "INCONCLUSIVE: " + strings.Join(why, ", ")
	}
	var allowed []string
	for _, k := range v.Allowed {
		if n := v.Counts[k]; n > 0 {
			allowed = append(allowed, fmt.Sprintf("%s %d", k, n))
		}
	}
	if !v.Pass {
		parts := make([]string, 0, len(v.Forbidden))
		for _, k := range v.Forbidden {
			parts = append(parts, fmt.Sprintf("%s %d", k, v.Counts[k]))
		}
		return "FAIL: " + strings.Join(parts, ", ")
	}
	if len(allowed) > 0 {
		return "pass (" + strings.Join(allowed, ", ") + " allowed)"
	}
	return "PASS"
}

// JSONFormatter prints the result document.
type JSONFormatter struct{}

// Format implements Formatter.
func (JSONFormatter) Format(w io.Writer, r *result.Result) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// BenchFormatter prints Go benchmark lines (result.WriteBench), one per
// mode and repeat, so benchstat can compare runs:
//
//	BenchmarkSharebench/workload=quick/target=engine/mode=explicit-2 1 1998.5 records/s 1234567 e2e-p50-ns ...
type BenchFormatter struct{}

// Format implements Formatter.
func (BenchFormatter) Format(w io.Writer, r *result.Result) error {
	modes := append([]result.ModeResult(nil), r.Modes...)
	sort.SliceStable(modes, func(i, j int) bool { return modes[i].Repeat < modes[j].Repeat })
	var lines []result.BenchLine
	for i := range modes {
		m := &modes[i]
		if m.Unsupported != "" || m.Histograms == nil || m.Interrupted {
			continue
		}
		lines = append(lines, result.BenchLine{
			Parts: [][2]string{{"workload", r.Workload}, {"target", r.Env.Target}, {"mode", m.Mode}},
			Procs: r.Env.GOMAXPROCS, Metrics: m.BenchMetrics(),
		})
	}
	config := [][2]string{{"goos", r.Env.OS}, {"goarch", r.Env.Arch}, {"pkg", "github.com/sharebench/sharebench"}, {"cpu", r.Env.CPU}}
	return result.WriteBench(w, config, lines)
}
