package engine_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/sharebench/sharebench/engine"
)

// dlqRig is a rig whose group "g" copies archived records to topic "dlq".
func dlqRig(t *testing.T, copyRecord bool, opts ...engine.Option) *rig {
	t.Helper()
	cfg := rigGroup
	cfg.DeliveryLimit, cfg.DLQTopic, cfg.DLQCopyRecord = 2, "dlq", copyRecord
	r := newRig(t, append([]engine.Option{engine.WithGroupDefaults(cfg)}, opts...)...)
	r.topic("dlq", 1)
	return r
}

// dlqCopies returns the read_committed dead-letter copies of in-0, by
// source offset, with their headers.
func dlqCopies(t *testing.T, r *rig) map[string][]engine.Record {
	t.Helper()
	out := map[string][]engine.Record{}
	for _, rec := range r.committed("dlq", 0) {
		h := map[string]string{}
		for _, x := range rec.Headers {
			h[x.Key] = string(x.Value)
		}
		if h[engine.HeaderDLQTopic] != "in" || h[engine.HeaderDLQPartition] != "0" || h[engine.HeaderDLQGroup] != "g" {
			t.Fatalf("dead-letter copy with provenance %v", h)
		}
		why := map[string]string{engine.DLQMessageRejected: "rejected", engine.DLQMessageDeliveryLimit: "delivery-limit"}[h[engine.HeaderDLQMessage]]
		k := h[engine.HeaderDLQOffset] + "/" + why + "/" + h[engine.HeaderDLQDeliveryCount]
		out[k] = append(out[k], rec)
	}
	return out
}

// TestDLQ: every record archived by a reject or at the delivery limit is
// copied once to the group's dead-letter topic, with its provenance in
// headers and its value only with copy-record (KIP-1191, invariant 14);
// nothing else is.
func TestDLQ(t *testing.T) {
	t.Parallel()
	for _, copyRecord := range []bool{false, true} {
		t.Run(fmt.Sprintf("copy=%v", copyRecord), func(t *testing.T) {
			t.Parallel()
			r := dlqRig(t, copyRecord)
			r.produce("in", 0, 4)
			m := r.join("g", engine.AckExplicit)
			r.poll(m, 4)
			wantErr(t, "ack", m.Acknowledge([]engine.Acknowledgement{
				accept(0, 0), ackOf(engine.AckReject, 1, 1), ackOf(engine.AckRelease, 2, 3)}), nil)
			// 2 and 3 reach the limit (2) by lock expiry.
			r.poll(m, 4)
			r.clk.Advance(rigGroup.LockDuration)
			r.e.FireTimers()
			got := dlqCopies(t, r)
			want := []string{"1/rejected/1", "2/delivery-limit/2", "3/delivery-limit/2"}
			if len(got) != len(want) {
				t.Fatalf("dead-letter copies %v, want %v", keys(got), want)
			}
			for _, k := range want {
				if len(got[k]) != 1 {
					t.Fatalf("copy %s appears %d times, want once (copies %v)", k, len(got[k]), keys(got))
				}
				rec := got[k][0]
				if copyRecord != (rec.Value != nil) {
					t.Fatalf("copy %s value %q with copy-record %v", k, rec.Value, copyRecord)
				}
			}
			if s := r.e.Stats(); s.DLQWritten != 3 || s.DLQDropped != 0 {
				t.Fatalf("stats: %d written, %d dropped; want 3, 0", s.DLQWritten, s.DLQDropped)
			}
		})
	}
}

