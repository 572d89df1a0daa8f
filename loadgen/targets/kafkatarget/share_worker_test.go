// Tests of the share-group workers (implicit, explicit, deferred), the
// readers they write for, Crash, and Inspect after consuming.

package kafkatarget

import (
	"errors"
	"testing"
	"time"

	"github.com/sharebench/sharebench/loadgen/targets"
	"github.com/sharebench/sharebench/vocab"
)

func TestExplicitWorkersShareOnePartition(t *testing.T) {
	t.Parallel()
	tg := newEmbedded(t)
	cfg := testConfig(t, 1)
	cfg.MaxPollRecords = 5
	setup(t, tg, cfg)
	const n = 60
	produceInputs(t, tg, cfg, "in", n, 60)

	// Two members on one partition: while the first holds its batch, the
	// second must get other records. Each round both poll, then both ack.
	workers := []targets.Worker{newWorker(t, tg, cfg, vocab.Explicit, 0), newWorker(t, tg, cfg, vocab.Explicit, 1)}
	owner := make(map[string]int) // partition@offset -> worker id
	per := make(map[int]int)
	for len(owner) < n {
		batches := make([][]*targets.Record, len(workers))
		for id, w := range workers {
			if len(owner) == n {
				break
			}
			pollUntil(t, w, func(recs []*targets.Record) { batches[id] = recs }, func() bool { return len(batches[id]) > 0 })
			for _, r := range batches[id] {
				k := offsetKey(r)
				if prev, ok := owner[k]; ok {
					t.Fatalf("record %s delivered to worker %d and worker %d", k, prev, id)
				}
				owner[k] = id
				per[id]++
			}
		}
		for id, w := range workers {
			if err := w.Ack(ctxT(t), batches[id], vocab.AckAccept); err != nil {
				t.Fatalf("worker %d Ack: %v", id, err)
			}
		}
	}
	if per[0] == 0 || per[1] == 0 {
		t.Errorf("records per worker %v: want both to get records", per)
	}
}

func TestImplicitAutoAccepts(t *testing.T) {
	t.Parallel()
	tg := newEmbedded(t)
	cfg := testConfig(t, 1)
	cfg.MaxPollRecords = 4
	setup(t, tg, cfg)
	const n = 20
	produceInputs(t, tg, cfg, "in", n, 20)

	w := newWorker(t, tg, cfg, vocab.Implicit, 0)
	seen := make(map[string]int)
	pollUntil(t, w, func(recs []*targets.Record) {
		if len(recs) > cfg.MaxPollRecords {
			t.Errorf("poll returned %d records, more than MaxPollRecords %d", len(recs), cfg.MaxPollRecords)
		}
		for _, r := range recs {
			seen[string(r.Value)]++
		}
	}, func() bool { return len(seen) == n })
	for v, c := range seen {
		if c != 1 {
			t.Errorf("record %s delivered %d times", v, c)
		}
	}
	// No Ack was called: every poll accepted the one before it, and Close
	// accepts the last.
	if err := w.Close(ctxT(t)); err != nil {
		t.Fatalf("Close: %v", err)
	}
	st, err := tg.Inspect(ctxT(t), cfg)
	if err != nil {
		t.Fatalf("Inspect: %v", err)
	}
	if st.SPSO[0] != n {
		t.Errorf("SPSO = %d, want %d (all accepted implicitly)", st.SPSO[0], n)
	}
	// A new member finds nothing to redeliver.
	w2 := newWorker(t, tg, cfg, vocab.Implicit, 1)
	if recs := pollShort(t, w2, 300*time.Millisecond); len(recs) != 0 {
		t.Errorf("a new worker got %d records after all were accepted", len(recs))
	}
}

