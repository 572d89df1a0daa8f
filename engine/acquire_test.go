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
