// This file tests OpenMessaging Benchmark files: the real ones under
// testdata/omb run unmodified (every field translated, or refused with the
// reason), ${VAR:-default} substitutions, free-text names, and
// every error of a file reported at once.

package workloads_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sharebench/sharebench/workloads"
)

// TestOMBFilesUnmodified translates each of OMB's own workload files under
// testdata/omb/workloads (OMB's repository layout, the files untouched) and
// checks the translation field by field; a file with a setting sharebench
// cannot honour is refused, naming that field.
func TestOMBFilesUnmodified(t *testing.T) {
	t.Parallel()
	type want struct {
		name                                string
		topics, partitions, producers, cons int
		rate, size                          int
		test                                time.Duration
		payload                             string // base name of the payload file, "" for none
		randomized                          bool
		ratio                               float64
		pool                                int
		key                                 string
		backlog                             int64 // records
	}
	for _, tc := range []struct {
		file    string
		want    want
		refused string // the fields named in the refusal, in file order, comma-separated
	}{
		{file: "1-topic-1-partition-100b.yaml", want: want{name: "1-topic-1-partition-100b", topics: 1, partitions: 1, producers: 1, cons: 1, rate: 50000, size: 100, test: 15 * time.Minute, payload: "payload-100b.data"}},
		{file: "1-topic-1-partition-1kb.yaml", want: want{name: "1-topic-1-partition-1kb", topics: 1, partitions: 1, producers: 1, cons: 1, rate: 50000, size: 1024, test: 15 * time.Minute, payload: "payload-1Kb.data", key: workloads.KeyNone}},
		{file: "1-topic-16-partitions-1kb.yaml", want: want{name: "1-producer-1-consumers-on-1-topic", topics: 1, partitions: 16, producers: 1, cons: 1, rate: 50000, size: 1024, test: 15 * time.Minute, payload: "payload-1Kb.data"}},
		{file: "1-topic-100-partitions-1kb-4p-4c-200k.yaml", want: want{name: "200k-rate-4-producers-and-4-consumers-on-1-topic-100-partition", topics: 1, partitions: 100, producers: 4, cons: 4, rate: 200000, size: 1024, test: 5 * time.Minute, randomized: true, ratio: 0.5, pool: 1000}},
		{file: "1-topic-100-partitions-1kb-4p-4c-200k-backlog.yaml", want: want{name: "backlog-for-200k-rate-4-producers-and-4-consumers-on-1-topic-100", topics: 1, partitions: 100, producers: 4, cons: 4, rate: 200000, size: 1024, test: 5 * time.Minute, randomized: true, ratio: 0.5, pool: 1000, backlog: 512 << 20}},
		{file: "1-topic-3-partition-100b-3producers.yaml", want: want{name: "1-topic-3-partition-100b-3-producers", topics: 1, partitions: 3, producers: 3, cons: 1, rate: 0, size: 100, test: 15 * time.Minute, payload: "payload-100b.data"}},
		{file: "backlog-1-topic-16-partitions-1kb.yaml", want: want{name: "1-producer-1-consumers-on-1-topic", topics: 1, partitions: 16, producers: 1, cons: 1, rate: 100000, size: 1024, test: 5 * time.Minute, payload: "payload-1Kb.data", backlog: 100 << 20}},
		{file: "max-rate-1-topic-1-partition-1p-1c-64kb.yaml", want: want{name: "max-rate-1-topic-1-partition-1p-1c-64kb", topics: 1, partitions: 1, producers: 1, cons: 1, rate: 10_000_000, size: 65536, test: 5 * time.Minute, randomized: true, ratio: 0.5, pool: 100}},
		{file: "max-rate-1-topic-10-partitions-10p-10c-1kb.yaml", want: want{name: "max-rate-1-topic-10-partitions-10p-10c-1kb", topics: 1, partitions: 10, producers: 10, cons: 10, rate: 10_000_000, size: 1024, test: 5 * time.Minute, randomized: true, ratio: 0.5, pool: 1000}},
		{file: "1m-10-topics-3-partitions-100b.yaml", want: want{name: "1m-10-topics-3-partitions-100b", topics: 10, partitions: 3, producers: 1, cons: 1, rate: 1_000_000, size: 100, test: 15 * time.Minute, randomized: true, ratio: 0.5, pool: 1000}},
		{file: "100-topic-1kb-4p-4c-500k.yaml", want: want{name: "500k-rate-4-producers-and-4-consumers-on-100-topic", topics: 100, partitions: 1, producers: 4, cons: 4, rate: 500000, size: 1024, test: 5 * time.Minute, randomized: true, ratio: 0.5, pool: 1000}},
		{file: "100-topics-1-partitions-1kb.yaml", refused: "subscriptionsPerTopic"},
		{file: "1-topic-10000-partitions-1kb-4p-4c-200k.yaml", refused: "partitionsPerTopic"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			t.Parallel()
			s, notes, err := workloads.LoadWithNotes(filepath.Join("testdata", "omb", "workloads", tc.file))
			if tc.refused != "" {
				var fields []string
				var es workloads.Errors
				var e *workloads.Error
				switch {
				case errors.As(err, &es):
					for _, e := range es {
						fields = append(fields, e.Field)
					}
				case errors.As(err, &e):
					fields = []string{e.Field}
				}
				if strings.Join(fields, ",") != tc.refused {
					t.Fatalf("LoadWithNotes = %v, want a refusal naming %s", err, tc.refused)
				}
				return
			}
			if err != nil {
				t.Fatalf("LoadWithNotes: %v", err)
			}
			got := want{
				name: s.Name, topics: s.Topics, partitions: s.PartitionsPerTopic, producers: s.ProducersPerTopic, cons: s.Consumers,
				rate: s.ProducerRate, size: s.MessageSizeBytes, test: s.TestDuration(), randomized: s.RandomizedPayloads,
				ratio: s.RandomBytesRatio, pool: s.RandomizedPayloadPoolSize, key: s.KeyDistributor, backlog: s.BacklogRecords(),
			}
			if s.PayloadFile != "" {
				if !filepath.IsAbs(s.PayloadFile) {
					t.Errorf("payload file %q is not resolved to an absolute path", s.PayloadFile)
				}
				got.payload = filepath.Base(s.PayloadFile)
			}
			if got != tc.want {
				t.Errorf("translated to\n %+v\nwant\n %+v", got, tc.want)
			}
			if s.Warmup() != time.Minute {
				t.Errorf("warm-up %v, want OMB's default 1m", s.Warmup())
			}
			// Every translation is said once, in a note.
			for _, w := range []struct {
				on   bool
				note string
			}{
				{true, "consumerPerSubscription"}, {true, "OMB's default"},
				{tc.want.randomized, "useRandomizedPayloads"}, {tc.want.backlog > 0, "consumerBacklogSizeGB"},
			} {
				n := 0
				for _, note := range notes {
					if strings.Contains(note, w.note) {
						n++
					}
				}
				if w.on && n != 1 || !w.on && n != 0 {
					t.Errorf("%d notes mention %s (want %v): %q", n, w.note, w.on, notes)
				}
			}
		})
	}
}

