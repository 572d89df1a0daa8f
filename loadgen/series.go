// This file holds the per-second series: counters by second of the mode's
// timeline, updated atomically by every goroutine.

package loadgen

import (
	"sync"
	"sync/atomic"

	"github.com/sharebench/sharebench/loadgen/result"
)

type series struct {
	inputs, outputs, redeliveries, aborts []atomic.Int64

	mu     sync.Mutex
	faults map[int][]string
}

func newSeries(seconds int) *series {
	return &series{
		inputs: make([]atomic.Int64, seconds), outputs: make([]atomic.Int64, seconds),
		redeliveries: make([]atomic.Int64, seconds), aborts: make([]atomic.Int64, seconds),
		faults: map[int][]string{},
	}
}

// clamp keeps a second inside the series (late events land in the last).
func (s *series) clamp(sec int) int {
	switch {
	case sec < 0:
		return 0
	case sec >= len(s.inputs):
		return len(s.inputs) - 1
	}
	return sec
}

func (s *series) add(c []atomic.Int64, sec int, n int64) { c[s.clamp(sec)].Add(n) }

func (s *series) fault(sec int, kind string) {
	s.mu.Lock()
	s.faults[s.clamp(sec)] = append(s.faults[s.clamp(sec)], kind)
	s.mu.Unlock()
}

// snapshot returns the series up to the last second with any activity.
func (s *series) snapshot(mr *modeRun) []result.Second {
	last := 0
	for i := range s.inputs {
		if s.inputs[i].Load() != 0 || s.outputs[i].Load() != 0 || len(s.faults[i]) > 0 {
			last = i
		}
	}
	warm, load := mr.secondOf(mr.warmEnd), mr.secondOf(mr.loadEnd)
	out := make([]result.Second, 0, last+1)
	var cumIn, cumOut int64
	for i := 0; i <= last; i++ {
		in, o := s.inputs[i].Load(), s.outputs[i].Load()
		cumIn += in
		cumOut += o
		out = append(out, result.Second{
			T: i, Warmup: i < warm, Drain: i >= load,
			InputRate: in, OutputRate: o,
			Redeliveries: s.redeliveries[i].Load(), Aborts: s.aborts[i].Load(),
			Backlog:    cumIn - cumOut,
			SendLagP99: mr.ivLag.p99(i), P99: mr.ivE2E.p99(i),
			Faults: s.faults[i],
		})
	}
	return out
}
