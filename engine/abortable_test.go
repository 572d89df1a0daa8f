package engine_test

import (
	"errors"
	"testing"
	"time"

	"github.com/sharebench/sharebench/engine"
)

// TestAbortableTransaction: a staging call that fails for any reason leaves
// the transaction abortable (docs/design.md §3.3, invariant 13): Produce, staging
// and Commit then fail with ErrAbortableTransaction wrapping the cause,
// nothing becomes visible, and only Abort succeeds; the next transaction is
// clean.
func TestAbortableTransaction(t *testing.T) {
	t.Parallel()
	errWrite := errors.New("test: staging write failed")
	cases := []struct {
		name  string
		cause error
		// fail makes the staging of in-0 [0,1] by m fail; it returns the
		// metadata to stage with.
		fail func(r *rig, m *engine.ShareMember) engine.GroupMetadata
		hook bool
	}{
		{"not owner", engine.ErrNotOwner, func(r *rig, m *engine.ShareMember) engine.GroupMetadata {
			return r.join("g", engine.AckTransactional).Metadata()
		}, false},
		{"lock expired", engine.ErrInvalidRecordState, func(r *rig, m *engine.ShareMember) engine.GroupMetadata {
			r.clk.Advance(rigGroup.LockDuration + time.Second)
			r.e.FireTimers()
			return m.Metadata()
		}, false},
		{"fenced member epoch", engine.ErrFencedMemberEpoch, func(r *rig, m *engine.ShareMember) engine.GroupMetadata {
			meta := m.Metadata()
			meta.MemberEpoch++
			return meta
		}, false},
		{"invalid state", engine.ErrInvalidRequest, nil, false},
		{"failed write", errWrite, func(r *rig, m *engine.ShareMember) engine.GroupMetadata { return m.Metadata() }, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			failWrite := false
			var opts []engine.Option
			if tc.hook {
				opts = append(opts, engine.WithHook(func(pt engine.HookPoint, _ engine.HookInfo) error {
					if pt == engine.HookStageWrite && failWrite {
						return errWrite
					}
					return nil
				}))
			}
			r := newRig(t, opts...)
			r.produce("in", 0, 2)
			m := r.join("g", engine.AckTransactional)
			r.poll(m, 2)
			p := r.producer("tx")
			wantErr(t, "begin", p.Begin(), nil)
			if _, err := p.Produce("out", 0, []engine.ProduceRecord{{Value: []byte("before")}}); err != nil {
				t.Fatalf("produce: %v", err)
			}
			acks := []engine.Acknowledgement{accept(0, 1)}
			meta := m.Metadata()
			if tc.fail != nil {
				meta = tc.fail(r, m)
			} else {
				acks = []engine.Acknowledgement{ackOf(engine.AckRelease, 0, 1)}
			}
			failWrite = tc.hook
			err := p.SendShareAcksToTransaction(acks, meta)
			failWrite = false
			wantErr(t, "failed staging", err, tc.cause)
			wantErr(t, "failed staging", err, engine.ErrAbortableTransaction)

			// Everything but Abort fails, wrapping the first cause.
			_, err = p.Produce("out", 0, []engine.ProduceRecord{{Value: []byte("after")}})
			wantErr(t, "produce", err, engine.ErrAbortableTransaction)
			wantErr(t, "produce", err, tc.cause)
			err = p.SendShareAcksToTransaction([]engine.Acknowledgement{accept(0, 1)}, m.Metadata())
			wantErr(t, "staging again", err, engine.ErrAbortableTransaction)
			wantErr(t, "staging again", err, tc.cause)
			err = p.Commit()
			wantErr(t, "commit", err, engine.ErrAbortableTransaction)
			wantErr(t, "commit", err, tc.cause)
			wantErr(t, "begin", p.Begin(), engine.ErrInvalidTxnState)
			if got := r.committed("out", 0); len(got) != 0 {
				t.Fatalf("outputs of the abortable transaction visible: %d", len(got))
			}
			wantErr(t, "abort", p.Abort(), nil)
			if ri := r.rec("g", "in", 0, 0); ri.State == engine.StateTxPending || ri.State.Terminal() {
				t.Fatalf("in-0@0 after the abort: %v", ri.State)
			}

			// The next transaction is clean.
			wantErr(t, "begin after abort", p.Begin(), nil)
			got := r.poll(m, 2)
			if len(got) > 0 {
				ack := engine.Acknowledgement{Topic: "in", First: got[0].Offset, Last: got[len(got)-1].Offset, Type: engine.AckAccept}
				wantErr(t, "stage after abort", p.SendShareAcksToTransaction([]engine.Acknowledgement{ack}, m.Metadata()), nil)
			}
			if _, err := p.Produce("out", 0, []engine.ProduceRecord{{Value: []byte("next")}}); err != nil {
				t.Fatalf("produce after abort: %v", err)
			}
			wantErr(t, "commit after abort", p.Commit(), nil)
			r.check()
		})
	}
}

// TestAbortableSendOffsets: a failed SendOffsetsToTransaction leaves the
// transaction abortable too (classic-eos, Kafka's TxnOffsetCommit).
func TestAbortableSendOffsets(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	c := r.classic("cg", engine.ResetEarliest, "in")
	stale := c.Metadata()
	p := r.producer("p")
	wantErr(t, "begin", p.Begin(), nil)
	err := p.SendOffsetsToTransaction(map[engine.TopicPartition]int64{{Topic: "in"}: 1}, stale)
	wantErr(t, "stale generation", err, engine.ErrIllegalGeneration)
	wantErr(t, "stale generation", err, engine.ErrAbortableTransaction)
	wantErr(t, "commit", p.Commit(), engine.ErrAbortableTransaction)
	wantErr(t, "abort", p.Abort(), nil)
	wantErr(t, "begin", p.Begin(), nil)
	wantErr(t, "commit", p.Commit(), nil)
}