func TestOMBSubstitutions(t *testing.T) {
	t.Parallel()
	data := "name: ${SHAREBENCH_TEST_SURELY_UNSET_NAME:-subst}\npartitionsPerTopic: ${SHAREBENCH_TEST_SURELY_UNSET_P:-8}\ntestDurationMinutes: ${SHAREBENCH_TEST_SURELY_UNSET_D:-0.5}\nwarmupDuration: 1s\n"
	s, err := workloads.Parse("subst.yaml", []byte(data))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if s.Name != "subst" || s.PartitionsPerTopic != 8 || s.TestDuration() != 30*time.Second {
		t.Errorf("defaults not substituted: %+v", s)
	}
	_, err = workloads.Parse("unset.yaml", []byte("name: x\npartitionsPerTopic: ${SHAREBENCH_TEST_SURELY_UNSET_P}\n"))
	var e *workloads.Error
	if !errors.As(err, &e) || e.Line != 2 || !strings.Contains(err.Error(), "SHAREBENCH_TEST_SURELY_UNSET_P is not set") {
		t.Errorf("unset variable without default: %v", err)
	}
}

// TestEveryErrorInOneRun gives a file four problems of different kinds:
// all four come back, in file order, each on its own line with its line
// number.
func TestEveryErrorInOneRun(t *testing.T) {
	t.Parallel()
	data := `name: many-errors
partitionsPerTopic: lots
consumers: 2
bogusField: 1
producerRate: -5
transaction:
  maxRecords: x
`
	_, err := workloads.Parse("many.yaml", []byte(data))
	var es workloads.Errors
	if !errors.As(err, &es) {
		t.Fatalf("Parse = %v (%T), want workloads.Errors", err, err)
	}
	want := []string{"many.yaml:2: field \"partitionsPerTopic\"", "many.yaml:4: field \"bogusField\"", "many.yaml:7: field \"transaction.maxRecords\"", "many.yaml:5: field \"producerRate\""}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != len(want) {
		t.Fatalf("%d errors, want %d:\n%v", len(lines), len(want), err)
	}
	for i, w := range want {
		if !strings.Contains(lines[i], w) {
			t.Errorf("error %d %q, want %q", i, lines[i], w)
		}
	}
}

