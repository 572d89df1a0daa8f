// This file tests Schedule: constant schedules evenly spaced and offset per
// producer, Poisson schedules reproducible from their seed with the right
// mean rate, and the closed loop.

package loadgen

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/sharebench/sharebench/workloads"
)

var schedStart = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// drain returns every intended time of s, as offsets from schedStart.
func drain(s *Schedule) []time.Duration {
	var out []time.Duration
	for {
		t, ok := s.Next()
		if !ok {
			return out
		}
		out = append(out, t.Sub(schedStart))
	}
}

func TestScheduleConstantSpacingAndOffsets(t *testing.T) {
	t.Parallel()
	const (
		rate = 1000.0
		n    = 4
	)
	end := schedStart.Add(time.Second)
	var all []time.Duration
	for i := 0; i < n; i++ {
		s := NewSchedule(schedStart, end, rate, n, i, workloads.RateConstant, nil)
		if s.Closed() {
			t.Fatalf("producer %d: Closed() = true for rate %v", i, rate)
		}
		got := drain(s)
		// Producer i sends at i/rate, then every n/rate.
		if len(got) != 250 {
			t.Fatalf("producer %d: %d sends in 1s, want 250", i, len(got))
		}
		for k, d := range got {
			want := time.Duration(i)*time.Millisecond + time.Duration(k)*n*time.Millisecond
			if d != want {
				t.Fatalf("producer %d send %d: at %v, want %v", i, k, d, want)
			}
		}
		all = append(all, got...)
	}
	// Together the producers interleave into one evenly spaced schedule.
	slices.Sort(all)
	if len(all) != 1000 {
		t.Fatalf("%d sends in all, want 1000", len(all))
	}
	for k, d := range all {
		if want := time.Duration(k) * time.Millisecond; d != want {
			t.Fatalf("merged send %d at %v, want %v", k, d, want)
		}
	}
}

func TestScheduleConstantFractionalInterval(t *testing.T) {
	t.Parallel()
	// 3 records/s over 2 producers: an interval of 666.67ms each, offset
	// by half of it; truncation to the nanosecond never drifts.
	end := schedStart.Add(10 * time.Second)
	ideal := 1e9 * 2 / 3.0
	for i := 0; i < 2; i++ {
		got := drain(NewSchedule(schedStart, end, 3, 2, i, workloads.RateConstant, nil))
		if len(got) != 15 {
			t.Fatalf("producer %d: %d sends in 10s, want 15", i, len(got))
		}
		for k, d := range got {
			want := ideal*float64(i)/2 + ideal*float64(k)
			if math.Abs(float64(d)-want) > 1 {
				t.Fatalf("producer %d send %d: at %v, want %.1fns", i, k, d, want)
			}
		}
	}
}

func TestSchedulePeekDoesNotConsume(t *testing.T) {
	t.Parallel()
	s := NewSchedule(schedStart, schedStart.Add(3*time.Millisecond), 1000, 1, 0, workloads.RateConstant, nil)
	for k := 0; k < 3; k++ {
		p1, ok1 := s.Peek()
		p2, ok2 := s.Peek()
		n, ok3 := s.Next()
		if !ok1 || !ok2 || !ok3 || !p1.Equal(p2) || !p1.Equal(n) {
			t.Fatalf("send %d: Peek %v,%v Peek %v,%v Next %v,%v: want three equal times", k, p1, ok1, p2, ok2, n, ok3)
		}
	}
	// Past the end: not ok, and it stays that way.
	for k := 0; k < 2; k++ {
		if tm, ok := s.Next(); ok {
			t.Fatalf("Next past the end returned %v, true", tm)
		}
	}
}

func poissonGaps(seed uint64, samples int, rate float64) []float64 {
	end := schedStart.Add(1000 * time.Hour) // never reached
	s := NewSchedule(schedStart, end, rate, 1, 0, workloads.RatePoisson, rand.New(rand.NewPCG(seed, 1)))
	gaps := make([]float64, samples)
	prev := schedStart
	for k := range gaps {
		tm, ok := s.Next()
		if !ok {
			panic("poisson schedule ended early")
		}
		gaps[k] = float64(tm.Sub(prev))
		prev = tm
	}
	return gaps
}

