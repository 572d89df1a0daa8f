package serve_test

import (
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sharebench/sharebench/engine"
)

// TestShareConsumerAckRenewReject drives the server with kgo's share
// consumer: accept, renew then accept, reject; the engine's share state
// must show each outcome.
func TestShareConsumerAckRenewReject(t *testing.T) {
	s, e := start(t)
	if err := e.CreateTopic("in", 1); err != nil {
		t.Fatal(err)
	}
	if err := e.SetShareGroupConfig("sg", engine.GroupConfig{LockDuration: 30 * time.Second, DeliveryLimit: 5, MaxRecordLocks: 2000, AutoOffsetReset: engine.ResetEarliest}); err != nil {
		t.Fatal(err)
	}
	produceN(t, client(t, s), "in", 3)
	cons := client(t, s, kgo.ShareGroup("sg"), kgo.ConsumeTopics("in"), kgo.FetchMaxWait(100*time.Millisecond))
	var recs []*kgo.Record
	for len(recs) < 3 {
		fs := cons.PollRecords(ctx(t), 3)
		if err := fs.Err(); err != nil {
			t.Fatal(err)
		}
		recs = append(recs, fs.Records()...)
	}
	cons.MarkAcks(kgo.AckAccept, recs[0])
	cons.MarkAcks(kgo.AckRenew, recs[1])
	cons.MarkAcks(kgo.AckReject, recs[2])
	if err := cons.FlushAcks(ctx(t)); err != nil {
		t.Fatal(err)
	}
	cons.MarkAcks(kgo.AckAccept, recs[1])
	if err := cons.FlushAcks(ctx(t)); err != nil {
		t.Fatal(err)
	}
	// All three are terminal (the engine keeps no per-record history
	// below SPSO unless asked to), and the reject did not redeliver.
	info, err := e.SharePartition("sg", engine.TopicPartition{Topic: "in", Partition: 0})
	if err != nil {
		t.Fatal(err)
	}
	if info.SPSO != 3 || info.InFlight != 0 {
		t.Fatalf("share partition %+v, want SPSO 3 and nothing in flight", info)
	}
}

// TestReadCommittedAndIdempotent produces transactionally (one commit, one
// abort) and idempotently, and reads back read_committed: only the
// committed and the idempotent records.
func TestReadCommittedAndIdempotent(t *testing.T) {
	s, e := start(t)
	if err := e.CreateTopic("t", 1); err != nil {
		t.Fatal(err)
	}
	tx := client(t, s, kgo.TransactionalID("tx"), kgo.DefaultProduceTopic("t"))
	for i, commit := range []bool{true, false} {
		if err := tx.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		v := "committed"
		if !commit {
			v = "aborted"
		}
		if err := tx.ProduceSync(ctx(t), &kgo.Record{Value: []byte(v)}).FirstErr(); err != nil {
			t.Fatalf("txn %d: %v", i, err)
		}
		if err := tx.EndTransaction(ctx(t), kgo.TransactionEndTry(commit)); err != nil {
			t.Fatalf("txn %d end: %v", i, err)
		}
	}
	idem := client(t, s, kgo.DefaultProduceTopic("t"))
	if err := idem.ProduceSync(ctx(t), &kgo.Record{Value: []byte("idempotent")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	rd := client(t, s, kgo.ConsumeTopics("t"), kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	var got []string
	for len(got) < 2 {
		fs := rd.PollFetches(ctx(t))
		if err := fs.Err(); err != nil {
			t.Fatal(err)
		}
		fs.EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
	}
	if len(got) != 2 || got[0] != "committed" || got[1] != "idempotent" {
		t.Fatalf("read_committed saw %q, want [committed idempotent]", got)
	}
	// read_uncommitted with control records: every record and both
	// markers, with the transaction's producer id.
	ru := client(t, s, kgo.ConsumeTopics("t"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.KeepControlRecords())
	var seen []string
	for len(seen) < 5 {
		fs := ru.PollFetches(ctx(t))
		if err := fs.Err(); err != nil {
			t.Fatal(err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			switch {
			case !r.Attrs.IsControl():
				seen = append(seen, string(r.Value))
			case len(r.Key) >= 4 && r.Key[3] == 1:
				seen = append(seen, "COMMIT")
			default:
				seen = append(seen, "ABORT")
			}
		})
	}
	if want := "committed COMMIT aborted ABORT idempotent"; strings.Join(seen, " ") != want {
		t.Fatalf("read_uncommitted with markers saw %q, want %q", strings.Join(seen, " "), want)
	}
}
