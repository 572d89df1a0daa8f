package serve_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sharebench/sharebench/engine"
)

// kadm's AlterShareGroupOffsets and DeleteShareGroupOffsets against the
// server: refused while a share consumer is in the group, then a reset
// moves the start offset (DescribeShareGroupOffsets shows it, a new
// consumer gets the records from there) and a delete makes the next
// consumer start at share.auto.offset.reset (earliest).
func TestShareGroupOffsetsAdmin(t *testing.T) {
	s, e := start(t)
	if err := e.CreateTopic("in", 1); err != nil {
		t.Fatal(err)
	}
	if err := e.SetShareGroupConfig("sg", engine.GroupConfig{LockDuration: 30 * time.Second, DeliveryLimit: 5, MaxRecordLocks: 2000, AutoOffsetReset: engine.ResetEarliest}); err != nil {
		t.Fatal(err)
	}
	produceN(t, client(t, s), "in", 10)
	adm := kadm.NewClient(client(t, s))
	consume := func(n int) []*kgo.Record {
		t.Helper()
		cons, err := kgo.NewClient(kgo.SeedBrokers(s.Addr()), kgo.ShareGroup("sg"), kgo.ConsumeTopics("in"), kgo.FetchMaxWait(100*time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		defer cons.Close()
		var recs []*kgo.Record
		for len(recs) < n {
			fs := cons.PollRecords(ctx(t), n-len(recs))
			if err := fs.Err(); err != nil {
				t.Fatal(err)
			}
			recs = append(recs, fs.Records()...)
		}
		cons.MarkAcks(kgo.AckAccept, recs...)
		if err := cons.FlushAcks(ctx(t)); err != nil {
			t.Fatal(err)
		}
		return recs
	}
	if recs := consume(10); recs[0].Offset != 0 {
		t.Fatalf("first consumer started at %d", recs[0].Offset)
	}

	// A member in the group: both are refused with NON_EMPTY_GROUP.
	member, err := kgo.NewClient(kgo.SeedBrokers(s.Addr()), kgo.ShareGroup("sg"), kgo.ConsumeTopics("in"), kgo.FetchMaxWait(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	for !hasMembers(t, e, "sg") {
		c, cancel := context.WithTimeout(ctx(t), 200*time.Millisecond)
		member.PollRecords(c, 1) // joins; nothing to fetch
		cancel()
	}
	var offs kadm.Offsets
	offs.Add(kadm.Offset{Topic: "in", Partition: 0, At: 4})
	if _, err := adm.AlterShareGroupOffsets(ctx(t), "sg", offs); !errors.Is(err, kerr.NonEmptyGroup) {
		t.Fatalf("alter with a member: %v, want NON_EMPTY_GROUP", err)
	}
	if _, err := adm.DeleteShareGroupOffsets(ctx(t), "sg", "in"); !errors.Is(err, kerr.NonEmptyGroup) {
		t.Fatalf("delete with a member: %v, want NON_EMPTY_GROUP", err)
	}
	member.Close()

	// Reset to 4: described, then consumed from 4.
	rs, err := adm.AlterShareGroupOffsets(ctx(t), "sg", offs)
	if err != nil || rs.Error() != nil {
		t.Fatalf("alter: %v, %v", err, rs.Error())
	}
	var bad kadm.Offsets
	bad.Add(kadm.Offset{Topic: "in", Partition: 0, At: 99})
	bad.Add(kadm.Offset{Topic: "in", Partition: 7, At: 0})
	if rs, err := adm.AlterShareGroupOffsets(ctx(t), "sg", bad); err != nil {
		t.Fatalf("alter out of range: %v", err)
	} else {
		for p, want := range map[int32]error{0: kerr.OffsetOutOfRange, 7: kerr.UnknownTopicOrPartition} {
			if got := rs["in"][p]; !errors.Is(got, want) {
				t.Fatalf("alter in-%d: %v, want %v", p, got, want)
			}
		}
	}
	desc, err := adm.DescribeShareGroupOffsets(ctx(t), "sg")
	if err != nil {
		t.Fatal(err)
	}
	if o := desc["sg"].Offsets["in"][0]; o.StartOffset != 4 || o.Lag != 6 {
		t.Fatalf("described after the reset: %+v, want start 4, lag 6", o)
	}
	if recs := consume(6); recs[0].Offset != 4 {
		t.Fatalf("consumer after the reset started at %d, want 4", recs[0].Offset)
	}

	// Delete: the next consumer starts at earliest.
	ds, err := adm.DeleteShareGroupOffsets(ctx(t), "sg", "in", "nope")
	if err != nil {
		t.Fatal(err)
	}
	if err, _ := ds.Lookup("in"); err != nil {
		t.Fatalf("delete in: %v", err)
	}
	if err, _ := ds.Lookup("nope"); !errors.Is(err, kerr.UnknownTopicOrPartition) {
		t.Fatalf("delete of an unknown topic: %v", err)
	}
	if recs := consume(10); recs[0].Offset != 0 {
		t.Fatalf("consumer after the delete started at %d, want 0", recs[0].Offset)
	}
	if _, err := adm.AlterShareGroupOffsets(ctx(t), "unknown-group", offs); !errors.Is(err, kerr.GroupIDNotFound) {
		t.Fatalf("alter of an unknown group: %v, want GROUP_ID_NOT_FOUND", err)
	}
}

func hasMembers(t *testing.T, e *engine.Engine, group string) bool {
	ms, err := e.ShareMembers(group)
	return err == nil && len(ms) > 0
}
