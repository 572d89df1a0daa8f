// This file tests the processing-time sampler.

package workloads_test

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/sharebench/sharebench/workloads"
)

func TestSampler(t *testing.T) {
	t.Parallel()
	ms := time.Millisecond
	tests := []struct {
		name     string
		p        workloads.ProcessingTime
		min, max time.Duration // every draw must lie in [min, max]
		varies   bool          // draws are not all equal
	}{
		{"constant", workloads.ProcessingTime{Distribution: "constant", Mean: 3 * ms}, 3 * ms, 3 * ms, false},
		{"constant zero", workloads.ProcessingTime{Distribution: "constant"}, 0, 0, false},
		{"uniform", workloads.ProcessingTime{Distribution: "uniform", Min: 2 * ms, Max: 5 * ms}, 2 * ms, 5 * ms, true},
		{"uniform point", workloads.ProcessingTime{Distribution: "uniform", Min: 2 * ms, Max: 2 * ms}, 2 * ms, 2 * ms, false},
		{"exponential clamped", workloads.ProcessingTime{Distribution: "exponential", Mean: 2 * ms, Min: ms, Max: 4 * ms}, ms, 4 * ms, true},
		{"exponential", workloads.ProcessingTime{Distribution: "exponential", Mean: 2 * ms}, 0, time.Hour, true},
		{"lognormal clamped", workloads.ProcessingTime{Distribution: "lognormal", Mean: 2 * ms, Stddev: 4 * ms, Min: ms, Max: 3 * ms}, ms, 3 * ms, true},
		{"lognormal", workloads.ProcessingTime{Distribution: "lognormal", Mean: 2 * ms, Stddev: ms}, 1, time.Hour, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			draw := func(seed uint64) []time.Duration {
				next := tt.p.Sampler(rand.New(rand.NewPCG(seed, 42)))
				out := make([]time.Duration, 2000)
				for i := range out {
					out[i] = next()
				}
				return out
			}
			a, b := draw(1), draw(1)
			if !slices.Equal(a, b) {
				t.Fatal("two samplers with the same seed drew different sequences")
			}
			for i, d := range a {
				if d < tt.min || d > tt.max {
					t.Fatalf("draw %d = %v, want within [%v, %v]", i, d, tt.min, tt.max)
				}
			}
			if got := slices.Min(a) != slices.Max(a); got != tt.varies {
				t.Errorf("draws vary = %v, want %v (min %v, max %v)", got, tt.varies, slices.Min(a), slices.Max(a))
			}
			if tt.varies && slices.Equal(a, draw(2)) {
				t.Error("different seeds drew the same sequence")
			}
		})
	}
}

// TestSamplerMean checks the exponential and lognormal draws have about the
// mean they were given (no timing involved: these are numbers).
func TestSamplerMean(t *testing.T) {
	t.Parallel()
	ms := time.Millisecond
	for _, p := range []workloads.ProcessingTime{
		{Distribution: "exponential", Mean: 2 * ms},
		{Distribution: "lognormal", Mean: 2 * ms, Stddev: ms},
		{Distribution: "uniform", Min: ms, Max: 3 * ms},
	} {
		next := p.Sampler(rand.New(rand.NewPCG(7, 7)))
		const n = 100_000
		var sum time.Duration
		for range n {
			sum += next()
		}
		if got, want := sum/n, 2*ms; got < want*95/100 || got > want*105/100 {
			t.Errorf("%s: mean of %d draws = %v, want within 5%% of %v", p.Distribution, n, got, want)
		}
	}
}

func TestSamplerNilRand(t *testing.T) {
	t.Parallel()
	p := workloads.ProcessingTime{Distribution: "uniform", Min: time.Millisecond, Max: 2 * time.Millisecond}
	a, b := p.Sampler(nil), p.Sampler(nil)
	for range 10 {
		if x, y := a(), b(); x != y {
			t.Fatalf("nil-rng samplers differ: %v vs %v", x, y)
		}
	}
}
