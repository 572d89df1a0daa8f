// This file tests the durable view (durable.go): a seeded random walk over
// every transition, after each step of which the step's delta is applied
// to a shadow partition restored from a snapshot; the shadow's snapshot
// must equal the live one, and (with history) so must every record below
// SPSO. Every so often the shadow is rebuilt from a fresh snapshot.
//
//	go test ./engine/internal/sharepart -run TestDurableRandom -v

package sharepart_test

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/sharebench/sharebench/engine/internal/sharepart"
)

type durGaps map[int64]bool

func (g durGaps) IsGap(o int64) bool { return g[o] }

// BatchEnd: every record is a batch of its own.
func (g durGaps) BatchEnd(o int64, _ int) int64 { return o }

func snapshotOf(sp *sharepart.SharePartition) sharepart.Snapshot {
	var s sharepart.Snapshot
	sp.Snapshot(&s)
	if len(s.Runs) == 0 {
		s.Runs = nil // nil and empty compare equal here
	}
	return s
}

func TestDurableRandom(t *testing.T) {
	t.Parallel()
	for seed := uint64(1); seed <= 40; seed++ {
		for _, hist := range []bool{false, true} {
			t.Run(fmt.Sprintf("seed=%d/history=%v", seed, hist), func(t *testing.T) {
				durableWalk(t, seed, hist, 1500)
			})
		}
	}
}

func durableWalk(t *testing.T, seed uint64, hist bool, steps int) {
	rng := rand.New(rand.NewPCG(seed, 7))
	cfg := sharepart.Config{LockDuration: 10 * time.Second, DeliveryLimit: 3, MaxRecordLocks: 12, KeepHistory: hist}
	live, err := sharepart.New(cfg, 5)
	if err != nil {
		t.Fatal(err)
	}
	s0 := snapshotOf(live)
	shadow, err := sharepart.Restore(cfg, &s0)
	if err != nil {
		t.Fatal(err)
	}
	gaps := durGaps{}
	hw := int64(5)
	now := time.Duration(0)
	var d sharepart.Delta
	var ranges []sharepart.Range
	held := func(owner sharepart.Owner) [][2]int64 {
		var out [][2]int64
		live.Each(func(first, last int64, ri sharepart.RecordInfo) {
			if ri.State == sharepart.Acquired && ri.Owner == owner {
				out = append(out, [2]int64{first, last})
			}
		})
		return out
	}
	pickHeld := func(owner sharepart.Owner) (int64, int64, bool) {
		h := held(owner)
		if len(h) == 0 {
			return 0, 0, false
		}
		r := h[rng.IntN(len(h))]
		first := r[0] + rng.Int64N(r[1]-r[0]+1)
		last := first + rng.Int64N(r[1]-first+1)
		return first, last, true
	}
	for step := 0; step < steps; step++ {
		owner := sharepart.Owner(1 + rng.IntN(3))
		pid := sharepart.ProducerID(1 + rng.IntN(2))
		var op string
		switch k := rng.IntN(100); {
		case k < 15:
			n := 1 + rng.Int64N(6)
			for i := int64(0); i < n; i++ {
				if rng.IntN(8) == 0 {
					gaps[hw] = true
				}
				hw++
			}
			op = fmt.Sprintf("produce %d", n)
		case k < 35:
			ranges = live.Acquire(now, owner, 1+rng.IntN(6), hw, gaps, ranges[:0])
			op = fmt.Sprintf("acquire o%d -> %v", owner, ranges)
		case k < 50:
			if first, last, ok := pickHeld(owner); ok {
				typ := []sharepart.AckType{sharepart.Accept, sharepart.Release, sharepart.Reject, sharepart.Renew, sharepart.Gap}[rng.IntN(5)]
				err := live.Acknowledge(now, owner, []sharepart.Batch{{First: first, Last: last, Type: typ}})
				op = fmt.Sprintf("ack o%d [%d,%d] %v: %v", owner, first, last, typ, err)
			}
		case k < 65:
			if first, last, ok := pickHeld(owner); ok {
				typ := []sharepart.AckType{sharepart.Accept, sharepart.Reject, sharepart.Gap}[rng.IntN(3)]
				b := []sharepart.Batch{{First: first, Last: last, Type: typ}}
				err := live.Stage(now, owner, pid, 1, b)
				op = fmt.Sprintf("stage o%d p%d [%d,%d] %v: %v", owner, pid, first, last, typ, err)
				if err == nil && rng.IntN(6) == 0 {
					live.UnstageFailed(now, owner, pid, 1, b)
					op += " (unstaged)"
				}
			}
		case k < 77:
			commit := rng.IntN(2) == 0
			n := live.Marker(now, pid, 1+int16(rng.IntN(2)), commit)
			op = fmt.Sprintf("marker p%d commit=%v: %d", pid, commit, n)
		case k < 87:
			now += time.Duration(1+rng.IntN(12)) * time.Second
			op = fmt.Sprintf("expire at %v: %d", now, live.Expire(now))
		case k < 93:
			op = fmt.Sprintf("release owner o%d: %d", owner, live.ReleaseOwner(now, owner))
		default:
			to := live.SPSO() + rng.Int64N(4)
			if to > hw {
				to = hw
			}
			live.AdvanceLogStart(to)
			op = fmt.Sprintf("log start %d", to)
		}
		if err := live.Check(); err != nil {
			t.Fatalf("step %d %s: live check: %v", step, op, err)
		}
		if live.TakeDelta(&d) {
			if err := shadow.ApplyDelta(&d); err != nil {
				t.Fatalf("step %d %s: apply delta %+v: %v", step, op, d, err)
			}
		}
		if live.Dirty() {
			t.Fatalf("step %d %s: dirty after TakeDelta", step, op)
		}
		ls, ss := snapshotOf(live), snapshotOf(shadow)
		if !reflect.DeepEqual(ls, ss) {
			t.Fatalf("step %d %s:\nlive   %+v\nshadow %+v\ndelta  %+v", step, op, ls, ss, d)
		}
		if hist {
			for o := int64(5); o < live.SPSO(); o++ {
				a, b := live.Record(o), shadow.Record(o)
				if a.State != b.State || a.Reason != b.Reason || a.DeliveryCount != b.DeliveryCount || a.Known != b.Known {
					t.Fatalf("step %d %s: history of %d: live %+v, shadow %+v", step, op, o, a, b)
				}
			}
		}
		if step%97 == 0 {
			// Restore from a snapshot alone; history (kept by the
			// shadow's deltas) is carried over by PutHistory as the
			// engine does from its history log.
			fresh, err := sharepart.Restore(cfg, &ls)
			if err != nil {
				t.Fatalf("step %d: restore: %v", step, err)
			}
			if hist {
				var runs []sharepart.DurableRun
				for o := int64(5); o < live.SPSO(); o++ {
					ri := shadow.Record(o)
					runs = append(runs, sharepart.DurableRun{First: o, Last: o, State: ri.State, Reason: ri.Reason, Count: ri.DeliveryCount})
				}
				if err := fresh.PutHistory(runs); err != nil {
					t.Fatal(err)
				}
			}
			if fs := snapshotOf(fresh); !reflect.DeepEqual(fs, ls) {
				t.Fatalf("step %d: restored snapshot %+v, want %+v", step, fs, ls)
			}
			shadow = fresh
		}
	}
}

