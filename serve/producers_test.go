package serve_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sharebench/sharebench/engine"
	"github.com/sharebench/sharebench/serve"
)

// Once a transaction end moves a producer past the epoch limit onto a new
// producer id (KIP-890 part 2), the admin APIs name it by the id its client
// holds: DescribeProducers lists the new id with its open transaction's
// start offset, beside the old id's entry, whose transactions ended; DescribeTransactions and ListTransactions say
// the new id and epoch, and a producer-id filter finds it by that id only.
// After a re-init they say what InitProducerId gave.
func TestAdminNamesTheNewProducerID(t *testing.T) {
	s, e := start(t, serve.WithMaxEpochForTest(1))
	if err := e.CreateTopic("t", 1); err != nil {
		t.Fatal(err)
	}
	tx := client(t, s, kgo.TransactionalID("dp-tx"), kgo.DefaultProduceTopic("t"))
	first, _, err := tx.ProducerID(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	produce := func() int64 {
		t.Helper()
		r, err := tx.ProduceSync(ctx(t), &kgo.Record{Value: []byte("x")}).First()
		if err != nil {
			t.Fatal(err)
		}
		return r.Offset
	}
	// Epoch 0 ends at 1, the limit; epoch 1 ends on a new producer id.
	for range 2 {
		if err := tx.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		produce()
		if err := tx.EndTransaction(ctx(t), kgo.TryCommit); err != nil {
			t.Fatal(err)
		}
	}
	now, epoch, err := tx.ProducerID(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	if now == first || epoch != 0 {
		t.Fatalf("after the epoch limit the client holds producer %d epoch %d, want a new id (not %d) at epoch 0", now, epoch, first)
	}
	if err := tx.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	start := produce()
	adm := kadm.NewClient(client(t, s))

	dp, err := adm.DescribeProducers(ctx(t), kadm.TopicsSet{"t": {0: {}}})
	if err != nil {
		t.Fatal(err)
	}
	var seen []string
	dp.EachProducer(func(p kadm.DescribedProducer) {
		seen = append(seen, fmt.Sprintf("%d@%d", p.ProducerID, p.ProducerEpoch))
		switch p.ProducerID {
		case now:
			if p.ProducerEpoch != int16(epoch) || p.CurrentTxnStartOffset != start {
				t.Errorf("DescribeProducers: producer %d epoch %d, txn start %d; want epoch %d, txn start %d",
					p.ProducerID, p.ProducerEpoch, p.CurrentTxnStartOffset, epoch, start)
			}
		case first:
			if p.CurrentTxnStartOffset != -1 {
				t.Errorf("DescribeProducers: the old producer id %d has txn start %d; want -1 (its transactions ended)", first, p.CurrentTxnStartOffset)
			}
		default:
			t.Errorf("DescribeProducers: producer %d, want only %d (ended) and %d", p.ProducerID, first, now)
		}
	})
	if len(seen) != 2 {
		t.Errorf("DescribeProducers: %d producers %v, want the old id's entry and the new id's", len(seen), seen)
	}

	dt, err := adm.DescribeTransactions(ctx(t), "dp-tx")
	if err != nil {
		t.Fatal(err)
	}
	if d := dt["dp-tx"]; d.Err != nil || d.ProducerID != now || d.ProducerEpoch != epoch || d.State != "Ongoing" {
		t.Errorf("DescribeTransactions: producer %d epoch %d state %s (err %v), want %d epoch %d Ongoing", d.ProducerID, d.ProducerEpoch, d.State, d.Err, now, epoch)
	}
	for _, c := range []struct {
		filter []int64
		want   int
	}{{nil, 1}, {[]int64{now}, 1}, {[]int64{first}, 0}} {
		lt, err := adm.ListTransactions(ctx(t), c.filter, nil)
		if err != nil {
			t.Fatal(err)
		}
		var n int
		lt.Each(func(l kadm.ListedTransaction) {
			n++
			if l.TxnID != "dp-tx" || l.ProducerID != now {
				t.Errorf("ListTransactions(%v): %s producer %d, want dp-tx producer %d", c.filter, l.TxnID, l.ProducerID, now)
			}
		})
		if n != c.want {
			t.Errorf("ListTransactions(producer ids %v): %d transactions, want %d", c.filter, n, c.want)
		}
	}
	if err := tx.EndTransaction(ctx(t), kgo.TryCommit); err != nil {
		t.Fatal(err)
	}

	// A re-init (a new client with the transactional id) names the
	// producer by whatever InitProducerId gave it.
	again := client(t, s, kgo.TransactionalID("dp-tx"), kgo.DefaultProduceTopic("t"))
	pid, ep, err := again.ProducerID(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	dt, err = adm.DescribeTransactions(ctx(t), "dp-tx")
	if err != nil {
		t.Fatal(err)
	}
	if d := dt["dp-tx"]; d.Err != nil || d.ProducerID != pid || d.ProducerEpoch != ep {
		t.Errorf("after a re-init DescribeTransactions says producer %d epoch %d (err %v), want %d epoch %d as InitProducerId gave", d.ProducerID, d.ProducerEpoch, d.Err, pid, ep)
	}
}

// A partition keeps the entry of a transactional producer whose
// transactions ended, as Kafka's producer state does, so DescribeProducers
// (and kafka-transactions describe-producers) still lists it: its producer
// id, the epoch of its last marker (bumped by each end under
// transaction.version 2), no open transaction (CurrentTxnStartOffset -1)
// and the time of that marker; the last sequence number is -1 once a
// marker at a new epoch ended the transaction, and the last batch's under
// transaction.version 1, whose markers keep the epoch. A producer that
// another InitProducerId replaced stays listed.
func TestDescribeProducersAfterTransactionsEnd(t *testing.T) {
	for _, tv := range []int16{2, 1} {
		t.Run(fmt.Sprintf("transaction.version=%d", tv), func(t *testing.T) {
			s, e := start(t, serve.WithTransactionVersion(tv))
			if err := e.CreateTopic("t", 2); err != nil {
				t.Fatal(err)
			}
			tx := client(t, s, kgo.TransactionalID("ended"), kgo.DefaultProduceTopic("t"), kgo.RecordPartitioner(kgo.ManualPartitioner()))
			for _, commit := range []kgo.TransactionEndTry{kgo.TryCommit, kgo.TryAbort} {
				if err := tx.BeginTransaction(); err != nil {
					t.Fatal(err)
				}
				for range 3 {
					if err := tx.ProduceSync(ctx(t), &kgo.Record{Value: []byte("x")}).FirstErr(); err != nil {
						t.Fatal(err)
					}
				}
				if err := tx.EndTransaction(ctx(t), commit); err != nil {
					t.Fatal(err)
				}
			}
			pid, epoch, err := tx.ProducerID(ctx(t))
			if err != nil {
				t.Fatal(err)
			}
			// EndTxn returns once the outcome is decided; the markers
			// follow (as Kafka's coordinator sends them), and until the
			// abort's lands the transaction is still open on the partition.
			// Its last stable offset reaching the high watermark says it
			// landed.
			landed := ctx(t)
			for {
				_, hw, lso, err := e.Offsets(engine.TopicPartition{Topic: "t"})
				if err != nil {
					t.Fatal(err)
				}
				if lso == hw {
					break
				}
				select {
				case <-landed.Done():
					t.Fatalf("the abort's marker never landed: last stable offset %d, high watermark %d", lso, hw)
				case <-time.After(5 * time.Millisecond):
				}
			}
			adm := kadm.NewClient(client(t, s))
			describe := func() map[int64]kadm.DescribedProducer {
				t.Helper()
				dp, err := adm.DescribeProducers(ctx(t), kadm.TopicsSet{"t": {0: {}, 1: {}}})
				if err != nil {
					t.Fatal(err)
				}
				got := map[int64]kadm.DescribedProducer{}
				dp.EachProducer(func(p kadm.DescribedProducer) {
					if p.Partition != 0 {
						t.Errorf("partition %d lists producer %d; nothing was written there", p.Partition, p.ProducerID)
					}
					got[p.ProducerID] = p
				})
				return got
			}
			got := describe()
			p, ok := got[pid]
			if !ok || len(got) != 1 {
				t.Fatalf("DescribeProducers lists %v; want producer %d alone", got, pid)
			}
			if p.ProducerEpoch != epoch || p.CurrentTxnStartOffset != -1 || p.LastTimestamp <= 0 {
				t.Errorf("producer %d: epoch %d, txn start %d, last timestamp %d; want epoch %d, txn start -1, a timestamp",
					pid, p.ProducerEpoch, p.CurrentTxnStartOffset, p.LastTimestamp, epoch)
			}
			if tv == 2 && p.LastSequence != -1 {
				t.Errorf("producer %d: last sequence %d; want -1 (its marker at the new epoch ended the batches)", pid, p.LastSequence)
			}
			if tv == 1 && p.LastSequence < 0 {
				t.Errorf("producer %d: last sequence %d; want its last batch's (its markers keep the epoch)", pid, p.LastSequence)
			}
			if p.CoordinatorEpoch != 0 {
				t.Errorf("producer %d: coordinator epoch %d; want 0, its markers' coordinator's", pid, p.CoordinatorEpoch)
			}

			again := client(t, s, kgo.TransactionalID("ended"), kgo.DefaultProduceTopic("t"))
			if _, _, err := again.ProducerID(ctx(t)); err != nil {
				t.Fatal(err)
			}
			if r, ok := describe()[pid]; !ok || r.CurrentTxnStartOffset != -1 {
				t.Errorf("after another InitProducerId of its transactional id, producer %d is listed %v (txn start %d); want it listed, txn start -1", pid, ok, r.CurrentTxnStartOffset)
			}
		})
	}
}

// What kafka-transactions describe-producers prints against Kafka 4.4: a
// fresh transactional client commits one transaction (records at 0-1, the
// marker at 2) and closes; another keeps one open at 3. Under
// transaction.version 2 the first client learns the feature from its
// first ApiVersions, so its EndTxn (v5) bumps the epoch: its entry says
// epoch 1, sequence -1 and the marker's coordinator epoch. The open one
// says epoch 0, sequence 0 and coordinator epoch -1 (no marker yet).
// Under transaction.version 1 the committed entry keeps epoch 0 and its
// last sequence, 1.
func TestDescribeProducersCommittedAndOpen(t *testing.T) {
	for _, tv := range []int16{2, 1} {
		t.Run(fmt.Sprintf("transaction.version=%d", tv), func(t *testing.T) {
			s, e := start(t, serve.WithTransactionVersion(tv))
			if err := e.CreateTopic("t", 1); err != nil {
				t.Fatal(err)
			}
			txClient := func(id string) *kgo.Client {
				t.Helper()
				cl, err := kgo.NewClient(kgo.SeedBrokers(s.Addr()), kgo.TransactionalID(id), kgo.DefaultProduceTopic("t"))
				if err != nil {
					t.Fatal(err)
				}
				return cl
			}
			done := txClient("done")
			if err := done.BeginTransaction(); err != nil {
				t.Fatal(err)
			}
			for _, v := range []string{"t-0", "t-1"} {
				if err := done.ProduceSync(ctx(t), &kgo.Record{Value: []byte(v)}).FirstErr(); err != nil {
					t.Fatal(err)
				}
			}
			donePID, _, err := done.ProducerID(ctx(t))
			if err != nil {
				t.Fatal(err)
			}
			if err := done.EndTransaction(ctx(t), kgo.TryCommit); err != nil {
				t.Fatal(err)
			}
			done.Close()
			landed := ctx(t)
			for {
				_, hw, lso, err := e.Offsets(engine.TopicPartition{Topic: "t"})
				if err != nil {
					t.Fatal(err)
				}
				if lso == hw {
					break
				}
				select {
				case <-landed.Done():
					t.Fatalf("the commit's marker never landed: last stable offset %d, high watermark %d", lso, hw)
				case <-time.After(5 * time.Millisecond):
				}
			}
			open := txClient("open")
			t.Cleanup(open.Close)
			if err := open.BeginTransaction(); err != nil {
				t.Fatal(err)
			}
			r, err := open.ProduceSync(ctx(t), &kgo.Record{Value: []byte("open-0")}).First()
			if err != nil {
				t.Fatal(err)
			}
			if r.Offset != 3 {
				t.Fatalf("the open transaction's record is at %d, want 3 (after 0-1 and the marker at 2)", r.Offset)
			}
			openPID, _, err := open.ProducerID(ctx(t))
			if err != nil {
				t.Fatal(err)
			}

			dp, err := kadm.NewClient(client(t, s)).DescribeProducers(ctx(t), kadm.TopicsSet{"t": {0: {}}})
			if err != nil {
				t.Fatal(err)
			}
			got := map[int64]string{}
			dp.EachProducer(func(p kadm.DescribedProducer) {
				got[p.ProducerID] = fmt.Sprintf("epoch=%d coordinator=%d seq=%d txn=%d", p.ProducerEpoch, p.CoordinatorEpoch, p.LastSequence, p.CurrentTxnStartOffset)
			})
			wantDone := "epoch=1 coordinator=0 seq=-1 txn=-1"
			if tv == 1 {
				wantDone = "epoch=0 coordinator=0 seq=1 txn=-1"
			}
			want := map[int64]string{donePID: wantDone, openPID: "epoch=0 coordinator=-1 seq=0 txn=3"}
			if len(got) != len(want) || got[donePID] != want[donePID] || got[openPID] != want[openPID] {
				t.Errorf("DescribeProducers: %v; want %v", got, want)
			}
		})
	}
}
