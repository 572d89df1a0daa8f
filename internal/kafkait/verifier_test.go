// This file checks what the verifier sees on a real broker: every delivery
// with the delivery count the broker reported, the final share state
// (share-partition start offsets), the transaction markers, and a
// transaction left open on an output partition reported as hanging.

package kafkait

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sharebench/sharebench/loadgen"
	"github.com/sharebench/sharebench/loadgen/targets/kafkatarget"
	"github.com/sharebench/sharebench/loadgen/verify"
	"github.com/sharebench/sharebench/vocab"
	"github.com/sharebench/sharebench/workloads"
)

// readLines decodes every JSON line of path into a fresh T.
func readLines[T any](t *testing.T, path string) []T {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []T
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var v T
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out = append(out, v)
	}
	return out
}

// TestLedgersRecordWhatKafkaSays: a deferred run's ledgers hold every
// delivery with the broker's delivery count (never 0 from a share group),
// inputs judged against the share-partition start offsets the admin API
// reports (and the acknowledgements that took effect), and a commit marker
// after every committed output.
func TestLedgersRecordWhatKafkaSays(t *testing.T) {
	brokers(t)
	r := sharebenchRun(t, "--workload", workload("quick-kafka.yaml"), "--modes", "deferred",
		"--seed", seedFor(t.Name()), "--dump-ledgers")
	checkMode(t, r, "deferred")
	dir := filepath.Join(r.out, "ledgers", "deferred")
	meta, err := verify.ReadMeta(dir)
	if err != nil {
		t.Fatal(err)
	}
	if meta.Schema != verify.LedgerSchema || !meta.DeliveryCounts || !meta.Markers {
		t.Errorf("ledger.json %+v: want schema %s with delivery counts and markers", meta, verify.LedgerSchema)
	}
	dels := readLines[verify.Delivery](t, filepath.Join(dir, verify.DeliveriesFile))
	ins := readLines[verify.Input](t, filepath.Join(dir, verify.InputsFile))
	if len(dels) < len(ins) || len(ins) == 0 {
		t.Fatalf("%d deliveries for %d inputs, want at least one each", len(dels), len(ins))
	}
	for _, d := range dels {
		if d.DeliveryCount < 1 {
			t.Fatalf("delivery %+v: the broker's delivery count is not recorded", d)
		}
	}
	below := 0
	for _, in := range ins {
		if in.BelowSPSO {
			below++
		}
	}
	// Kafka's reported start offset trails its acknowledgements, so the
	// last records may sit above it; the verdict (PASS, checked above)
	// judged them from the acknowledgements that took effect.
	if below == 0 {
		t.Errorf("no input below the share-partition start offset after the drain: the final share state was not read")
	}
	t.Logf("%d of %d inputs below the reported share-partition start offset", below, len(ins))
	outs := readLines[verify.Output](t, filepath.Join(dir, verify.OutputsFile))
	for _, o := range outs {
		if o.Committed && (o.Marker != verify.MarkerCommit || o.TxnOutcome != verify.OutcomeCommitted || !o.Uncommitted) {
			t.Fatalf("committed output %+v: want a commit marker, the client's committed outcome, and the read_uncommitted pass to have seen it", o)
		}
	}
}

// TestHangingTransactionReported leaves a transaction open on a run's
// output partition (a stray transactional producer that never ends it) and
// requires the verifier to FAIL the run with a hanging-transaction witness
// naming that producer, found both by DescribeProducers and by the markers.
func TestHangingTransactionReported(t *testing.T) {
	b := brokers(t)
	spec, err := workloads.Load(workload("quick-kafka.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	spec.TransactionTimeout = 2 * time.Second // the settle waits this plus the sweep
	spec.DrainTimeout = 15 * time.Second      // the open transaction holds the LSO: the drain cannot finish
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	tgt, err := kafkatarget.New(ctx, kafkatarget.Options{Brokers: []string{b}})
	if err != nil {
		t.Fatal(err)
	}
	defer tgt.Close()
	runID := "hang" + seedFor(t.Name())
	outTopic := runID + "-deferred-out"

	// The stray producer: it creates the run's output topic ahead of the
	// run (the target's set-up accepts a topic that exists), opens a
	// transaction there and never ends it (until the test is over).
	stray, err := kgo.NewClient(kgo.SeedBrokers(b), kgo.TransactionalID(runID+"-stray"),
		kgo.TransactionTimeout(5*time.Minute), kgo.DefaultProduceTopic(outTopic))
	if err != nil {
		t.Fatal(err)
	}
	defer stray.Close()
	if _, err := kadm.NewClient(stray).CreateTopic(ctx, int32(spec.PartitionsPerTopic), 1, nil, outTopic); err != nil {
		t.Fatalf("creating %s: %v", outTopic, err)
	}
	if err := stray.BeginTransaction(); err != nil {
		t.Fatalf("stray producer: %v", err)
	}
	if err := stray.ProduceSync(ctx, &kgo.Record{Value: make([]byte, loadgen.HeaderBytes)}).FirstErr(); err != nil {
		t.Fatalf("stray producer: %v", err)
	}
	pid, _, err := stray.ProducerID(ctx)
	if err != nil {
		t.Fatalf("stray producer: %v", err)
	}
	defer func() {
		actx, acancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer acancel()
		_ = stray.EndTransaction(actx, kgo.TryAbort)
	}()

	res, err := loadgen.Run(ctx, loadgen.Config{Workload: spec, WorkloadRef: "quick-kafka", Target: tgt,
		Modes: []vocab.Mode{vocab.Deferred}, Seed: 5, RunID: runID})
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	v := res.Modes[0].Verify
	if v == nil || v.Verdict != verify.VerdictFail || v.Counts[vocab.KindHangingTransaction] == 0 {
		t.Fatalf("verdict %+v, want FAIL with a hanging transaction", v)
	}
	found := map[string]bool{}
	for _, w := range v.Witnesses[vocab.KindHangingTransaction] {
		if w.ProducerID == pid {
			if w.TransactionalID != runID+"-stray" {
				t.Errorf("the stray producer's witness names transactional id %q, want %q (from ListTransactions: no worker of the run booked it)", w.TransactionalID, runID+"-stray")
			}
			for _, src := range []string{"target", "markers"} {
				if strings.Contains(w.Detail, "found by "+src) {
					found[src] = true
				}
			}
			if !strings.Contains(w.Detail, "kafka-transactions.sh") {
				t.Errorf("witness %q does not say how to abort it", w.Detail)
			}
		}
	}
	if !found["target"] {
		t.Errorf("no hanging-transaction witness from DescribeProducers for the stray producer %d: %+v", pid, v.Witnesses[vocab.KindHangingTransaction])
	}
	t.Logf("hanging transaction of producer %d reported: %s", pid, fmt.Sprint(v.Witnesses[vocab.KindHangingTransaction][0].Detail))
}
