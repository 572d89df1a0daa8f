// This file tests share groups through the public engine API: members
// acquiring disjoint records, every acknowledgement error, implicit and
// explicit modes, per-group configuration (auto offset reset, isolation).
// It also holds the small test rig the engine's API tests share.

package engine_test

import (
	"errors"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/sharebench/sharebench/engine"
)

// rig is an engine on a manual clock with helpers that fail the test on
// unexpected errors. Every API test builds its own.
type rig struct {
	t   testing.TB
	e   *engine.Engine
	clk *engine.ManualClock
}

// rigGroup is the group configuration tests start from: Kafka's defaults
// but reading from the earliest offset, so records produced before the
// first poll are delivered.
var rigGroup = engine.GroupConfig{
	LockDuration: 30 * time.Second, DeliveryLimit: 5, MaxRecordLocks: 2000,
	AutoOffsetReset: engine.ResetEarliest,
}

func newRig(t testing.TB, opts ...engine.Option) *rig {
	t.Helper()
	clk := engine.NewManualClock()
	// Markers inline: a committed transaction's effects are visible when
	// Commit returns (the asynchronous delivery has tests of its own).
	all := append([]engine.Option{engine.WithClock(clk), engine.WithGroupDefaults(rigGroup), engine.WithHistory(true),
		engine.WithMarkerDelivery(engine.MarkersInline)}, opts...)
	e, err := engine.New(all...)
	if err != nil {
		t.Fatalf("engine.New: %v", err)
	}
	t.Cleanup(func() { _ = e.Close() })
	r := &rig{t: t, e: e, clk: clk}
	r.topic("in", 1)
	r.topic("out", 1)
	return r
}

func (r *rig) topic(name string, parts int32) {
	r.t.Helper()
	if err := r.e.CreateTopic(name, parts); err != nil {
		r.t.Fatalf("CreateTopic(%s): %v", name, err)
	}
}

// produce appends n plain records "topic/part/i" and returns the first
// offset.
func (r *rig) produce(topic string, part int32, n int) int64 {
	r.t.Helper()
	recs := make([]engine.ProduceRecord, n)
	for i := range recs {
		recs[i].Value = []byte(fmt.Sprintf("%s/%d/%d", topic, part, i))
	}
	base, err := r.e.Produce(topic, part, recs)
	if err != nil {
		r.t.Fatalf("Produce(%s-%d): %v", topic, part, err)
	}
	return base
}

func (r *rig) join(group string, mode engine.AckMode, topics ...string) *engine.ShareMember {
	r.t.Helper()
	if len(topics) == 0 {
		topics = []string{"in"}
	}
	m, err := r.e.JoinShareGroup(group, topics, mode)
	if err != nil {
		r.t.Fatalf("JoinShareGroup(%s): %v", group, err)
	}
	return m
}

func (r *rig) poll(m *engine.ShareMember, max int) []engine.Record {
	r.t.Helper()
	recs, err := m.Poll(max)
	if err != nil {
		r.t.Fatalf("Poll by %s: %v", m.ID(), err)
	}
	return recs
}

func (r *rig) producer(id string) *engine.Producer {
	r.t.Helper()
	p, err := r.e.NewProducer(engine.ProducerConfig{TransactionalID: id})
	if err != nil {
		r.t.Fatalf("NewProducer(%s): %v", id, err)
	}
	return p
}

func (r *rig) rec(group, topic string, part int32, off int64) engine.RecordInfo {
	r.t.Helper()
	ri, err := r.e.ShareRecord(group, engine.TopicPartition{Topic: topic, Partition: part}, off)
	if err != nil {
		r.t.Fatalf("ShareRecord(%s, %s-%d, %d): %v", group, topic, part, off, err)
	}
	return ri
}

// wantState checks the state (and, when count >= 0, the delivery count) of
// offsets [first, last] of in-0 for group.
func (r *rig) wantState(group string, first, last int64, st engine.RecordState, count int) {
	r.t.Helper()
	for o := first; o <= last; o++ {
		ri := r.rec(group, "in", 0, o)
		if ri.State != st || (count >= 0 && ri.DeliveryCount != count) {
			r.t.Fatalf("in-0@%d for %s: got %v count %d, want %v count %d", o, group, ri.State, ri.DeliveryCount, st, count)
		}
	}
}