// TestRestoreMinusAcquisitions pins the durable view's rule: an ACQUIRED
// record comes back AVAILABLE at the count it was acquired from, a
// TX_PENDING one stays pending, trailing never-delivered records vanish.
func TestRestoreMinusAcquisitions(t *testing.T) {
	t.Parallel()
	cfg := sharepart.Config{LockDuration: 10 * time.Second, DeliveryLimit: 5, MaxRecordLocks: 100}
	sp, _ := sharepart.New(cfg, 0)
	sp.Acquire(0, 1, 4, 10, nil, nil) // [0,3] c1
	if err := sp.Acknowledge(0, 1, []sharepart.Batch{{First: 1, Last: 1, Type: sharepart.Release}}); err != nil {
		t.Fatal(err)
	}
	sp.Acquire(0, 2, 1, 10, nil, nil) // 1 again: c2
	if err := sp.Stage(0, 1, 7, 3, []sharepart.Batch{{First: 2, Last: 2, Type: sharepart.Accept}}); err != nil {
		t.Fatal(err)
	}
	sp.Acquire(0, 2, 3, 10, nil, nil) // [4,6] c1, trailing
	s := snapshotOf(sp)
	want := []sharepart.DurableRun{
		{First: 0, Last: 0, State: sharepart.Available, Count: 0},
		{First: 1, Last: 1, State: sharepart.Available, Count: 1},
		{First: 2, Last: 2, State: sharepart.TxPending, Count: 1, Producer: 7, Epoch: 3, Staged: sharepart.Accept},
		// [3,6] were delivered once and never released: durably they
		// were never delivered, and trailing, so they are not kept.
	}
	if !reflect.DeepEqual(s.Runs, want) || s.SPSO != 0 {
		t.Fatalf("snapshot = %+v\nwant %+v", s.Runs, want)
	}
	r, err := sharepart.Restore(cfg, &s)
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Record(2); got.State != sharepart.TxPending || got.Producer != 7 {
		t.Fatalf("restored record 2 = %+v, want TX_PENDING of producer 7", got)
	}
	if got := r.Record(1); got.State != sharepart.Available || got.DeliveryCount != 1 {
		t.Fatalf("restored record 1 = %+v, want AVAILABLE c1", got)
	}
	if r.End() != 3 {
		t.Fatalf("restored end = %d, want 3 (trailing never-delivered records dropped)", r.End())
	}
	if n := r.Marker(0, 7, 4, true); n != 1 || r.Record(2).State != sharepart.Acknowledged {
		t.Fatalf("commit marker after restore changed %d records, record 2 %v", n, r.Record(2).State)
	}
}

func TestRestoreRejectsBadInput(t *testing.T) {
	t.Parallel()
	cfg := sharepart.Config{LockDuration: time.Second, DeliveryLimit: 5, MaxRecordLocks: 10}
	bad := []sharepart.Snapshot{
		{SPSO: -1},
		{SPSO: 5, HistoryBase: 6},
		{SPSO: 0, Runs: []sharepart.DurableRun{{First: 1, Last: 2, State: sharepart.Available}}},
		{SPSO: 0, Runs: []sharepart.DurableRun{{First: 0, Last: 2, State: sharepart.Acquired}}},
		{SPSO: 0, Runs: []sharepart.DurableRun{{First: 0, Last: 2, State: sharepart.TxPending}}},
		{SPSO: 0, Runs: []sharepart.DurableRun{{First: 0, Last: -2, State: sharepart.Available}}},
		{SPSO: 0, Runs: []sharepart.DurableRun{{First: 0, Last: 2, State: sharepart.Available, Count: 70000}}},
	}
	for i, s := range bad {
		if _, err := sharepart.Restore(cfg, &s); err == nil {
			t.Errorf("snapshot %d %+v restored without error", i, s)
		}
	}
}
