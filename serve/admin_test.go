package serve_test

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestAdmin asks the admin APIs about an open transaction, its producer,
// a share group and a classic group through kadm.
func TestAdmin(t *testing.T) {
	s, e := start(t)
	if err := e.CreateTopic("t", 1); err != nil {
		t.Fatal(err)
	}
	tx := client(t, s, kgo.TransactionalID("admin-tx"), kgo.DefaultProduceTopic("t"))
	if err := tx.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := tx.ProduceSync(ctx(t), &kgo.Record{Value: []byte("x")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	adm := kadm.NewClient(client(t, s))

	lt, err := adm.ListTransactions(ctx(t), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := lt.TransactionalIDs(); len(got) != 1 || got[0] != "admin-tx" {
		t.Errorf("ListTransactions = %v, want [admin-tx]", got)
	}
	dt, err := adm.DescribeTransactions(ctx(t), "admin-tx")
	if err != nil {
		t.Fatal(err)
	}
	if d := dt["admin-tx"]; d.Err != nil || d.State != "Ongoing" || len(d.Topics["t"]) != 1 {
		t.Errorf("DescribeTransactions = %+v, want Ongoing on t-0", d)
	}
	dp, err := adm.DescribeProducers(ctx(t), kadm.TopicsSet{"t": {0: {}}})
	if err != nil {
		t.Fatal(err)
	}
	var active int
	dp.EachPartition(func(p kadm.DescribedProducersPartition) {
		for _, ap := range p.ActiveProducers {
			active++
			if ap.CurrentTxnStartOffset != 0 {
				t.Errorf("producer %d: txn start offset %d, want 0", ap.ProducerID, ap.CurrentTxnStartOffset)
			}
		}
	})
	if active != 1 {
		t.Errorf("DescribeProducers: %d active producers, want 1", active)
	}
	if err := tx.EndTransaction(ctx(t), kgo.TryCommit); err != nil {
		t.Fatal(err)
	}

	cons := client(t, s, kgo.ShareGroup("sg"), kgo.ConsumeTopics("t"))
	cons.PollRecords(shortCtx(t), 1)
	lg, err := adm.ListGroups(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := lg["sg"]; !ok {
		t.Errorf("ListGroups = %v, want sg", lg.Groups())
	}
	sd, err := adm.DescribeShareGroups(ctx(t), "sg")
	if err != nil {
		t.Fatal(err)
	}
	if g := sd["sg"]; g.Err != nil || len(g.Members) != 1 {
		t.Errorf("DescribeShareGroups = %+v, want one member", g)
	}
}