// committed reads every read_committed record of topic-part.
func (r *rig) committed(topic string, part int32) []engine.Record {
	r.t.Helper()
	recs, _, err := r.e.Fetch(engine.TopicPartition{Topic: topic, Partition: part}, 0, 1<<30, engine.ReadCommitted)
	if err != nil {
		r.t.Fatalf("Fetch(%s-%d): %v", topic, part, err)
	}
	return recs
}

func (r *rig) check() {
	r.t.Helper()
	if err := r.e.CheckInvariants(); err != nil {
		r.t.Fatalf("CheckInvariants: %v", err)
	}
}

func accept(first, last int64) engine.Acknowledgement {
	return engine.Acknowledgement{Topic: "in", Partition: 0, First: first, Last: last, Type: engine.AckAccept}
}

func ackOf(t engine.AckType, first, last int64) engine.Acknowledgement {
	return engine.Acknowledgement{Topic: "in", Partition: 0, First: first, Last: last, Type: t}
}

func offsetsOf(recs []engine.Record) []int64 {
	out := make([]int64, len(recs))
	for i, r := range recs {
		out[i] = r.Offset
	}
	return out
}

// restartTxn aborts p's transaction, which a failed staging left
// abortable, and begins the next one.
func restartTxn(t testing.TB, p *engine.Producer) {
	t.Helper()
	wantErr(t, "abort the abortable transaction", p.Abort(), nil)
	wantErr(t, "begin again", p.Begin(), nil)
}

func wantErr(t testing.TB, what string, err, want error) {
	t.Helper()
	if want == nil {
		if err != nil {
			t.Fatalf("%s: unexpected error %v", what, err)
		}
		return
	}
	if !errors.Is(err, want) {
		t.Fatalf("%s: got error %v, want %v", what, err, want)
	}
}

// TestShareMembersAcquireDisjoint: more consumers than partitions share one
// partition; each poll acquires records no other member holds.
func TestShareMembersAcquireDisjoint(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	r.produce("in", 0, 100)
	members := make([]*engine.ShareMember, 4)
	for i := range members {
		members[i] = r.join("g", engine.AckExplicit)
	}
	owner := map[int64]string{}
	for round := 0; ; round++ {
		got := 0
		for _, m := range members {
			recs := r.poll(m, 7)
			got += len(recs)
			for _, rec := range recs {
				if prev, dup := owner[rec.Offset]; dup {
					t.Fatalf("offset %d acquired by %s and %s", rec.Offset, prev, m.ID())
				}
				owner[rec.Offset] = m.ID()
				if rec.DeliveryCount != 1 {
					t.Fatalf("offset %d: delivery count %d, want 1", rec.Offset, rec.DeliveryCount)
				}
			}
		}
		if got == 0 {
			break
		}
		if round > 100 {
			t.Fatal("polls never ran dry")
		}
	}
	if len(owner) != 100 {
		t.Fatalf("acquired %d distinct records, want 100", len(owner))
	}
	perMember := map[string]int{}
	for o, id := range owner {
		if ri := r.rec("g", "in", 0, o); ri.State != engine.StateAcquired || ri.Owner != id {
			t.Fatalf("offset %d: %v owned by %q, want ACQUIRED by %q", o, ri.State, ri.Owner, id)
		}
		perMember[id]++
	}
	if len(perMember) != 4 {
		t.Fatalf("records spread over %d members, want 4: %v", len(perMember), perMember)
	}
	// Each member acknowledges exactly its own records.
	for _, m := range members {
		var acks []engine.Acknowledgement
		for o, id := range owner {
			if id == m.ID() {
				acks = append(acks, accept(o, o))
			}
		}
		wantErr(t, "ack own records", m.Acknowledge(acks), nil)
	}
	info, err := r.e.SharePartition("g", engine.TopicPartition{Topic: "in", Partition: 0})
	wantErr(t, "SharePartition", err, nil)
	if info.SPSO != 100 || info.InFlight != 0 {
		t.Fatalf("after acking everything: SPSO %d in-flight %d, want 100 and 0", info.SPSO, info.InFlight)
	}
	if s := r.e.Stats(); s.Share.Accepted != 100 || s.Share.Acquired != 100 {
		t.Fatalf("stats: accepted %d acquired %d, want 100 and 100", s.Share.Accepted, s.Share.Acquired)
	}
	r.check()
}