func TestDeferredCommitAndAbort(t *testing.T) {
	t.Parallel()
	tg := newEmbedded(t)
	cfg := testConfig(t, 1)
	setup(t, tg, cfg)
	produceInputs(t, tg, cfg, "in", 10, 10)
	ctx := ctxT(t)

	w := newWorker(t, tg, cfg, vocab.Deferred, 7)
	id, epoch := w.TxnInfo()
	if id != cfg.TransactionalIDPrefix+"7" || epoch < 0 {
		t.Fatalf("TxnInfo = %q, %d; want %q and a known epoch", id, epoch, cfg.TransactionalIDPrefix+"7")
	}
	if err := w.Produce(ctx, outputsOf(nil)); err == nil {
		t.Error("Produce outside a transaction in deferred mode: got nil error")
	}
	// All ten inputs sit in the log before the first poll, so one poll
	// (MaxPollRecords 100) acquires them all.
	var recs []*targets.Record
	pollUntil(t, w, func(got []*targets.Record) { recs = got }, func() bool { return len(recs) > 0 })
	if len(recs) != 10 {
		t.Fatalf("first poll got %d records, want all 10", len(recs))
	}
	if err := w.Renew(ctx, recs); err != nil {
		t.Fatalf("Renew: %v", err)
	}
	commitRecs, abortRecs := recs[:5], recs[5:]

	// Committed transaction, then ack.
	if err := w.Begin(ctx); err != nil {
		t.Fatalf("Begin: %v", err)
	}
	if err := w.Produce(ctx, outputsOf(commitRecs)); err != nil {
		t.Fatalf("Produce: %v", err)
	}
	if err := w.StageAcks(ctx, commitRecs, vocab.AckAccept); !errors.Is(err, targets.ErrUnsupported) {
		t.Errorf("StageAcks in deferred mode = %v, want ErrUnsupported", err)
	}
	if err := w.Commit(ctx); err != nil {
		t.Fatalf("Commit: %v", err)
	}
	if err := w.Ack(ctx, commitRecs, vocab.AckAccept); err != nil {
		t.Fatalf("Ack: %v", err)
	}
	if _, e2 := w.TxnInfo(); e2 < epoch {
		t.Errorf("epoch went back from %d to %d", epoch, e2)
	}

	// Aborted transaction, then release.
	if err := w.Begin(ctx); err != nil {
		t.Fatalf("Begin: %v", err)
	}
	if err := w.Produce(ctx, outputsOf(abortRecs)); err != nil {
		t.Fatalf("Produce: %v", err)
	}
	if err := w.Abort(ctx); err != nil {
		t.Fatalf("Abort: %v", err)
	}
	if err := w.Ack(ctx, abortRecs, vocab.AckRelease); err != nil {
		t.Fatalf("Ack(release): %v", err)
	}
	// A later committed marker: once a read_committed reader sees it,
	// it has read past the aborted transaction.
	if err := w.Begin(ctx); err != nil {
		t.Fatalf("Begin: %v", err)
	}
	if err := w.Produce(ctx, []*targets.Record{{Value: []byte("marker")}}); err != nil {
		t.Fatalf("Produce: %v", err)
	}
	if err := w.Commit(ctx); err != nil {
		t.Fatalf("Commit: %v", err)
	}

	rc := readUntil(t, newReader(t, tg, cfg, true), func(seen map[string]int) bool { return seen["marker"] > 0 })
	for _, r := range commitRecs {
		if rc["out-"+string(r.Value)] != 1 {
			t.Errorf("read_committed saw committed output out-%s %d times, want 1", r.Value, rc["out-"+string(r.Value)])
		}
	}
	for _, r := range abortRecs {
		if c := rc["out-"+string(r.Value)]; c != 0 {
			t.Errorf("read_committed saw aborted output out-%s %d times", r.Value, c)
		}
	}
	ru := readUntil(t, newReader(t, tg, cfg, false), func(seen map[string]int) bool { return seen["marker"] > 0 })
	for _, r := range recs {
		if ru["out-"+string(r.Value)] != 1 {
			t.Errorf("read_uncommitted saw out-%s %d times, want 1 (aborted outputs are visible uncommitted)", r.Value, ru["out-"+string(r.Value)])
		}
	}

	// The released records come back, with a higher delivery count.
	var again []*targets.Record
	pollUntil(t, w, func(got []*targets.Record) {
		again = append(again, got...)
		if err := w.Ack(ctx, got, vocab.AckAccept); err != nil {
			t.Fatalf("Ack: %v", err)
		}
	}, func() bool { return len(again) >= len(abortRecs) })
	for _, r := range again {
		if r.DeliveryCount < 2 {
			t.Errorf("redelivered record %s has delivery count %d, want >= 2", r.Value, r.DeliveryCount)
		}
	}
}

