// This file tests transactional acknowledgements (KIP-1289) and the
// transaction coordinator through the public engine API: staging rules,
// acks-only transactions, producer state errors, the decision knobs, and
// the hook seam (failed staging writes, the order of two-phase events).

package engine_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/sharebench/sharebench/engine"
)

// TestStagingRules drives SendShareAcksToTransaction through every
// transition of docs/design.md §3.3's staging table.
func TestStagingRules(t *testing.T) {
	t.Parallel()
	// Setup for every case: 10 records; member A holds 0..3, B holds 4..5;
	// 6 was acquired by A and accepted; producer "x" staged 7 for B in an
	// open transaction; 8..9 were never acquired.
	cases := []struct {
		name  string
		acks  []engine.Acknowledgement
		want  error
		after engine.RecordState // state of the first offset afterwards
	}{
		{"accept", []engine.Acknowledgement{accept(0, 3)}, nil, engine.StateTxPending},
		{"reject", []engine.Acknowledgement{ackOf(engine.AckReject, 0, 3)}, nil, engine.StateTxPending},
		{"gap", []engine.Acknowledgement{ackOf(engine.AckGap, 0, 0)}, nil, engine.StateTxPending},
		{"release is invalid", []engine.Acknowledgement{ackOf(engine.AckRelease, 0, 0)}, engine.ErrInvalidRequest, engine.StateAcquired},
		{"renew is invalid", []engine.Acknowledgement{ackOf(engine.AckRenew, 0, 0)}, engine.ErrInvalidRequest, engine.StateAcquired},
		{"unknown type", []engine.Acknowledgement{ackOf(engine.AckType(11), 0, 0)}, engine.ErrInvalidAckType, engine.StateAcquired},
		{"another member's record", []engine.Acknowledgement{accept(0, 4)}, engine.ErrNotOwner, engine.StateAcquired},
		{"terminal record", []engine.Acknowledgement{accept(6, 6)}, engine.ErrInvalidRecordState, engine.StateAcknowledged},
		{"TX_PENDING of another transaction", []engine.Acknowledgement{accept(7, 7)}, engine.ErrInvalidRecordState, engine.StateTxPending},
		{"never acquired", []engine.Acknowledgement{accept(8, 8)}, engine.ErrOffsetOutOfRange, engine.StateAvailable},
		{"overlapping batches", []engine.Acknowledgement{accept(0, 1), ackOf(engine.AckReject, 1, 2)}, engine.ErrInvalidRequest, engine.StateAcquired},
		{"all or nothing", []engine.Acknowledgement{accept(0, 1), accept(2, 2), ackOf(engine.AckRelease, 3, 3)}, engine.ErrInvalidRequest, engine.StateAcquired},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := newRig(t)
			r.produce("in", 0, 10)
			a, b := r.join("g", engine.AckTransactional), r.join("g", engine.AckTransactional)
			r.poll(a, 4)
			r.poll(b, 2)
			r.poll(a, 1)
			wantErr(t, "accept 6", a.Acknowledge([]engine.Acknowledgement{accept(6, 6)}), nil)
			r.poll(b, 1)
			x := r.producer("x")
			wantErr(t, "x begin", x.Begin(), nil)
			wantErr(t, "x stage 7", x.SendShareAcksToTransaction([]engine.Acknowledgement{accept(7, 7)}, b.Metadata()), nil)

			p := r.producer("p")
			wantErr(t, "begin", p.Begin(), nil)
			err := p.SendShareAcksToTransaction(tc.acks, a.Metadata())
			wantErr(t, "stage", err, tc.want)
			first := tc.acks[0].First
			ri := r.rec("g", "in", 0, first)
			if ri.State != tc.after {
				t.Fatalf("offset %d is %v, want %v", first, ri.State, tc.after)
			}
			if tc.want == nil {
				if ri.Producer != p.ProducerID() || ri.Staged != tc.acks[0].Type || ri.Owner != "" || ri.LockDeadline != 0 {
					t.Fatalf("staged record %+v: want producer %d, outcome %v, no owner, no lock", ri, p.ProducerID(), tc.acks[0].Type)
				}
			} else if tc.name == "all or nothing" {
				r.wantState("g", 0, 3, engine.StateAcquired, 1)
			}
			r.check()
		})
	}
}