// TestShareAckErrors drives every acknowledgement error through
// ShareMember.Acknowledge and checks that a failed partition request
// changes nothing (all or nothing per partition).
func TestShareAckErrors(t *testing.T) {
	t.Parallel()
	// Setup for every case: 20 records; A holds 0..4, B holds 5..9, 10..19
	// were never acquired; topic "other" exists but the group never read it.
	cases := []struct {
		name string
		prep func(a *engine.ShareMember) error // optional, after the setup
		acks func(r *rig) []engine.Acknowledgement
		want error
	}{
		{"not owner", nil, func(*rig) []engine.Acknowledgement { return []engine.Acknowledgement{accept(5, 5)} }, engine.ErrNotOwner},
		{"not owner in a later batch", nil, func(*rig) []engine.Acknowledgement {
			return []engine.Acknowledgement{accept(0, 1), accept(4, 6)}
		}, engine.ErrNotOwner},
		{"not acquired (released)", func(a *engine.ShareMember) error {
			return a.Acknowledge([]engine.Acknowledgement{ackOf(engine.AckRelease, 2, 2)})
		}, func(r *rig) []engine.Acknowledgement {
			return []engine.Acknowledgement{accept(0, 4)}
		}, engine.ErrInvalidRecordState},
		{"out of range (never acquired)", nil, func(*rig) []engine.Acknowledgement { return []engine.Acknowledgement{accept(0, 10)} }, engine.ErrOffsetOutOfRange},
		{"out of range (beyond log)", nil, func(*rig) []engine.Acknowledgement { return []engine.Acknowledgement{accept(100, 100)} }, engine.ErrOffsetOutOfRange},
		{"invalid ack type", nil, func(*rig) []engine.Acknowledgement {
			return []engine.Acknowledgement{accept(0, 1), ackOf(engine.AckType(9), 2, 2)}
		}, engine.ErrInvalidAckType},
		{"invalid per-offset type", nil, func(*rig) []engine.Acknowledgement {
			return []engine.Acknowledgement{{Topic: "in", First: 0, Last: 2, Types: []engine.AckType{engine.AckAccept, 42, engine.AckAccept}}}
		}, engine.ErrInvalidAckType},
		{"last before first", nil, func(*rig) []engine.Acknowledgement { return []engine.Acknowledgement{accept(3, 2)} }, engine.ErrInvalidRequest},
		{"types length mismatch", nil, func(*rig) []engine.Acknowledgement {
			return []engine.Acknowledgement{{Topic: "in", First: 0, Last: 2, Types: []engine.AckType{engine.AckAccept}}}
		}, engine.ErrInvalidRequest},
		{"unknown partition", nil, func(*rig) []engine.Acknowledgement {
			return []engine.Acknowledgement{{Topic: "in", Partition: 7, First: 0, Last: 0, Type: engine.AckAccept}}
		}, engine.ErrUnknownTopicOrPartition},
		{"partition the group never read", nil, func(*rig) []engine.Acknowledgement {
			return []engine.Acknowledgement{{Topic: "other", First: 0, Last: 0, Type: engine.AckAccept}}
		}, engine.ErrInvalidRecordState},
		{"overlapping batches", nil, func(*rig) []engine.Acknowledgement {
			return []engine.Acknowledgement{accept(0, 1), ackOf(engine.AckRelease, 1, 2)}
		}, engine.ErrInvalidRequest},
		{"below SPSO is a no-op success", func(a *engine.ShareMember) error {
			return a.Acknowledge([]engine.Acknowledgement{accept(0, 0)})
		}, func(r *rig) []engine.Acknowledgement { return []engine.Acknowledgement{accept(0, 0)} }, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := newRig(t)
			r.topic("other", 1)
			r.produce("in", 0, 20)
			r.produce("other", 0, 1)
			a, b := r.join("g", engine.AckExplicit), r.join("g", engine.AckExplicit)
			if got := offsetsOf(r.poll(a, 5)); len(got) != 5 || got[0] != 0 {
				t.Fatalf("A acquired %v, want 0..4", got)
			}
			if got := offsetsOf(r.poll(b, 5)); len(got) != 5 || got[0] != 5 {
				t.Fatalf("B acquired %v, want 5..9", got)
			}
			if tc.prep != nil {
				wantErr(t, "prep", tc.prep(a), nil)
			}
			before, err := r.e.SharePartition("g", engine.TopicPartition{Topic: "in"})
			wantErr(t, "SharePartition", err, nil)
			err = a.Acknowledge(tc.acks(r))
			wantErr(t, "Acknowledge", err, tc.want)
			if tc.want != nil {
				var ae *engine.AckError
				if !errors.As(err, &ae) {
					t.Fatalf("error %v is not an *AckError", err)
				}
			}
			after, _ := r.e.SharePartition("g", engine.TopicPartition{Topic: "in"})
			if fmt.Sprint(before.Ranges) != fmt.Sprint(after.Ranges) {
				t.Fatalf("a failed request changed state:\nbefore %v\nafter  %v", before.Ranges, after.Ranges)
			}
			r.check()
		})
	}
}

