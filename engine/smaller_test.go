package engine_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/sharebench/sharebench/engine"
)

// TestClosedInMemoryEngine: after Close an in-memory engine refuses
// changes with ErrClosed and stays readable.
func TestClosedInMemoryEngine(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	r.produce("in", 0, 2)
	m := r.join("g", engine.AckExplicit)
	p := r.producer("tx")
	if err := r.e.Close(); err != nil {
		t.Fatal(err)
	}
	_, err := r.e.Produce("in", 0, []engine.ProduceRecord{{Value: []byte("x")}})
	wantErr(t, "Produce after Close", err, engine.ErrClosed)
	_, err = m.Poll(10)
	wantErr(t, "Poll after Close", err, engine.ErrClosed)
	wantErr(t, "Acknowledge after Close", m.Acknowledge([]engine.Acknowledgement{accept(0, 0)}), engine.ErrClosed)
	wantErr(t, "Begin after Close", p.Begin(), engine.ErrClosed)
	_, err = r.e.JoinShareGroup("g", []string{"in"}, engine.AckExplicit)
	wantErr(t, "JoinShareGroup after Close", err, engine.ErrClosed)
	wantErr(t, "CreateTopic after Close", r.e.CreateTopic("new", 1), engine.ErrClosed)
	if got := r.committed("in", 0); len(got) != 2 {
		t.Fatalf("Fetch after Close read %d records, want 2", len(got))
	}
}

// TestErrorsNameTheEngine: errors from the internal packages say
// "engine: ...", never the internal package's name.
func TestErrorsNameTheEngine(t *testing.T) {
	t.Parallel()
	for _, err := range []error{engine.ErrInvalidRecordState, engine.ErrNotOwner, engine.ErrOffsetOutOfRange,
		engine.ErrInvalidAckType, engine.ErrInvalidRequest, engine.ErrLogOffsetOutOfRange, engine.ErrOutOfOrderSequence} {
		if !strings.HasPrefix(err.Error(), "engine: ") {
			t.Errorf("%q does not start with \"engine: \"", err)
		}
	}
	r := newRig(t)
	r.produce("in", 0, 1)
	m := r.join("g", engine.AckExplicit)
	other := r.join("g", engine.AckExplicit)
	r.poll(m, 1)
	err := other.Acknowledge([]engine.Acknowledgement{accept(0, 0)})
	for _, bad := range []string{"sharepart", "plog", "wal:"} {
		if err == nil || strings.Contains(err.Error(), bad) {
			t.Errorf("error %v names an internal package (%s)", err, bad)
		}
	}
}

// TestFetchPastHighWatermark: a fetch beyond the high watermark matches
// ErrOffsetOutOfRange (and ErrLogOffsetOutOfRange).
func TestFetchPastHighWatermark(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	r.produce("in", 0, 3)
	for _, off := range []int64{4, 1000} {
		_, _, err := r.e.Fetch(engine.TopicPartition{Topic: "in"}, off, 10, engine.ReadUncommitted)
		if !errors.Is(err, engine.ErrOffsetOutOfRange) || !errors.Is(err, engine.ErrLogOffsetOutOfRange) {
			t.Errorf("Fetch at %d past the high watermark 3: %v, want ErrOffsetOutOfRange and ErrLogOffsetOutOfRange", off, err)
		}
	}
	if _, _, err := r.e.Fetch(engine.TopicPartition{Topic: "in"}, 3, 10, engine.ReadUncommitted); err != nil {
		t.Errorf("Fetch at the high watermark: %v", err)
	}
}

// TestShareRecordPastLogEnd: an offset past the log end holds no record,
// so its state is not Known; one inside the log never acquired is a known
// AVAILABLE record.
func TestShareRecordPastLogEnd(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	r.produce("in", 0, 3)
	m := r.join("g", engine.AckExplicit)
	r.poll(m, 1)
	if ri := r.rec("g", "in", 0, 2); !ri.Known || ri.State != engine.StateAvailable {
		t.Errorf("offset 2 (in the log, never acquired): %+v, want known AVAILABLE", ri)
	}
	for _, off := range []int64{3, 1 << 40} {
		if ri := r.rec("g", "in", 0, off); ri.Known {
			t.Errorf("offset %d past the log end 3: %+v, want Known false", off, ri)
		}
	}
}