// TestStagingResolution: a staged outcome becomes the record's state at
// commit; abort returns every staged record to AVAILABLE with its count.
func TestStagingResolution(t *testing.T) {
	t.Parallel()
	for _, commit := range []bool{true, false} {
		t.Run(fmt.Sprintf("commit=%v", commit), func(t *testing.T) {
			t.Parallel()
			r := newRig(t)
			r.produce("in", 0, 3)
			m := r.join("g", engine.AckTransactional)
			r.poll(m, 3)
			p := r.producer("p")
			wantErr(t, "begin", p.Begin(), nil)
			err := p.SendShareAcksToTransaction([]engine.Acknowledgement{{Topic: "in", First: 0, Last: 2, Types: []engine.AckType{
				engine.AckAccept, engine.AckReject, engine.AckGap,
			}}}, m.Metadata())
			wantErr(t, "stage", err, nil)
			if commit {
				wantErr(t, "commit", p.Commit(), nil)
				want := []struct {
					st     engine.RecordState
					reason engine.ArchiveReason
				}{{engine.StateAcknowledged, engine.ReasonNone}, {engine.StateArchived, engine.ReasonRejected}, {engine.StateArchived, engine.ReasonGap}}
				for o, w := range want {
					if ri := r.rec("g", "in", 0, int64(o)); ri.State != w.st || ri.Reason != w.reason || ri.DeliveryCount != 1 {
						t.Errorf("offset %d: %v/%v count %d, want %v/%v count 1", o, ri.State, ri.Reason, ri.DeliveryCount, w.st, w.reason)
					}
				}
			} else {
				wantErr(t, "abort", p.Abort(), nil)
				r.wantState("g", 0, 2, engine.StateAvailable, 1)
				if ri := r.rec("g", "in", 0, 0); ri.Owner != "" || ri.Producer != 0 {
					t.Fatalf("aborted record keeps owner %q producer %d", ri.Owner, ri.Producer)
				}
			}
			r.check()
		})
	}
}

// TestIdenticalStagingRetry: repeating a staging request already applied is
// an idempotent success (safe) or rejected (RejectIdenticalRetry knob).
func TestIdenticalStagingRetry(t *testing.T) {
	t.Parallel()
	for _, reject := range []bool{false, true} {
		t.Run(fmt.Sprintf("RejectIdenticalRetry=%v", reject), func(t *testing.T) {
			t.Parallel()
			r := newRig(t, engine.WithKnobs(engine.Knobs{RejectIdenticalRetry: reject}))
			r.produce("in", 0, 2)
			m := r.join("g", engine.AckTransactional)
			r.poll(m, 2)
			p := r.producer("p")
			wantErr(t, "begin", p.Begin(), nil)
			acks := []engine.Acknowledgement{accept(0, 1)}
			wantErr(t, "stage", p.SendShareAcksToTransaction(acks, m.Metadata()), nil)
			var want error
			if reject {
				want = engine.ErrInvalidRecordState
			}
			wantErr(t, "identical retry", p.SendShareAcksToTransaction(acks, m.Metadata()), want)
			if reject {
				// The rejected retry left the transaction abortable.
				wantErr(t, "commit", p.Commit(), engine.ErrAbortableTransaction)
				wantErr(t, "abort", p.Abort(), nil)
				r.wantState("g", 0, 1, engine.StateAvailable, 1)
				return
			}
			wantErr(t, "commit", p.Commit(), nil)
			r.wantState("g", 0, 1, engine.StateAcknowledged, 1)
		})
	}
}