func keys(m map[string][]engine.Record) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestDLQTransactionalReject: the copy of a record archived by a
// transactional REJECT is written in the transaction (the safe knob:
// visible with the commit, aborted with an abort, so exactly once) or
// after the commit marker (Knobs.DLQAfterMarker: at least once).
func TestDLQTransactionalReject(t *testing.T) {
	t.Parallel()
	for _, after := range []bool{false, true} {
		for _, commit := range []bool{false, true} {
			t.Run(fmt.Sprintf("after-marker=%v/commit=%v", after, commit), func(t *testing.T) {
				t.Parallel()
				r := dlqRig(t, true, engine.WithKnobs(engine.Knobs{DLQAfterMarker: after}), engine.WithMarkerDelivery(engine.MarkersAsync))
				r.produce("in", 0, 2)
				m := r.join("g", engine.AckTransactional)
				r.poll(m, 2)
				p := r.producer("tx")
				wantErr(t, "begin", p.Begin(), nil)
				wantErr(t, "stage", p.SendShareAcksToTransaction([]engine.Acknowledgement{accept(0, 0), ackOf(engine.AckReject, 1, 1)}, m.Metadata()), nil)
				if got := dlqCopies(t, r); len(got) != 0 {
					t.Fatalf("copies visible before the commit: %v", keys(got))
				}
				end := p.Abort
				if commit {
					end = p.Commit
				}
				wantErr(t, "end", end(), nil)
				r.e.DeliverMarkers()
				got := dlqCopies(t, r)
				if !commit {
					if len(got) != 0 {
						t.Fatalf("copies of an aborted reject: %v", keys(got))
					}
					r.wantState("g", 1, 1, engine.StateAvailable, 1)
					return
				}
				if len(got) != 1 || len(got["1/rejected/1"]) != 1 {
					t.Fatalf("copies after the commit %v, want 1/rejected/1 once", keys(got))
				}
				recs, _, _ := r.e.Fetch(engine.TopicPartition{Topic: "dlq"}, 0, 10, engine.ReadCommitted)
				if recs[0].Transactional == after {
					t.Fatalf("copy transactional=%v with after-marker=%v", recs[0].Transactional, after)
				}
			})
		}
	}
}

// TestDLQMissingTopic: copies for a dead-letter topic that does not exist
// are counted as dropped.
func TestDLQMissingTopic(t *testing.T) {
	t.Parallel()
	cfg := rigGroup
	cfg.DLQTopic = "nope"
	r := newRig(t, engine.WithGroupDefaults(cfg))
	r.produce("in", 0, 1)
	m := r.join("g", engine.AckExplicit)
	r.poll(m, 1)
	wantErr(t, "reject", m.Acknowledge([]engine.Acknowledgement{ackOf(engine.AckReject, 0, 0)}), nil)
	if s := r.e.Stats(); s.DLQDropped != 1 || s.DLQWritten != 0 {
		t.Fatalf("stats: %d dropped, %d written; want 1, 0", s.DLQDropped, s.DLQWritten)
	}
}

// TestDLQDurable: dead-letter copies and their headers, and the group's
// DLQ configuration, survive a restart.
func TestDLQDurable(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	clk := engine.NewManualClock()
	e := durGet[*engine.Engine](t)(engine.New(durableOpts(dir, clk)...))
	durOK(t, e.CreateTopic("in", 1))
	durOK(t, e.CreateTopic("dlq", 1))
	cfg := engine.DefaultGroupConfig()
	cfg.AutoOffsetReset, cfg.DLQTopic = engine.ResetEarliest, "dlq"
	durOK(t, e.SetShareGroupConfig("g", cfg))
	_ = durGet[int64](t)(e.Produce("in", 0, []engine.ProduceRecord{{Value: []byte("x")}}))
	m := durGet[*engine.ShareMember](t)(e.JoinShareGroup("g", []string{"in"}, engine.AckExplicit))
	_ = durGet[[]engine.Record](t)(m.Poll(1))
	durOK(t, m.Acknowledge([]engine.Acknowledgement{{Topic: "in", First: 0, Last: 0, Type: engine.AckReject}}))
	_ = durGet[engine.RecoveryReport](t)(e.Restart())
	defer e.Close()
	got := durGet[engine.GroupConfig](t)(e.ShareGroupConfig("g"))
	if got.DLQTopic != "dlq" || got.AcquireMode != engine.AcquireBatchOptimized {
		t.Fatalf("recovered group config %+v", got)
	}
	recs, _, err := e.Fetch(engine.TopicPartition{Topic: "dlq"}, 0, 10, engine.ReadCommitted)
	if err != nil || len(recs) != 1 || len(recs[0].Headers) != 6 {
		t.Fatalf("recovered copies %+v (%v), want one with 6 headers", recs, err)
	}
	_ = time.Second
}
