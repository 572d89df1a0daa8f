package serve_test

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sharebench/sharebench/serve"
)

// Under transaction.version 2 kgo runs KIP-890 part 2: no
// AddPartitionsToTxn, EndTxn v5, and a new epoch after every transaction;
// under 1 the epoch stays and EndTxn v5 is not advertised. Both read back
// only the committed records.
func TestTransactionVersions(t *testing.T) {
	for _, c := range []struct {
		tv         int16
		endTxnMax  int16
		epochMoves bool
	}{{2, 5, true}, {1, 4, false}} {
		s, e := start(t, serve.WithTransactionVersion(c.tv))
		if err := e.CreateTopic("t", 1); err != nil {
			t.Fatal(err)
		}
		cl := client(t, s, kgo.DefaultProduceTopic("t"), kgo.TransactionalID("tv-tx"))
		versions, err := kmsg.NewPtrApiVersionsRequest().RequestWith(ctx(t), cl)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range versions.ApiKeys {
			if k.ApiKey == int16(kmsg.EndTxn) && k.MaxVersion != c.endTxnMax {
				t.Errorf("tv %d: EndTxn max version %d, want %d", c.tv, k.MaxVersion, c.endTxnMax)
			}
		}
		var epochs []int16
		for i, commit := range []kgo.TransactionEndTry{kgo.TryCommit, kgo.TryAbort, kgo.TryCommit} {
			if err := cl.BeginTransaction(); err != nil {
				t.Fatal(err)
			}
			if err := cl.ProduceSync(ctx(t), &kgo.Record{Value: []byte{byte(i)}}).FirstErr(); err != nil {
				t.Fatalf("tv %d: produce %d: %v", c.tv, i, err)
			}
			if err := cl.EndTransaction(ctx(t), commit); err != nil {
				t.Fatalf("tv %d: end %d: %v", c.tv, i, err)
			}
			_, ep, err := cl.ProducerID(ctx(t))
			if err != nil {
				t.Fatal(err)
			}
			epochs = append(epochs, ep)
		}
		moved := epochs[1] == epochs[0]+1 && epochs[2] == epochs[1]+1
		same := epochs[0] == epochs[1] && epochs[1] == epochs[2]
		if c.epochMoves && !moved || !c.epochMoves && !same {
			t.Errorf("tv %d: epochs after each transaction %v", c.tv, epochs)
		}
		cons := client(t, s, kgo.ConsumeTopics("t"), kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
		var got []byte
		for len(got) < 2 {
			fs := cons.PollFetches(ctx(t))
			if err := fs.Err(); err != nil {
				t.Fatal(err)
			}
			fs.EachRecord(func(r *kgo.Record) { got = append(got, r.Value...) })
		}
		if string(got) != "\x00\x02" {
			t.Errorf("tv %d: read_committed got %q, want records 0 and 2", c.tv, got)
		}
	}
}
