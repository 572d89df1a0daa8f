// This file holds the per-second series: counters in 10 ms slots of the
// mode's timeline, updated atomically by every goroutine, and cut at the
// end into the buckets of the measurement window (whole seconds aligned
// with its start and end, see buckets) for result.json's series.

package loadgen

import (
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sharebench/sharebench/loadgen/result"
)

// slotNs is the resolution of the series counters: fine enough that the
// buckets, which are only known once the window opens, cut them within
// 10 ms of their bounds.
const slotNs = 10 * time.Millisecond

type series struct {
	inputs, outputs, redeliveries, aborts []atomic.Int64

	mu     sync.Mutex
	faults map[int][]string
}

// newSeries returns counters for seconds seconds of a mode.
func newSeries(seconds int) *series {
	n := seconds * int(time.Second/slotNs)
	return &series{
		inputs: make([]atomic.Int64, n), outputs: make([]atomic.Int64, n),
		redeliveries: make([]atomic.Int64, n), aborts: make([]atomic.Int64, n),
		faults: map[int][]string{},
	}
}

// clamp keeps a slot inside the series (late events land in the last).
func (s *series) clamp(slot int) int {
	switch {
	case slot < 0:
		return 0
	case slot >= len(s.inputs):
		return len(s.inputs) - 1
	}
	return slot
}

func (s *series) add(c []atomic.Int64, slot int, n int64) { c[s.clamp(slot)].Add(n) }

func (s *series) fault(slot int, kind string) {
	s.mu.Lock()
	s.faults[s.clamp(slot)] = append(s.faults[s.clamp(slot)], kind)
	s.mu.Unlock()
}

// snapshot returns the series in the window's buckets, up to the last
// bucket with any activity. Rates are per second of the bucket's own
// length, so a bucket cut short by the window's end shows no false drop.
func (s *series) snapshot(mr *modeRun) []result.Second {
	b := buckets{}
	if mr.winOpen.Load() {
		b = buckets{mr.winStartNs.Load(), mr.winEndNs.Load()}
	}
	last := -1
	for i := range s.inputs {
		if s.inputs[i].Load() != 0 || s.outputs[i].Load() != 0 || len(s.faults[i]) > 0 {
			last = i
		}
	}
	if last < 0 {
		return nil
	}
	first := b.index(0)
	lastK := b.index(int64(last) * int64(slotNs))
	out := make([]result.Second, 0, lastK-first+1)
	var cumIn, cumOut int64
	nwin := b.winBuckets()
	for k := first; k <= lastK; k++ {
		from, to := b.bounds(k)
		var in, o, red, ab int64
		var faults []string
		for i := ceilDiv(from, int64(slotNs)); i < ceilDiv(to, int64(slotNs)) && i < len(s.inputs); i++ { // each slot in the bucket holding its start
			in += s.inputs[i].Load()
			o += s.outputs[i].Load()
			red += s.redeliveries[i].Load()
			ab += s.aborts[i].Load()
			faults = append(faults, s.faults[i]...)
		}
		cumIn += in
		cumOut += o
		width := float64(to-from) / 1e9
		rate := func(n int64) int64 { return int64(math.Round(float64(n) / width)) }
		sec := result.Second{
			T: int(from / int64(time.Second)), StartNs: from, EndNs: to,
			Warmup: k < 0, Drain: mr.winOpen.Load() && k >= nwin,
			Inputs: in, Outputs: o, InputRate: rate(in), OutputRate: rate(o),
			Redeliveries: red, Aborts: ab,
			Backlog: cumIn - cumOut,
			Faults:  faults,
		}
		if k >= 0 {
			sec.SendLagP99, sec.P99 = mr.ivLag.p99(k), mr.ivE2E.p99(k)
		}
		out = append(out, sec)
	}
	return out
}

// ceilDiv returns ⌈a/b⌉ for a ≥ 0, b > 0.
func ceilDiv(a, b int64) int { return int((a + b - 1) / b) }
