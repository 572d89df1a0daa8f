// This file holds the percentile definition every figure uses: HdrHistogram's
// own (Java's AbstractHistogram.getValueAtPercentile), so the table, the
// report, compare, the gate and HistogramLogProcessor on the .hlog files
// agree to the last digit.

package result

import (
	"math"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// ValueAtPercentile returns the value at percentile p (0..100) of h as
// HdrHistogram's Java implementation defines it: the highest value
// equivalent to the sample of rank ceil(p/100 × count) (at least 1), p
// lowered by one ulp first so that rounding cannot push the rank over a
// bucket. hdrhistogram-go rounds the rank to nearest instead
// (p/100 × count + 0.5), which gives a lower bucket whenever the fraction
// is below one half (p99 of 192 samples: rank 190 instead of 191). 0 for
// an empty histogram.
func ValueAtPercentile(h *hdrhistogram.Histogram, p float64) int64 {
	total := h.TotalCount()
	if total == 0 {
		return 0
	}
	if p <= 0 {
		return h.ValueAtPercentile(0)
	}
	req := math.Min(math.Max(math.Nextafter(p, math.Inf(-1)), 0), 100)
	rank := max(int64(math.Ceil(req/100*float64(total))), 1)
	if rank >= total {
		return h.ValueAtPercentile(100)
	}
	// hdrhistogram-go finds the value of rank int(q/100 × count + 0.5);
	// q = 100 × rank / count lands on rank exactly (the float error is far
	// below the 0.5 margin).
	return h.ValueAtPercentile(100 * float64(rank) / float64(total))
}