// TestOMBDriverFiles reads OMB's own Kafka driver files (testdata/omb/
// driver-kafka, untouched): each setting is honoured, noted as how OMB
// reaches its cluster, or refused naming the setting.
func TestOMBDriverFiles(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		file    string
		want    workloads.Driver
		notes   int
		refused string
	}{
		{file: "kafka-throughput.yaml", want: workloads.Driver{Name: "Kafka", ReplicationFactor: 3, MinInsyncReplicas: 2, Linger: time.Millisecond, LingerSet: true, BatchMaxBytes: 1 << 20, FetchMaxPartitionBytes: 10 << 20}, notes: 3},
		{file: "kafka-latency.yaml", want: workloads.Driver{Name: "Kafka", ReplicationFactor: 3, MinInsyncReplicas: 2, Linger: time.Millisecond, LingerSet: true, BatchMaxBytes: 128 << 10, FetchMaxPartitionBytes: 10 << 20}, notes: 1},
		{file: "kafka-exactly-once.yaml", want: workloads.Driver{Name: "Kafka-exactly-once", ReplicationFactor: 3, MinInsyncReplicas: 2, Linger: time.Millisecond, LingerSet: true, BatchMaxBytes: 1 << 20, MaxInFlight: 1, FetchMaxPartitionBytes: 10 << 20}, notes: 1},
		{file: "kafka-compression-lz4.yaml", want: workloads.Driver{Name: "Kafka", ReplicationFactor: 3, MinInsyncReplicas: 2, Linger: time.Millisecond, LingerSet: true, BatchMaxBytes: 1 << 20, Compression: "lz4", FetchMaxPartitionBytes: 10 << 20}, notes: 1},
		{file: "kafka-big-batches-zstd.yaml", want: workloads.Driver{Name: "Kafka", ReplicationFactor: 3, MinInsyncReplicas: 2, Linger: 200 * time.Millisecond, LingerSet: true, BatchMaxBytes: 1 << 20, Compression: "zstd", FetchMaxPartitionBytes: 10 << 20}, notes: 1},
		{file: "kafka-no-linger.yaml", want: workloads.Driver{Name: "Kafka", ReplicationFactor: 3, MinInsyncReplicas: 2, LingerSet: true, BatchMaxBytes: 1 << 20, FetchMaxPartitionBytes: 10 << 20}, notes: 1},
		{file: "kafka-sync.yaml", refused: "topicConfig.flush.messages,topicConfig.flush.ms"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			t.Parallel()
			d, notes, err := workloads.LoadDriver(filepath.Join("testdata", "omb", "driver-kafka", tc.file))
			if tc.refused != "" {
				var es workloads.Errors
				var fields []string
				if errors.As(err, &es) {
					for _, e := range es {
						fields = append(fields, e.Field)
					}
				}
				if strings.Join(fields, ",") != tc.refused {
					t.Fatalf("LoadDriver = %v, want refusals of %s", err, tc.refused)
				}
				return
			}
			if err != nil {
				t.Fatalf("LoadDriver: %v", err)
			}
			if *d != tc.want {
				t.Errorf("driver\n %+v\nwant\n %+v", *d, tc.want)
			}
			if len(notes) != tc.notes || !strings.Contains(notes[0], "bootstrap.servers") {
				t.Errorf("notes %q, want %d starting with bootstrap.servers", notes, tc.notes)
			}
			s := workloads.New("x")
			d.ApplyTo(s)
			if s.ReplicationFactor != 3 || s.MinInsyncReplicas != 2 || s.Validate() != nil {
				t.Errorf("applied: replicationFactor %d minInsyncReplicas %d: %v", s.ReplicationFactor, s.MinInsyncReplicas, s.Validate())
			}
		})
	}
}