// TestShareAckPartitionsIndependent: acks for two partitions in one
// request; the failing partition is reported, the other applied.
func TestShareAckPartitionsIndependent(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	r.topic("two", 2)
	r.produce("two", 0, 3)
	r.produce("two", 1, 3)
	m := r.join("g", engine.AckExplicit, "two")
	if n := len(r.poll(m, 10)); n != 6 {
		t.Fatalf("acquired %d, want 6", n)
	}
	err := m.Acknowledge([]engine.Acknowledgement{
		{Topic: "two", Partition: 0, First: 0, Last: 2, Type: engine.AckAccept},
		{Topic: "two", Partition: 1, First: 0, Last: 3, Type: engine.AckAccept}, // 3 was never acquired
	})
	var ae *engine.AckError
	if !errors.As(err, &ae) || len(ae.Partitions) != 1 || !errors.Is(ae.Partitions[engine.TopicPartition{Topic: "two", Partition: 1}], engine.ErrOffsetOutOfRange) {
		t.Fatalf("got %v, want an AckError for two-1 only", err)
	}
	if ri := r.rec("g", "two", 0, 2); ri.State != engine.StateAcknowledged {
		t.Fatalf("two-0@2 is %v, want ACKNOWLEDGED", ri.State)
	}
	if ri := r.rec("g", "two", 1, 0); ri.State != engine.StateAcquired {
		t.Fatalf("two-1@0 is %v, want ACQUIRED", ri.State)
	}
}

// TestShareGroupErrors covers errors of joining and of unknown groups.
func TestShareGroupErrors(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	_, err := r.e.JoinShareGroup("", []string{"in"}, engine.AckExplicit)
	wantErr(t, "empty group", err, engine.ErrInvalidConfig)
	_, err = r.e.JoinShareGroup("g", []string{"in"}, engine.AckMode(7))
	wantErr(t, "bad mode", err, engine.ErrInvalidConfig)
	_, err = r.e.JoinShareGroup("g", []string{"nope"}, engine.AckExplicit)
	wantErr(t, "unknown topic", err, engine.ErrUnknownTopicOrPartition)
	_, err = r.e.ShareGroupConfig("nope")
	wantErr(t, "config of unknown group", err, engine.ErrUnknownGroup)
	_, err = r.e.ShareRecord("nope", engine.TopicPartition{Topic: "in"}, 0)
	wantErr(t, "record of unknown group", err, engine.ErrUnknownGroup)
	wantErr(t, "bad config", r.e.SetShareGroupConfig("g", engine.GroupConfig{}), engine.ErrInvalidConfig)

	// Staging for an unknown group.
	r.produce("in", 0, 1)
	m := r.join("g", engine.AckTransactional)
	r.poll(m, 1)
	p := r.producer("tx")
	wantErr(t, "begin", p.Begin(), nil)
	meta := m.Metadata()
	meta.GroupID = "nope"
	wantErr(t, "stage for unknown group", p.SendShareAcksToTransaction([]engine.Acknowledgement{accept(0, 0)}, meta), engine.ErrUnknownGroup)

	// Group ids are typed: a share group id cannot be used by a classic
	// group and the reverse.
	_, err = r.e.JoinClassicGroup("g", []string{"in"}, engine.ResetEarliest)
	wantErr(t, "classic join of a share group", err, engine.ErrGroupTypeMismatch)
	if _, err := r.e.JoinClassicGroup("c", []string{"in"}, engine.ResetEarliest); err != nil {
		t.Fatal(err)
	}
	_, err = r.e.JoinShareGroup("c", []string{"in"}, engine.AckExplicit)
	wantErr(t, "share join of a classic group", err, engine.ErrGroupTypeMismatch)
}

