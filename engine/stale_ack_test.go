// This file tests acknowledgements of records the member no longer holds
// (its lock expired, another member got the record, its session ended):
// every one answers the per-partition error Kafka answers
// (INVALID_RECORD_STATE, ErrInvalidRecordState here) or, below the
// share-partition start offset, the no-op success Kafka answers, which
// AcknowledgeReport names. Explicit acknowledgements of every type and
// transactional staging are covered.

package engine_test

import (
	"errors"
	"testing"
	"time"

	"github.com/sharebench/sharebench/engine"
)

func TestAckOfRecordNoLongerHeld(t *testing.T) {
	t.Parallel()
	// The lock (rigGroup's) is shorter than the session, so a lock expires
	// while its member stays in the group.
	const lock, sessionTimeout = 30 * time.Second, 45 * time.Second
	// Setup for every case: 4 records on in-0; A polls 0..3 (delivery 1).
	// prep then takes the records away from A in its own way; A
	// acknowledges offset 1 (or 0..1).
	cases := []struct {
		name string
		prep func(r *rig, a *engine.ShareMember)
		// ack is what A acknowledges.
		first, last int64
		// want is the error the acknowledgement must match (nil: success);
		// notOwner says it must match ErrNotOwner too; noop is how many
		// offsets AcknowledgeReport must name as no-op successes.
		want     error
		notOwner bool
		noop     int64
		// state is offset 1's state afterwards (its count unchanged by A).
		state engine.RecordState
	}{
		{name: "lock expired, record available", prep: func(r *rig, _ *engine.ShareMember) {
			r.clk.Advance(lock)
			r.e.FireTimers()
		}, first: 1, last: 1, want: engine.ErrInvalidRecordState, state: engine.StateAvailable},
		{name: "lock expired, redelivered to another member", prep: func(r *rig, _ *engine.ShareMember) {
			r.clk.Advance(lock)
			r.e.FireTimers()
			b := r.join("g", engine.AckExplicit)
			if got := offsetsOf(r.poll(b, 10)); len(got) != 4 {
				t.Fatalf("B polled %v, want 0..3", got)
			}
		}, first: 1, last: 1, want: engine.ErrInvalidRecordState, notOwner: true, state: engine.StateAcquired},
		{name: "redelivered and accepted by another member, inside the window", prep: func(r *rig, _ *engine.ShareMember) {
			r.clk.Advance(lock)
			r.e.FireTimers()
			b := r.join("g", engine.AckExplicit)
			r.poll(b, 10)
			// B accepts 1 only: offset 0 stays acquired and holds SPSO at 0.
			wantErr(t, "B accepts 1", b.Acknowledge([]engine.Acknowledgement{accept(1, 1)}), nil)
		}, first: 1, last: 1, want: engine.ErrInvalidRecordState, state: engine.StateAcknowledged},
		{name: "redelivered and accepted by another member, below SPSO", prep: func(r *rig, _ *engine.ShareMember) {
			r.clk.Advance(lock)
			r.e.FireTimers()
			b := r.join("g", engine.AckExplicit)
			r.poll(b, 10)
			wantErr(t, "B accepts 0..1", b.Acknowledge([]engine.Acknowledgement{accept(0, 1)}), nil)
		}, first: 0, last: 1, want: nil, noop: 2, state: engine.StateAcknowledged},
		{name: "session ended (member left)", prep: func(r *rig, a *engine.ShareMember) {
			wantErr(t, "A leaves", a.Leave(), nil)
		}, first: 1, last: 1, want: engine.ErrUnknownMember, state: engine.StateAvailable},
		{name: "session ended (timed out)", prep: func(r *rig, _ *engine.ShareMember) {
			r.clk.Advance(sessionTimeout)
			r.e.FireTimers()
		}, first: 1, last: 1, want: engine.ErrUnknownMember, state: engine.StateAvailable},
	}
	for _, tc := range cases {
		for _, typ := range []engine.AckType{engine.AckAccept, engine.AckRelease, engine.AckReject} {
			t.Run(tc.name+"/"+typ.String(), func(t *testing.T) {
				t.Parallel()
				r := newRig(t, engine.WithSessionTimeout(sessionTimeout))
				r.produce("in", 0, 4)
				a := r.join("g", engine.AckExplicit)
				if got := offsetsOf(r.poll(a, 10)); len(got) != 4 {
					t.Fatalf("A polled %v, want 0..3", got)
				}
				tc.prep(r, a)
				before := r.rec("g", "in", 0, 1)
				noop, err := a.AcknowledgeReport([]engine.Acknowledgement{ackOf(typ, tc.first, tc.last)})
				wantErr(t, "A acknowledges", err, tc.want)
				if tc.notOwner && !errors.Is(err, engine.ErrNotOwner) {
					t.Fatalf("A acknowledges: %v, want it to match ErrNotOwner too", err)
				}
				var ae *engine.AckError
				if errors.Is(tc.want, engine.ErrInvalidRecordState) {
					if !errors.As(err, &ae) || len(ae.Partitions) != 1 {
						t.Fatalf("A acknowledges: %v, want a per-partition *AckError for in-0", err)
					}
				}
				var n int64
				for _, x := range noop {
					n += x.Last - x.First + 1
				}
				if n != tc.noop {
					t.Fatalf("no-op offsets %v (%d), want %d", noop, n, tc.noop)
				}
				after := r.rec("g", "in", 0, 1)
				if after.State != tc.state || after.DeliveryCount != before.DeliveryCount {
					t.Fatalf("offset 1 after A's %v: %v count %d, want %v count %d (unchanged by A)", typ, after.State, after.DeliveryCount, tc.state, before.DeliveryCount)
				}
				r.check()
			})
		}
	}
}

