package serve_test

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// ListOffsets by time through kadm: earliest, latest, the first offset at
// or after a record's own timestamp (the timestamps Fetch shows), none
// after the last, and the max-timestamp record; read_committed does not
// see a record of an open transaction.
func TestListOffsetsByTime(t *testing.T) {
	s, e := start(t)
	if err := e.CreateTopic("t", 1); err != nil {
		t.Fatal(err)
	}
	cl := client(t, s, kgo.DefaultProduceTopic("t"))
	for i := range 3 {
		produceN(t, cl, "t", 1)
		if i < 2 {
			time.Sleep(5 * time.Millisecond) // distinct milliseconds
		}
	}
	cons := client(t, s, kgo.ConsumeTopics("t"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	var recs []*kgo.Record
	for len(recs) < 3 {
		fs := cons.PollFetches(ctx(t))
		if err := fs.Err(); err != nil {
			t.Fatal(err)
		}
		recs = append(recs, fs.Records()...)
	}
	ms := func(r *kgo.Record) int64 { return r.Timestamp.UnixMilli() }
	adm := kadm.NewClient(client(t, s))
	lookup := func(l kadm.ListedOffsets, err error) kadm.ListedOffset {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		o, ok := l.Lookup("t", 0)
		if !ok || o.Err != nil {
			t.Fatalf("lookup: %+v", o)
		}
		return o
	}
	for _, c := range []struct {
		name       string
		got        kadm.ListedOffset
		offset, ts int64
	}{
		{"earliest", lookup(adm.ListStartOffsets(ctx(t), "t")), 0, -1},
		{"latest", lookup(adm.ListEndOffsets(ctx(t), "t")), 3, -1},
		{"at record 1's time", lookup(adm.ListOffsetsAfterMilli(ctx(t), ms(recs[1]), "t")), 1, ms(recs[1])},
		{"just after record 0", lookup(adm.ListOffsetsAfterMilli(ctx(t), ms(recs[0])+1, "t")), 1, ms(recs[1])},
		{"before everything", lookup(adm.ListOffsetsAfterMilli(ctx(t), 0, "t")), 0, ms(recs[0])},
		// The server answers offset -1 (no record that late); kadm
		// turns that into the end offset.
		{"after the last", lookup(adm.ListOffsetsAfterMilli(ctx(t), ms(recs[2])+1000, "t")), 3, -1},
		{"max timestamp", lookup(adm.ListMaxTimestampOffsets(ctx(t), "t")), 2, ms(recs[2])},
	} {
		if c.got.Offset != c.offset || c.got.Timestamp != c.ts {
			t.Errorf("%s: offset %d timestamp %d, want %d and %d", c.name, c.got.Offset, c.got.Timestamp, c.offset, c.ts)
		}
	}

	// An open transaction's record: read_uncommitted's max timestamp is
	// it, read_committed's is still record 2.
	tx := client(t, s, kgo.DefaultProduceTopic("t"), kgo.TransactionalID("lo-tx"))
	if err := tx.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(5 * time.Millisecond)
	if err := tx.ProduceSync(ctx(t), &kgo.Record{Value: []byte("open")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		iso      int8
		ts, want int64
	}{{0, -3, 3}, {1, -3, 2}, {0, ms(recs[2]) + 1000, -1}, {0, 1 << 62, -1}} {
		iso, want := c.iso, c.want
		req := kmsg.NewPtrListOffsetsRequest()
		req.IsolationLevel = iso
		rt := kmsg.NewListOffsetsRequestTopic()
		rt.Topic = "t"
		rp := kmsg.NewListOffsetsRequestTopicPartition()
		rp.Timestamp = c.ts
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(ctx(t), cl)
		if err != nil {
			t.Fatal(err)
		}
		if p := resp.Topics[0].Partitions[0]; p.ErrorCode != 0 || p.Offset != want {
			t.Errorf("timestamp %d at isolation %d: offset %d (error %d), want %d", c.ts, iso, p.Offset, p.ErrorCode, want)
		}
	}
	if err := tx.EndTransaction(ctx(t), kgo.TryAbort); err != nil {
		t.Fatal(err)
	}
}