// TestShareMemberGone: after Leave or a session timeout the member's calls
// fail with ErrUnknownMember and its acquired records are released with the
// delivery count reduced by one.
func TestShareMemberGone(t *testing.T) {
	t.Parallel()
	for _, how := range []string{"leave", "session timeout"} {
		t.Run(how, func(t *testing.T) {
			t.Parallel()
			r := newRig(t, engine.WithSessionTimeout(10*time.Second))
			r.produce("in", 0, 4)
			m := r.join("g", engine.AckTransactional)
			other := r.join("g", engine.AckExplicit)
			r.poll(m, 4)
			meta := m.Metadata()
			r.wantState("g", 0, 3, engine.StateAcquired, 1)
			switch how {
			case "leave":
				wantErr(t, "Leave", m.Leave(), nil)
				wantErr(t, "second Leave", m.Leave(), nil)
			default:
				r.clk.Advance(9 * time.Second)
				r.e.FireTimers()
				r.poll(other, 1) // keeps the other member alive; nothing to acquire
				r.wantState("g", 0, 3, engine.StateAcquired, 1)
				r.clk.Advance(time.Second)
				r.e.FireTimers()
				if s := r.e.Stats(); s.SessionsEnded != 1 {
					t.Fatalf("sessions ended %d, want 1", s.SessionsEnded)
				}
			}
			r.wantState("g", 0, 3, engine.StateAvailable, 0)
			_, err := m.Poll(1)
			wantErr(t, "Poll", err, engine.ErrUnknownMember)
			wantErr(t, "Acknowledge", m.Acknowledge([]engine.Acknowledgement{accept(0, 0)}), engine.ErrUnknownMember)
			p := r.producer("tx")
			wantErr(t, "Begin", p.Begin(), nil)
			err = p.SendShareAcksToTransaction([]engine.Acknowledgement{accept(0, 0)}, meta)
			wantErr(t, "stage with a departed member's metadata", err, engine.ErrUnknownMember)
			if !engine.ErrorIsFenced(err) {
				t.Fatalf("ErrorIsFenced(%v) = false", err)
			}
			// The released records go to the remaining member as first
			// deliveries again.
			if recs := r.poll(other, 10); len(recs) != 4 || recs[0].DeliveryCount != 1 {
				t.Fatalf("other member got %d records (count %d), want 4 at count 1", len(recs), recs[0].DeliveryCount)
			}
			r.check()
		})
	}
}

// TestShareFencedMemberEpoch: staging with a member epoch other than the
// member's current one is fenced.
func TestShareFencedMemberEpoch(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	r.produce("in", 0, 2)
	m := r.join("g", engine.AckTransactional)
	r.poll(m, 2)
	p := r.producer("tx")
	wantErr(t, "Begin", p.Begin(), nil)
	for _, delta := range []int32{-1, 1} {
		meta := m.Metadata()
		meta.MemberEpoch += delta
		err := p.SendShareAcksToTransaction([]engine.Acknowledgement{accept(0, 1)}, meta)
		wantErr(t, fmt.Sprintf("stage with epoch %d", meta.MemberEpoch), err, engine.ErrFencedMemberEpoch)
		wantErr(t, fmt.Sprintf("stage with epoch %d", meta.MemberEpoch), err, engine.ErrAbortableTransaction)
		restartTxn(t, p)
	}
	r.wantState("g", 0, 1, engine.StateAcquired, 1)
	meta := m.Metadata()
	meta.MemberID = "g-member-999"
	wantErr(t, "stage with an unknown member id", p.SendShareAcksToTransaction([]engine.Acknowledgement{accept(0, 1)}, meta), engine.ErrUnknownMember)
	restartTxn(t, p)
	wantErr(t, "stage with the right epoch", p.SendShareAcksToTransaction([]engine.Acknowledgement{accept(0, 1)}, m.Metadata()), nil)
	r.wantState("g", 0, 1, engine.StateTxPending, 1)
}