// TestStageOfRecordNoLongerHeld: staging a record the member no longer
// holds fails with ErrInvalidRecordState (and leaves the transaction
// abortable), below SPSO included: staging is never a no-op.
func TestStageOfRecordNoLongerHeld(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		prep     func(r *rig, a *engine.ShareMember)
		first    int64
		notOwner bool
	}{
		{"lock expired", func(r *rig, _ *engine.ShareMember) {
			r.clk.Advance(30 * time.Second)
			r.e.FireTimers()
		}, 1, false},
		// B's join bumps A's member epoch; A learns it by a heartbeat, so
		// the staging is judged by ownership, not fenced by the epoch.
		{"redelivered to another member", func(r *rig, a *engine.ShareMember) {
			r.clk.Advance(30 * time.Second)
			r.e.FireTimers()
			b := r.join("g", engine.AckTransactional)
			r.poll(b, 10)
			if _, err := a.Heartbeat(); err != nil {
				t.Fatalf("A heartbeats: %v", err)
			}
		}, 1, true},
		{"accepted by another member, below SPSO", func(r *rig, a *engine.ShareMember) {
			r.clk.Advance(30 * time.Second)
			r.e.FireTimers()
			b := r.join("g", engine.AckTransactional)
			r.poll(b, 10)
			wantErr(t, "B accepts 0..1", b.Acknowledge([]engine.Acknowledgement{accept(0, 1)}), nil)
			if _, err := a.Heartbeat(); err != nil {
				t.Fatalf("A heartbeats: %v", err)
			}
		}, 0, false},
	}
	for _, tc := range cases {
		for _, typ := range []engine.AckType{engine.AckAccept, engine.AckReject} {
			t.Run(tc.name+"/"+typ.String(), func(t *testing.T) {
				t.Parallel()
				r := newRig(t)
				r.produce("in", 0, 4)
				a := r.join("g", engine.AckTransactional)
				r.poll(a, 10)
				p := r.producer("tx")
				wantErr(t, "begin", p.Begin(), nil)
				tc.prep(r, a)
				err := p.SendShareAcksToTransaction([]engine.Acknowledgement{ackOf(typ, tc.first, 1)}, a.Metadata())
				wantErr(t, "A stages", err, engine.ErrInvalidRecordState)
				if tc.notOwner && !errors.Is(err, engine.ErrNotOwner) {
					t.Fatalf("A stages: %v, want it to match ErrNotOwner too", err)
				}
				wantErr(t, "commit after the failed staging", p.Commit(), engine.ErrAbortableTransaction)
				wantErr(t, "abort", p.Abort(), nil)
				r.check()
			})
		}
	}
}
