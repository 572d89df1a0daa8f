// This file checks docs/design.md §4's invariants 1–8, 10 and 11 through the public
// engine API: one scripted test per invariant, and a seeded random walk
// that checks the share-state invariants (1–7) after every step.

package engine_test

import (
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/sharebench/sharebench/engine"
)

// TestInvariant1TerminalStates: nothing leaves ACKNOWLEDGED or ARCHIVED,
// and no record is ACKNOWLEDGED twice.
func TestInvariant1TerminalStates(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	r.produce("in", 0, 4)
	m := r.join("g", engine.AckExplicit)
	other := r.join("g", engine.AckExplicit)
	r.poll(m, 4)
	// 0 stays ACQUIRED so SPSO stays at 0 and 1..2 remain in the window.
	wantErr(t, "ack", m.Acknowledge([]engine.Acknowledgement{accept(1, 1), ackOf(engine.AckReject, 2, 2)}), nil)
	terminal := func() {
		t.Helper()
		r.wantState("g", 1, 1, engine.StateAcknowledged, 1)
		r.wantState("g", 2, 2, engine.StateArchived, 1)
	}
	for _, typ := range []engine.AckType{engine.AckAccept, engine.AckReject, engine.AckRelease, engine.AckRenew, engine.AckGap} {
		for o := int64(1); o <= 2; o++ {
			wantErr(t, fmt.Sprintf("%v of terminal offset %d", typ, o), m.Acknowledge([]engine.Acknowledgement{ackOf(typ, o, o)}), engine.ErrInvalidRecordState)
		}
	}
	p := r.producer("p")
	wantErr(t, "begin", p.Begin(), nil)
	wantErr(t, "stage terminal", p.SendShareAcksToTransaction([]engine.Acknowledgement{accept(1, 2)}, m.Metadata()), engine.ErrInvalidRecordState)
	wantErr(t, "abort", p.Abort(), nil)
	terminal()
	r.clk.Advance(rigGroup.LockDuration)
	r.e.FireTimers()
	terminal()
	if got := offsetsOf(r.poll(other, 10)); fmt.Sprint(got) != "[0 3]" {
		t.Fatalf("after expiry the other member got %v, want [0 3]", got)
	}
	terminal()
	wantErr(t, "leave", other.Leave(), nil)
	terminal()
	accepted := r.e.Stats().Share.Accepted
	// Once SPSO passes them, acks are no-op successes and change nothing.
	m2 := r.join("g", engine.AckExplicit)
	r.poll(m2, 10)
	wantErr(t, "accept all", m2.Acknowledge([]engine.Acknowledgement{accept(0, 0), accept(3, 3)}), nil)
	wantErr(t, "ack below SPSO", m2.Acknowledge([]engine.Acknowledgement{accept(0, 3)}), nil)
	terminal()
	if got := r.e.Stats().Share.Accepted; got != accepted+2 {
		t.Fatalf("accepted counter %d, want %d: a record was acknowledged twice", got, accepted+2)
	}
	r.check()
}

// TestInvariant2SingleOwner: an acquired record has one owner, and only
// the owner's acknowledgement or staging succeeds.
func TestInvariant2SingleOwner(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	r.produce("in", 0, 2)
	a, b := r.join("g", engine.AckTransactional), r.join("g", engine.AckTransactional)
	r.poll(a, 2)
	if got := r.poll(b, 2); len(got) != 0 {
		t.Fatalf("b acquired %v held by a", offsetsOf(got))
	}
	for _, typ := range []engine.AckType{engine.AckAccept, engine.AckReject, engine.AckRelease, engine.AckRenew, engine.AckGap} {
		wantErr(t, fmt.Sprintf("b %v", typ), b.Acknowledge([]engine.Acknowledgement{ackOf(typ, 0, 1)}), engine.ErrNotOwner)
	}
	p := r.producer("p")
	wantErr(t, "begin", p.Begin(), nil)
	wantErr(t, "b stages", p.SendShareAcksToTransaction([]engine.Acknowledgement{accept(0, 1)}, b.Metadata()), engine.ErrNotOwner)
	restartTxn(t, p)
	if ri := r.rec("g", "in", 0, 0); ri.Owner != a.ID() || ri.State != engine.StateAcquired {
		t.Fatalf("record %+v, want ACQUIRED by %s", ri, a.ID())
	}
	wantErr(t, "a stages", p.SendShareAcksToTransaction([]engine.Acknowledgement{accept(0, 1)}, a.Metadata()), nil)
	wantErr(t, "commit", p.Commit(), nil)
	r.wantState("g", 0, 1, engine.StateAcknowledged, 1)
}