// TestImplicitMode: the next poll accepts the previous poll's records;
// records whose lock expired in between are redelivered instead.
func TestImplicitMode(t *testing.T) {
	t.Parallel()
	t.Run("next poll accepts", func(t *testing.T) {
		t.Parallel()
		r := newRig(t)
		r.produce("in", 0, 6)
		m := r.join("g", engine.AckImplicit)
		if got := offsetsOf(r.poll(m, 3)); fmt.Sprint(got) != "[0 1 2]" {
			t.Fatalf("first poll %v", got)
		}
		r.wantState("g", 0, 2, engine.StateAcquired, 1)
		if got := offsetsOf(r.poll(m, 3)); fmt.Sprint(got) != "[3 4 5]" {
			t.Fatalf("second poll %v", got)
		}
		r.wantState("g", 0, 2, engine.StateAcknowledged, -1)
		r.wantState("g", 3, 5, engine.StateAcquired, 1)
		if got := r.poll(m, 3); len(got) != 0 {
			t.Fatalf("third poll got %v, want nothing", offsetsOf(got))
		}
		r.wantState("g", 3, 5, engine.StateAcknowledged, -1)
		r.check()
	})
	t.Run("expired records redelivered", func(t *testing.T) {
		t.Parallel()
		r := newRig(t)
		r.produce("in", 0, 3)
		m := r.join("g", engine.AckImplicit)
		r.poll(m, 3)
		r.clk.Advance(rigGroup.LockDuration)
		recs := r.poll(m, 3)
		if len(recs) != 3 || recs[0].DeliveryCount != 2 {
			t.Fatalf("after lock expiry the next poll got %v (count %d), want 0..2 at count 2", offsetsOf(recs), recs[0].DeliveryCount)
		}
		r.poll(m, 3)
		r.wantState("g", 0, 2, engine.StateAcknowledged, -1)
	})
	t.Run("expiry fired by timers", func(t *testing.T) {
		t.Parallel()
		r := newRig(t)
		r.produce("in", 0, 2)
		m := r.join("g", engine.AckImplicit)
		other := r.join("g", engine.AckImplicit)
		r.poll(m, 2)
		r.clk.Advance(rigGroup.LockDuration)
		r.e.FireTimers()
		r.wantState("g", 0, 1, engine.StateAvailable, 1)
		if got := r.poll(other, 2); len(got) != 2 {
			t.Fatalf("other member got %v", offsetsOf(got))
		}
		// m's next poll tries to accept 0..1, which other now holds: the
		// implicit ack fails and changes nothing.
		r.poll(m, 2)
		r.wantState("g", 0, 1, engine.StateAcquired, 2)
		if ri := r.rec("g", "in", 0, 0); ri.Owner != other.ID() {
			t.Fatalf("owner %q, want %q", ri.Owner, other.ID())
		}
	})
}

// TestExplicitMode: polls never acknowledge; each record's fate is the
// application's per-offset choice.
func TestExplicitMode(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	r.produce("in", 0, 5)
	m := r.join("g", engine.AckExplicit)
	r.poll(m, 5)
	if got := r.poll(m, 5); len(got) != 0 {
		t.Fatalf("second poll got %v, want nothing (records still held)", offsetsOf(got))
	}
	r.wantState("g", 0, 4, engine.StateAcquired, 1)
	deadline := r.rec("g", "in", 0, 4).LockDeadline
	r.clk.Advance(time.Second)
	err := m.Acknowledge([]engine.Acknowledgement{{Topic: "in", First: 0, Last: 4, Types: []engine.AckType{
		engine.AckAccept, engine.AckReject, engine.AckRelease, engine.AckGap, engine.AckRenew,
	}}})
	wantErr(t, "mixed acknowledge", err, nil)
	want := []struct {
		st     engine.RecordState
		reason engine.ArchiveReason
	}{
		{engine.StateAcknowledged, engine.ReasonNone},
		{engine.StateArchived, engine.ReasonRejected},
		{engine.StateAvailable, engine.ReasonNone},
		{engine.StateArchived, engine.ReasonGap},
		{engine.StateAcquired, engine.ReasonNone},
	}
	for o, w := range want {
		ri := r.rec("g", "in", 0, int64(o))
		if ri.State != w.st || ri.Reason != w.reason {
			t.Errorf("offset %d: got %v/%v, want %v/%v", o, ri.State, ri.Reason, w.st, w.reason)
		}
	}
	if ri := r.rec("g", "in", 0, 4); ri.LockDeadline != deadline+time.Second {
		t.Fatalf("renewed lock deadline %v, want %v", ri.LockDeadline, deadline+time.Second)
	}
	if recs := r.poll(m, 5); fmt.Sprint(offsetsOf(recs)) != "[2]" || recs[0].DeliveryCount != 2 {
		t.Fatalf("poll after release got %v, want [2] at count 2", offsetsOf(recs))
	}
	r.check()
}

