package kafkatarget

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/sharebench/sharebench/engine"
	"github.com/sharebench/sharebench/loadgen/targets"
	"github.com/sharebench/sharebench/serve"
	"github.com/sharebench/sharebench/vocab"
)

// newServed starts the reference engine behind sharebench serve (with the
// TxnShareAcknowledge key given) and a Target connected to it.
func newServed(t *testing.T, key int16) (*Target, *engine.Engine) {
	t.Helper()
	e, err := engine.New()
	if err != nil {
		t.Fatal(err)
	}
	s, err := serve.New(e, serve.WithListen("127.0.0.1:0"), serve.WithTxnShareAck(key))
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve()
	tg, err := New(ctxT(t), Options{Brokers: []string{s.Addr()}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tg.Close(); s.Close(); e.Close() })
	return tg, e
}

func txnInner(w targets.Worker) *txnWorker { return w.(classifiedWorker).w.(*txnWorker) }

// waitState waits until r's share state is one of want (markers reach the
// share partitions after EndTxn returns) and returns the last state seen.
func waitState(t *testing.T, e *engine.Engine, cfg targets.Config, r *targets.Record, want ...engine.RecordState) engine.RecordState {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		st := shareState(t, e, cfg, r)
		if slices.Contains(want, st) || time.Now().After(deadline) {
			return st
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func shareState(t *testing.T, e *engine.Engine, cfg targets.Config, r *targets.Record) engine.RecordState {
	t.Helper()
	ri, err := e.ShareRecord(cfg.Group, engine.TopicPartition{Topic: cfg.InputTopic, Partition: r.Partition}, r.Offset)
	if err != nil {
		t.Fatal(err)
	}
	return ri.State
}

// TestTransactionalCommitAndAbort: both draft keys; a committed
// transaction makes the outputs visible and the inputs terminal; an
// aborted one neither; an acks-only transaction commits its acks.
func TestTransactionalCommitAndAbort(t *testing.T) {
	for _, key := range []int16{95, 93} {
		t.Run(map[int16]string{93: "key93", 95: "key95"}[key], func(t *testing.T) {
			tg, e := newServed(t, key)
			if err := tg.Supports(ctxT(t), vocab.Transactional); err != nil {
				t.Fatalf("Supports(transactional) = %v", err)
			}
			cfg := testConfig(t, 1)
			cfg.LockDuration = 30e9
			setup(t, tg, cfg)
			produceInputs(t, tg, cfg, "in", 6, 6)
			w := newWorker(t, tg, cfg, vocab.Transactional, 0)
			ctx := ctxT(t)
			var recs []*targets.Record
			pollUntil(t, w, func(rs []*targets.Record) { recs = append(recs, rs...) }, func() bool { return len(recs) >= 6 })

			// Aborted: outputs and acks for records 0-1.
			must(t, w.Begin(ctx))
			must(t, w.Produce(ctx, []*targets.Record{{Value: []byte("out-aborted")}}))
			must(t, w.StageAcks(ctx, recs[:2], vocab.AckAccept))
			if st := shareState(t, e, cfg, recs[0]); st != engine.StateTxPending {
				t.Errorf("staged record: %v, want TX_PENDING", st)
			}
			must(t, w.Abort(ctx))
			if st := waitState(t, e, cfg, recs[0], engine.StateAvailable); st != engine.StateAvailable {
				t.Errorf("record of the aborted transaction: %v, want AVAILABLE", st)
			}
			// Committed: outputs and acks for records 2-3 (accept, reject).
			must(t, w.Begin(ctx))
			must(t, w.Produce(ctx, []*targets.Record{{Value: []byte("out-committed")}}))
			must(t, w.StageAcks(ctx, recs[2:3], vocab.AckAccept))
			must(t, w.StageAcks(ctx, recs[3:4], vocab.AckReject))
			must(t, w.Commit(ctx))
			// Acks only: records 4-5.
			must(t, w.Begin(ctx))
			must(t, w.StageAcks(ctx, recs[4:6], vocab.AckAccept))
			must(t, w.Commit(ctx))
			for _, r := range recs[2:6] {
				if st := waitState(t, e, cfg, r, engine.StateAcknowledged, engine.StateArchived); st != engine.StateAcknowledged && st != engine.StateArchived {
					t.Errorf("record %d after commit: %v, want terminal", r.Offset, st)
				}
			}
			rd := newReader(t, tg, cfg, true)
			seen := readUntil(t, rd, func(seen map[string]int) bool { return seen["out-committed"] > 0 })
			if seen["out-aborted"] > 0 {
				t.Error("read_committed reader saw the aborted output")
			}
		})
	}
}

// TestTransactionalFencedMemberEpoch: staging with a member epoch the
// group has moved on from (another member joined) is refused, the
// transaction can then only abort, and the worker goes on with the epoch
// it learned (the next transaction stages). Staging before the worker's
// once-a-second heartbeat learns the epoch is the race this provokes; a
// heartbeat that wins it makes the first staging succeed, which the test
// accepts.
func TestTransactionalFencedMemberEpoch(t *testing.T) {
	tg, e := newServed(t, 95)
	cfg := testConfig(t, 1)
	cfg.LockDuration = 30e9
	setup(t, tg, cfg)
	produceInputs(t, tg, cfg, "in", 2, 2)
	w := newWorker(t, tg, cfg, vocab.Transactional, 0)
	ctx := ctxT(t)
	var recs []*targets.Record
	pollUntil(t, w, func(rs []*targets.Record) { recs = append(recs, rs...) }, func() bool { return len(recs) >= 2 })
	// A second member joins: the group moves the first member's epoch
	// on, which it learns on its next heartbeat (up to a second away).
	newWorker(t, tg, cfg, vocab.Transactional, 1)
	must(t, w.Begin(ctx))
	err := w.StageAcks(ctx, recs, vocab.AckAccept)
	if err == nil {
		t.Skip("the heartbeat learned the new epoch before the staging")
	}
	if !errors.Is(err, targets.ErrAbortable) || !errors.Is(err, targets.ErrStaleMemberEpoch) || errors.Is(err, targets.ErrFenced) {
		t.Fatalf("StageAcks with a stale member epoch = %v, want ErrAbortable and ErrStaleMemberEpoch, not ErrFenced", err)
	}
	if err := w.Commit(ctx); !errors.Is(err, errAbortable) {
		t.Errorf("Commit after a failed staging = %v, want errAbortable", err)
	}
	if err := w.Produce(ctx, []*targets.Record{{Value: []byte("x")}}); !errors.Is(err, errAbortable) {
		t.Errorf("Produce after a failed staging = %v, want errAbortable", err)
	}
	must(t, w.Abort(ctx))
	if st := shareState(t, e, cfg, recs[0]); st != engine.StateAcquired {
		t.Errorf("record after the refused staging: %v, want still ACQUIRED", st)
	}
	must(t, w.Begin(ctx))
	must(t, w.StageAcks(ctx, recs, vocab.AckAccept))
	must(t, w.Commit(ctx))
	if st := waitState(t, e, cfg, recs[0], engine.StateAcknowledged); st != engine.StateAcknowledged {
		t.Errorf("record after staging with the learned epoch: %v, want ACKNOWLEDGED", st)
	}
}

// TestTransactionalStagingFailureIsAbortable: staging records the member
// does not hold fails per partition and leaves the transaction abortable.
func TestTransactionalStagingFailureIsAbortable(t *testing.T) {
	tg, _ := newServed(t, 95)
	cfg := testConfig(t, 1)
	setup(t, tg, cfg)
	produceInputs(t, tg, cfg, "in", 1, 1)
	w := newWorker(t, tg, cfg, vocab.Transactional, 0)
	ctx := ctxT(t)
	must(t, w.Begin(ctx))
	err := w.StageAcks(ctx, []*targets.Record{{Topic: cfg.InputTopic, Partition: 0, Offset: 0}}, vocab.AckAccept)
	if err == nil {
		t.Fatal("staging a record never acquired succeeded")
	}
	if err := w.Commit(ctx); !errors.Is(err, errAbortable) {
		t.Errorf("Commit = %v, want errAbortable", err)
	}
	must(t, w.Abort(ctx))
	must(t, w.Begin(ctx))
	must(t, w.Commit(ctx))
}

// TestTransactionalCrashFences: a replacement worker with the same id
// fences the crashed one and its open transaction aborts.
func TestTransactionalCrashFences(t *testing.T) {
	tg, e := newServed(t, 95)
	cfg := testConfig(t, 1)
	cfg.LockDuration = 30e9
	setup(t, tg, cfg)
	produceInputs(t, tg, cfg, "in", 1, 1)
	w, err := tg.NewWorker(ctxT(t), cfg, vocab.Transactional, 0)
	if err != nil {
		t.Fatal(err)
	}
	ctx := ctxT(t)
	var recs []*targets.Record
	pollUntil(t, w, func(rs []*targets.Record) { recs = append(recs, rs...) }, func() bool { return len(recs) >= 1 })
	must(t, w.Begin(ctx))
	must(t, w.StageAcks(ctx, recs, vocab.AckAccept))
	w.Crash()
	w2 := newWorker(t, tg, cfg, vocab.Transactional, 0)
	if st := waitState(t, e, cfg, recs[0], engine.StateAvailable, engine.StateAcquired); st != engine.StateAvailable && st != engine.StateAcquired {
		t.Errorf("staged record after the replacement fenced the crashed worker: %v, want AVAILABLE", st)
	}
	var again []*targets.Record
	pollUntil(t, w2, func(rs []*targets.Record) { again = append(again, rs...) }, func() bool { return len(again) >= 1 })
	if again[0].DeliveryCount < 2 {
		t.Errorf("redelivery count %d, want at least 2", again[0].DeliveryCount)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
