// This file holds the one writer of Go benchmark lines (the format
// benchstat reads) and the units of the metrics they carry.

package result

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// The units of the metrics on a benchmark line.
const (
	BenchThroughput   = "records/s"     // outputs visible per second, measured window
	BenchE2EP50       = "e2e-p50-ns"    // end-to-end latency p50
	BenchE2EP99       = "e2e-p99-ns"    // end-to-end latency p99
	BenchE2EP999      = "e2e-p999-ns"   // end-to-end latency p99.9
	BenchCommitP99    = "commit-p99-ns" // commit (or ack) call latency p99
	BenchCPUPerRecord = "cpu-ns/record" // process CPU per output visible
)

// BenchMetric is one measurement of a benchmark line.
type BenchMetric struct {
	Value float64
	Unit  string // one of the Bench* units
}

// BenchLine is one benchmark result: BenchmarkSharebench/<key=value/...>-<Procs>,
// one iteration, its metrics.
type BenchLine struct {
	Parts   [][2]string // name parts, key=value, in order
	Procs   int         // GOMAXPROCS of the run, the name's -N suffix
	Metrics []BenchMetric
}

// BenchMetrics returns the benchmark metrics of one mode's repeat from its
// summaries. A metric the mode did not measure (implicit makes no commit
// call) is left out, never written as 0.
func (m *ModeResult) BenchMetrics() []BenchMetric {
	out := []BenchMetric{{m.Throughput, BenchThroughput}}
	if e2e := m.Histograms[HistEndToEnd]; e2e.Count > 0 {
		out = append(out, BenchMetric{float64(e2e.P50), BenchE2EP50}, BenchMetric{float64(e2e.P99), BenchE2EP99},
			BenchMetric{float64(e2e.P999), BenchE2EP999})
	}
	if commit := m.Histograms[HistCommit]; commit.Count > 0 {
		out = append(out, BenchMetric{float64(commit.P99), BenchCommitP99})
	}
	if m.CPUNs > 0 && m.OutputsVisible > 0 {
		out = append(out, BenchMetric{math.Round(float64(m.CPUNs) / float64(m.OutputsVisible)), BenchCPUPerRecord})
	}
	return out
}

// WriteBench writes the configuration lines ("key: value", in order) and
// then each line, as Go benchmark output:
//
//	target: engine
//	BenchmarkSharebench/workload=quick/mode=explicit-2	1	1998.5 records/s	1234567 e2e-p50-ns	...
func WriteBench(w io.Writer, config [][2]string, lines []BenchLine) error {
	var b strings.Builder
	for _, kv := range config {
		fmt.Fprintf(&b, "%s: %s\n", kv[0], benchValue(kv[1]))
	}
	for _, l := range lines {
		b.WriteString("BenchmarkSharebench")
		for _, p := range l.Parts {
			b.WriteString("/" + benchName(p[0]) + "=" + benchName(p[1]))
		}
		fmt.Fprintf(&b, "-%d\t1", max(l.Procs, 1))
		for _, m := range l.Metrics {
			prec := 0 // latencies and CPU are whole nanoseconds
			if m.Value != math.Trunc(m.Value) {
				prec = 1
			}
			fmt.Fprintf(&b, "\t%s %s", strconv.FormatFloat(m.Value, 'f', prec, 64), m.Unit)
		}
		b.WriteByte('\n')
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// benchName keeps a name part free of what benchmark names cannot hold
// (spaces, slashes, '=' and '-' inside a part) and drops a .yaml suffix.
func benchName(s string) string {
	s = strings.TrimSuffix(s, ".yaml")
	return strings.Map(func(r rune) rune {
		switch r {
		case ' ', '\t', '\n', '/', '=':
			return '_'
		}
		return r
	}, s)
}

// benchValue keeps a configuration value on one line.
func benchValue(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if s == "" {
		return "unknown"
	}
	return s
}