// TestStageMultiBatchKnob: a multi-batch staging request whose last batch
// fails stages nothing (safe) or keeps the earlier batches staged
// (StageStopAtFirstFailure knob).
func TestStageMultiBatchKnob(t *testing.T) {
	t.Parallel()
	for _, stop := range []bool{false, true} {
		t.Run(fmt.Sprintf("StageStopAtFirstFailure=%v", stop), func(t *testing.T) {
			t.Parallel()
			r := newRig(t, engine.WithKnobs(engine.Knobs{StageStopAtFirstFailure: stop}))
			r.produce("in", 0, 4)
			a, b := r.join("g", engine.AckTransactional), r.join("g", engine.AckTransactional)
			r.poll(a, 2)
			r.poll(b, 2)
			p := r.producer("p")
			wantErr(t, "begin", p.Begin(), nil)
			err := p.SendShareAcksToTransaction([]engine.Acknowledgement{accept(0, 1), accept(2, 2)}, a.Metadata())
			wantErr(t, "stage", err, engine.ErrNotOwner)
			want := engine.StateAcquired
			if stop {
				want = engine.StateTxPending
			}
			r.wantState("g", 0, 1, want, 1)
			wantErr(t, "abort", p.Abort(), nil)
			r.wantState("g", 0, 1, map[bool]engine.RecordState{false: engine.StateAcquired, true: engine.StateAvailable}[stop], 1)
		})
	}
}

// TestAcksOnlyTransactions: a transaction that carries acknowledgements and
// no output records commits and aborts like any other (the consume-only
// checkpoint path).
func TestAcksOnlyTransactions(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	r.produce("in", 0, 4)
	m := r.join("g", engine.AckTransactional)
	r.poll(m, 4)
	p := r.producer("ckpt")
	wantErr(t, "begin", p.Begin(), nil)
	wantErr(t, "stage 0..1", p.SendShareAcksToTransaction([]engine.Acknowledgement{accept(0, 1)}, m.Metadata()), nil)
	if info, _ := r.e.Transaction("ckpt"); info.State != engine.TxnOngoing || len(info.Partitions) != 0 || len(info.SharePartitions) != 1 {
		t.Fatalf("transaction %+v: want ONGOING with one share partition and no output partition", info)
	}
	wantErr(t, "commit", p.Commit(), nil)
	r.wantState("g", 0, 1, engine.StateAcknowledged, 1)

	wantErr(t, "begin", p.Begin(), nil)
	wantErr(t, "stage 2..3", p.SendShareAcksToTransaction([]engine.Acknowledgement{accept(2, 3)}, m.Metadata()), nil)
	wantErr(t, "abort", p.Abort(), nil)
	r.wantState("g", 2, 3, engine.StateAvailable, 1)
	if info, _ := r.e.Transaction("ckpt"); info.State != engine.TxnCompleteAbort || info.Transactions != 2 {
		t.Fatalf("transaction %+v: want COMPLETE_ABORT after 2 transactions", info)
	}
	if s := r.e.Stats(); s.Committed != 1 || s.Aborted != 1 || s.Share.TxCommitted != 2 || s.Share.TxAborted != 2 || s.Share.Accepted != 2 || s.Share.Staged != 4 {
		t.Fatalf("stats %+v", s)
	}
	r.check()
}

// TestProducerStateErrors: calls that do not fit the transaction's state.
func TestProducerStateErrors(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	r.produce("in", 0, 1)
	m := r.join("g", engine.AckTransactional)
	r.poll(m, 1)
	p := r.producer("p")
	wantErr(t, "commit without begin", p.Commit(), engine.ErrInvalidTxnState)
	wantErr(t, "abort without begin", p.Abort(), nil)
	_, err := p.Produce("out", 0, []engine.ProduceRecord{{Value: []byte("x")}})
	wantErr(t, "produce outside a transaction", err, engine.ErrInvalidTxnState)
	wantErr(t, "stage outside a transaction", p.SendShareAcksToTransaction([]engine.Acknowledgement{accept(0, 0)}, m.Metadata()), engine.ErrInvalidTxnState)
	wantErr(t, "begin", p.Begin(), nil)
	wantErr(t, "begin twice", p.Begin(), engine.ErrInvalidTxnState)
	_, err = p.Produce("nope", 0, []engine.ProduceRecord{{Value: []byte("x")}})
	wantErr(t, "produce to an unknown topic", err, engine.ErrUnknownTopicOrPartition)
	_, err = p.Produce("out", 3, []engine.ProduceRecord{{Value: []byte("x")}})
	wantErr(t, "produce to an unknown partition", err, engine.ErrUnknownTopicOrPartition)
	wantErr(t, "commit", p.Commit(), nil)

	plain, err := r.e.NewProducer(engine.ProducerConfig{})
	wantErr(t, "plain producer", err, nil)
	wantErr(t, "begin on a plain producer", plain.Begin(), engine.ErrInvalidTxnState)
	if _, err := plain.Produce("out", 0, []engine.ProduceRecord{{Value: []byte("x")}}); err != nil {
		t.Fatal(err)
	}
	_, err = r.e.NewProducer(engine.ProducerConfig{TransactionalID: "long", TransactionTimeout: time.Hour})
	wantErr(t, "timeout above the maximum", err, engine.ErrInvalidConfig)
}

