// This file tests, over the wire with kmsg requests, what the broker
// answers a member that acknowledges records it no longer holds, in
// ShareAcknowledge and piggybacked on ShareFetch: INVALID_RECORD_STATE for
// the partition when its lock expired or another member acquired the
// records or they are terminal inside the window, NONE below the
// share-partition start offset (a no-op, as Kafka answers), and
// SHARE_SESSION_NOT_FOUND at the top level once its share session closed.
// A member that left the group with its session open still holds its
// records, and its acknowledgement applies, as Kafka 4.4 answers. The
// records keep the state the member's acknowledgement did not change.

package serve_test

import (
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sharebench/sharebench/engine"
	"github.com/sharebench/sharebench/serve"
)

// shareRaw drives one share member with raw requests.
type shareRaw struct {
	t       *testing.T
	cl      *kgo.Client
	id      string
	epoch   int32    // member epoch
	session int32    // next share session epoch
	topic   [16]byte // the id of topic t
}

func (m *shareRaw) heartbeat(leave bool) {
	m.t.Helper()
	req := kmsg.NewPtrShareGroupHeartbeatRequest()
	req.GroupID, req.MemberID, req.MemberEpoch = "g", m.id, m.epoch
	if leave {
		req.MemberEpoch = -1
	} else {
		req.SubscribedTopicNames = []string{"t"}
	}
	resp, err := req.RequestWith(ctx(m.t), m.cl)
	if err != nil || resp.ErrorCode != 0 {
		m.t.Fatalf("%s heartbeat: %v code %d", m.id, err, errCodeOf(resp))
	}
	m.epoch = resp.MemberEpoch
}

func errCodeOf(resp *kmsg.ShareGroupHeartbeatResponse) int16 {
	if resp == nil {
		return -1
	}
	return resp.ErrorCode
}

// fetch sends a ShareFetch carrying acks (type typ over [first, last];
// none when typ < 0) and returns the top-level code, the partition's
// acknowledgement code and the offsets acquired.
func (m *shareRaw) fetch(typ int8, first, last int64, maxRecords int32) (top, ack int16, got []int64) {
	m.t.Helper()
	req := kmsg.NewPtrShareFetchRequest()
	req.GroupID, req.MemberID = kmsg.StringPtr("g"), kmsg.StringPtr(m.id)
	req.ShareSessionEpoch, req.MaxRecords, req.BatchSize, req.MaxBytes, req.MaxWaitMillis = m.session, maxRecords, maxRecords, 1<<20, 0
	rt := kmsg.NewShareFetchRequestTopic()
	rt.TopicID = m.topic
	rp := kmsg.NewShareFetchRequestTopicPartition()
	if typ >= 0 {
		b := kmsg.NewShareFetchRequestTopicPartitionAcknowledgementBatch()
		b.FirstOffset, b.LastOffset, b.AcknowledgeTypes = first, last, []int8{typ}
		rp.AcknowledgementBatches = append(rp.AcknowledgementBatches, b)
	}
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx(m.t), m.cl)
	if err != nil {
		m.t.Fatalf("%s share fetch: %v", m.id, err)
	}
	if resp.ErrorCode == 0 {
		m.session++
	}
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			if p.Records == nil {
				// Kafka answers an empty record set, never null, for a
				// partition with nothing acquired (librdkafka refuses null).
				m.t.Errorf("%s share fetch: partition %d answered with null records, want an empty set", m.id, p.Partition)
			}
			ack = p.AcknowledgeErrorCode
			for _, a := range p.AcquiredRecords {
				for o := a.FirstOffset; o <= a.LastOffset; o++ {
					got = append(got, o)
				}
			}
		}
	}
	return resp.ErrorCode, ack, got
}

// acknowledge sends a ShareAcknowledge and returns the top-level and the
// partition's codes.
func (m *shareRaw) acknowledge(typ int8, first, last int64) (top, part int16) {
	m.t.Helper()
	req := kmsg.NewPtrShareAcknowledgeRequest()
	req.GroupID, req.MemberID, req.ShareSessionEpoch = kmsg.StringPtr("g"), kmsg.StringPtr(m.id), m.session
	rt := kmsg.NewShareAcknowledgeRequestTopic()
	rt.TopicID = m.topic
	rp := kmsg.NewShareAcknowledgeRequestTopicPartition()
	b := kmsg.NewShareAcknowledgeRequestTopicPartitionAcknowledgementBatch()
	b.FirstOffset, b.LastOffset, b.AcknowledgeTypes = first, last, []int8{typ}
	rp.AcknowledgementBatches = append(rp.AcknowledgementBatches, b)
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx(m.t), m.cl)
	if err != nil {
		m.t.Fatalf("%s share acknowledge: %v", m.id, err)
	}
	if resp.ErrorCode == 0 {
		m.session++
	}
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			part = p.ErrorCode
		}
	}
	return resp.ErrorCode, part
}