// TestInvariant3DeliveryCount: the delivery count grows only on acquisition
// and shrinks by one only when the owner's session closes.
func TestInvariant3DeliveryCount(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	r.produce("in", 0, 1)
	m := r.join("g", engine.AckExplicit)
	p := r.producer("p")
	steps := []struct {
		name string
		do   func()
		st   engine.RecordState
		n    int
	}{
		{"acquire", func() { r.poll(m, 1) }, engine.StateAcquired, 1},
		{"renew", func() {
			wantErr(t, "renew", m.Acknowledge([]engine.Acknowledgement{ackOf(engine.AckRenew, 0, 0)}), nil)
		}, engine.StateAcquired, 1},
		{"release", func() {
			wantErr(t, "release", m.Acknowledge([]engine.Acknowledgement{ackOf(engine.AckRelease, 0, 0)}), nil)
		}, engine.StateAvailable, 1},
		{"reacquire", func() { r.poll(m, 1) }, engine.StateAcquired, 2},
		{"lock expiry", func() { r.clk.Advance(rigGroup.LockDuration); r.e.FireTimers() }, engine.StateAvailable, 2},
		{"acquire after expiry", func() { r.poll(m, 1) }, engine.StateAcquired, 3},
		{"leave", func() { wantErr(t, "leave", m.Leave(), nil); m = r.join("g", engine.AckExplicit) }, engine.StateAvailable, 2},
		{"acquire after leave", func() { r.poll(m, 1) }, engine.StateAcquired, 3},
		{"stage", func() {
			wantErr(t, "begin", p.Begin(), nil)
			wantErr(t, "stage", p.SendShareAcksToTransaction([]engine.Acknowledgement{accept(0, 0)}, m.Metadata()), nil)
		}, engine.StateTxPending, 3},
		{"abort", func() { wantErr(t, "abort", p.Abort(), nil) }, engine.StateAvailable, 3},
		{"acquire after abort", func() { r.poll(m, 1) }, engine.StateAcquired, 4},
		{"accept", func() { wantErr(t, "accept", m.Acknowledge([]engine.Acknowledgement{accept(0, 0)}), nil) }, engine.StateAcknowledged, 4},
	}
	for _, s := range steps {
		s.do()
		if ri := r.rec("g", "in", 0, 0); ri.State != s.st || ri.DeliveryCount != s.n {
			t.Fatalf("after %s: %v count %d, want %v count %d", s.name, ri.State, ri.DeliveryCount, s.st, s.n)
		}
	}
}

// TestInvariant4DeliveryLimit: whatever returns a record (release, lock
// expiry, transaction abort), it is delivered at most DeliveryLimit times
// with the safe knobs. AbortToAvailableAtLimit reproduces the draft: an
// abort at the limit makes it AVAILABLE and it is delivered limit+1 times.
func TestInvariant4DeliveryLimit(t *testing.T) {
	t.Parallel()
	const limit = 3
	cases := []struct {
		path          string
		knobs         engine.Knobs
		wantDelivered int
	}{
		{"release", engine.Knobs{}, limit},
		{"lock expiry", engine.Knobs{}, limit},
		{"abort", engine.Knobs{}, limit},
		{"abort", engine.Knobs{AbortToAvailableAtLimit: true}, limit + 1},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("%s/AbortToAvailableAtLimit=%v", tc.path, tc.knobs.AbortToAvailableAtLimit), func(t *testing.T) {
			t.Parallel()
			cfg := rigGroup
			cfg.DeliveryLimit = limit
			r := newRig(t, engine.WithKnobs(tc.knobs), engine.WithGroupDefaults(cfg))
			r.produce("in", 0, 1)
			m := r.join("g", engine.AckTransactional)
			p := r.producer("p")
			delivered := 0
			for i := 0; i < 3*limit; i++ {
				recs := r.poll(m, 1)
				if len(recs) == 0 {
					break
				}
				delivered++
				if recs[0].DeliveryCount != delivered {
					t.Fatalf("delivery %d carries count %d", delivered, recs[0].DeliveryCount)
				}
				switch tc.path {
				case "release":
					wantErr(t, "release", m.Acknowledge([]engine.Acknowledgement{ackOf(engine.AckRelease, 0, 0)}), nil)
				case "lock expiry":
					r.clk.Advance(rigGroup.LockDuration)
					r.e.FireTimers()
				case "abort":
					wantErr(t, "begin", p.Begin(), nil)
					wantErr(t, "stage", p.SendShareAcksToTransaction([]engine.Acknowledgement{accept(0, 0)}, m.Metadata()), nil)
					wantErr(t, "abort", p.Abort(), nil)
				}
				if tc.knobs.AbortToAvailableAtLimit && delivered == limit+1 {
					// The draft's extra delivery happened; a release at
					// the limit still archives.
					wantErr(t, "release", m.Acknowledge([]engine.Acknowledgement{ackOf(engine.AckRelease, 0, 0)}), engine.ErrInvalidRecordState)
					break
				}
			}
			if delivered != tc.wantDelivered {
				t.Fatalf("delivered %d times, want %d", delivered, tc.wantDelivered)
			}
			ri := r.rec("g", "in", 0, 0)
			if !tc.knobs.AbortToAvailableAtLimit && (ri.State != engine.StateArchived || ri.Reason != engine.ReasonLimit) {
				t.Fatalf("record %v/%v, want ARCHIVED at the delivery limit", ri.State, ri.Reason)
			}
		})
	}
}

