// This file tests the ledger's record of an acknowledgement that did not
// take effect: a slow worker acknowledges records it no longer holds (its
// lock expired, another worker got them again, its session ended), the
// engine target answers per record, the ledger records "refused" (or
// "failed" when the whole call failed) instead of "committed", and the
// verifier neither counts the reject nor finds a contradiction.

package ledger

import (
	"context"
	"errors"
	"testing"
	"time"

	eng "github.com/sharebench/sharebench/engine"
	"github.com/sharebench/sharebench/loadgen/targets"
	"github.com/sharebench/sharebench/loadgen/targets/enginetarget"
	"github.com/sharebench/sharebench/loadgen/verify"
	"github.com/sharebench/sharebench/vocab"
)

func TestSlowWorkerAckRefused(t *testing.T) {
	t.Parallel()
	const lock, session = time.Second, 10 * time.Second
	cases := []struct {
		name string
		// away takes A's records from it; b is a second worker, or nil.
		away func(clk *eng.ManualClock, e *eng.Engine, b targets.Worker, bb *Book)
		ack  vocab.AckType
		// want is the ledger's outcome of A's acknowledgement.
		want string
		// refused says the call must answer a *targets.RefusedError
		// (per record), not fail as a whole.
		refused bool
	}{
		{name: "lock expired", ack: vocab.AckReject, want: verify.AckRefused, refused: true,
			away: func(clk *eng.ManualClock, e *eng.Engine, _ targets.Worker, _ *Book) {
				clk.Advance(lock)
				e.FireTimers()
			}},
		{name: "redelivered to another worker, which holds them", ack: vocab.AckReject, want: verify.AckRefused, refused: true,
			away: func(clk *eng.ManualClock, e *eng.Engine, b targets.Worker, bb *Book) {
				clk.Advance(lock)
				e.FireTimers()
				pollAll(t, b, bb, 2)
			}},
		// The probe runs: B accepts, the start offset passes the
		// records, and A's reject is a no-op success on the wire (as on
		// Kafka); the engine target still reports it did not take effect.
		{name: "redelivered to another worker, which accepted them", ack: vocab.AckReject, want: verify.AckRefused, refused: true,
			away: func(clk *eng.ManualClock, e *eng.Engine, b targets.Worker, bb *Book) {
				clk.Advance(lock)
				e.FireTimers()
				recs := pollAll(t, b, bb, 2)
				err := b.Ack(context.Background(), recs, vocab.AckAccept)
				bb.Acked(recs, vocab.AckAccept, err)
				if err != nil {
					t.Fatalf("B accepts: %v", err)
				}
			}},
		{name: "session ended", ack: vocab.AckAccept, want: verify.AckFailed,
			away: func(clk *eng.ManualClock, e *eng.Engine, _ targets.Worker, _ *Book) {
				clk.Advance(session)
				e.FireTimers()
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			clk := eng.NewManualClock()
			tg, err := enginetarget.New(enginetarget.Options{Clock: clk, SessionTimeout: session})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = tg.Close() })
			cfg := targets.Config{InputTopic: "in", OutputTopic: "out", InputPartitions: 1, OutputPartitions: 1, Group: "g",
				LockDuration: lock, DeliveryLimit: 5, MaxRecordLocks: 100, MaxPollRecords: 10, TransactionTimeout: time.Minute}
			if err := tg.Setup(ctx, cfg); err != nil {
				t.Fatal(err)
			}
			l := New(nil)
			p, err := tg.NewProducer(ctx, cfg, 0)
			if err != nil {
				t.Fatal(err)
			}
			ins := []*targets.Record{inputRecord(1, 0), inputRecord(2, 0)}
			for _, r := range ins {
				r.Topic = cfg.InputTopic
			}
			if err := p.Produce(ctx, ins); err != nil {
				t.Fatal(err)
			}
			for i, r := range ins {
				l.AddInput(uint64(i+1), r.Partition, r.Offset, 0)
			}
			a, err := tg.NewWorker(ctx, cfg, vocab.Explicit, 0)
			if err != nil {
				t.Fatal(err)
			}
			b, err := tg.NewWorker(ctx, cfg, vocab.Explicit, 1)
			if err != nil {
				t.Fatal(err)
			}
			now := func() int64 { return int64(clk.Now()) }
			ba, bb := l.NewBook(0, 1, now), l.NewBook(1, 1, now)
			recs := pollAll(t, a, ba, 2)
			tc.away(clk, tg.Engine(), b, bb)
			err = a.Ack(ctx, recs, tc.ack)
			ba.Acked(recs, tc.ack, err)
			var re *targets.RefusedError
			switch {
			case err == nil:
				t.Fatalf("A's %v of records it no longer holds answered no error", tc.ack)
			case tc.refused && (!errors.As(err, &re) || len(re.Refused) != len(recs)):
				t.Fatalf("A's %v: %v, want a *targets.RefusedError naming all %d records", tc.ack, err, len(recs))
			case !errors.Is(err, eng.ErrInvalidRecordState) && !errors.Is(err, eng.ErrUnknownMember):
				t.Fatalf("A's %v: %v, want it to match engine.ErrInvalidRecordState or ErrUnknownMember", tc.ack, err)
			}
			st, err := tg.Inspect(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			got := collect(l, vocab.Explicit, cfg.TransactionalIDPrefix, st)
			v := verify.New(vocab.Explicit, verify.Options{DeliveryLimit: cfg.DeliveryLimit})
			for _, d := range got.dels {
				if d.Worker == 0 && d.AckOutcome != tc.want {
					t.Errorf("ledger: A's delivery of %d: ack %s outcome %q, want %q", d.InputID, d.Ack, d.AckOutcome, tc.want)
				}
				v.AddDelivery(d)
			}
			for _, in := range got.ins {
				v.AddInput(in)
				// Each input's output committed once (the processing this
				// test leaves out), so only the acks are judged.
				v.AddOutput(verify.Output{InputID: in.ID, Offset: int64(in.ID), Committed: true, Uncommitted: true, VisibleNs: 1})
			}
			res := v.Finish()
			for _, k := range []vocab.Finding{vocab.KindRejected, vocab.KindAckContradiction, vocab.KindLost} {
				if res.Counts[k] != 0 {
					t.Errorf("verifier: %s %d, want 0 (A's %v did not take effect): %+v", k, res.Counts[k], tc.ack, res.Witnesses[k])
				}
			}
			if l.Settled() != 0 {
				t.Errorf("ledger: %d inputs settled by A's refused %v, want 0", l.Settled(), tc.ack)
			}
		})
	}
}

// pollAll polls w once, books the poll and checks it returned n records.
func pollAll(t *testing.T, w targets.Worker, b *Book, n int) []*targets.Record {
	t.Helper()
	recs, err := w.Poll(context.Background(), 10)
	if err != nil {
		t.Fatalf("poll: %v", err)
	}
	b.Polled(nil, recs)
	if len(recs) != n {
		t.Fatalf("poll returned %d records, want %d", len(recs), n)
	}
	return recs
}
