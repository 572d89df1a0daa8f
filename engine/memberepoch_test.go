package engine_test

import (
	"testing"
	"time"

	"github.com/sharebench/sharebench/engine"
)

// TestMemberEpochs: a member's epoch starts at 1 and is bumped by every
// assignment change (a join, a leave, a session expiry), the member learns
// it on its next poll, and staging with the epoch it had before fails as
// fenced member epoch and leaves the transaction abortable (docs/design.md §3.9).
func TestMemberEpochs(t *testing.T) {
	t.Parallel()
	epochOf := func(r *rig, m *engine.ShareMember) int32 {
		t.Helper()
		ms, err := r.e.ShareMembers("g")
		if err != nil {
			t.Fatalf("ShareMembers: %v", err)
		}
		for _, x := range ms {
			if x.ID == m.ID() {
				return x.Epoch
			}
		}
		t.Fatalf("%s not in ShareMembers %v", m.ID(), ms)
		return 0
	}
	for _, tc := range []struct {
		name   string
		change func(r *rig, others []*engine.ShareMember)
	}{
		{"join", func(r *rig, _ []*engine.ShareMember) { r.join("g", engine.AckTransactional) }},
		{"leave", func(r *rig, others []*engine.ShareMember) { wantErr(t, "leave", others[0].Leave(), nil) }},
		{"session expiry", func(r *rig, others []*engine.ShareMember) {
			// Everyone but others[0] stays alive through a poll.
			r.clk.Advance(6 * time.Second)
			for _, o := range others[1:] {
				r.poll(o, 0)
			}
			r.clk.Advance(5 * time.Second)
			r.e.FireTimers()
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := newRig(t, engine.WithSessionTimeout(10*time.Second))
			r.produce("in", 0, 4)
			gone := r.join("g", engine.AckTransactional)
			m := r.join("g", engine.AckTransactional)
			r.poll(m, 2) // m joined last: its epoch is 1
			if got := m.Metadata().MemberEpoch; got != 1 || epochOf(r, m) != 1 {
				t.Fatalf("m's epoch after its join: handle %d, coordinator %d; want 1, 1", got, epochOf(r, m))
			}
			p := r.producer("tx")
			wantErr(t, "begin", p.Begin(), nil)
			stale := m.Metadata()
			tc.change(r, []*engine.ShareMember{gone, m})
			if got := epochOf(r, m); got != 2 {
				t.Fatalf("coordinator epoch after the %s: %d, want 2", tc.name, got)
			}
			if got := m.Metadata().MemberEpoch; got != 1 {
				t.Fatalf("handle epoch before a poll: %d, want 1 (learned on the next poll)", got)
			}
			err := p.SendShareAcksToTransaction([]engine.Acknowledgement{accept(0, 1)}, stale)
			wantErr(t, "stage with the stale epoch", err, engine.ErrFencedMemberEpoch)
			wantErr(t, "stage with the stale epoch", err, engine.ErrAbortableTransaction)
			wantErr(t, "commit", p.Commit(), engine.ErrAbortableTransaction)
			wantErr(t, "abort", p.Abort(), nil)
			r.wantState("g", 0, 1, engine.StateAcquired, 1)

			r.poll(m, 0) // the heartbeat brings the new epoch
			if got := m.Metadata().MemberEpoch; got != 2 {
				t.Fatalf("handle epoch after a poll: %d, want 2", got)
			}
			wantErr(t, "begin", p.Begin(), nil)
			wantErr(t, "stage with the current epoch", p.SendShareAcksToTransaction([]engine.Acknowledgement{accept(0, 1)}, m.Metadata()), nil)
			wantErr(t, "commit", p.Commit(), nil)
			r.wantState("g", 0, 1, engine.StateAcknowledged, 1)
		})
	}
}
