package kafkait

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sharebench/sharebench/internal/cli"
	"github.com/sharebench/sharebench/loadgen/result"
	"github.com/sharebench/sharebench/loadgen/verify"
	"github.com/sharebench/sharebench/vocab"
)

// dlqMessages are the reasons a dead-letter record's __dlq.errors.message
// header gives, as Kafka 4.4 words them.
var dlqMessages = []string{"Offset rejected by client.", "Offset delivery count exceeded the threshold."}

// TestDLQBesideEngine runs one workload with a share-group dead-letter
// queue (KIP-1191: errors.deadletterqueue.topic.name) in explicit mode on
// the real broker and on the reference engine, and compares what each
// wrote: on both, every rejected record has exactly one dead-letter record
// (the verifier reads the DLQ topic back and judges dlq-missing and
// dlq-duplicate), with the same provenance headers and reasons.
func TestDLQBesideEngine(t *testing.T) {
	b := brokers(t)
	seed := seedFor(t.Name())
	kafka := sharebenchRunAt(t, b, "--workload", workload("dlq-kafka.yaml"), "--seed", seed, "--dump-ledgers")
	engine := engineRun(t, "--workload", workload("dlq-kafka.yaml"), "--seed", seed, "--dump-ledgers")
	for _, r := range []struct {
		name string
		run  run
	}{{"kafka", kafka}, {"engine", engine}} {
		m := checkMode(t, r.run, "explicit")
		v := m.Verify
		rejected := v.Counts[vocab.KindRejected]
		if rejected == 0 {
			t.Fatalf("%s: no record was rejected, so the dead-letter queue was not exercised", r.name)
		}
		if m.DLQRecords != rejected+v.Counts[vocab.KindArchivedAtLimit] {
			t.Errorf("%s: %d dead-letter records for %d rejected and %d archived at the limit", r.name, m.DLQRecords, rejected, v.Counts[vocab.KindArchivedAtLimit])
		}
		dlqs := readDLQ(t, filepath.Join(r.run.out, "ledgers", "explicit", verify.DLQFile))
		reasons := map[string]int{}
		for _, d := range dlqs {
			reasons[d.Message]++
			if d.Partition < 0 || d.SourceTopic == "" || !strings.HasSuffix(d.SourceTopic, "-in") {
				t.Errorf("%s: dead-letter record without its provenance: %+v", r.name, d)
			}
			if d.DeliveryCount < 1 {
				t.Errorf("%s: dead-letter record without a delivery count: %+v", r.name, d)
			}
		}
		for msg := range reasons {
			if !strings.Contains(strings.Join(dlqMessages, "|"), msg) || msg == "" {
				t.Errorf("%s: dead-letter reason %q, want one of %q", r.name, msg, dlqMessages)
			}
		}
		t.Logf("%s: %d inputs, %d rejected, %d archived at the limit, %d dead-letter records (reasons %v), verdict %s, counts %v",
			r.name, m.TotalInputs, rejected, v.Counts[vocab.KindArchivedAtLimit], m.DLQRecords, reasons, v.Verdict, v.Counts)
	}
}

// engineRun is sharebenchRun against the in-process reference engine.
func engineRun(t *testing.T, args ...string) run {
	t.Helper()
	r := run{out: t.TempDir()}
	argv := append([]string{"sharebench", "run", "--target", "engine", "--out", r.out, "--quiet", "--no-report"}, args...)
	var stdout, stderr bytes.Buffer
	start := time.Now()
	r.code = cli.Main(argv, &cli.Env{Stdout: &stdout, Stderr: &stderr, Getenv: os.Getenv})
	r.stdout, r.stderr = stdout.String(), stderr.String()
	t.Logf("%s\n  exit %d after %v\n%s%s", strings.Join(argv[1:], " "), r.code, time.Since(start).Round(100*time.Millisecond), indent(r.stdout), indent(r.stderr))
	res, err := result.Read(filepath.Join(r.out, result.FileName))
	if err != nil {
		t.Fatalf("reading the result: %v", err)
	}
	r.res = res
	return r
}

// readDLQ reads a dead-letter ledger.
func readDLQ(t *testing.T, path string) []verify.DLQRecord {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []verify.DLQRecord
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var d verify.DLQRecord
		if err := json.Unmarshal(sc.Bytes(), &d); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out = append(out, d)
	}
	return out
}