// TestInvariant5SPSO: SPSO never decreases and every offset below it is
// terminal, through out-of-order acknowledgements, releases and aborts.
func TestInvariant5SPSO(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	r.produce("in", 0, 10)
	m := r.join("g", engine.AckTransactional)
	r.poll(m, 10)
	p := r.producer("p")
	tp := engine.TopicPartition{Topic: "in"}
	last := int64(-1)
	spso := func(want int64) {
		t.Helper()
		info, err := r.e.SharePartition("g", tp)
		wantErr(t, "SharePartition", err, nil)
		if info.SPSO < last {
			t.Fatalf("SPSO moved back from %d to %d", last, info.SPSO)
		}
		last = info.SPSO
		if info.SPSO != want {
			t.Fatalf("SPSO %d, want %d", info.SPSO, want)
		}
		for o := int64(0); o < info.SPSO; o++ {
			if ri := r.rec("g", "in", 0, o); !ri.State.Terminal() || !ri.Known {
				t.Fatalf("offset %d below SPSO %d is %v (known %v)", o, info.SPSO, ri.State, ri.Known)
			}
		}
	}
	spso(0)
	wantErr(t, "accept 2..4", m.Acknowledge([]engine.Acknowledgement{accept(2, 4)}), nil)
	spso(0)
	wantErr(t, "reject 1", m.Acknowledge([]engine.Acknowledgement{ackOf(engine.AckReject, 1, 1)}), nil)
	spso(0)
	wantErr(t, "begin", p.Begin(), nil)
	wantErr(t, "stage 0", p.SendShareAcksToTransaction([]engine.Acknowledgement{accept(0, 0)}, m.Metadata()), nil)
	spso(0) // TX_PENDING holds SPSO back
	wantErr(t, "commit", p.Commit(), nil)
	spso(5)
	wantErr(t, "release 5", m.Acknowledge([]engine.Acknowledgement{ackOf(engine.AckRelease, 5, 5)}), nil)
	spso(5)
	wantErr(t, "begin", p.Begin(), nil)
	wantErr(t, "stage 6..9", p.SendShareAcksToTransaction([]engine.Acknowledgement{ackOf(engine.AckGap, 6, 9)}, m.Metadata()), nil)
	wantErr(t, "abort", p.Abort(), nil)
	spso(5)
	r.poll(m, 10)
	wantErr(t, "accept 5..9", m.Acknowledge([]engine.Acknowledgement{accept(5, 9)}), nil)
	spso(10)
	// Moving the log start archives what is AVAILABLE below it.
	r.produce("in", 0, 5)
	wantErr(t, "delete records", r.e.DeleteRecords(tp, 13), nil)
	spso(13)
	if ri := r.rec("g", "in", 0, 11); ri.State != engine.StateArchived || ri.Reason != engine.ReasonLogStart {
		t.Fatalf("offset 11 %v/%v, want ARCHIVED by the log start", ri.State, ri.Reason)
	}
	r.check()
}

// TestInvariant6Window: acquisition never reaches beyond SPSO + max record
// locks − 1, TX_PENDING records count toward the window, and released
// records inside it stay acquirable.
func TestInvariant6Window(t *testing.T) {
	t.Parallel()
	cfg := rigGroup
	cfg.MaxRecordLocks = 10
	r := newRig(t, engine.WithGroupDefaults(cfg))
	r.produce("in", 0, 40)
	a, b := r.join("g", engine.AckTransactional), r.join("g", engine.AckTransactional)
	if got := offsetsOf(r.poll(a, 100)); len(got) != 10 || got[9] != 9 {
		t.Fatalf("a acquired %v, want 0..9", got)
	}
	if got := r.poll(b, 100); len(got) != 0 {
		t.Fatalf("b acquired %v beyond the window", offsetsOf(got))
	}
	wantErr(t, "accept 5..9", a.Acknowledge([]engine.Acknowledgement{accept(5, 9)}), nil)
	if got := r.poll(b, 100); len(got) != 0 {
		t.Fatalf("b acquired %v while SPSO stays at 0", offsetsOf(got))
	}
	wantErr(t, "release 0..1", a.Acknowledge([]engine.Acknowledgement{ackOf(engine.AckRelease, 0, 1)}), nil)
	if got := offsetsOf(r.poll(b, 100)); fmt.Sprint(got) != "[0 1]" {
		t.Fatalf("b acquired %v, want the released [0 1]", got)
	}
	wantErr(t, "accept 2..4", a.Acknowledge([]engine.Acknowledgement{accept(2, 4)}), nil)
	wantErr(t, "accept 0..1", b.Acknowledge([]engine.Acknowledgement{accept(0, 1)}), nil)
	if got := offsetsOf(r.poll(a, 100)); len(got) != 10 || got[0] != 10 {
		t.Fatalf("a acquired %v, want 10..19", got)
	}
	p := r.producer("p")
	wantErr(t, "begin", p.Begin(), nil)
	wantErr(t, "stage 10..19", p.SendShareAcksToTransaction([]engine.Acknowledgement{accept(10, 19)}, a.Metadata()), nil)
	if got := r.poll(b, 100); len(got) != 0 {
		t.Fatalf("b acquired %v while TX_PENDING records fill the window", offsetsOf(got))
	}
	info, _ := r.e.SharePartition("g", engine.TopicPartition{Topic: "in"})
	if info.InFlight != 10 {
		t.Fatalf("in flight %d, want 10", info.InFlight)
	}
	wantErr(t, "commit", p.Commit(), nil)
	if got := r.poll(b, 100); len(got) != 10 || got[0].Offset != 20 {
		t.Fatalf("b acquired %v, want 20..29", offsetsOf(got))
	}
	r.check()
}

