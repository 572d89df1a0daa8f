// This file holds the cases of modes, producers and workers: which modes a
// target runs, what Produce fills in, an explicit round trip, and what a
// worker without transactions, or without share acknowledgements, refuses.

package targettest

import (
	"errors"
	"fmt"
	"testing"

	"github.com/sharebench/sharebench/loadgen/targets"
	"github.com/sharebench/sharebench/vocab"
)

// testSupports: every target runs the share-group modes and classic-eos;
// an unknown mode is refused by Supports and by NewWorker.
func testSupports(t *testing.T, e *env) {
	for _, m := range []vocab.Mode{vocab.Implicit, vocab.Explicit, vocab.Deferred, vocab.ClassicEOS} {
		if err := e.tg.Supports(e.ctx, m); err != nil {
			t.Errorf("Supports(%s) = %v, want nil", m, err)
		}
	}
	const bogus = vocab.Mode("sometimes")
	if err := e.tg.Supports(e.ctx, bogus); err == nil {
		t.Errorf("Supports(%s) succeeded", bogus)
	}
	cfg := e.setup(1)
	if w, err := e.tg.NewWorker(e.ctx, cfg, bogus, 0); err == nil {
		w.Close(e.ctx)
		t.Errorf("NewWorker(%s) succeeded", bogus)
	}
}

// testProduceAssignsOffsets: Produce sets each record's topic, partition
// and offset; on fresh topics each partition's offsets run from 0 without
// a gap or a repeat.
func testProduceAssignsOffsets(t *testing.T, e *env) {
	cfg := e.setup(2)
	recs := e.produce(cfg, 12)
	perPartition := map[int32]map[int64]bool{}
	for _, r := range recs {
		if r.Topic != cfg.InputTopic || r.Partition < 0 || r.Partition >= cfg.InputPartitions {
			t.Fatalf("produced record %s at %s/%d, want topic %s and a partition below %d", r.Value, r.Topic, r.Partition, cfg.InputTopic, cfg.InputPartitions)
		}
		if perPartition[r.Partition] == nil {
			perPartition[r.Partition] = map[int64]bool{}
		}
		if perPartition[r.Partition][r.Offset] {
			t.Errorf("two records at %d@%d", r.Partition, r.Offset)
		}
		perPartition[r.Partition][r.Offset] = true
	}
	for p, offs := range perPartition {
		for o := range int64(len(offs)) {
			if !offs[o] {
				t.Errorf("partition %d: %d records, none at offset %d; offsets %v", p, len(offs), o, offs)
			}
		}
	}
}

// testExplicitConsumesAndAcksAll: an explicit worker gets every record
// once, at delivery count 1; once it accepted them all, each partition's
// share-partition start offset reaches the partition's end (or, with
// LaggingStartOffsets, does not pass it). Close leaves cleanly, and a
// closed worker's Poll fails.
func testExplicitConsumesAndAcksAll(t *testing.T, e *env) {
	cfg := e.setup(2)
	const n = 30
	inputs := e.produce(cfg, n)
	w := e.worker(cfg, vocab.Explicit, 0)
	seen := make(map[string]int)
	e.pollUntil(cfg, w, func(recs []*targets.Record) {
		for _, r := range recs {
			seen[string(r.Value)]++
			if r.DeliveryCount != 1 {
				t.Errorf("record %s: delivery count %d, want 1", r.Value, r.DeliveryCount)
			}
		}
		if err := w.Ack(e.ctx, recs, vocab.AckAccept); err != nil {
			t.Fatalf("Ack: %v", err)
		}
	}, func() bool { return len(seen) == n })
	for v, c := range seen {
		if c != 1 {
			t.Errorf("record %s delivered %d times", v, c)
		}
	}
	want := make(map[int32]int64)
	for _, r := range inputs {
		want[r.Partition] = max(want[r.Partition], r.Offset+1)
	}
	// Where the target keeps its start offsets current, they reach each
	// partition's end (a cluster may move them after it answered the
	// acks); where they lag, they must not pass it.
	e.eventually(func() string {
		st, err := e.tg.Inspect(e.ctx, cfg)
		if err != nil {
			return fmt.Sprintf("Inspect: %v", err)
		}
		for p, end := range want {
			spso, ok := st.SPSO[p]
			switch {
			case e.opts.laggingStartOffsets && spso > end:
				return fmt.Sprintf("SPSO of partition %d = %d, past its end %d; state %+v", p, spso, end, st)
			case !e.opts.laggingStartOffsets && (!ok || spso != end):
				return fmt.Sprintf("SPSO of partition %d = %d, want %d (all accepted); state %+v", p, spso, end, st)
			}
		}
		return ""
	})
	if err := w.Close(e.ctx); err != nil {
		t.Errorf("Close: %v", err)
	}
	if _, err := w.Poll(e.ctx, 1); err == nil {
		t.Error("Poll after Close: got nil error")
	}
}

// testNonTransactionalWorkerRefusesTransactions: an explicit worker has no
// transactional id, and its transaction calls wrap ErrUnsupported.
func testNonTransactionalWorkerRefusesTransactions(t *testing.T, e *env) {
	cfg := e.setup(1)
	w := e.worker(cfg, vocab.Explicit, 3)
	if id, epoch := w.TxnInfo(); id != "" || epoch != -1 {
		t.Errorf("TxnInfo = %q, %d; want \"\", -1", id, epoch)
	}
	for _, c := range []struct {
		name string
		err  error
	}{
		{"Begin", w.Begin(e.ctx)},
		{"Commit", w.Commit(e.ctx)},
		{"Abort", w.Abort(e.ctx)},
		{"StageAcks", w.StageAcks(e.ctx, nil, vocab.AckAccept)},
	} {
		if !errors.Is(c.err, targets.ErrUnsupported) {
			t.Errorf("%s in explicit mode = %v, want ErrUnsupported", c.name, c.err)
		}
	}
}

// testClassicEOSWorker: a classic-eos worker's transactional id is the
// prefix and its id, with a known epoch; it has no share acknowledgements.
func testClassicEOSWorker(t *testing.T, e *env) {
	cfg := e.setup(1)
	w := e.worker(cfg, vocab.ClassicEOS, 2)
	if id, epoch := w.TxnInfo(); id != cfg.TransactionalIDPrefix+"2" || epoch < 0 {
		t.Errorf("TxnInfo = %q, %d; want %q and a known epoch", id, epoch, cfg.TransactionalIDPrefix+"2")
	}
	if err := w.Ack(e.ctx, nil, vocab.AckAccept); !errors.Is(err, targets.ErrUnsupported) {
		t.Errorf("Ack in classic-eos = %v, want ErrUnsupported", err)
	}
}
