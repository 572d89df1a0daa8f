package engine_test

import (
	"errors"
	"testing"

	"github.com/sharebench/sharebench/engine"
)

// TestErrorsMatchEngineNames: every error the share-partition state
// machine and the partition log return reaches a caller as one of the
// engine's own sentinels, the names a caller outside the module can
// import, and errors.Is matches it.
func TestErrorsMatchEngineNames(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		do   func(r *rig, m, other *engine.ShareMember) error
		want []error
	}{
		{"ack of a record another member holds", func(r *rig, m, other *engine.ShareMember) error {
			return other.Acknowledge([]engine.Acknowledgement{accept(0, 0)})
		}, []error{engine.ErrNotOwner}},
		{"ack of a terminal record", func(r *rig, m, other *engine.ShareMember) error {
			if err := m.Acknowledge([]engine.Acknowledgement{accept(1, 1)}); err != nil {
				return err
			}
			return m.Acknowledge([]engine.Acknowledgement{ackOf(engine.AckRelease, 0, 1)})
		}, []error{engine.ErrInvalidRecordState}},
		{"ack beyond what was acquired", func(r *rig, m, other *engine.ShareMember) error {
			return m.Acknowledge([]engine.Acknowledgement{accept(0, 50)})
		}, []error{engine.ErrOffsetOutOfRange}},
		{"unknown ack type", func(r *rig, m, other *engine.ShareMember) error {
			return m.Acknowledge([]engine.Acknowledgement{ackOf(engine.AckType(9), 0, 0)})
		}, []error{engine.ErrInvalidAckType}},
		{"batch ending before it starts", func(r *rig, m, other *engine.ShareMember) error {
			return m.Acknowledge([]engine.Acknowledgement{accept(2, 1)})
		}, []error{engine.ErrInvalidRequest}},
		{"fetch past the high watermark", func(r *rig, m, other *engine.ShareMember) error {
			_, _, err := r.e.Fetch(engine.TopicPartition{Topic: "in"}, 100, 10, engine.ReadUncommitted)
			return err
		}, []error{engine.ErrOffsetOutOfRange, engine.ErrLogOffsetOutOfRange}},
		{"produce of no records", func(r *rig, m, other *engine.ShareMember) error {
			_, err := r.e.Produce("in", 0, nil)
			return err
		}, []error{engine.ErrInvalidRecord}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := newRig(t)
			r.produce("in", 0, 4)
			m := r.join("g", engine.AckExplicit)
			other := r.join("g", engine.AckExplicit)
			if got := r.poll(m, 2); len(got) != 2 {
				t.Fatalf("poll: %d records, want 2", len(got))
			}
			err := tc.do(r, m, other)
			if err == nil {
				t.Fatalf("no error, want %v", tc.want)
			}
			for _, w := range tc.want {
				if !errors.Is(err, w) {
					t.Errorf("error %q does not match %q", err, w)
				}
			}
		})
	}
}
