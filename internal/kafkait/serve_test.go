// This file holds the tests of sharebench serve with Kafka's own Java
// clients and tools (from the jar cache scripts/kafka keeps), and the same
// quick run against serve and against the real broker side by side.

package kafkait

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sharebench/sharebench/engine"
	"github.com/sharebench/sharebench/serve"
)

// startServe runs sharebench serve over an in-memory engine on a free port.
func startServe(t *testing.T) (*serve.Server, *engine.Engine) {
	t.Helper()
	e, err := engine.New()
	if err != nil {
		t.Fatal(err)
	}
	s, err := serve.New(e, serve.WithListen("127.0.0.1:0"))
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve()
	t.Cleanup(func() { s.Close(); e.Close() })
	return s, e
}

// runClass runs a Java main class on the cached Kafka classpath and
// returns its stdout; it fails the test when the class fails.
func runClass(t *testing.T, class string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join("..", "..", "scripts", "kafka", "run-class"), append([]string{class}, args...)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %s: %v\nstdout:\n%s\nstderr:\n%s", class, strings.Join(args, " "), err, out, stderr.String())
	}
	return string(out)
}

// TestJavaToolsAgainstServe drives serve with Kafka's Java producer (with
// and without a transactional id), share consumer, read_committed console
// consumer, kafka-share-groups --describe and kafka-transactions list.
func TestJavaToolsAgainstServe(t *testing.T) {
	brokers(t) // the tier is on, so the jar cache is there
	s, e := startServe(t)
	addr := s.Addr()

	out := runClass(t, "org.apache.kafka.tools.ProducerPerformance", "--topic", "perf", "--num-records", "20000",
		"--record-size", "100", "--throughput", "-1", "--command-property", "bootstrap.servers="+addr)
	if !strings.Contains(out, "20000 records sent") {
		t.Errorf("ProducerPerformance:\n%s", out)
	}
	out = runClass(t, "org.apache.kafka.tools.ProducerPerformance", "--topic", "perf-tx", "--num-records", "20000",
		"--record-size", "100", "--throughput", "-1", "--transactional-id", "perf-tx", "--transaction-duration-ms", "100",
		"--command-property", "bootstrap.servers="+addr)
	if !strings.Contains(out, "20000 records sent") {
		t.Errorf("ProducerPerformance --transactional-id:\n%s", out)
	}

	// An aborted transaction on top: read_committed must not show it.
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.TransactionalID("aborter"), kgo.DefaultProduceTopic("perf-tx"))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx := context.Background()
	if err := cl.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte("ABORTED")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	if err := cl.EndTransaction(ctx, kgo.TryAbort); err != nil {
		t.Fatal(err)
	}
	out = runClass(t, "org.apache.kafka.tools.consumer.ConsoleConsumer", "--bootstrap-server", addr, "--topic", "perf-tx",
		"--from-beginning", "--isolation-level", "read_committed", "--max-messages", "20000", "--timeout-ms", "20000")
	if n := strings.Count(out, "\n"); n != 20000 || strings.Contains(out, "ABORTED") {
		t.Errorf("read_committed ConsoleConsumer printed %d lines (want 20000), aborted record shown: %v", n, strings.Contains(out, "ABORTED"))
	}

	runClass(t, "org.apache.kafka.tools.ConfigCommand", "--bootstrap-server", addr, "--alter", "--entity-type", "groups",
		"--entity-name", "perf-share", "--add-config", "share.auto.offset.reset=earliest")
	out = runClass(t, "org.apache.kafka.tools.ShareConsumerPerformance", "--bootstrap-server", addr, "--topic", "perf",
		"--group", "perf-share", "--num-records", "20000", "--timeout", "60000")
	if lines := strings.Split(strings.TrimSpace(out), "\n"); !strings.Contains(lines[len(lines)-1], ", 20000, ") {
		t.Errorf("ShareConsumerPerformance did not consume 20000 records:\n%s", out)
	}
	info, err := e.SharePartition("perf-share", engine.TopicPartition{Topic: "perf", Partition: 0})
	if err != nil || info.SPSO != 20000 {
		t.Errorf("share partition after ShareConsumerPerformance: %+v, %v; want SPSO 20000", info, err)
	}

	out = runClass(t, "org.apache.kafka.tools.consumer.group.ShareGroupCommand", "--bootstrap-server", addr, "--describe", "--group", "perf-share")
	if !strings.Contains(out, "perf-share") || !strings.Contains(out, "20000") {
		t.Errorf("kafka-share-groups --describe:\n%s", out)
	}
	// kafka-share-groups --reset-offsets (AlterShareGroupOffsets) and
	// --delete-offsets (DeleteShareGroupOffsets) on the now empty group.
	out = runClass(t, "org.apache.kafka.tools.consumer.group.ShareGroupCommand", "--bootstrap-server", addr, "--reset-offsets",
		"--group", "perf-share", "--topic", "perf", "--to-offset", "5000", "--execute")
	if info, err := e.SharePartition("perf-share", engine.TopicPartition{Topic: "perf", Partition: 0}); err != nil || info.SPSO != 5000 {
		t.Errorf("share partition after --reset-offsets --to-offset 5000: %+v, %v\n%s", info, err, out)
	}
	out = runClass(t, "org.apache.kafka.tools.consumer.group.ShareGroupCommand", "--bootstrap-server", addr, "--delete-offsets",
		"--group", "perf-share", "--topic", "perf")
	if _, err := e.SharePartition("perf-share", engine.TopicPartition{Topic: "perf", Partition: 0}); err == nil || !strings.Contains(out, "Successful") {
		t.Errorf("share partition after --delete-offsets still there (%v):\n%s", err, out)
	}
	// kafka-get-offsets by time: -1 latest, -2 earliest, -3 max timestamp
	// (the first record of the last batch: a batch's records share its
	// append time).
	maxOff, _, ok, err := e.MaxTimestamp(engine.TopicPartition{Topic: "perf", Partition: 0}, engine.ReadUncommitted)
	if err != nil || !ok || maxOff < 19000 {
		t.Fatalf("engine max timestamp of perf-0: %d %v %v", maxOff, ok, err)
	}
	for tm, want := range map[string]string{"-1": "perf:0:20000", "-2": "perf:0:0", "-3": fmt.Sprintf("perf:0:%d", maxOff)} {
		out = runClass(t, "org.apache.kafka.tools.GetOffsetShell", "--bootstrap-server", addr, "--topic", "perf", "--time", tm)
		if !strings.Contains(out, want) {
			t.Errorf("GetOffsetShell --time %s: want %s in\n%s", tm, want, out)
		}
	}

	out = runClass(t, "org.apache.kafka.tools.TransactionsCommand", "--bootstrap-server", addr, "list")
	for _, id := range []string{"perf-tx", "aborter"} {
		if !strings.Contains(out, id) {
			t.Errorf("kafka-transactions list does not list %s:\n%s", id, out)
		}
	}
}