// closeSession closes the member's share session with an empty
// ShareAcknowledge at epoch -1.
func (m *shareRaw) closeSession() {
	m.t.Helper()
	req := kmsg.NewPtrShareAcknowledgeRequest()
	req.GroupID, req.MemberID, req.ShareSessionEpoch = kmsg.StringPtr("g"), kmsg.StringPtr(m.id), -1
	resp, err := req.RequestWith(ctx(m.t), m.cl)
	if err != nil || resp.ErrorCode != 0 {
		m.t.Fatalf("%s closing its share session: %v code %d", m.id, err, resp.ErrorCode)
	}
}

// ackedState is the state an applied acknowledgement of type typ leaves a
// record in; fetched is its state after a ShareFetch, whose poll acquires
// a released record again.
func ackedState(typ int8, fetched bool) engine.RecordState {
	switch engine.AckType(typ) {
	case engine.AckAccept:
		return engine.StateAcknowledged
	case engine.AckReject:
		return engine.StateArchived
	}
	if fetched {
		return engine.StateAcquired
	}
	return engine.StateAvailable
}

func TestServeAckOfRecordNoLongerHeld(t *testing.T) {
	t.Parallel()
	const lock = 30 * time.Second
	cases := []struct {
		name string
		away func(t *testing.T, clk *engine.ManualClock, e *engine.Engine, a, b *shareRaw)
		// top and part are the codes A's acknowledgement of 0..1 gets.
		top, part int16
		// state is offset 1's state afterwards; fetched its state after a
		// ShareFetch, which acquires what is available once it applied the
		// acknowledgements.
		state, fetched engine.RecordState
		// applied: the acknowledgement took effect (state and fetched
		// are then ackedState's).
		applied bool
	}{
		{"lock expired", func(t *testing.T, clk *engine.ManualClock, e *engine.Engine, _, _ *shareRaw) {
			clk.Advance(lock)
			e.FireTimers()
		}, 0, kerr.InvalidRecordState.Code, engine.StateAvailable, engine.StateAcquired, false},
		{"redelivered to another member", func(t *testing.T, clk *engine.ManualClock, e *engine.Engine, _, b *shareRaw) {
			clk.Advance(lock)
			e.FireTimers()
			b.heartbeat(false)
			if _, _, got := b.fetch(-1, 0, 0, 10); len(got) != 2 {
				t.Fatalf("B acquired %v, want 0..1", got)
			}
		}, 0, kerr.InvalidRecordState.Code, engine.StateAcquired, engine.StateAcquired, false},
		{"redelivered and accepted by another member (below SPSO)", func(t *testing.T, clk *engine.ManualClock, e *engine.Engine, _, b *shareRaw) {
			clk.Advance(lock)
			e.FireTimers()
			b.heartbeat(false)
			b.fetch(-1, 0, 0, 10)
			if top, part := b.acknowledge(1, 0, 1); top != 0 || part != 0 {
				t.Fatalf("B accepts: codes %d/%d", top, part)
			}
		}, 0, 0, engine.StateAcknowledged, engine.StateAcknowledged, false},
		{"left the group, share session open", func(t *testing.T, _ *engine.ManualClock, _ *engine.Engine, a, _ *shareRaw) {
			a.heartbeat(true)
		}, 0, 0, 0, 0, true},
		{"left the group, then its lock expired", func(t *testing.T, clk *engine.ManualClock, e *engine.Engine, a, _ *shareRaw) {
			a.heartbeat(true)
			// Leaving the group releases nothing: the session holds on.
			if ri, err := e.ShareRecord("g", engine.TopicPartition{Topic: "t"}, 1); err != nil || ri.State != engine.StateAcquired {
				t.Fatalf("offset 1 after A left the group: %v (%v), want %v", ri.State, err, engine.StateAcquired)
			}
			clk.Advance(lock)
			e.FireTimers()
		}, 0, kerr.InvalidRecordState.Code, engine.StateAvailable, engine.StateAcquired, false},
		{"share session closed", func(t *testing.T, _ *engine.ManualClock, _ *engine.Engine, a, _ *shareRaw) {
			a.closeSession()
		}, kerr.ShareSessionNotFound.Code, 0, engine.StateAvailable, engine.StateAvailable, false},
		{"left the group, then share session closed", func(t *testing.T, _ *engine.ManualClock, _ *engine.Engine, a, _ *shareRaw) {
			a.heartbeat(true)
			a.closeSession()
		}, kerr.ShareSessionNotFound.Code, 0, engine.StateAvailable, engine.StateAvailable, false},
	}
	for _, tc := range cases {
		for _, via := range []string{"ShareAcknowledge", "ShareFetch"} {
			for _, typ := range []int8{1, 2, 3} { // accept, release, reject
				t.Run(tc.name+"/"+via+"/"+engine.AckType(typ).String(), func(t *testing.T) {
					t.Parallel()
					clk := engine.NewManualClock()
					// History: offset 1's terminal state below SPSO.
					e, err := engine.New(engine.WithClock(clk), engine.WithHistory(true))
					if err != nil {
						t.Fatal(err)
					}
					s, err := serve.New(e, serve.WithListen("127.0.0.1:0"))
					if err != nil {
						t.Fatal(err)
					}
					go s.Serve()
					t.Cleanup(func() { s.Close(); e.Close() })
					if err := e.CreateTopic("t", 1); err != nil {
						t.Fatal(err)
					}
					if err := e.SetShareGroupConfig("g", engine.GroupConfig{LockDuration: lock, DeliveryLimit: 5, MaxRecordLocks: 100, AutoOffsetReset: engine.ResetEarliest}); err != nil {
						t.Fatal(err)
					}
					if _, err := e.Produce("t", 0, []engine.ProduceRecord{{Value: []byte("0")}, {Value: []byte("1")}}); err != nil {
						t.Fatal(err)
					}
					cl := client(t, s)
					a := &shareRaw{t: t, cl: cl, id: "member-a", topic: serve.TopicID(s, "t")}
					b := &shareRaw{t: t, cl: cl, id: "member-b", topic: serve.TopicID(s, "t")}
					a.heartbeat(false)
					if _, _, got := a.fetch(-1, 0, 0, 10); len(got) != 2 {
						t.Fatalf("A acquired %v, want 0..1", got)
					}
					tc.away(t, clk, e, a, b)
					var top, part int16
					if via == "ShareAcknowledge" {
						top, part = a.acknowledge(typ, 0, 1)
					} else {
						top, part, _ = a.fetch(typ, 0, 1, 0)
					}
					if top != tc.top || part != tc.part {
						t.Fatalf("A's %s codes: top %d (%v) partition %d (%v), want %d and %d",
							via, top, kerr.ErrorForCode(top), part, kerr.ErrorForCode(part), tc.top, tc.part)
					}
					ri, err := e.ShareRecord("g", engine.TopicPartition{Topic: "t"}, 1)
					if err != nil {
						t.Fatal(err)
					}
					want := tc.state
					if via == "ShareFetch" {
						want = tc.fetched
					}
					if tc.applied {
						want = ackedState(typ, via == "ShareFetch")
					}
					if ri.State != want {
						t.Fatalf("offset 1 after A's acknowledgement: %v, want %v", ri.State, want)
					}
				})
			}
		}
	}
}