func TestSchedulePoissonReproducible(t *testing.T) {
	t.Parallel()
	a, b := poissonGaps(42, 1000, 5000), poissonGaps(42, 1000, 5000)
	if !slices.Equal(a, b) {
		t.Fatal("two Poisson schedules with the same seed differ")
	}
	if c := poissonGaps(43, 1000, 5000); slices.Equal(a, c) {
		t.Fatal("Poisson schedules with seeds 42 and 43 are identical")
	}
}

func TestSchedulePoissonMeanRate(t *testing.T) {
	t.Parallel()
	// The gaps are exponential with mean 1/rate. Over 10k samples the
	// sample mean's standard deviation is mean/100 and the sample
	// standard deviation's about 1.4% of it, so 5σ bounds (5% and 7%)
	// cannot flake; the seed makes the draw fixed anyway.
	const (
		rate    = 2000.0
		samples = 10_000
	)
	for _, seed := range []uint64{1, 2, 3} {
		gaps := poissonGaps(seed, samples, rate)
		var sum, sq float64
		for _, g := range gaps {
			if g < 0 {
				t.Fatalf("seed %d: negative gap %v", seed, g)
			}
			sum += g
		}
		mean := sum / samples
		for _, g := range gaps {
			sq += (g - mean) * (g - mean)
		}
		sd := math.Sqrt(sq / (samples - 1))
		want := 1e9 / rate
		if math.Abs(mean-want) > 5*want/math.Sqrt(samples) {
			t.Errorf("seed %d: mean gap %.0fns, want %.0fns ± 5σ (%.0fns)", seed, mean, want, 5*want/math.Sqrt(samples))
		}
		// Exponential: the standard deviation equals the mean, unlike a
		// constant schedule's 0.
		if cv := sd / mean; cv < 0.93 || cv > 1.07 {
			t.Errorf("seed %d: coefficient of variation %.3f, want 1 ± 0.07 (exponential gaps)", seed, cv)
		}
	}
}

func TestSchedulePoissonSplitsRateOverProducers(t *testing.T) {
	t.Parallel()
	// n producers each run at rate/n: the count over a window matches
	// rate·window within 5σ of a Poisson count (σ = √(rate·window)).
	const (
		rate = 10_000.0
		n    = 4
	)
	end := schedStart.Add(2 * time.Second)
	total := 0
	for i := 0; i < n; i++ {
		total += len(drain(NewSchedule(schedStart, end, rate, n, i, workloads.RatePoisson, rand.New(rand.NewPCG(7, uint64(i))))))
	}
	want := rate * 2
	if d := math.Abs(float64(total) - want); d > 5*math.Sqrt(want) {
		t.Fatalf("%d sends in 2s over %d producers, want %.0f ± %.0f", total, n, want, 5*math.Sqrt(want))
	}
}

func TestScheduleClosedLoop(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		rate   float64
		n      int
		closed bool
	}{
		{"rate-0", 0, 2, true},
		{"no-producers", 1000, 0, true},
		{"open", 1000, 2, false},
	} {
		s := NewSchedule(schedStart, time.Now().Add(time.Hour), tc.rate, tc.n, 0, workloads.RateConstant, nil)
		if s.Closed() != tc.closed {
			t.Errorf("%s: Closed() = %v, want %v", tc.name, s.Closed(), tc.closed)
		}
	}

	// A closed loop has no intended times of its own: every send is due
	// now, until the end.
	s := NewSchedule(schedStart, time.Now().Add(time.Hour), 0, 1, 0, workloads.RateConstant, nil)
	before := time.Now()
	for k := 0; k < 3; k++ {
		tm, ok := s.Next()
		if !ok {
			t.Fatalf("Next %d: not ok before the end", k)
		}
		if tm.Before(before) || tm.After(time.Now()) {
			t.Fatalf("Next %d = %v, want the current time (between %v and now)", k, tm, before)
		}
	}
	ended := NewSchedule(schedStart, time.Now().Add(-time.Millisecond), 0, 1, 0, workloads.RateConstant, nil)
	if tm, ok := ended.Next(); ok {
		t.Fatalf("closed loop past its end: Next = %v, true", tm)
	}
}
