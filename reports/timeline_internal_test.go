// This file tests the timeline's buckets: results with window bounds are
// plotted on their own buckets (cut at the window's start and end, rates
// per second of each bucket), matched across repeats by their place from
// the window's start, with the window's lines where it opened and closed.

package reports

import (
	"testing"

	"github.com/sharebench/sharebench/loadgen/result"
)

func TestTimelineBucketsFollowTheWindow(t *testing.T) {
	t.Parallel()
	// Window [0.7s, 3.2s): a 0.7s warm-up bucket, 1s, 1s, a 0.5s last
	// window bucket, then a drain bucket.
	m := &result.ModeResult{WindowStartNs: 700e6, WindowEndNs: 3200e6, Series: []result.Second{
		{T: 0, StartNs: 0, EndNs: 700e6, Warmup: true, OutputRate: 100},
		{T: 0, StartNs: 700e6, EndNs: 1700e6, OutputRate: 2000, P99: 5e6},
		{T: 1, StartNs: 1700e6, EndNs: 2700e6, OutputRate: 2000, P99: 5e6},
		{T: 2, StartNs: 2700e6, EndNs: 3200e6, OutputRate: 2000, P99: 5e6},
		{T: 3, StartNs: 3200e6, EndNs: 4200e6, Drain: true, OutputRate: 10},
	}}
	md := &modeData{mode: "explicit", repeats: []*repeatData{{m: m}}}
	got := aggregateSeries(md)
	if len(got) != 5 {
		t.Fatalf("%d buckets, want 5 (two of them share T 0): %+v", len(got), got)
	}
	wantK := []int{-1, 0, 1, 2, 3}
	for i, s := range got {
		if s.k != wantK[i] {
			t.Errorf("bucket %d: k %d, want %d", i, s.k, wantK[i])
		}
	}
	// The last window bucket is plotted at its own middle, with its full
	// rate: no false drop.
	if last := got[3]; last.mid() != 2.95 || last.output != 2000 {
		t.Errorf("the cut bucket: mid %v output %v, want 2.95 and 2000", last.mid(), last.output)
	}
	ws, we, ok := windowBounds(md)
	if !ok || ws != 0.7 || we != 3.2 {
		t.Errorf("window lines at %v and %v (%v), want 0.7 and 3.2", ws, we, ok)
	}
}
