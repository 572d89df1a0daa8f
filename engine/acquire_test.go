package engine_test

import (
	"testing"
	"time"

	"github.com/sharebench/sharebench/engine"
)

// TestAcquireModes: record_limit acquires exactly (the poll's max, never
// past the window); batch_optimized checks the window before the fetch and
// then takes whole produced batches, overshooting both (KIP-1206).
func TestAcquireModes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		mode        engine.AcquireMode
		polls       []int // records each poll of max 3 returns
		inFlightMax int
	}{
		// Batches of 4; window 6.
		{engine.AcquireRecordLimit, []int{3, 3, 0}, 6},
		{engine.AcquireBatchOptimized, []int{4, 4, 0}, 8},
	} {
		t.Run(tc.mode.String(), func(t *testing.T) {
			t.Parallel()
			cfg := rigGroup
			cfg.MaxRecordLocks, cfg.AcquireMode = 6, tc.mode
			r := newRig(t, engine.WithGroupDefaults(cfg))
			for i := 0; i < 4; i++ {
				r.produce("in", 0, 4) // one produced batch of 4 each
			}
			m := r.join("g", engine.AckExplicit)
			for i, want := range tc.polls {
				if got := len(r.poll(m, 3)); got != want {
					t.Fatalf("poll %d: %d records, want %d", i, got, want)
				}
			}
			info, err := r.e.SharePartition("g", engine.TopicPartition{Topic: "in"})
			if err != nil || info.InFlight != tc.inFlightMax {
				t.Fatalf("in flight %d (%v), want %d", info.InFlight, err, tc.inFlightMax)
			}
			r.check()
		})
	}
}

// TestTxPendingLimitKnob: TX_PENDING records count toward
// share.partition.max.record.locks (the draft, the default), so an open
// transaction's staged records stop the next poll; with TxPendingLimit
// they do not, up to that separate limit.
func TestTxPendingLimitKnob(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		limit int
		want  int // records the poll after staging gets
	}{{0, 0}, {4, 4}, {2, 2}} {
		t.Run(map[int]string{0: "counted", 4: "limit=4", 2: "limit=2"}[tc.limit], func(t *testing.T) {
			t.Parallel()
			cfg := rigGroup
			cfg.MaxRecordLocks = 4
			r := newRig(t, engine.WithGroupDefaults(cfg), engine.WithKnobs(engine.Knobs{TxPendingLimit: tc.limit}))
			r.produce("in", 0, 12)
			m := r.join("g", engine.AckTransactional)
			if got := len(r.poll(m, 4)); got != 4 {
				t.Fatalf("first poll %d records, want 4", got)
			}
			p := r.producer("tx")
			wantErr(t, "begin", p.Begin(), nil)
			wantErr(t, "stage", p.SendShareAcksToTransaction([]engine.Acknowledgement{accept(0, 3)}, m.Metadata()), nil)
			if got := len(r.poll(m, 10)); got != tc.want {
				t.Fatalf("poll with 4 TX_PENDING: %d records, want %d", got, tc.want)
			}
			r.check()
			r.clk.Advance(time.Second)
			wantErr(t, "commit", p.Commit(), nil)
			r.check()
		})
	}
}

// TestTxPendingLimitAtTheLimit: with tx-pending-limit=2, record_limit and 3
// record locks, one staging makes all 3 records TX_PENDING (staging is never
// refused for the limit), the next poll gets the 2 slots the limit frees,
// and after the abort the 2 records acquired meanwhile still hold their
// slots: the invariants hold, and the next poll gets the one slot left, not
// the 3 records the abort returned, which would put 5 in flight in a
// window of 3.
func TestTxPendingLimitAtTheLimit(t *testing.T) {
	t.Parallel()
	cfg := rigGroup
	cfg.MaxRecordLocks, cfg.AcquireMode = 3, engine.AcquireRecordLimit
	r := newRig(t, engine.WithGroupDefaults(cfg), engine.WithKnobs(engine.Knobs{TxPendingLimit: 2}))
	r.produce("in", 0, 10)
	m := r.join("g", engine.AckTransactional)
	if got := offsetsOf(r.poll(m, 10)); len(got) != 3 {
		t.Fatalf("first poll %v, want offsets 0-2", got)
	}
	p := r.producer("tx")
	wantErr(t, "begin", p.Begin(), nil)
	wantErr(t, "stage 3 records past a limit of 2", p.SendShareAcksToTransaction([]engine.Acknowledgement{accept(0, 2)}, m.Metadata()), nil)
	r.wantState("g", 0, 2, engine.StateTxPending, 1)
	r.check()
	other := r.join("g", engine.AckExplicit)
	if got := offsetsOf(r.poll(other, 10)); len(got) != 2 || got[0] != 3 || got[1] != 4 {
		t.Fatalf("poll with 3 TX_PENDING: %v, want [3 4] (the 2 slots the limit frees)", got)
	}
	if got := r.poll(other, 10); len(got) != 0 {
		t.Fatalf("poll with every slot held: %v, want none", offsetsOf(got))
	}
	r.check()
	wantErr(t, "abort", p.Abort(), nil)
	r.wantState("g", 0, 2, engine.StateAvailable, 1)
	r.check()
	got := offsetsOf(r.poll(other, 10))
	if len(got) != 1 || got[0] != 0 {
		t.Fatalf("poll after the abort: %v, want [0] (3 and 4 still hold 2 of the 3 slots)", got)
	}
	r.check()
	info, err := r.e.SharePartition("g", engine.TopicPartition{Topic: "in"})
	if err != nil {
		t.Fatal(err)
	}
	var held int
	for o := info.SPSO; o < info.End; o++ {
		if st := r.rec("g", "in", 0, o).State; st == engine.StateAcquired || st == engine.StateTxPending {
			held++
		}
	}
	if held != 3 {
		t.Fatalf("%d records held after the abort and a poll, want 3 (share.partition.max.record.locks)", held)
	}
}