// TestInvariant7TxPending: a TX_PENDING record is not released by lock
// expiry or session close, not acquired, not acknowledged outside its
// transaction, and not resolved by another producer's marker. An ACQUIRED
// record in the same situation expires and is redelivered with count+1.
func TestInvariant7TxPending(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	r.produce("in", 0, 6)
	m := r.join("g", engine.AckTransactional)
	r.poll(m, 6)
	p := r.producer("p")
	wantErr(t, "begin", p.Begin(), nil)
	wantErr(t, "stage 0..3", p.SendShareAcksToTransaction([]engine.Acknowledgement{accept(0, 3)}, m.Metadata()), nil)
	pending := func(what string) {
		t.Helper()
		for o := int64(0); o <= 3; o++ {
			ri := r.rec("g", "in", 0, o)
			if ri.State != engine.StateTxPending || ri.DeliveryCount != 1 || ri.Producer != p.ProducerID() {
				t.Fatalf("after %s offset %d is %v count %d producer %d, want TX_PENDING count 1 producer %d",
					what, o, ri.State, ri.DeliveryCount, ri.Producer, p.ProducerID())
			}
		}
	}
	pending("staging")

	// Lock expiry: 4..5 (ACQUIRED) expire; 0..3 do not.
	r.clk.Advance(rigGroup.LockDuration)
	r.e.FireTimers()
	pending("lock expiry")
	r.wantState("g", 4, 5, engine.StateAvailable, 1)
	other := r.join("g", engine.AckTransactional)
	recs := r.poll(other, 10)
	if got := offsetsOf(recs); fmt.Sprint(got) != "[4 5]" || recs[0].DeliveryCount != 2 {
		t.Fatalf("poll got %v, want only the expired [4 5] at count 2", got)
	}
	pending("poll")

	// Session close.
	wantErr(t, "leave", m.Leave(), nil)
	pending("leave")
	r.poll(other, 0) // a heartbeat: other learns the epoch the leave bumped

	// Acknowledgement outside the transaction, by anyone.
	for _, typ := range []engine.AckType{engine.AckAccept, engine.AckRelease, engine.AckReject, engine.AckRenew} {
		wantErr(t, fmt.Sprintf("%v", typ), other.Acknowledge([]engine.Acknowledgement{ackOf(typ, 0, 0)}), engine.ErrInvalidRecordState)
	}
	pending("acknowledge")

	// Another transaction: cannot stage them, and its markers do not touch
	// them.
	q := r.producer("q")
	for _, commit := range []bool{false, true} {
		wantErr(t, "q begin", q.Begin(), nil)
		wantErr(t, "q stages p's records", q.SendShareAcksToTransaction([]engine.Acknowledgement{accept(0, 0)}, other.Metadata()), engine.ErrInvalidRecordState)
		restartTxn(t, q)
		wantErr(t, "q stages 4", q.SendShareAcksToTransaction([]engine.Acknowledgement{accept(4, 4)}, other.Metadata()), nil)
		if commit {
			wantErr(t, "q commit", q.Commit(), nil)
		} else {
			wantErr(t, "q abort", q.Abort(), nil)
			r.poll(other, 1) // take 4 back
		}
	}
	pending("another producer's markers")
	wantErr(t, "commit", p.Commit(), nil)
	r.wantState("g", 0, 3, engine.StateAcknowledged, 1)
	r.check()
}

