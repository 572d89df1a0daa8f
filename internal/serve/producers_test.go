package serve_test

import (
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sharebench/sharebench/internal/serve"
)

// Once a transaction end moves a producer past the epoch limit onto a new
// producer id (KIP-890 part 2), the admin APIs name it by the id its client
// holds: DescribeProducers lists the new id alone, with its open
// transaction's start offset; DescribeTransactions and ListTransactions say
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
		if p.ProducerID != now || p.ProducerEpoch != int16(epoch) || p.CurrentTxnStartOffset != start {
			t.Errorf("DescribeProducers: producer %d epoch %d, txn start %d; want only %d epoch %d, txn start %d",
				p.ProducerID, p.ProducerEpoch, p.CurrentTxnStartOffset, now, epoch, start)
		}
	})
	if len(seen) != 1 {
		t.Errorf("DescribeProducers: %d producers %v, want 1", len(seen), seen)
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
