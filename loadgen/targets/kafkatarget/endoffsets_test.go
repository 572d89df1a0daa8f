package kafkatarget

import (
	"context"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sharebench/sharebench/loadgen/targets"
)

// TestEndOffsetsAndPositions: on a cluster, read_committed ends at the
// last stable offset (an open transaction holds it) and read_uncommitted
// at the high watermark, as ListOffsets answers at each isolation level;
// a reader's position passes the markers it does not return, so reading
// until it reaches the end offsets sees everything there is.
func TestEndOffsetsAndPositions(t *testing.T) {
	t.Parallel()
	tg := newEmbedded(t)
	cfg := testConfig(t, 1)
	setup(t, tg, cfg)
	ctx := ctxT(t)
	producer := func(tid string) *kgo.Client {
		cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(tg.Info().Brokers, ",")...), kgo.TransactionalID(tid),
			kgo.DefaultProduceTopic(cfg.OutputTopic), kgo.RecordPartitioner(kgo.ManualPartitioner()))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(cl.Close)
		return cl
	}
	txn := func(cl *kgo.Client, n int, end kgo.TransactionEndTry, finish bool) {
		t.Helper()
		if err := cl.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		for range n {
			if err := cl.ProduceSync(ctx, &kgo.Record{Partition: 0, Value: []byte("o")}).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
		if finish {
			if err := cl.EndTransaction(ctx, end); err != nil {
				t.Fatal(err)
			}
		}
	}
	wait := func(readCommitted bool, want int64) {
		t.Helper()
		deadline := time.Now().Add(testTimeout)
		for {
			got, err := tg.EndOffsets(ctx, cfg, cfg.OutputTopic, readCommitted)
			if err != nil {
				t.Fatal(err)
			}
			if maps.Equal(got, map[int32]int64{0: want}) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("EndOffsets(readCommitted %v) = %v, want {0: %d}", readCommitted, got, want)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	a, b := producer(t.Name()+"-a"), producer(t.Name()+"-b")
	txn(a, 2, kgo.TryCommit, true) // offsets 0, 1; commit marker 2
	wait(false, 3)
	txn(b, 1, kgo.TryAbort, true) // offset 3; abort marker 4
	wait(false, 5)
	txn(a, 1, kgo.TryCommit, false) // offset 5, left open
	wait(false, 6)
	wait(true, 5)
	for _, tc := range []struct {
		name     string
		rd       func() (targets.Reader, error)
		end      int64
		wantSeen []int64
	}{
		{"read_committed", func() (targets.Reader, error) { return tg.NewReader(ctx, cfg, cfg.OutputTopic, true) }, 5, []int64{0, 1}},
		{"markers", func() (targets.Reader, error) { return tg.NewMarkerReader(ctx, cfg, cfg.OutputTopic) }, 6, []int64{0, 1, 2, 3, 4, 5}},
	} {
		rd, err := tc.rd()
		if err != nil {
			t.Fatal(err)
		}
		var seen []int64
		deadline := time.Now().Add(testTimeout)
		for rd.Positions()[0] < tc.end {
			if time.Now().After(deadline) {
				t.Fatalf("%s: position %v, want {0: %d}", tc.name, rd.Positions(), tc.end)
			}
			pctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
			recs, err := rd.Poll(pctx)
			cancel()
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range recs {
				seen = append(seen, r.Offset)
			}
		}
		if got := rd.Positions(); !maps.Equal(got, map[int32]int64{0: tc.end}) {
			t.Errorf("%s: position %v, want {0: %d}", tc.name, got, tc.end)
		}
		if !slices.Equal(seen, tc.wantSeen) {
			t.Errorf("%s: read offsets %v, want %v", tc.name, seen, tc.wantSeen)
		}
		rd.Close()
	}
}
