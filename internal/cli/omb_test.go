// This file runs OpenMessaging Benchmark workload files end to end, as OMB
// ships them (workloads/testdata/omb, cut short by flags, the files
// untouched), and checks the OMB results --format omb writes against the
// fields OMB's chart script (bin/create_charts.py) reads.

package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/sharebench/sharebench/loadgen/result"
	"github.com/sharebench/sharebench/reports"
)

const ombDir = "../../workloads/testdata/omb/workloads/"

// ombChartFields are what create_charts.py reads from each result: the
// series it plots (each must have a value, since the script takes their
// max) and the quantile maps (keys it reads with float).
var (
	ombChartSeries    = []string{"publishLatency99pct", "publishDelayLatency99pct", "publishRate", "publishErrorRate", "endToEndLatency95pct", "consumeRate", "endToEndLatencyAvg"}
	ombChartQuantiles = []string{"aggregatedPublishLatencyQuantiles", "aggregatedPublishDelayLatencyQuantiles", "aggregatedEndToEndLatencyQuantiles"}
)

// TestOMBFilesRun runs every OMB workload file under testdata that
// sharebench accepts and can run in seconds, for a second each against the
// embedded engine (one of them, with ten input topics, in every mode). The
// two backlog files ask for a backlog of 0.5 and 100 GiB, which takes
// minutes to build at any rate the default suite can afford: their
// translation is checked in package workloads and the larger one's
// refusal on the embedded engine below; the two refused files are checked
// there too. The translation notes are
// printed once each, the total run time before the first mode, and each
// mode's OMB result has every field the chart script reads, with the
// aggregate end-to-end p99 of result.json.
func TestOMBFilesRun(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs a mode for a second per file")
	}
	for _, tc := range []struct {
		file  string
		flags []string
		name  string
		notes []string
	}{
		{"1-topic-1-partition-1kb.yaml", []string{"--rate", "2000"}, "1-topic-1-partition-1kb", []string{"consumerPerSubscription"}},
		{"1-topic-100-partitions-1kb-4p-4c-200k.yaml", []string{"--rate", "2000"}, "200k-rate-4-producers-and-4-consumers-on-1-topic-100-partition", []string{"useRandomizedPayloads"}},
		{"max-rate-1-topic-10-partitions-10p-10c-1kb.yaml", []string{"--rate", "2000"}, "max-rate-1-topic-10-partitions-10p-10c-1kb", []string{"useRandomizedPayloads"}},
		// Ten input topics of three partitions, every mode.
		{"1m-10-topics-3-partitions-100b.yaml", []string{"--rate", "2000", "--modes", "all"}, "1m-10-topics-3-partitions-100b", []string{"useRandomizedPayloads"}},
		// producerRate 0: a closed loop, as the file has it.
		{"1-topic-3-partition-100b-3producers.yaml", nil, "1-topic-3-partition-100b-3-producers", []string{"name \""}},
		{"1-topic-1-partition-100b.yaml", []string{"--rate", "2000"}, "1-topic-1-partition-100b", nil},
		{"1-topic-16-partitions-1kb.yaml", []string{"--rate", "2000"}, "1-producer-1-consumers-on-1-topic", nil},
		// 64 KiB records: a lower rate keeps the second's data small.
		{"max-rate-1-topic-1-partition-1p-1c-64kb.yaml", []string{"--rate", "200"}, "max-rate-1-topic-1-partition-1p-1c-64kb", []string{"useRandomizedPayloads"}},
		// A hundred input topics.
		{"100-topic-1kb-4p-4c-500k.yaml", []string{"--rate", "2000"}, "500k-rate-4-producers-and-4-consumers-on-100-topic", []string{"useRandomizedPayloads"}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			t.Parallel()
			out := t.TempDir()
			args := append([]string{"run", "--workload", ombDir + tc.file, "--modes", "explicit", "--duration", "1s", "--warmup", "0s",
				"--out", out, "--no-report", "--format", "omb", "--seed", "5"}, tc.flags...)
			if slices.Contains(tc.flags, "--modes") {
				// The test's --modes gives way to the case's.
				i := slices.Index(args, "--modes")
				args = slices.Delete(args, i, i+2)
			}
			o := sharebench(t, args...)
			if o.code != reports.ExitOK {
				t.Fatalf("OMB file: %v", o)
			}
			for _, n := range append(tc.notes, "OMB's default") {
				if c := strings.Count(o.stderr, n); c != 1 {
					t.Errorf("note %q printed %d times: %v", n, c, o)
				}
			}
			runTime := strings.Index(o.stderr, "in all")
			firstMode := strings.Index(o.stderr, "\nexplicit ")
			if runTime < 0 || firstMode >= 0 && runTime > firstMode {
				t.Errorf("the total run time is not printed before the first mode: %v", o)
			}
			res, err := result.Read(result.ResultPath(out))
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range res.Modes {
				if m.Verify == nil || !m.Verify.Pass {
					t.Errorf("%s: verdict %+v error %q", m.Mode, m.Verify, m.Error)
				}
				checkOMBResult(t, result.OMBPath(out, m.Mode.String()), tc.name, m)
			}
		})
	}
}