// TestKnobExactEpochMatch: the epoch is bumped when a transaction ends, so
// the commit marker carries a newer epoch than the staged records. With the
// safe rule (marker epoch >= staged) they resolve; with the draft's exact
// match they stay TX_PENDING after the commit while the outputs are
// visible — the broken invariant 8 the knob exists to show.
func TestKnobExactEpochMatch(t *testing.T) {
	t.Parallel()
	for _, exact := range []bool{false, true} {
		t.Run(fmt.Sprintf("ExactEpochMatch=%v", exact), func(t *testing.T) {
			t.Parallel()
			r := newRig(t, engine.WithKnobs(engine.Knobs{ExactEpochMatch: exact}))
			r.produce("in", 0, 2)
			m := r.join("g", engine.AckTransactional)
			r.poll(m, 2)
			p := r.producer("p")
			epoch := p.Epoch()
			wantErr(t, "begin", p.Begin(), nil)
			if _, err := p.Produce("out", 0, []engine.ProduceRecord{{Value: []byte("o0")}, {Value: []byte("o1")}}); err != nil {
				t.Fatal(err)
			}
			wantErr(t, "stage", p.SendShareAcksToTransaction([]engine.Acknowledgement{accept(0, 1)}, m.Metadata()), nil)
			if ri := r.rec("g", "in", 0, 0); ri.Epoch != epoch {
				t.Fatalf("staged at epoch %d, want %d", ri.Epoch, epoch)
			}
			wantErr(t, "commit", p.Commit(), nil)
			if p.Epoch() != epoch+1 {
				t.Fatalf("epoch after commit %d, want %d", p.Epoch(), epoch+1)
			}
			if n := len(r.committed("out", 0)); n != 2 {
				t.Fatalf("%d outputs visible, want 2", n)
			}
			if exact {
				r.wantState("g", 0, 1, engine.StateTxPending, 1)
				// Nothing ever resolves them: not the lock, not the sweep.
				r.clk.Advance(time.Hour)
				r.e.FireTimers()
				r.wantState("g", 0, 1, engine.StateTxPending, 1)
			} else {
				r.wantState("g", 0, 1, engine.StateAcknowledged, 1)
			}
		})
	}
}

// TestHookStageWriteFailure: a failed staging write returns the records to
// their owner as ACQUIRED with a live lock (safe) or without a lock
// (FailedStageNoLock knob: the lock never expires).
func TestHookStageWriteFailure(t *testing.T) {
	t.Parallel()
	errDisk := errors.New("disk full")
	for _, noLock := range []bool{false, true} {
		t.Run(fmt.Sprintf("FailedStageNoLock=%v", noLock), func(t *testing.T) {
			t.Parallel()
			var fail bool
			var mu sync.Mutex
			hook := func(pt engine.HookPoint, info engine.HookInfo) error {
				mu.Lock()
				defer mu.Unlock()
				if pt == engine.HookStageWrite && fail {
					return errDisk
				}
				return nil
			}
			// Sessions outlive the test, so only the lock can release.
			r := newRig(t, engine.WithHook(hook), engine.WithKnobs(engine.Knobs{FailedStageNoLock: noLock}),
				engine.WithSessionTimeout(1000*time.Hour))
			r.produce("in", 0, 2)
			m := r.join("g", engine.AckTransactional)
			other := r.join("g", engine.AckTransactional)
			r.poll(m, 2)
			r.clk.Advance(10 * time.Second)
			p := r.producer("p")
			wantErr(t, "begin", p.Begin(), nil)
			mu.Lock()
			fail = true
			mu.Unlock()
			err := p.SendShareAcksToTransaction([]engine.Acknowledgement{accept(0, 1)}, m.Metadata())
			wantErr(t, "stage", err, errDisk)
			r.wantState("g", 0, 1, engine.StateAcquired, 1)
			ri := r.rec("g", "in", 0, 0)
			if ri.Owner != m.ID() {
				t.Fatalf("owner %q, want %q", ri.Owner, m.ID())
			}
			if s := r.e.Stats(); s.StageFailed != 1 || s.Share.Staged != 0 {
				t.Fatalf("stats: stage failed %d staged %d, want 1 and 0", s.StageFailed, s.Share.Staged)
			}
			if noLock {
				r.clk.Advance(24 * time.Hour)
				r.e.FireTimers()
				r.wantState("g", 0, 1, engine.StateAcquired, 1)
				if got := r.poll(other, 2); len(got) != 0 {
					t.Fatalf("records held without a lock were redelivered: %v", offsetsOf(got))
				}
				return
			}
			if want := 10*time.Second + rigGroup.LockDuration; ri.LockDeadline != want {
				t.Fatalf("lock deadline %v, want a fresh lock until %v", ri.LockDeadline, want)
			}
			// The owner may retry once the write works again.
			mu.Lock()
			fail = false
			mu.Unlock()
			wantErr(t, "abort", p.Abort(), nil)
			r.clk.Advance(rigGroup.LockDuration)
			r.e.FireTimers()
			r.wantState("g", 0, 1, engine.StateAvailable, 1)
			if got := r.poll(other, 2); len(got) != 2 || got[0].DeliveryCount != 2 {
				t.Fatalf("after the lock expired the other member got %v", offsetsOf(got))
			}
		})
	}
}