// TestDeleteGroupWhileLeftSessionOpen: a member that left the group with
// its share session open keeps its records locked (docs/design.md §3.2),
// so deleting the group is NON_EMPTY_GROUP and leaves the records as they
// are; once the session closes the deletion succeeds and the group is no
// longer listed.
func TestDeleteGroupWhileLeftSessionOpen(t *testing.T) {
	t.Parallel()
	s, e := start(t)
	if err := e.CreateTopic("t", 1); err != nil {
		t.Fatal(err)
	}
	if err := e.SetShareGroupConfig("g", engine.GroupConfig{LockDuration: 30 * time.Second, DeliveryLimit: 5, MaxRecordLocks: 100, AutoOffsetReset: engine.ResetEarliest}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Produce("t", 0, []engine.ProduceRecord{{Value: []byte("0")}, {Value: []byte("1")}}); err != nil {
		t.Fatal(err)
	}
	cl := client(t, s)
	ad := kadm.NewClient(cl)
	a := &shareRaw{t: t, cl: cl, id: "member-a", topic: serve.TopicID(s, "t")}
	a.heartbeat(false)
	if _, _, got := a.fetch(-1, 0, 0, 10); len(got) != 2 {
		t.Fatalf("A acquired %v, want 0..1", got)
	}
	a.heartbeat(true)
	del := func() error {
		t.Helper()
		gr, err := ad.DeleteGroups(ctx(t), "g")
		if err != nil {
			t.Fatal(err)
		}
		return gr["g"].Err
	}
	if err := del(); !errors.Is(err, kerr.NonEmptyGroup) {
		t.Errorf("DeleteGroups with A's session open: %v, want NON_EMPTY_GROUP", err)
	}
	if ri, err := e.ShareRecord("g", engine.TopicPartition{Topic: "t"}, 1); err != nil || ri.State != engine.StateAcquired {
		t.Fatalf("offset 1 after the refused deletion: %v (%v), want %v", ri.State, err, engine.StateAcquired)
	}
	a.closeSession()
	if err := del(); err != nil {
		t.Fatalf("DeleteGroups once A's session closed: %v", err)
	}
	gs, err := ad.ListGroups(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := gs["g"]; ok {
		t.Errorf("ListGroups lists the deleted group g: %v", gs.Groups())
	}
}