// TestServeBesideKafka runs the same quick workload against serve and
// against the real broker, in the modes both support, and wants both
// verified clean (every input judged against serve); transactional runs
// against serve alone.
func TestServeBesideKafka(t *testing.T) {
	brokers(t)
	s, _ := startServe(t)
	seed := seedFor(t.Name())
	modes := "implicit,explicit,deferred,classic-eos"
	for _, tc := range []struct {
		name, brokers, modes string
	}{
		{"kafka", brokers(t), modes},
		{"serve", s.Addr(), modes + ",transactional"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := sharebenchRunAt(t, tc.brokers, "--workload", workload("quick-kafka.yaml"), "--modes", tc.modes, "--seed", seed)
			if r.code != 0 {
				t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
			}
			for _, m := range strings.Split(tc.modes, ",") {
				mr := checkMode(t, r, m)
				// A real broker may not have moved a share partition's
				// start offset past the last acks when the run inspects it
				// (TestModes judges classic-eos alone there); the engine
				// has, so against serve every input is judged.
				if tc.name == "serve" || m == "classic-eos" {
					checkJudged(t, mr)
				}
			}
			t.Logf("%s:\n%s", tc.name, r.stdout)
		})
	}
}

// TestJavaTopicAndProducerToolsAgainstServe runs kafka-topics --create and
// --describe (CreateTopics answers each topic's configs, which the tool
// reads) and kafka-transactions describe-producers on a partition written
// only by transactional producers whose transactions ended (each keeps its
// entry, with no open transaction).
func TestJavaTopicAndProducerToolsAgainstServe(t *testing.T) {
	brokers(t) // the tier is on, so the jar cache is there
	s, e := startServe(t)
	addr := s.Addr()

	out := runClass(t, "org.apache.kafka.tools.TopicCommand", "--bootstrap-server", addr, "--create", "--topic", "made", "--partitions", "3")
	if !strings.Contains(out, "Created topic made.") {
		t.Errorf("kafka-topics --create:\n%s", out)
	}
	out = runClass(t, "org.apache.kafka.tools.TopicCommand", "--bootstrap-server", addr, "--describe", "--topic", "made")
	if !strings.Contains(out, "PartitionCount: 3") || strings.Count(out, "Leader: 0") != 3 {
		t.Errorf("kafka-topics --describe: want 3 partitions led by node 0 in\n%s", out)
	}

	runClass(t, "org.apache.kafka.tools.TopicCommand", "--bootstrap-server", addr, "--create", "--topic", "ended", "--partitions", "1")
	out = runClass(t, "org.apache.kafka.tools.ProducerPerformance", "--topic", "ended", "--num-records", "300",
		"--record-size", "10", "--throughput", "-1", "--transactional-id", "ended-tx", "--transaction-duration-ms", "50",
		"--command-property", "bootstrap.servers="+addr)
	if !strings.Contains(out, "300 records sent") {
		t.Fatalf("ProducerPerformance --transactional-id:\n%s", out)
	}
	// The last transaction's marker follows its EndTxn: wait until the
	// last stable offset reaches the high watermark.
	deadline := time.After(time.Minute)
	for {
		_, hw, lso, err := e.Offsets(engine.TopicPartition{Topic: "ended"})
		if err != nil {
			t.Fatal(err)
		}
		if lso == hw {
			break
		}
		select {
		case <-deadline:
			t.Fatalf("the last transaction's marker never landed: last stable offset %d, high watermark %d", lso, hw)
		case <-time.After(5 * time.Millisecond):
		}
	}
	out = runClass(t, "org.apache.kafka.tools.TransactionsCommand", "--bootstrap-server", addr, "describe-producers", "--topic", "ended", "--partition", "0")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "ProducerId") {
		t.Fatalf("kafka-transactions describe-producers: want the header and one producer in\n%s", out)
	}
	if f := strings.Fields(lines[1]); len(f) != 6 || f[5] != "None" {
		t.Errorf("kafka-transactions describe-producers: want the producer with no open transaction (None) in\n%s", out)
	}
}