func checkOMBResult(t *testing.T, path, workload string, m result.ModeResult) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("no OMB result: %v", err)
	}
	var o map[string]any
	if err := json.Unmarshal(data, &o); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if driver := "sharebench-engine-" + m.Mode.String(); o["workload"] != workload || o["driver"] != driver {
		t.Errorf("workload %v driver %v, want %s and %s", o["workload"], o["driver"], workload, driver)
	}
	for _, f := range ombChartSeries {
		s, ok := o[f].([]any)
		if !ok || len(s) == 0 {
			t.Errorf("%s: %v, want a series with a value", f, o[f])
		}
	}
	for _, f := range ombChartQuantiles {
		q, ok := o[f].(map[string]any)
		if !ok || len(q) == 0 {
			t.Errorf("%s: %v, want quantiles", f, o[f])
		}
		for k := range q {
			if _, err := strconv.ParseFloat(k, 64); err != nil {
				t.Errorf("%s: key %q is not a percentile", f, k)
			}
		}
	}
	// The same samples: OMB's aggregate is result.json's figure, in ms.
	e2e := m.Histograms[result.HistEndToEnd]
	if got, want := o["aggregatedEndToEndLatency99pct"], float64(e2e.P99)/1e6; got != want {
		t.Errorf("aggregatedEndToEndLatency99pct %v, want result.json's end-to-end p99 %v ms", got, want)
	}
	var published float64
	rates, _ := o["publishRate"].([]any)
	for _, r := range rates {
		published, _ = r.(float64)
	}
	if published <= 0 {
		t.Errorf("publish rate %v in the window's last period", rates)
	}
}

// TestOMBBacklogOnEmbeddedRefused: a real OMB backlog file asks for
// 100 GiB, which the embedded engine would hold in memory; the run is
// refused before any load, naming the field and the way out.
func TestOMBBacklogOnEmbeddedRefused(t *testing.T) {
	t.Parallel()
	o := sharebench(t, "run", "--workload", ombDir+"backlog-1-topic-16-partitions-1kb.yaml", "--out", filepath.Join(t.TempDir(), "r"), "--no-report")
	if o.code != reports.ExitUsage || !strings.Contains(o.stderr, "consumerBacklogSizeGB 100") || !strings.Contains(o.stderr, "--target kafka") {
		t.Fatalf("want exit 2 naming consumerBacklogSizeGB and --target kafka: %v", o)
	}
	if strings.Contains(o.stderr, "\nexplicit ") {
		t.Errorf("load ran before the refusal: %v", o)
	}
}

const ombDriverDir = "../../workloads/testdata/omb/driver-kafka/"

// TestOMBDriverFile runs with OMB's own Kafka driver files: a file with a
// setting sharebench cannot honour is refused, one line per setting; the
// others run, their replication settings in the result's workload, their
// client settings on the kafka target's clients (embedded kfake here) and
// noted as having no effect on the engine target.
func TestOMBDriverFile(t *testing.T) {
	t.Parallel()
	o := sharebench(t, "run", "--workload", "quick", "--omb-driver", ombDriverDir+"kafka-sync.yaml", "--out", filepath.Join(t.TempDir(), "r"))
	if ls := lines(o.stderr); o.code != reports.ExitUsage || len(ls) != 2 || !strings.Contains(ls[0], `"topicConfig.flush.messages"`) || !strings.Contains(ls[1], `"topicConfig.flush.ms"`) {
		t.Errorf("kafka-sync.yaml: want exit 2 and one line per refused setting: %v", o)
	}
	if testing.Short() {
		t.Skip("runs a mode for a second per target")
	}
	for _, tc := range []struct {
		name  string
		args  []string
		rf    int
		notes []string
	}{
		{"engine", []string{"--omb-driver", ombDriverDir + "kafka-throughput.yaml"}, 3, []string{"bootstrap.servers", "the engine target has none"}},
		{"kafka-embedded", []string{"--omb-driver", ombDriverDir + "kafka-compression-lz4.yaml", "--target", "kafka", "--replication-factor", "1", "--min-insync-replicas", "1"}, 1, []string{"bootstrap.servers"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			out := t.TempDir()
			args := append([]string{"run", "--workload", ombDir + "1-topic-1-partition-1kb.yaml", "--modes", "explicit", "--duration", "1s", "--warmup", "0s",
				"--rate", "500", "--out", out, "--no-report", "--quiet", "--seed", "9"}, tc.args...)
			o := sharebench(t, args...)
			if o.code != reports.ExitOK {
				t.Fatalf("%v", o)
			}
			for _, n := range tc.notes {
				if strings.Count(o.stderr, n) != 1 {
					t.Errorf("note %q not printed once: %v", n, o)
				}
			}
			res, err := result.Read(result.ResultPath(out))
			if err != nil {
				t.Fatal(err)
			}
			var spec struct {
				RF  int `json:"replicationFactor"`
				ISR int `json:"minInsyncReplicas"`
			}
			if err := json.Unmarshal(res.Spec, &spec); err != nil || spec.RF != tc.rf || spec.ISR != min(tc.rf, 2) {
				t.Errorf("workload run with replicationFactor %d minInsyncReplicas %d (%v), want %d and %d", spec.RF, spec.ISR, err, tc.rf, min(tc.rf, 2))
			}
			if m := res.Modes[0]; m.Verify == nil || !m.Verify.Pass {
				t.Errorf("verdict %+v error %q", m.Verify, m.Error)
			}
		})
	}
}