// TestOMBDriverNotADriverFile checks that a file that is not a driver file
// gets one line naming the file and, where the parser gives one, the line.
func TestOMBDriverNotADriverFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, tc := range []struct {
		name, text string
		line       int
		want       string
	}{
		{"unknown-field", "name: Kafka\nbrokers: 3\n", 2, `unknown field "brokers"`},
		{"wrong-type", "name: Kafka\nreplicationFactor: three\n", 2, "replicationFactor"},
		{"syntax", "name: Kafka\nreset: true: false\n", 2, "mapping value is not allowed"},
		{"empty", "# nothing\n", 0, "it sets none of them"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(dir, tc.name+".yaml")
			if err := os.WriteFile(path, []byte(tc.text), 0o644); err != nil {
				t.Fatal(err)
			}
			_, _, err := workloads.LoadDriver(path)
			var e *workloads.Error
			if !errors.As(err, &e) || e.File != path || e.Line != tc.line {
				t.Fatalf("LoadDriver = %v, want an error at %s:%d", err, path, tc.line)
			}
			if msg := err.Error(); strings.Contains(msg, "\n") || !strings.Contains(msg, "is not an OMB driver file") || !strings.Contains(msg, tc.want) {
				t.Errorf("error %q, want one line saying it is not an OMB driver file: %s", msg, tc.want)
			}
		})
	}
}

func TestOMBDriverRefusals(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, tc := range []struct {
		name, text, field string
	}{
		{"acks", "producerConfig: |\n  acks=1\n", "producerConfig.acks"},
		{"idempotence", "producerConfig: |\n  enable.idempotence=false\n", "producerConfig.enable.idempotence"},
		{"codec", "producerConfig: |\n  compression.type=brotli\n", "producerConfig.compression.type"},
		{"unknown-producer", "producerConfig: |\n  buffer.memory=1\n", "producerConfig.buffer.memory"},
		{"latest", "consumerConfig: |\n  auto.offset.reset=latest\n", "consumerConfig.auto.offset.reset"},
		{"auto-commit", "consumerConfig: |\n  enable.auto.commit=true\n", "consumerConfig.enable.auto.commit"},
		{"security", "commonConfig: |\n  security.protocol=SSL\n", "commonConfig.security.protocol"},
		{"not-a-pair", "producerConfig: |\n  linger\n", "producerConfig"},
		{"driver", "driverClass: io.openmessaging.benchmark.driver.pulsar.PulsarBenchmarkDriver\n", "driverClass"},
		{"isr-above-rf", "replicationFactor: 1\ntopicConfig: |\n  min.insync.replicas=2\n", "topicConfig.min.insync.replicas"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(dir, tc.name+".yaml")
			if err := os.WriteFile(path, []byte(tc.text), 0o644); err != nil {
				t.Fatal(err)
			}
			_, _, err := workloads.LoadDriver(path)
			var e *workloads.Error
			if !errors.As(err, &e) || e.Field != tc.field || e.File != path {
				t.Fatalf("LoadDriver = %v, want one refusal of %s in %s", err, tc.field, path)
			}
		})
	}
	_, _, err := workloads.LoadDriver(filepath.Join(dir, "missing.yaml"))
	var e *workloads.Error
	if !errors.As(err, &e) || !strings.Contains(err.Error(), "cannot read the OMB driver file") {
		t.Errorf("missing file: %v", err)
	}
}
