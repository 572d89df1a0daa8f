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
	"unicode/utf8"

	"github.com/sharebench/sharebench/loadgen/result"
	"github.com/sharebench/sharebench/vocab"
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

// TextFormatter prints the header and one table row per mode, then a line
// per mode for what the table cannot hold (errors, warnings).
//
// Width is the columns the reader has (a terminal's width): when the wide
// table (every column, about 140 wide) does not fit, a compact one does
// (mode, throughput, end-to-end p50/p99/p99.9, redeliveries, aborts, the
// verdict's word), and the verdict's details follow it a line a mode.
// Width 0 is a reader with no limit (a file, a pipe): the wide table.
type TextFormatter struct {
	Width int
}

// Format implements Formatter.
func (f TextFormatter) Format(w io.Writer, r *result.Result) error {
	loop := fmt.Sprintf("open loop, %.0f records/s", r.Rate)
	if !r.OpenLoop {
		loop = "closed loop (max throughput)"
	}
	header := []string{"workload " + r.Workload, "target " + targetName(r.Env), loop,
		fmt.Sprintf("%v measured after %v warm-up", r.Duration, r.Warmup), fmt.Sprintf("seed %d", r.Seed)}
	if c := r.Compression; c != "" && c != vocab.CompressionNone {
		header = append(header, "compression "+c.String())
	}
	var wide strings.Builder
	if err := wideTable(&wide, r); err != nil {
		return err
	}
	if f.Width > 0 && maxLineWidth(wide.String()) >= f.Width {
		writeWrapped(w, header, " · ", f.Width-1)
		if err := compactTable(w, r); err != nil {
			return err
		}
	} else {
		fmt.Fprintln(w, strings.Join(header, " · "))
		if _, err := io.WriteString(w, wide.String()); err != nil {
			return err
		}
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
		if m.DrainInterrupted {
			fmt.Fprintf(w, "%s: warning: the drain was interrupted after %v with inputs still unresolved\n", m.Mode, time.Duration(m.DrainNs).Round(time.Millisecond))
		}
	}
	for _, ref := range r.NotRun {
		fmt.Fprintf(w, "%s: never ran: the run was interrupted first\n", ref.Mode)
	}
	return nil
}

// rowName is a mode's name in a table: with its repeat when there are
// several.
func rowName(r *result.Result, m result.ModeResult) string {
	if r.Repeats > 1 {
		return fmt.Sprintf("%s #%d", m.Mode, m.Repeat+1)
	}
	return m.Mode.String()
}

// neverRan is the verdict of a mode run an interrupt kept from starting.
const neverRan = "INCONCLUSIVE: never ran"

// notRunName is a table's name of a mode run that never ran.
func notRunName(r *result.Result, ref result.ModeRef) string {
	if r.Repeats > 1 {
		return fmt.Sprintf("%s #%d", ref.Mode, ref.Repeat+1)
	}
	return ref.Mode.String()
}

// wideTable writes every column of the table.
func wideTable(w io.Writer, r *result.Result) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "mode\tthroughput/s\te2e p50\te2e p99\te2e p99.9\tcommit p99\tredeliveries\taborts\tfenced aborts\tlock expiries\texactly-once\t")
	for _, m := range r.Modes {
		name := rowName(r, m)
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
		fmt.Fprintf(tw, "%s\t-\t-\t-\t-\t-\t-\t-\t-\t-\t%s\t\n", notRunName(r, ref), neverRan)
	}
	return tw.Flush()
}

// compactTable writes the columns a reader needs first, in under 80
// columns for the usual mode names, then each verdict that says more than
// one word on a line of its own.
func compactTable(w io.Writer, r *result.Result) error {
	tw := tabwriter.NewWriter(w, 0, 0, 1, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "mode\trecords/s\tp50\tp99\tp99.9\tredel\taborts\tverdict\t")
	var details []string
	for _, m := range r.Modes {
		name := rowName(r, m)
		switch {
		case m.Unsupported != "":
			fmt.Fprintf(tw, "%s\t-\t-\t-\t-\t-\t-\tunsupported\t\n", name)
			continue
		case m.Error != "" && m.Histograms == nil:
			// The footnotes below the table say why there is no verdict.
			word, _, _ := strings.Cut(verdict(m), " ")
			fmt.Fprintf(tw, "%s\t-\t-\t-\t-\t-\t-\t%s\t\n", name, strings.TrimSuffix(word, ":"))
			continue
		}
		e2e := m.Histograms[result.HistEndToEnd]
		full := verdict(m)
		word, rest, _ := strings.Cut(full, " ")
		word = strings.TrimSuffix(word, ":")
		if rest != "" {
			details = append(details, fmt.Sprintf("%s: %s", name, full))
		}
		fmt.Fprintf(tw, "%s\t%.0f\t%s\t%s\t%s\t%d\t%d\t%s\t\n", name, m.Throughput,
			lat(e2e.P50, e2e.Count), lat(e2e.P99, e2e.Count), lat(e2e.P999, e2e.Count), m.Redeliveries, m.Aborts, word)
	}
	for _, ref := range r.NotRun {
		fmt.Fprintf(tw, "%s\t-\t-\t-\t-\t-\t-\tINCONCLUSIVE\t\n", notRunName(r, ref))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, d := range details {
		fmt.Fprintln(w, d)
	}
	return nil
}

// writeWrapped writes parts joined by sep, starting a new line before a
// part that would take a line past width columns.
func writeWrapped(w io.Writer, parts []string, sep string, width int) {
	line := ""
	for _, p := range parts {
		switch {
		case line == "":
			line = p
		case utf8.RuneCountInString(line+sep+p) > width:
			fmt.Fprintln(w, line)
			line = p
		default:
			line += sep + p
		}
	}
	fmt.Fprintln(w, line)
}

// maxLineWidth is the widest line of s, in runes (every rune of a table is
// one column wide).
func maxLineWidth(s string) int {
	n := 0
	for _, line := range strings.Split(s, "\n") {
		n = max(n, utf8.RuneCountInString(line))
	}
	return n
}

func targetName(env result.Env) string {
	s := env.Target.String()
	if env.Target == vocab.TargetKafka {
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
// mode before its verdict; allowed anomalies are shown in brackets. A mode
// some of whose faults did not land says so after it ("PASS · 3 of 5
// faults landed").
func verdict(m result.ModeResult) string {
	s := judgement(m)
	if note := m.FaultsNote(); note != "" && m.Verify != nil {
		s += " · " + note
	}
	return s
}

// judgement is the verifier's part of the verdict column.
func judgement(m result.ModeResult) string {
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
		if len(why) == 0 {
			return "INCONCLUSIVE"
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
			Parts: [][2]string{{"workload", r.Workload}, {"target", r.Env.Target.String()}, {"mode", m.Mode.String()}},
			Procs: r.Env.GOMAXPROCS, Metrics: m.BenchMetrics(),
		})
	}
	config := [][2]string{{"goos", r.Env.OS}, {"goarch", r.Env.Arch}, {"pkg", "github.com/sharebench/sharebench"}, {"cpu", r.Env.CPU}}
	return result.WriteBench(w, config, lines)
}