// TestInvariant8CommitAbortAtomic: outputs become visible to read_committed
// exactly when the staged source records become terminal; after an abort,
// neither. Several input and output partitions take part.
func TestInvariant8CommitAbortAtomic(t *testing.T) {
	t.Parallel()
	for _, commit := range []bool{true, false} {
		t.Run(fmt.Sprintf("commit=%v", commit), func(t *testing.T) {
			t.Parallel()
			r := newRig(t)
			r.topic("in3", 3)
			r.topic("out3", 3)
			for part := int32(0); part < 3; part++ {
				r.produce("in3", part, 4)
			}
			m := r.join("g", engine.AckTransactional, "in3")
			recs := r.poll(m, 100)
			if len(recs) != 12 {
				t.Fatalf("acquired %d, want 12", len(recs))
			}
			p := r.producer("p")
			wantErr(t, "begin", p.Begin(), nil)
			var acks []engine.Acknowledgement
			for _, rec := range recs {
				if _, err := p.Produce("out3", rec.Partition, []engine.ProduceRecord{{Value: rec.Value}}); err != nil {
					t.Fatal(err)
				}
				acks = append(acks, engine.Acknowledgement{Topic: "in3", Partition: rec.Partition, First: rec.Offset, Last: rec.Offset, Type: engine.AckAccept})
			}
			wantErr(t, "stage", p.SendShareAcksToTransaction(acks, m.Metadata()), nil)
			state := func(want engine.RecordState, visible int) {
				t.Helper()
				n := 0
				for part := int32(0); part < 3; part++ {
					n += len(r.committed("out3", part))
					for o := int64(0); o < 4; o++ {
						if ri := r.rec("g", "in3", part, o); ri.State != want {
							t.Fatalf("in3-%d@%d is %v, want %v", part, o, ri.State, want)
						}
					}
				}
				if n != visible {
					t.Fatalf("%d outputs visible to read_committed, want %d", n, visible)
				}
			}
			state(engine.StateTxPending, 0)
			if commit {
				wantErr(t, "commit", p.Commit(), nil)
				state(engine.StateAcknowledged, 12)
				return
			}
			wantErr(t, "abort", p.Abort(), nil)
			state(engine.StateAvailable, 0)
			// A later committed transaction on the same output partitions
			// does not reveal the aborted outputs.
			wantErr(t, "begin", p.Begin(), nil)
			if _, err := p.Produce("out3", 0, []engine.ProduceRecord{{Value: []byte("later")}}); err != nil {
				t.Fatal(err)
			}
			wantErr(t, "commit", p.Commit(), nil)
			if got := r.committed("out3", 0); len(got) != 1 || string(got[0].Value) != "later" {
				t.Fatalf("out3-0 read_committed: %d records, want only \"later\"", len(got))
			}
		})
	}
}

// TestInvariant10Zombie: a second producer with the same transactional id
// fences the first. The zombie's open transaction is aborted (outputs
// invisible, staged records AVAILABLE) and every later call of the zombie
// fails with ErrProducerFenced.
func TestInvariant10Zombie(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	r.produce("in", 0, 3)
	m := r.join("g", engine.AckTransactional)
	r.poll(m, 2)
	zombie := r.producer("copier")
	wantErr(t, "begin", zombie.Begin(), nil)
	if _, err := zombie.Produce("out", 0, []engine.ProduceRecord{{Value: []byte("z0")}, {Value: []byte("z1")}}); err != nil {
		t.Fatal(err)
	}
	wantErr(t, "stage", zombie.SendShareAcksToTransaction([]engine.Acknowledgement{accept(0, 1)}, m.Metadata()), nil)
	fencedBefore := r.e.Stats().Fenced

	successor := r.producer("copier")
	if successor.ProducerID() != zombie.ProducerID() || successor.Epoch() <= zombie.Epoch() {
		t.Fatalf("successor %d/%d does not fence zombie %d/%d", successor.ProducerID(), successor.Epoch(), zombie.ProducerID(), zombie.Epoch())
	}
	r.wantState("g", 0, 1, engine.StateAvailable, 1)
	if got := r.committed("out", 0); len(got) != 0 {
		t.Fatalf("zombie's outputs visible: %d", len(got))
	}
	if info, _ := r.e.Transaction("copier"); info.State != engine.TxnEmpty {
		t.Fatalf("transaction state %v after re-init, want EMPTY", info.State)
	}

	r.poll(m, 3) // 0..2 acquired again (0..1 redelivered)
	_, err := zombie.Produce("out", 0, []engine.ProduceRecord{{Value: []byte("z2")}})
	wantErr(t, "zombie produce", err, engine.ErrProducerFenced)
	wantErr(t, "zombie stage", zombie.SendShareAcksToTransaction([]engine.Acknowledgement{accept(2, 2)}, m.Metadata()), engine.ErrProducerFenced)
	wantErr(t, "zombie commit", zombie.Commit(), engine.ErrProducerFenced)
	wantErr(t, "zombie abort", zombie.Abort(), engine.ErrProducerFenced)
	wantErr(t, "zombie begin", zombie.Begin(), engine.ErrProducerFenced)
	if errors.Is(err, engine.ErrTransactionTimedOut) {
		t.Fatalf("fencing by re-init reported as a timeout: %v", err)
	}
	r.wantState("g", 0, 2, engine.StateAcquired, -1)
	if got := r.e.Stats().Fenced; got <= fencedBefore {
		t.Fatalf("fenced counter %d did not grow from %d", got, fencedBefore)
	}

	// The successor does the work exactly once.
	wantErr(t, "successor begin", successor.Begin(), nil)
	if _, err := successor.Produce("out", 0, []engine.ProduceRecord{{Value: []byte("s0")}, {Value: []byte("s1")}, {Value: []byte("s2")}}); err != nil {
		t.Fatal(err)
	}
	wantErr(t, "successor stage", successor.SendShareAcksToTransaction([]engine.Acknowledgement{accept(0, 2)}, m.Metadata()), nil)
	wantErr(t, "successor commit", successor.Commit(), nil)
	got := r.committed("out", 0)
	if len(got) != 3 || string(got[0].Value) != "s0" {
		t.Fatalf("read_committed output %d records, want s0..s2", len(got))
	}
	r.wantState("g", 0, 2, engine.StateAcknowledged, -1)
	r.check()
}