// TestGroupConfigPerGroup: each group reads with its own configuration:
// auto offset reset, delivery limit, isolation level.
func TestGroupConfigPerGroup(t *testing.T) {
	t.Parallel()
	t.Run("auto offset reset", func(t *testing.T) {
		t.Parallel()
		r := newRig(t)
		r.produce("in", 0, 5)
		latest := rigGroup
		latest.AutoOffsetReset = engine.ResetLatest
		wantErr(t, "config latest", r.e.SetShareGroupConfig("late", latest), nil)
		wantErr(t, "config earliest", r.e.SetShareGroupConfig("early", rigGroup), nil)
		ml, me := r.join("late", engine.AckExplicit), r.join("early", engine.AckExplicit)
		if got := r.poll(ml, 10); len(got) != 0 {
			t.Fatalf("latest group got %v before new records", offsetsOf(got))
		}
		r.produce("in", 0, 3)
		if got := offsetsOf(r.poll(ml, 10)); fmt.Sprint(got) != "[5 6 7]" {
			t.Fatalf("latest group got %v, want [5 6 7]", got)
		}
		if got := r.poll(me, 10); len(got) != 8 {
			t.Fatalf("earliest group got %v, want 0..7", offsetsOf(got))
		}
		if cfg, err := r.e.ShareGroupConfig("late"); err != nil || cfg.AutoOffsetReset != engine.ResetLatest {
			t.Fatalf("ShareGroupConfig(late) = %+v, %v", cfg, err)
		}
	})
	t.Run("delivery limit", func(t *testing.T) {
		t.Parallel()
		r := newRig(t)
		r.produce("in", 0, 1)
		one := rigGroup
		one.DeliveryLimit = 1
		wantErr(t, "config", r.e.SetShareGroupConfig("one", one), nil)
		for _, g := range []string{"one", "five"} {
			m := r.join(g, engine.AckExplicit)
			r.poll(m, 1)
			wantErr(t, "release", m.Acknowledge([]engine.Acknowledgement{ackOf(engine.AckRelease, 0, 0)}), nil)
		}
		if ri := r.rec("one", "in", 0, 0); ri.State != engine.StateArchived || ri.Reason != engine.ReasonLimit {
			t.Fatalf("group one: %v/%v, want ARCHIVED at the limit", ri.State, ri.Reason)
		}
		r.wantState("five", 0, 0, engine.StateAvailable, 1)
	})
	t.Run("config change applies to existing share partitions", func(t *testing.T) {
		t.Parallel()
		r := newRig(t)
		r.produce("in", 0, 1)
		m := r.join("g", engine.AckExplicit)
		r.poll(m, 1)
		short := rigGroup
		short.DeliveryLimit = 1
		wantErr(t, "config", r.e.SetShareGroupConfig("g", short), nil)
		wantErr(t, "release", m.Acknowledge([]engine.Acknowledgement{ackOf(engine.AckRelease, 0, 0)}), nil)
		r.wantState("g", 0, 0, engine.StateArchived, 1)
	})
	t.Run("read_committed input", func(t *testing.T) {
		t.Parallel()
		r := newRig(t)
		rc := rigGroup
		rc.Isolation = engine.ReadCommitted
		wantErr(t, "config", r.e.SetShareGroupConfig("rc", rc), nil)
		wantErr(t, "config", r.e.SetShareGroupConfig("ru", rigGroup), nil)
		mrc, mru := r.join("rc", engine.AckExplicit), r.join("ru", engine.AckExplicit)

		// Offsets: 0 plain; 1..2 txn A (aborted); 3..4 txn B (committed);
		// then markers; then a plain record.
		r.produce("in", 0, 1)
		pa, pb := r.producer("a"), r.producer("b")
		wantErr(t, "begin a", pa.Begin(), nil)
		wantErr(t, "begin b", pb.Begin(), nil)
		txnProduce := func(p *engine.Producer, v string) {
			t.Helper()
			if _, err := p.Produce("in", 0, []engine.ProduceRecord{{Value: []byte(v + "1")}, {Value: []byte(v + "2")}}); err != nil {
				t.Fatal(err)
			}
		}
		txnProduce(pa, "a")
		txnProduce(pb, "b")
		if got := offsetsOf(r.poll(mrc, 10)); fmt.Sprint(got) != "[0]" {
			t.Fatalf("read_committed group got %v while transactions are open, want [0]", got)
		}
		if got := offsetsOf(r.poll(mru, 10)); fmt.Sprint(got) != "[0 1 2 3 4]" {
			t.Fatalf("read_uncommitted group got %v, want [0 1 2 3 4]", got)
		}
		wantErr(t, "abort a", pa.Abort(), nil) // marker at 5
		if got := r.poll(mrc, 10); len(got) != 0 {
			t.Fatalf("read_committed group got %v while B is open", offsetsOf(got))
		}
		wantErr(t, "commit b", pb.Commit(), nil) // marker at 6
		r.produce("in", 0, 1)                    // 7
		recs := r.poll(mrc, 10)
		if got := offsetsOf(recs); fmt.Sprint(got) != "[3 4 7]" {
			t.Fatalf("read_committed group got %v after the markers, want [3 4 7]", got)
		}
		for _, o := range []int64{1, 2, 5, 6} {
			if ri := r.rec("rc", "in", 0, o); ri.State != engine.StateArchived || ri.Reason != engine.ReasonGap {
				t.Fatalf("rc offset %d: %v/%v, want ARCHIVED as a gap", o, ri.State, ri.Reason)
			}
		}
		for _, rec := range recs {
			if string(rec.Value) == "a1" || string(rec.Value) == "a2" {
				t.Fatalf("aborted record %q delivered to read_committed", rec.Value)
			}
		}
		r.check()
	})
}

