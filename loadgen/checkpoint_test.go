// This file checks the checkpoint model end to end, through Run against the
// engine target, on every sink the machine has (the in-process one always;
// PostgreSQL when SHAREBENCH_POSTGRES_URL names a server, as .ci/run's
// PostgreSQL tier does, which then fails rather than skips when it cannot
// connect): each framework fault at each phase with the safe order leaves
// no anomaly in the transactional model and nothing pre-committed behind;
// the unsafe order, and holding records past their lock without RENEW,
// produce the duplicates in the sink that the design predicts, with
// witnesses; and the mitigations remove them.

package loadgen_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/sharebench/sharebench/engine"
	"github.com/sharebench/sharebench/loadgen"
	"github.com/sharebench/sharebench/loadgen/result"
	"github.com/sharebench/sharebench/loadgen/sink"
	"github.com/sharebench/sharebench/loadgen/targets/enginetarget"
	"github.com/sharebench/sharebench/loadgen/targets/kafkatarget"
	"github.com/sharebench/sharebench/loadgen/verify"
	"github.com/sharebench/sharebench/vocab"
	"github.com/sharebench/sharebench/workloads"
)

// postgresURLEnv names a PostgreSQL server for the tests
// (scripts/postgres/up prints one).
const postgresURLEnv = "SHAREBENCH_POSTGRES_URL"

// checkpointSinks returns the sinks to test against, by name.
func checkpointSinks(t *testing.T) []string {
	out := []string{"memory"}
	if os.Getenv(postgresURLEnv) != "" {
		out = append(out, "postgres")
	}
	return out
}

