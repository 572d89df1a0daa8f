// This file tests the measurement window: it opens after the warm-up and
// once every worker has received records, lasts the measured duration,
// and every histogram and rate counts only what falls inside it.

package loadgen

import (
	"math"
	"testing"
	"time"

	"github.com/sharebench/sharebench/loadgen/result"
	"github.com/sharebench/sharebench/vocab"
)

// scheduledIn counts the intended times of n constant producers sharing
// rate records/s that fall in [from, to) ns since the start.
func scheduledIn(rate float64, n int, from, to int64) int64 {
	interval := 1e9 * float64(n) / rate
	var c int64
	for i := 0; i < n; i++ {
		for k := 0; ; k++ {
			t := int64(interval*float64(i)/float64(n) + interval*float64(k))
			if t >= to {
				break
			}
			if t >= from {
				c++
			}
		}
	}
	return c
}

// TestWindowExcludesWarmupAndGroupFormation runs with a warm-up that
// matters (as long as the window) and workers that receive nothing for
// longer than it (a group forming): the window opens only when every
// worker has received records, and every histogram holds one sample per
// record or commit inside it, never one from the warm-up's backlog.
func TestWindowExcludesWarmupAndGroupFormation(t *testing.T) {
	t.Parallel()
	const join = 900 * time.Millisecond
	tgt := newMemTarget()
	tgt.joinDelay = join
	spec := quickSpec(t, "explicit", "transactional", "implicit")
	spec.WarmupLength = 600 * time.Millisecond
	spec.TestLength = 600 * time.Millisecond
	dir := t.TempDir()
	res, err := Run(runCtx(t), Config{Workload: spec, Target: tgt, Seed: testSeed, OutDir: dir})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	for _, m := range res.Modes {
		t.Run(m.Mode.String(), func(t *testing.T) {
			if m.Error != "" || m.Verify == nil || !m.Verify.Pass {
				t.Fatalf("error %q verdict %+v", m.Error, m.Verify)
			}
			if m.WindowStartNs < int64(join) || m.WindowEndNs-m.WindowStartNs != int64(spec.TestDuration()) || m.MeasuredNs != int64(spec.TestDuration()) {
				t.Errorf("window [%v, %v) measured %v: want a start after the %v join and a length of %v",
					time.Duration(m.WindowStartNs), time.Duration(m.WindowEndNs), time.Duration(m.MeasuredNs), join, spec.TestDuration())
			}
			// The producers ran until the window closed, and the window
			// counts the records intended inside it, exactly.
			if want := scheduledIn(float64(spec.ProducerRate), spec.ProducersPerTopic, 0, m.WindowEndNs); m.TotalInputs != want {
				t.Errorf("%d inputs in all, want the %d scheduled before the window's end", m.TotalInputs, want)
			}
			want := scheduledIn(float64(spec.ProducerRate), spec.ProducersPerTopic, m.WindowStartNs, m.WindowEndNs)
			if m.InputsProduced != want {
				t.Errorf("%d inputs in the window, want the %d scheduled inside it", m.InputsProduced, want)
			}
			if r := m.InputRate / float64(spec.ProducerRate); math.Abs(r-1) > 0.01 { // wallclock: the count and the window are the schedule's, checked exactly above
				t.Errorf("input rate %.0f/s for a schedule of %d/s", m.InputRate, spec.ProducerRate)
			}
			for _, hn := range []string{result.HistSendLag, result.HistProduce, result.HistEndToEnd} {
				if h := m.Histograms[hn]; h.Count != want {
					t.Errorf("%s: %d samples, want one per input of the window (%d)", hn, h.Count, want)
				}
			}
			wantCommits := m.WindowCommits
			if m.Mode == vocab.Implicit {
				wantCommits = 0
			}
			if h := m.Histograms[result.HistCommit]; h.Count != wantCommits {
				t.Errorf("commit: %d samples, want %d", h.Count, wantCommits)
			}
			if h := m.Histograms[result.HistPollCommit]; h.Count != m.WindowCommits || m.WindowCommits == 0 {
				t.Errorf("poll_to_commit: %d samples, want one per commit of the window (%d)", h.Count, m.WindowCommits)
			}
			checkSeries(t, m)
			checkHlogParity(t, m, dir, m.Mode.String())
		})
	}
}

// TestCatchUpRounds drives the catch-up rule with injected times and
// counts: a round that settles what was produced by its start within the
// warm-up means caught up; a longer one (a backlog draining) starts another.
func TestCatchUpRounds(t *testing.T) {
	t.Parallel()
	t0 := time.Unix(1000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	type step struct {
		ms                int
		produced, settled int64
		want              bool
	}
	for _, tc := range []struct {
		name      string
		tolerance time.Duration
		steps     []step
		rounds    int
	}{
		{"no wait when tolerance is zero (closed loop, no warm-up)", 0, []step{{0, 5000, 0, true}}, 0},
		{"steady: the first round ends within the warm-up", 500 * time.Millisecond, []step{
			{0, 1000, 950, false}, {40, 1080, 1010, true}}, 1},
		{"backlog: a 2 s round, then a short one", 500 * time.Millisecond, []step{
			{0, 2500, 0, false},       // group just formed, 2500 queued
			{1000, 3000, 1500, false}, // draining
			{2000, 3500, 2600, false}, // round 1 ends after 2 s: too long, round 2 from 3500
			{2300, 3650, 3400, false},
			{2400, 3700, 3520, true}, // round 2 ended in 400 ms: caught up
		}, 2},
		{"overloaded: rounds never shorten", 500 * time.Millisecond, []step{
			{0, 1000, 0, false}, {1000, 2000, 1000, false}, {2000, 3000, 2000, false}, {3000, 4000, 3000, false},
		}, 3},
	} {
		c := catchUp{tolerance: tc.tolerance}
		for i, s := range tc.steps {
			if got := c.caughtUp(at(s.ms), s.produced, s.settled); got != s.want {
				t.Errorf("%s: step %d (%d ms, %d produced, %d settled): caught up %v, want %v", tc.name, i, s.ms, s.produced, s.settled, got, s.want)
			}
		}
		if c.rounds != tc.rounds {
			t.Errorf("%s: %d rounds ended, want %d", tc.name, c.rounds, tc.rounds)
		}
	}
}