// TestShareMultiplePartitionsRotate: a member's polls rotate over its
// partitions so none starves.
func TestShareMultiplePartitionsRotate(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	r.topic("four", 4)
	for p := int32(0); p < 4; p++ {
		r.produce("four", p, 10)
	}
	m := r.join("g", engine.AckExplicit, "four")
	seen := map[int32]int{}
	for i := 0; i < 4; i++ {
		for _, rec := range r.poll(m, 5) {
			seen[rec.Partition]++
		}
	}
	parts := make([]int32, 0, len(seen))
	for p := range seen {
		parts = append(parts, p)
	}
	sort.Slice(parts, func(i, j int) bool { return parts[i] < parts[j] })
	if len(parts) != 4 {
		t.Fatalf("4 polls of 5 reached partitions %v, want all 4", parts)
	}
}

// TestLogStartPassesAcquiredRecords: records still ACQUIRED when the log
// start offset passes them are archived once they are released, instead
// of being acquired again though the log no longer holds them.
func TestLogStartPassesAcquiredRecords(t *testing.T) {
	t.Parallel()
	for _, how := range []string{"release", "lock expiry", "leave", "abort"} {
		t.Run(how, func(t *testing.T) {
			t.Parallel()
			r := newRig(t)
			tp := engine.TopicPartition{Topic: "in"}
			r.produce("in", 0, 6)
			m := r.join("g", engine.AckTransactional)
			r.poll(m, 4) // 0..3
			p := r.producer("p")
			if how == "abort" {
				wantErr(t, "begin", p.Begin(), nil)
				wantErr(t, "stage", p.SendShareAcksToTransaction([]engine.Acknowledgement{accept(0, 3)}, m.Metadata()), nil)
			}
			wantErr(t, "delete records", r.e.DeleteRecords(tp, 2), nil)
			switch how {
			case "release":
				wantErr(t, "release", m.Acknowledge([]engine.Acknowledgement{ackOf(engine.AckRelease, 0, 3)}), nil)
			case "lock expiry":
				r.clk.Advance(rigGroup.LockDuration)
				r.e.FireTimers()
			case "leave":
				wantErr(t, "leave", m.Leave(), nil)
			case "abort":
				wantErr(t, "abort", p.Abort(), nil)
			}
			other := r.join("g", engine.AckExplicit)
			recs, err := other.Poll(10)
			if err != nil {
				t.Fatalf("poll after the log start passed released records: %v", err)
			}
			if got := offsetsOf(recs); fmt.Sprint(got) != "[2 3 4 5]" {
				t.Fatalf("poll got %v, want [2 3 4 5]", got)
			}
			for o := int64(0); o < 2; o++ {
				if ri := r.rec("g", "in", 0, o); ri.State != engine.StateArchived || ri.Reason != engine.ReasonLogStart {
					t.Fatalf("offset %d below the log start is %v/%v, want ARCHIVED (log-start)", o, ri.State, ri.Reason)
				}
			}
			r.check()
		})
	}
}