// TestInvariant11Timeout: a transaction that outlives its timeout is
// aborted by the sweep; its records become AVAILABLE, its outputs stay
// invisible, and the stalled producer learns it was fenced for the timeout.
func TestInvariant11Timeout(t *testing.T) {
	t.Parallel()
	r := newRig(t, engine.WithAbortSweepInterval(time.Second))
	r.produce("in", 0, 2)
	m := r.join("g", engine.AckTransactional)
	r.poll(m, 2)
	p, err := r.e.NewProducer(engine.ProducerConfig{TransactionalID: "slow", TransactionTimeout: 5 * time.Second})
	wantErr(t, "NewProducer", err, nil)
	wantErr(t, "begin", p.Begin(), nil)
	if _, err := p.Produce("out", 0, []engine.ProduceRecord{{Value: []byte("o")}}); err != nil {
		t.Fatal(err)
	}
	wantErr(t, "stage", p.SendShareAcksToTransaction([]engine.Acknowledgement{accept(0, 1)}, m.Metadata()), nil)

	r.clk.Advance(4 * time.Second)
	r.e.FireTimers() // the sweep runs but the transaction is 4s old
	if info, _ := r.e.Transaction("slow"); info.State != engine.TxnOngoing {
		t.Fatalf("state %v after 4s, want ONGOING", info.State)
	}
	r.wantState("g", 0, 1, engine.StateTxPending, 1)
	r.clk.Advance(1500 * time.Millisecond)
	r.e.FireTimers()
	if info, _ := r.e.Transaction("slow"); info.State != engine.TxnCompleteAbort {
		t.Fatalf("state %v after 5.5s, want COMPLETE_ABORT", info.State)
	}
	r.wantState("g", 0, 1, engine.StateAvailable, 1)
	if got := r.committed("out", 0); len(got) != 0 {
		t.Fatalf("timed-out transaction's output visible")
	}
	if s := r.e.Stats(); s.TimedOut != 1 || s.Aborted != 1 {
		t.Fatalf("stats: timed out %d aborted %d, want 1 and 1", s.TimedOut, s.Aborted)
	}
	for name, call := range map[string]func() error{
		"produce": func() error {
			_, err := p.Produce("out", 0, []engine.ProduceRecord{{Value: []byte("late")}})
			return err
		},
		"stage": func() error {
			return p.SendShareAcksToTransaction([]engine.Acknowledgement{accept(0, 1)}, m.Metadata())
		},
		"commit": p.Commit,
		"begin":  p.Begin,
	} {
		err := call()
		if !errors.Is(err, engine.ErrProducerFenced) || !errors.Is(err, engine.ErrTransactionTimedOut) {
			t.Fatalf("%s after the timeout: %v, want ErrProducerFenced wrapping ErrTransactionTimedOut", name, err)
		}
	}
	// The records are redelivered; a fresh producer for the id works.
	other := r.join("g", engine.AckTransactional)
	if got := r.poll(other, 2); len(got) != 2 || got[0].DeliveryCount != 2 {
		t.Fatalf("redelivery got %v", offsetsOf(got))
	}
	fresh := r.producer("slow")
	wantErr(t, "fresh begin", fresh.Begin(), nil)
	wantErr(t, "fresh stage", fresh.SendShareAcksToTransaction([]engine.Acknowledgement{accept(0, 1)}, other.Metadata()), nil)
	wantErr(t, "fresh commit", fresh.Commit(), nil)
	r.wantState("g", 0, 1, engine.StateAcknowledged, 2)

	// AbortTimedOutTransactions runs the sweep at once, whatever the
	// interval.
	wantErr(t, "fresh begin", fresh.Begin(), nil)
	r.clk.Advance(6 * time.Second)
	if n := r.e.AbortTimedOutTransactions(); n != 0 {
		// fresh took the engine default timeout (60s).
		t.Fatalf("aborted %d transactions within their timeout", n)
	}
	r.clk.Advance(time.Minute)
	if n := r.e.AbortTimedOutTransactions(); n != 1 {
		t.Fatalf("aborted %d transactions, want 1", n)
	}
}

