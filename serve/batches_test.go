package serve

import (
	"fmt"
	"testing"

	"github.com/sharebench/sharebench/engine"
)

// TestStoredBatchesKeep: a batch replaces the batches it overlaps (offsets
// reused), an uncompressed one only forgets them, and batches below the
// log start offset go when the next compressed one is kept.
func TestStoredBatchesKeep(t *testing.T) {
	tp := engine.TopicPartition{Topic: "t", Partition: 0}
	var sb storedBatches
	steps := []struct {
		base, last int64
		codec      int8
		logStart   int64
		want       string
	}{
		{0, 4, 1, 0, "[{0 4 1}]"},
		{5, 9, 0, 0, "[{0 4 1}]"},
		{10, 14, 4, 0, "[{0 4 1} {10 14 4}]"},
		{3, 11, 2, 0, "[{3 11 2}]"}, // overlaps both: offsets reused
		{20, 29, 3, 0, "[{3 11 2} {20 29 3}]"},
		{25, 26, 0, 0, "[{3 11 2}]"},
		{30, 31, 1, 12, "[{30 31 1}]"}, // {3 11} lies below the log start
	}
	for i, st := range steps {
		sb.keep(tp, st.base, st.last, st.codec, st.logStart)
		got := fmt.Sprint(sb.covering(nil, tp, 0, 1<<40))
		if got != st.want {
			t.Fatalf("step %d (keep %d-%d codec %d): batches %s, want %s", i, st.base, st.last, st.codec, got, st.want)
		}
		if n := sb.n.Load(); n != int64(len(sb.covering(nil, tp, 0, 1<<40))) {
			t.Fatalf("step %d: count %d disagrees with the batches held", i, n)
		}
	}
	if _, ok := sb.at(tp, 29); ok {
		t.Error("at(29) found a batch after it was forgotten")
	}
	if b, ok := sb.at(tp, 31); !ok || b.base != 30 {
		t.Errorf("at(31) = %v, %v; want the batch at 30", b, ok)
	}
}
