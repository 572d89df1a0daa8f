package result

import (
	"testing"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// TestValueAtPercentileJavaDefinition pins HdrHistogram's definition: the
// value of the sample of rank ceil(p/100 × n).
func TestValueAtPercentileJavaDefinition(t *testing.T) {
	t.Parallel()
	for _, n := range []int64{1, 2, 3, 10, 99, 100, 101, 192, 1000, 2001} {
		h := hdrhistogram.New(1, 1<<40, 3)
		for v := int64(1); v <= n; v++ {
			_ = h.RecordValue(v) // below 2048 every value has its own bucket
		}
		for _, p := range []float64{0, 1, 25, 50, 90, 99, 99.9, 99.99, 100} {
			rank := int64(1)
			if p > 0 {
				// ceil(p/100 × n) computed exactly in integers on p×100.
				num := int64(p*100+0.5) * n
				rank = (num + 10000 - 1) / 10000
				if rank < 1 {
					rank = 1
				}
			}
			want := rank
			if got := ValueAtPercentile(h, p); got != want {
				t.Errorf("n=%d p%v: got %d, want %d (rank %d)", n, p, got, want, rank)
			}
		}
	}
	if got := ValueAtPercentile(hdrhistogram.New(1, 1000, 3), 99); got != 0 {
		t.Errorf("empty: got %d, want 0", got)
	}
}