// TestHookTwoPhaseOrder: the hook sees the staging write, the decision,
// one event per participant's marker and the completion, in that order,
// with the marker counts and the transaction's identity.
func TestHookTwoPhaseOrder(t *testing.T) {
	t.Parallel()
	for _, commit := range []bool{true, false} {
		t.Run(fmt.Sprintf("commit=%v", commit), func(t *testing.T) {
			t.Parallel()
			type event struct {
				pt   engine.HookPoint
				info engine.HookInfo
			}
			var mu sync.Mutex
			var events []event
			hook := func(pt engine.HookPoint, info engine.HookInfo) error {
				mu.Lock()
				events = append(events, event{pt, info})
				mu.Unlock()
				return nil
			}
			r := newRig(t, engine.WithHook(hook))
			r.topic("out2", 2)
			r.produce("in", 0, 2)
			m := r.join("g", engine.AckTransactional)
			r.poll(m, 2)
			c, err := r.e.JoinClassicGroup("cg", []string{"in"}, engine.ResetEarliest)
			wantErr(t, "classic join", err, nil)
			if _, err := c.Poll(10); err != nil {
				t.Fatal(err)
			}
			p := r.producer("p")
			pid, epoch := p.ProducerID(), p.Epoch()
			wantErr(t, "begin", p.Begin(), nil)
			for part := int32(0); part < 2; part++ {
				if _, err := p.Produce("out2", part, []engine.ProduceRecord{{Value: []byte("x")}}); err != nil {
					t.Fatal(err)
				}
			}
			wantErr(t, "stage", p.SendShareAcksToTransaction([]engine.Acknowledgement{accept(0, 1)}, m.Metadata()), nil)
			wantErr(t, "offsets", p.SendOffsetsToTransaction(map[engine.TopicPartition]int64{{Topic: "in"}: 2}, c.Metadata()), nil)
			mu.Lock()
			events = events[:0] // keep what the end of the transaction emits
			mu.Unlock()
			if commit {
				wantErr(t, "commit", p.Commit(), nil)
			} else {
				wantErr(t, "abort", p.Abort(), nil)
			}
			mu.Lock()
			defer mu.Unlock()
			const markers = 4 // out2-0, out2-1, g/in-0, cg
			if len(events) != markers+2 {
				t.Fatalf("got %d events, want %d: %+v", len(events), markers+2, events)
			}
			for i, ev := range events {
				want := engine.HookTxnMarker
				switch i {
				case 0:
					want = engine.HookTxnPrepared
				case len(events) - 1:
					want = engine.HookTxnCompleted
				}
				if ev.pt != want {
					t.Fatalf("event %d is %s, want %s", i, ev.pt, want)
				}
				info := ev.info
				if info.TransactionalID != "p" || info.ProducerID != pid || info.Epoch != epoch+1 || info.Commit != commit || info.Markers != markers {
					t.Fatalf("event %d info %+v: want id p, producer %d, marker epoch %d, commit %v, %d markers", i, info, pid, epoch+1, commit, markers)
				}
				wantMarker := i
				if i == len(events)-1 {
					wantMarker = markers
				}
				if info.Marker != wantMarker {
					t.Fatalf("event %d (%s) says %d markers applied, want %d", i, ev.pt, info.Marker, wantMarker)
				}
			}
		})
	}
}

