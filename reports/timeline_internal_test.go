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

// A broker fault is marked where it started and where it ended, naming the
// broker it hit; a fault with no length of its own only where it started.
func TestTimelineMarksBrokerFaults(t *testing.T) {
	m := &result.ModeResult{Faults: []result.FaultEvent{
		{AtNs: 2e9, ScheduledNs: 2e9, EndNs: 14e9, Kind: "broker-kill", Broker: "2", Selector: "txn-coordinator",
			RoleBefore: "2", RoleDuring: "3", RoleAfter: "3"},
		{AtNs: 3e9, ScheduledNs: 3e9, EndNs: 3e9, Kind: "abort-ratio"},
	}}
	md := &modeData{repeats: []*repeatData{{m: m}}}
	got := modeFaults(md, nil)
	want := []faultMark{{2, "broker-kill → broker 2"}, {3, "abort-ratio"}, {14, "end broker-kill → broker 2"}}
	if len(got) != len(want) {
		t.Fatalf("marks %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("mark %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	rows := buildFaults([]*runData{{label: "r", modes: []*modeData{{mode: "classic-eos", repeats: md.repeats}}}})
	if len(rows) != 2 || rows[0].Broker != "2 (txn-coordinator)" || rows[0].Scheduled != "2.000 s" || rows[0].End != "14.000 s" {
		t.Errorf("fault table rows %+v: want the broker with its selector and the scheduled and end times", rows)
	}
	if len(rows) == 2 && (rows[0].Role != "2 → 3 → 3" || rows[1].Role != "") {
		t.Errorf("fault table roles %q, %q: want 2 → 3 → 3 for the kill and none for the abort ratio", rows[0].Role, rows[1].Role)
	}
}
