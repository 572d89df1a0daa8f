// This file holds the end-offset case: where EndOffsets ends at each
// isolation level, and how far a reader's position passes.

package targettest

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/sharebench/sharebench/loadgen/targets"
	"github.com/sharebench/sharebench/vocab"
)

// testEndOffsetsAndPositions: read_committed ends at the last stable
// offset (an open transaction holds it), read_uncommitted at the high
// watermark; a reader's position passes the aborted records and the
// markers it does not return, so reading until the position reaches the
// end offsets sees everything there is.
func testEndOffsetsAndPositions(t *testing.T, e *env) {
	cfg := e.setup(1)
	ctx := e.ctx
	// Deferred workers own a transactional producer each.
	a, b := e.worker(cfg, vocab.Deferred, 0), e.worker(cfg, vocab.Deferred, 1)
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
		e.eventually(func() string {
			got, err := e.tg.EndOffsets(ctx, cfg, cfg.OutputTopic, readCommitted)
			if err != nil {
				return fmt.Sprintf("EndOffsets: %v", err)
			}
			if !maps.Equal(got, map[int32]int64{0: want}) {
				return fmt.Sprintf("EndOffsets(readCommitted %v) = %v, want {0: %d}", readCommitted, got, want)
			}
			return ""
		})
	}
	// Markers are written asynchronously: each transaction waits for its
	// marker, so the offsets are known.
	txn(a, 2, a.Commit) // offsets 0, 1; commit marker 2
	wait(false, 3)
	txn(b, 1, b.Abort) // offset 3; abort marker 4
	wait(false, 5)
	txn(a, 1, nil) // offset 5, left open
	wait(false, 6)
	wait(true, 5)

	type reading struct {
		name     string
		open     func() (targets.Reader, error)
		end      int64
		wantSeen []int64
	}
	readings := []reading{
		{"read_committed", func() (targets.Reader, error) { return e.tg.NewReader(ctx, cfg, cfg.OutputTopic, true) }, 5, []int64{0, 1}},
	}
	if mr, ok := e.tg.(targets.MarkerReader); ok {
		readings = append(readings, reading{"markers", func() (targets.Reader, error) { return mr.NewMarkerReader(ctx, cfg, cfg.OutputTopic) }, 6, []int64{0, 1, 2, 3, 4, 5}})
	}
	for _, tc := range readings {
		rd, err := tc.open()
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		var seen []int64
		deadline := time.Now().Add(Timeout)
		for rd.Positions()[0] < tc.end {
			if time.Now().After(deadline) {
				t.Fatalf("%s: position %v after %v, want {0: %d}", tc.name, rd.Positions(), Timeout, tc.end)
			}
			pctx, cancel := context.WithTimeout(ctx, pollTick)
			recs, err := rd.Poll(pctx)
			cancel()
			if err != nil {
				t.Fatalf("%s: Poll: %v", tc.name, err)
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