func TestCrashRedeliversAndFences(t *testing.T) {
	t.Parallel()
	tg := newEmbedded(t)
	cfg := testConfig(t, 1)
	setup(t, tg, cfg)
	const n = 8
	produceInputs(t, tg, cfg, "in", n, n)
	ctx := ctxT(t)

	// The first worker takes records, opens a transaction, writes an
	// output, and dies without acking or ending the transaction.
	a, err := tg.NewWorker(ctx, cfg, vocab.Deferred, 3)
	if err != nil {
		t.Fatal(err)
	}
	var held []*targets.Record
	pollUntil(t, a, func(got []*targets.Record) { held = append(held, got...) }, func() bool { return len(held) > 0 })
	_, epochA := a.TxnInfo()
	if err := a.Begin(ctx); err != nil {
		t.Fatal(err)
	}
	if err := a.Produce(ctx, []*targets.Record{{Value: []byte("zombie")}}); err != nil {
		t.Fatal(err)
	}
	a.Crash()
	if _, err := a.Poll(ctx, 1); err == nil {
		t.Error("Poll after Crash: got nil error")
	}

	// Its replacement (same id) fences it and gets every record again.
	b := newWorker(t, tg, cfg, vocab.Deferred, 3)
	if _, epochB := b.TxnInfo(); epochB <= epochA {
		t.Errorf("replacement epoch %d, want above the crashed worker's %d", epochB, epochA)
	}
	seen := make(map[string]int)
	pollUntil(t, b, func(got []*targets.Record) {
		if err := b.Begin(ctx); err != nil {
			t.Fatal(err)
		}
		if err := b.Produce(ctx, outputsOf(got)); err != nil {
			t.Fatal(err)
		}
		if err := b.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		if err := b.Ack(ctx, got, vocab.AckAccept); err != nil {
			t.Fatal(err)
		}
		for _, r := range got {
			seen[string(r.Value)]++
		}
	}, func() bool { return len(seen) == n })
	for _, r := range held {
		if seen[string(r.Value)] != 1 {
			t.Errorf("record %s held by the crashed worker was delivered %d times to its replacement", r.Value, seen[string(r.Value)])
		}
	}
	rc := readUntil(t, newReader(t, tg, cfg, true), func(seen map[string]int) bool { return len(seen) >= n })
	if rc["zombie"] != 0 {
		t.Error("read_committed saw the crashed worker's uncommitted output")
	}
}

func TestLockExpiryRedeliversAndStaleAckFails(t *testing.T) {
	t.Parallel()
	tg := newEmbedded(t)
	cfg := testConfig(t, 1) // LockDuration 1s
	setup(t, tg, cfg)
	const n = 5
	produceInputs(t, tg, cfg, "in", n, n)

	// a holds its records past the lock duration (it does not poll, so
	// it does not fetch either).
	a := newWorker(t, tg, cfg, vocab.Explicit, 0)
	var held []*targets.Record
	pollUntil(t, a, func(got []*targets.Record) { held = append(held, got...) }, func() bool { return len(held) == n })

	b := newWorker(t, tg, cfg, vocab.Explicit, 1)
	var again []*targets.Record
	pollUntil(t, b, func(got []*targets.Record) { again = append(again, got...) }, func() bool { return len(again) == n })
	for _, r := range again {
		if r.DeliveryCount != 2 {
			t.Errorf("record %s redelivered with count %d, want 2", r.Value, r.DeliveryCount)
		}
	}
	// While b holds them, a's late ack is refused by the broker, and Ack
	// says so. (Once b acks them, SPSO passes them and a late ack is a
	// no-op success, as in Kafka.)
	if err := a.Ack(ctxT(t), held, vocab.AckAccept); err == nil {
		t.Error("Ack after the lock expired and another member acquired the records: got nil error")
	} else {
		t.Logf("late ack error: %v", err)
	}
	if err := b.Ack(ctxT(t), again, vocab.AckAccept); err != nil {
		t.Fatalf("Ack by the new owner: %v", err)
	}
}

func TestAckRejectsForeignRecords(t *testing.T) {
	t.Parallel()
	tg := newEmbedded(t)
	cfg := testConfig(t, 1)
	setup(t, tg, cfg)
	w := newWorker(t, tg, cfg, vocab.Explicit, 0)
	ctx := ctxT(t)
	if err := w.Ack(ctx, []*targets.Record{{Topic: "x"}}, vocab.AckAccept); err == nil {
		t.Error("Ack of a record without a handle: got nil error")
	}
	if err := w.Ack(ctx, []*targets.Record{nil}, vocab.AckAccept); err == nil {
		t.Error("Ack of a nil record: got nil error")
	}
	if err := w.Ack(ctx, nil, vocab.AckGap); err == nil {
		t.Error("Ack with type gap: got nil error")
	}
}
