// This file holds Metric, the per-repeat measurements reports compare.

package reports

import "github.com/sharebench/sharebench/loadgen/result"

// Metric names one number measured per repeat of a mode.
type Metric string

// The metrics every report, comparison and gate knows.
const (
	MetricThroughput Metric = "throughput" // outputs visible per second, measured window
	MetricE2EP50     Metric = "e2e_p50"    // end-to-end latency p50, ns
	MetricE2EP99     Metric = "e2e_p99"    // end-to-end latency p99, ns
	MetricE2EP999    Metric = "e2e_p999"   // end-to-end latency p99.9, ns
	MetricCommitP99  Metric = "commit_p99" // commit (or ack) call latency p99, ns
	// MetricCPUPerRecord is the process's CPU time in the window per
	// output visible in it, ns: the inverse of the throughput one
	// CPU-second buys (with the engine target it counts the engine and the
	// load generator together). Gated with the throughput's limit.
	MetricCPUPerRecord Metric = "cpu_per_record"
)

// Metrics returns every metric, in table order.
func Metrics() []Metric {
	return []Metric{MetricThroughput, MetricE2EP50, MetricE2EP99, MetricE2EP999, MetricCommitP99, MetricCPUPerRecord}
}

// HigherIsBetter reports whether a larger value of m is an improvement.
func (m Metric) HigherIsBetter() bool { return m == MetricThroughput }

// Unit is the unit of m's values (in Go benchmark lines too).
func (m Metric) Unit() string {
	switch m {
	case MetricThroughput:
		return "records/s"
	case MetricCPUPerRecord:
		return "cpu-ns/record"
	}
	return "ns"
}

// BenchUnit is m's unit on a Go benchmark line (result.WriteBench).
func (m Metric) BenchUnit() string {
	switch m {
	case MetricThroughput:
		return result.BenchThroughput
	case MetricE2EP50:
		return result.BenchE2EP50
	case MetricE2EP99:
		return result.BenchE2EP99
	case MetricE2EP999:
		return result.BenchE2EP999
	case MetricCommitP99:
		return result.BenchCommitP99
	case MetricCPUPerRecord:
		return result.BenchCPUPerRecord
	}
	return string(m)
}

// Label is m for people: "throughput", "e2e p99", ….
func (m Metric) Label() string {
	switch m {
	case MetricThroughput:
		return "throughput"
	case MetricE2EP50:
		return "e2e p50"
	case MetricE2EP99:
		return "e2e p99"
	case MetricE2EP999:
		return "e2e p99.9"
	case MetricCommitP99:
		return "commit p99"
	case MetricCPUPerRecord:
		return "cpu/record"
	}
	return string(m)
}

// histQuantile tells which histogram and quantile a latency metric reads.
func (m Metric) histQuantile() (hist string, q float64, ok bool) {
	switch m {
	case MetricE2EP50:
		return result.HistEndToEnd, 0.50, true
	case MetricE2EP99:
		return result.HistEndToEnd, 0.99, true
	case MetricE2EP999:
		return result.HistEndToEnd, 0.999, true
	case MetricCommitP99:
		return result.HistCommit, 0.99, true
	}
	return "", 0, false
}