var walkSeed = flag.Uint64("invariants.seed", 0, "seed of TestInvariantsRandomWalk (0: seeds 1..N)")

// TestInvariantsRandomWalk drives random polls, acknowledgements, staging,
// commits, aborts, leaves, timer firings and re-inits through the API and
// checks invariants 1–7 after every step.
func TestInvariantsRandomWalk(t *testing.T) {
	t.Parallel()
	seeds := []uint64{*walkSeed}
	if *walkSeed == 0 {
		n := uint64(30)
		if testing.Short() {
			n = 5
		}
		seeds = seeds[:0]
		for s := uint64(1); s <= n; s++ {
			seeds = append(seeds, s)
		}
	}
	for _, seed := range seeds {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			t.Parallel()
			randomWalk(t, seed, 400)
		})
	}
}

func randomWalk(t *testing.T, seed uint64, steps int) {
	rng := rand.New(rand.NewPCG(seed, 0x5ba7e))
	defer func() {
		if t.Failed() {
			t.Logf("repro: go test ./engine -run 'TestInvariantsRandomWalk' -invariants.seed=%d", seed)
		}
	}()
	const limit, window, n = 3, 16, 150
	cfg := rigGroup
	cfg.DeliveryLimit, cfg.MaxRecordLocks, cfg.LockDuration = limit, window, 10*time.Second
	r := newRig(t, engine.WithGroupDefaults(cfg), engine.WithSessionTimeout(25*time.Second),
		engine.WithAbortSweepInterval(time.Second), engine.WithTransactionTimeout(20*time.Second))
	r.produce("in", 0, n)
	tp := engine.TopicPartition{Topic: "in"}

	type member struct {
		m    *engine.ShareMember
		held []int64 // offsets this member believes it holds
	}
	members := make([]*member, 3)
	for i := range members {
		members[i] = &member{m: r.join("g", engine.AckTransactional)}
	}
	producers := []*engine.Producer{r.producer("p0"), r.producer("p1")}
	open := make([]bool, len(producers))
	// The share partition exists from the first poll on.
	members[0].held = offsetsOf(r.poll(members[0].m, 1))

	type snap struct {
		state engine.RecordState
		count int
		pid   int64
	}
	prev := make([]snap, n)
	prev[0] = snap{engine.StateAcquired, 1, 0}
	lastSPSO := int64(0)
	for step := 0; step < steps; step++ {
		op := ""
		endedPID := int64(-1) // producer whose transaction this step ended
		mi := rng.IntN(len(members))
		mb := members[mi]
		pick := func() (int64, bool) {
			if len(mb.held) == 0 {
				return 0, false
			}
			return mb.held[rng.IntN(len(mb.held))], true
		}
		switch k := rng.IntN(100); {
		case k < 30:
			op = "poll"
			recs, err := mb.m.Poll(1 + rng.IntN(6))
			if errors.Is(err, engine.ErrUnknownMember) {
				// Its session timed out at an earlier timer firing.
				members[mi] = &member{m: r.join("g", engine.AckTransactional)}
				continue
			}
			if err != nil {
				t.Fatalf("step %d poll: %v", step, err)
			}
			for _, rec := range recs {
				mb.held = append(mb.held, rec.Offset)
			}
		case k < 45:
			o, ok := pick()
			if !ok {
				continue
			}
			typ := []engine.AckType{engine.AckAccept, engine.AckRelease, engine.AckReject, engine.AckRenew}[rng.IntN(4)]
			op = fmt.Sprintf("ack %v %d", typ, o)
			_ = mb.m.Acknowledge([]engine.Acknowledgement{ackOf(typ, o, o)}) // may fail: lock expired
		case k < 65:
			pi := rng.IntN(len(producers))
			o, ok := pick()
			if !ok {
				continue
			}
			op = fmt.Sprintf("stage %d by p%d", o, pi)
			if !open[pi] {
				if err := producers[pi].Begin(); err != nil {
					t.Fatalf("step %d begin: %v", step, err)
				}
				open[pi] = true
			}
			_ = producers[pi].SendShareAcksToTransaction([]engine.Acknowledgement{ackOf([]engine.AckType{engine.AckAccept, engine.AckReject}[rng.IntN(2)], o, o)}, mb.m.Metadata())
		case k < 80:
			pi := rng.IntN(len(producers))
			if !open[pi] {
				continue
			}
			commit := rng.IntN(3) > 0
			op = fmt.Sprintf("end p%d commit=%v", pi, commit)
			endedPID = producers[pi].ProducerID()
			var err error
			if commit {
				err = producers[pi].Commit()
				if errors.Is(err, engine.ErrAbortableTransaction) {
					// A staging of this transaction failed (a stale
					// member epoch, an expired lock): it can only abort.
					err = producers[pi].Abort()
				}
			} else {
				err = producers[pi].Abort()
			}
			if errors.Is(err, engine.ErrProducerFenced) {
				producers[pi] = r.producer(fmt.Sprintf("p%d", pi)) // timed out: replace it
			} else if err != nil {
				t.Fatalf("step %d %s: %v", step, op, err)
			}
			open[pi] = false
		case k < 83:
			pi := rng.IntN(len(producers))
			op = fmt.Sprintf("re-init p%d", pi)
			endedPID = producers[pi].ProducerID()
			producers[pi] = r.producer(fmt.Sprintf("p%d", pi))
			open[pi] = false
		case k < 86:
			op = fmt.Sprintf("member %d leaves", mi)
			if err := mb.m.Leave(); err != nil && !errors.Is(err, engine.ErrUnknownMember) {
				t.Fatalf("step %d leave: %v", step, err) // unknown: its session had timed out
			}
			members[mi] = &member{m: r.join("g", engine.AckTransactional)}
		default:
			d := time.Duration(rng.IntN(8)) * time.Second
			op = fmt.Sprintf("advance %v and fire timers", d)
			r.clk.Advance(d)
			r.e.FireTimers()
			endedPID = -2 // the sweep may end any transaction
			for pi := range producers {
				if info, _ := r.e.Transaction(fmt.Sprintf("p%d", pi)); info.State != engine.TxnOngoing && open[pi] {
					// The sweep aborted it and fenced the producer.
					open[pi] = false
					producers[pi] = r.producer(fmt.Sprintf("p%d", pi))
				}
			}
		}
		// Forget what members no longer hold.
		for _, x := range members {
			kept := x.held[:0]
			for _, o := range x.held {
				if ri := r.rec("g", "in", 0, o); ri.State == engine.StateAcquired && ri.Owner == x.m.ID() {
					kept = append(kept, o)
				}
			}
			x.held = kept
		}

		// Invariants after the step.
		info, err := r.e.SharePartition("g", tp)
		wantErr(t, "SharePartition", err, nil)
		if err := r.e.CheckInvariants(); err != nil {
			t.Fatalf("step %d (%s): %v", step, op, err)
		}
		if info.SPSO < lastSPSO { // 5
			t.Fatalf("step %d (%s): SPSO moved back from %d to %d", step, op, lastSPSO, info.SPSO)
		}
		lastSPSO = info.SPSO
		for o := int64(0); o < n; o++ {
			ri := r.rec("g", "in", 0, o)
			was := prev[o]
			now := snap{ri.State, ri.DeliveryCount, ri.Producer}
			fail := func(why string) {
				t.Helper()
				t.Fatalf("step %d (%s): offset %d %s: was %+v, now %+v", step, op, o, why, was, now)
			}
			if o < info.SPSO && !ri.State.Terminal() { // 5
				fail("below SPSO is not terminal")
			}
			if was.state.Terminal() && now != was { // 1
				fail("left a terminal state")
			}
			if now.count > limit { // 4
				fail("delivered beyond the limit")
			}
			switch { // 3
			case now.count == was.count:
			case now.count == was.count+1:
				if op != "poll" || now.state != engine.StateAcquired {
					fail("delivery count grew without an acquisition")
				}
			case now.count == was.count-1:
				if !(op == fmt.Sprintf("member %d leaves", mi) || endedPID == -2) || now.state != engine.StateAvailable {
					fail("delivery count shrank without a session close")
				}
			default:
				fail("delivery count jumped")
			}
			if (ri.State == engine.StateAcquired || ri.State == engine.StateTxPending) && o >= info.SPSO+window { // 6
				fail("in flight beyond the window")
			}
			if was.state == engine.StateTxPending && now != was { // 7
				if endedPID != -2 && endedPID != was.pid {
					fail("TX_PENDING changed without its transaction ending")
				}
				if now.state != engine.StateAvailable && !now.state.Terminal() {
					fail("TX_PENDING went somewhere other than a marker's outcome")
				}
			}
			if ri.State == engine.StateAcquired { // 2
				owners := 0
				for _, x := range members {
					if ri.Owner == x.m.ID() {
						owners++
					}
				}
				if owners != 1 {
					fail(fmt.Sprintf("owner %q is not exactly one live member", ri.Owner))
				}
			}
			prev[o] = now
		}
	}
	t.Logf("seed %d: SPSO %d, stats %+v", seed, lastSPSO, r.e.Stats())
}
