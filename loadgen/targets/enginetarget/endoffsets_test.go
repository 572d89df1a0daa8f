package enginetarget

import (
	"context"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/sharebench/sharebench/loadgen/targets"
	"github.com/sharebench/sharebench/vocab"
)

// TestEndOffsetsAndPositions: read_committed ends at the last stable
// offset (an open transaction holds it), read_uncommitted at the high
// watermark; a reader's position passes the aborted records and the
// markers it does not return, so reading until the position reaches the
// end offsets sees everything there is.
func TestEndOffsetsAndPositions(t *testing.T) {
	t.Parallel()
	tg := newTarget(t)
	cfg := testConfig("ends")
	ctx := context.Background()
	if err := tg.Setup(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	worker := func(id int) targets.Worker {
		w, err := tg.NewWorker(ctx, cfg, vocab.Transactional, id)
		if err != nil {
			t.Fatal(err)
		}
		return w
	}
	txn := func(w targets.Worker, n int, end func(context.Context) error) {
		t.Helper()
		if err := w.Begin(ctx); err != nil {
			t.Fatal(err)
		}
		out := make([]*targets.Record, n)
		for i := range out {
			out[i] = &targets.Record{Topic: cfg.OutputTopic, Partition: 0, Value: []byte("o")}
		}
		if err := w.Produce(ctx, out); err != nil {
			t.Fatal(err)
		}
		if end != nil {
			if err := end(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	wait := func(readCommitted bool, want int64) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			got, err := tg.EndOffsets(ctx, cfg, cfg.OutputTopic, readCommitted)
			if err != nil {
				t.Fatal(err)
			}
			if got[0] == want && len(got) == 1 {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("EndOffsets(readCommitted %v) = %v, want {0: %d}", readCommitted, got, want)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	a, b := worker(0), worker(1)
	// Markers are written asynchronously: each transaction waits for its
	// marker, so the offsets are known.
	txn(a, 2, a.Commit) // offsets 0, 1; commit marker 2
	wait(false, 3)
	txn(b, 1, b.Abort) // offset 3; abort marker 4
	wait(false, 5)
	txn(a, 1, nil) // offset 5, left open
	wait(true, 5)
	wait(false, 6)
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
		deadline := time.Now().Add(10 * time.Second)
		for rd.Positions()[0] < tc.end {
			if time.Now().After(deadline) {
				t.Fatalf("%s: position %v after 10s, want {0: %d}", tc.name, rd.Positions(), tc.end)
			}
			pctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
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