func openTestSink(t *testing.T, name string) sink.Sink {
	t.Helper()
	if name == "postgres" {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		s, err := sink.OpenPostgres(ctx, os.Getenv(postgresURLEnv))
		if err != nil {
			t.Fatalf("%s=%s: %v", postgresURLEnv, os.Getenv(postgresURLEnv), err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	s, err := sink.OpenMemory(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// checkpointSpec is a short checkpoint workload for one scenario.
func checkpointSpec(t *testing.T, edit func(s *workloads.Spec)) *workloads.Spec {
	t.Helper()
	s := workloads.New("checkpoint-test")
	s.AckOnly = true
	s.CheckpointInterval = 300 * time.Millisecond
	s.ProducerRate = 400
	s.Consumers = 2
	s.PartitionsPerTopic = 2
	s.MaxPollRecords = 50
	s.WarmupLength = 500 * time.Millisecond
	s.TestLength = 3 * time.Second
	s.DrainTimeout = 30 * time.Second
	s.LockDuration = 2 * time.Second
	s.TransactionTimeout = 4 * time.Second
	s.ModeNames = []string{"transactional"}
	edit(s)
	s.Defaults()
	if err := s.Validate(); err != nil {
		t.Fatalf("scenario workload: %v", err)
	}
	return s
}

func crashAt(phase vocab.Phase, at time.Duration) workloads.Fault {
	return workloads.Fault{At: at, Kind: vocab.FaultWorkerCrash, Params: map[string]string{"phase": string(phase), "worker": "0"}}
}

func slowCheckpoint(delay time.Duration, at time.Duration) workloads.Fault {
	return workloads.Fault{At: at, Kind: vocab.FaultSlowCheckpoint, Params: map[string]string{"delay": delay.String(), "worker": "0"}}
}

// expect says what a scenario must show.
type expect int

const (
	noAnomaly       expect = iota // no anomaly at all
	duplicates                    // at least one duplicate, with a witness, and no other anomaly
	archivedAtLimit               // no anomaly, and records archived at the delivery limit
)

type checkpointCase struct {
	name string
	mode vocab.Mode
	edit func(s *workloads.Spec)
	want expect
	// event, when set, must appear in a fault event's detail (a recovery
	// that found and resolved the prepared transaction).
	event string
}

func checkpointCases() []checkpointCase {
	var cases []checkpointCase
	// Each framework crash phase, both commit orders: the transactional
	// model recovers to exactly-once (the share-ack transaction is resumed,
	// so neither order leaves one side behind).
	events := map[vocab.Phase]string{
		vocab.AfterPreCommit: "rolled back",
		vocab.AfterSnapshot:  "found prepared",
		vocab.AfterNotify:    "found prepared",
	}
	for _, order := range []string{workloads.CommitAcksFirst, workloads.CommitSinkFirst} {
		for _, phase := range vocab.CheckpointPhases() {
			cases = append(cases, checkpointCase{
				name: "crash-" + string(phase) + "-" + order, mode: vocab.Transactional, want: noAnomaly, event: events[phase],
				edit: func(s *workloads.Spec) {
					s.Checkpoint.Order = order
					s.Faults = []workloads.Fault{crashAt(phase, time.Second), crashAt(phase, 2*time.Second)}
				},
			})
		}
	}
	// Explicit acks (Kafka today) cannot be resumed after a crash: with
	// sink first the recovered task commits the sink as its snapshot says
	// and the crashed member's records come back at lock expiry, so they
	// are written twice; acks first rolls the sink back instead.
	for _, tc := range []struct {
		order string
		want  expect
	}{{workloads.CommitSinkFirst, duplicates}, {workloads.CommitAcksFirst, noAnomaly}} {
		cases = append(cases, checkpointCase{
			name: "explicit-crash-after-snapshot-" + tc.order, mode: vocab.Explicit, want: tc.want, event: "found prepared",
			edit: func(s *workloads.Spec) {
				s.Checkpoint.Order = tc.order
				s.Faults = []workloads.Fault{crashAt(vocab.AfterSnapshot, time.Second), crashAt(vocab.AfterSnapshot, 2*time.Second)}
			},
		})
	}
	// A checkpoint that outlives its share-ack transaction (slower than
	// transactionTimeout, inside the checkpoint timeout): acks first rolls
	// the sink back; sink first has committed the outputs and the records
	// come back, so they are written twice.
	slow := func(order string) func(s *workloads.Spec) {
		return func(s *workloads.Spec) {
			s.Checkpoint.Order = order
			s.TransactionTimeout = 1500 * time.Millisecond
			s.CheckpointInterval = 200 * time.Millisecond
			s.Checkpoint.Timeout = 10 * time.Second
			s.Faults = []workloads.Fault{slowCheckpoint(3*time.Second, time.Second)}
		}
	}
	cases = append(cases,
		checkpointCase{name: "txn-timeout-acks-first", mode: vocab.Transactional, edit: slow(workloads.CommitAcksFirst), want: noAnomaly},
		checkpointCase{name: "txn-timeout-sink-first", mode: vocab.Transactional, edit: slow(workloads.CommitSinkFirst), want: duplicates},
		// Past the checkpoint timeout the checkpoint fails and both sides
		// abort.
		checkpointCase{name: "checkpoint-timeout", mode: vocab.Transactional, want: noAnomaly, event: "timed out", edit: func(s *workloads.Spec) {
			s.Checkpoint.Timeout = 500 * time.Millisecond
			s.Faults = []workloads.Fault{slowCheckpoint(time.Second, time.Second)}
		}},
	)
	// Dwell: checkpoints every 2.5s with a 1s lock.
	dwell := func(renew bool, staging string) func(s *workloads.Spec) {
		return func(s *workloads.Spec) {
			s.CheckpointInterval = 2500 * time.Millisecond
			s.LockDuration = time.Second
			s.TransactionTimeout = 10 * time.Second
			s.DeliveryLimit = 3
			s.Checkpoint.Renew = renew
			s.Checkpoint.Staging = staging
		}
	}
	cases = append(cases,
		// Explicit acks (what Kafka gives a framework today): without RENEW
		// the held records go to another worker and are written twice.
		checkpointCase{name: "dwell-explicit-no-renew", mode: vocab.Explicit, edit: dwell(false, workloads.StageAtBarrier), want: duplicates},
		checkpointCase{name: "dwell-explicit-renew", mode: vocab.Explicit, edit: dwell(true, workloads.StageAtBarrier), want: noAnomaly},
		// Transactional, staging at the barrier, no RENEW: the staging of
		// expired records fails, the checkpoint aborts, and the records
		// cycle until the delivery limit archives them.
		checkpointCase{name: "dwell-transactional-no-renew", mode: vocab.Transactional, edit: dwell(false, workloads.StageAtBarrier), want: archivedAtLimit},
		checkpointCase{name: "dwell-transactional-renew", mode: vocab.Transactional, edit: dwell(true, workloads.StageAtBarrier), want: noAnomaly},
		// Staging at acquisition cancels the locks: no RENEW needed.
		checkpointCase{name: "dwell-transactional-stage-early", mode: vocab.Transactional, edit: dwell(false, workloads.StageAtAcquisition), want: noAnomaly},
	)
	return cases
}

func runCheckpointCase(t *testing.T, sinkName string, c checkpointCase) *result.Verification {
	spec := checkpointSpec(t, c.edit)
	s := openTestSink(t, sinkName)
	// The coordinator's sweep of timed-out transactions runs every 250ms
	// (Kafka's and the engine's default is 10s), so a checkpoint slower
	// than the transaction timeout finds its transaction aborted within
	// a test's seconds.
	tgt, err := enginetarget.New(enginetarget.Options{SessionTimeout: 3 * time.Second,
		Extra: []engine.Option{engine.WithAbortSweepInterval(250 * time.Millisecond)}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tgt.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const seed = 15
	runID := fmt.Sprintf("cp%d-%s-%s", time.Now().UnixNano()%1_000_000_000, sinkName, c.name)
	res, err := loadgen.Run(ctx, loadgen.Config{
		Workload: spec, WorkloadRef: "checkpoint-test", Target: tgt, Modes: []vocab.Mode{c.mode},
		Seed: seed, RunID: runID, Sink: s,
	})
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	mr := res.Modes[0]
	v := mr.Verify
	if mr.Error != "" || v == nil {
		t.Fatalf("mode %s: error %q, verdict %v", c.mode, mr.Error, v)
	}
	defer func() { reportCheckpointRow(t, sinkName, c, mr) }()
	t.Logf("%s on %s: %d inputs, %d outputs, counts %v, crashes %d, aborts %d, lock expiries %d, drain timed out %v; notes %v",
		c.name, sinkName, v.Inputs, v.Outputs, v.Counts, mr.WorkerCrashes, mr.Aborts, mr.LockExpiries, mr.DrainTimedOut, v.Notes)
	repro := fmt.Sprintf("go test -tags long ./loadgen -run 'TestLongCheckpointModel/%s/%s$' (seed %d)", sinkName, c.name, seed)
	if v.Inputs == 0 {
		t.Fatalf("no input was produced; repro: %s", repro)
	}
	if mr.DrainTimedOut {
		t.Errorf("the drain timed out (%s); repro: %s", mr.DrainNote, repro)
	}
	left, err := s.Prepared(context.Background(), runID)
	if err != nil {
		t.Fatal(err)
	}
	if len(left) > 0 {
		t.Errorf("sink transactions left pre-committed after the run: %v; repro: %s", left, repro)
	}
	if c.event != "" && !hasEvent(mr.Faults, c.event) {
		t.Errorf("no event mentions %q (events %v); repro: %s", c.event, mr.Faults, repro)
	}
	anomalies := map[vocab.Finding]int64{}
	for _, kind := range vocab.Anomalies() {
		if n := v.Counts[kind]; n > 0 {
			anomalies[kind] = n
		}
	}
	switch c.want {
	case noAnomaly, archivedAtLimit:
		if len(anomalies) > 0 {
			t.Errorf("anomalies %v, want none (witnesses %v); repro: %s", anomalies, v.Witnesses, repro)
		}
		if c.want == archivedAtLimit && v.Counts[vocab.KindArchivedAtLimit] == 0 {
			t.Errorf("no record archived at the delivery limit (counts %v, lock expiries %d): the dwell did not bite; repro: %s", v.Counts, mr.LockExpiries, repro)
		}
		if c.want == noAnomaly && strings.HasPrefix(c.name, "dwell") && v.Counts[vocab.KindArchivedAtLimit] > 0 {
			t.Errorf("%d records archived at the delivery limit: the mitigation did not hold; repro: %s", v.Counts[vocab.KindArchivedAtLimit], repro)
		}
	case duplicates:
		if anomalies[vocab.KindDuplicate] == 0 {
			t.Errorf("no duplicate in the sink (counts %v, lock expiries %d): the fault did not bite; repro: %s", v.Counts, mr.LockExpiries, repro)
		}
		if len(v.Witnesses[vocab.KindDuplicate]) == 0 {
			t.Errorf("duplicates counted without a witness")
		}
		for kind, n := range anomalies {
			if kind != vocab.KindDuplicate {
				t.Errorf("%d %s besides the duplicates (witnesses %v); repro: %s", n, kind, v.Witnesses[kind], repro)
			}
		}
	}
	return v
}

// reportCheckpointRow logs one Markdown table row of the scenario's
// outcome (the README's table for framework authors is made of them).
func reportCheckpointRow(t *testing.T, sinkName string, c checkpointCase, mr result.ModeResult) {
	v := mr.Verify
	var found []string
	for _, kind := range append(vocab.Anomalies(), vocab.KindArchivedAtLimit) {
		if n := v.Counts[kind]; n > 0 {
			found = append(found, fmt.Sprintf("%s %d", kind, n))
		}
	}
	if len(found) == 0 {
		found = []string{"none"}
	}
	t.Logf("ROW | %s | %s | %s | %d | %d | %d | %d | %s |", sinkName, c.name, c.mode, v.Inputs, v.Outputs, mr.LockExpiries, mr.Aborts, strings.Join(found, ", "))
}

func hasEvent(evs []result.FaultEvent, s string) bool {
	for _, e := range evs {
		if strings.Contains(e.Detail, s) {
			return true
		}
	}
	return false
}

// TestCheckpointRejectsModes: the checkpoint model runs the transactional
// and explicit modes only, and says so.
func TestCheckpointRejectsModes(t *testing.T) {
	tgt, err := enginetarget.New(enginetarget.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer tgt.Close()
	spec := checkpointSpec(t, func(s *workloads.Spec) { s.ModeNames = []string{"implicit"} })
	_, err = loadgen.Run(context.Background(), loadgen.Config{Workload: spec, Target: tgt, Modes: []vocab.Mode{vocab.Implicit}, Seed: 1})
	if err == nil || !strings.Contains(err.Error(), "transactional and explicit") {
		t.Fatalf("implicit with ackOnly: %v, want an error naming the modes it runs", err)
	}
}

// TestCheckpointKafkaExplicit runs the checkpoint model on the kafka target
// (an embedded kfake cluster), where a poll releases what the previous one
// left unacknowledged: every poll is its own checkpoint, the sink commits,
// then the explicit acks. Without faults every input has exactly one
// output in the sink.
func TestCheckpointKafkaExplicit(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: skips the embedded kfake cluster run")
	}
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	tgt, err := kafkatarget.New(ctx, kafkatarget.Options{})
	if err != nil {
		t.Fatalf("starting the embedded cluster: %v", err)
	}
	t.Cleanup(func() { tgt.Close() })
	spec := checkpointSpec(t, func(s *workloads.Spec) {
		s.ModeNames = []string{"explicit"}
		s.TestLength = 2 * time.Second
	})
	res, err := loadgen.Run(ctx, loadgen.Config{Workload: spec, Target: tgt, Modes: []vocab.Mode{vocab.Explicit}, Seed: 3, RunID: "cpkafka"})
	if err != nil {
		t.Fatal(err)
	}
	mr := res.Modes[0]
	v := mr.Verify
	if mr.Error != "" || v == nil {
		t.Fatalf("error %q, verdict %v", mr.Error, v)
	}
	if v.Verdict != verify.VerdictPass || v.Inputs == 0 || v.Outputs != v.Inputs {
		t.Errorf("verdict %s, %d inputs, %d outputs in the sink, counts %v; want PASS with one output per input", v.Verdict, v.Inputs, v.Outputs, v.Counts)
	}
	if !strings.Contains(strings.Join(v.Notes, "\n"), "every poll was its own checkpoint") {
		t.Errorf("notes %v do not say each poll was a checkpoint", v.Notes)
	}
}