// TestHookStageWriteSeesStaging: the staging hook reports which
// transaction, group and partition it writes.
func TestHookStageWriteSeesStaging(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var got []engine.HookInfo
	hook := func(pt engine.HookPoint, info engine.HookInfo) error {
		if pt == engine.HookStageWrite {
			mu.Lock()
			got = append(got, info)
			mu.Unlock()
		}
		return nil
	}
	r := newRig(t, engine.WithHook(hook))
	r.produce("in", 0, 1)
	m := r.join("g", engine.AckTransactional)
	r.poll(m, 1)
	p := r.producer("p")
	wantErr(t, "begin", p.Begin(), nil)
	wantErr(t, "stage", p.SendShareAcksToTransaction([]engine.Acknowledgement{accept(0, 0)}, m.Metadata()), nil)
	mu.Lock()
	defer mu.Unlock()
	want := engine.HookInfo{TransactionalID: "p", ProducerID: p.ProducerID(), Epoch: p.Epoch(), Group: "g", Topic: "in", Partition: 0}
	if len(got) != 1 || got[0] != want {
		t.Fatalf("stage hook saw %+v, want [%+v]", got, want)
	}
}

// TestStagingBelowSPSOIsRejected: a member whose lock expired stages acks
// for records another member meanwhile committed. Those records are below
// SPSO, hence terminal, and staging a terminal record is rejected (docs/design.md
// §3.3). A no-op success here would let the slow member commit a second
// output for the same inputs: an exactly-once duplicate. (Plain
// acknowledgements below SPSO stay no-op successes, docs/design.md §3.2.)
func TestStagingBelowSPSOIsRejected(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	r.produce("in", 0, 2)
	slow, fast := r.join("g", engine.AckTransactional), r.join("g", engine.AckTransactional)
	r.poll(slow, 2)
	r.clk.Advance(rigGroup.LockDuration)
	r.e.FireTimers()
	r.poll(fast, 2)
	pf := r.producer("fast")
	wantErr(t, "fast begin", pf.Begin(), nil)
	if _, err := pf.Produce("out", 0, []engine.ProduceRecord{{Value: []byte("0")}, {Value: []byte("1")}}); err != nil {
		t.Fatal(err)
	}
	wantErr(t, "fast stage", pf.SendShareAcksToTransaction([]engine.Acknowledgement{accept(0, 1)}, fast.Metadata()), nil)
	wantErr(t, "fast commit", pf.Commit(), nil)

	ps := r.producer("slow")
	wantErr(t, "slow begin", ps.Begin(), nil)
	if _, err := ps.Produce("out", 0, []engine.ProduceRecord{{Value: []byte("0")}, {Value: []byte("1")}}); err != nil {
		t.Fatal(err)
	}
	for _, acks := range [][]engine.Acknowledgement{{accept(0, 1)}, {accept(1, 1)}, {ackOf(engine.AckReject, 0, 0)}} {
		err := ps.SendShareAcksToTransaction(acks, slow.Metadata())
		wantErr(t, fmt.Sprintf("slow member stages %v below SPSO", acks), err, engine.ErrInvalidRecordState)
	}
	wantErr(t, "slow abort", ps.Abort(), nil)
	if got := r.committed("out", 0); len(got) != 2 {
		t.Fatalf("%d committed outputs, want 2", len(got))
	}
	// Plain acknowledgements below SPSO remain no-op successes.
	wantErr(t, "plain ack below SPSO", slow.Acknowledge([]engine.Acknowledgement{accept(0, 1)}), nil)
	r.wantState("g", 0, 1, engine.StateAcknowledged, 2)
}
