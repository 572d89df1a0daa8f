// This file holds the bootstrap confidence interval for a ratio of medians.

package stats

import (
	"math"
	"math/rand/v2"
	"slices"
)

// DefaultIterations is the bootstrap resample count MedianRatioCI uses when
// it is given zero or fewer.
const DefaultIterations = 10000

// MedianRatioCI returns ratio = Median(cand) / Median(base) and a
// percentile-bootstrap confidence interval [lo, hi] at level conf (0.95 for
// 95%): each of iterations rounds resamples both samples with replacement
// and records the ratio of their medians.
//
// rng drives the resampling, so a fixed seed gives a fixed interval; nil
// uses a fixed seed (1, 2). conf outside (0, 1) means 0.95; iterations ≤ 0
// means DefaultIterations. NaN values are dropped. Empty samples, or a
// baseline median of zero, give NaN for all three; resamples whose baseline
// median is zero are skipped. With one value a side the interval collapses
// to the ratio itself: the bootstrap cannot invent variance it never saw.
func MedianRatioCI(base, cand []float64, conf float64, rng *rand.Rand, iterations int) (ratio, lo, hi float64) {
	nan := math.NaN()
	base, cand = clean(base), clean(cand)
	if len(base) == 0 || len(cand) == 0 {
		return nan, nan, nan
	}
	mb := quantileSorted(base, 0.5)
	if mb == 0 {
		return nan, nan, nan
	}
	ratio = quantileSorted(cand, 0.5) / mb
	conf, rng, iterations = bootstrapDefaults(conf, rng, iterations)
	rb := make([]float64, len(base))
	rc := make([]float64, len(cand))
	ratios := make([]float64, 0, iterations)
	for range iterations {
		resample(rng, base, rb)
		resample(rng, cand, rc)
		m := quantileSorted(rb, 0.5)
		if m == 0 {
			continue
		}
		if r := quantileSorted(rc, 0.5) / m; !math.IsNaN(r) && !math.IsInf(r, 0) {
			ratios = append(ratios, r)
		}
	}
	if len(ratios) == 0 {
		return ratio, nan, nan
	}
	slices.Sort(ratios)
	tail := (1 - conf) / 2
	return ratio, quantileSorted(ratios, tail), quantileSorted(ratios, 1-tail)
}

// resample fills dst with draws from src (with replacement), sorted.
func resample(rng *rand.Rand, src, dst []float64) {
	for i := range dst {
		dst[i] = src[rng.IntN(len(src))]
	}
	slices.Sort(dst)
}

// bootstrapDefaults fills in a bootstrap's unset arguments: a 95%
// interval, DefaultIterations resamples, and a fixed seed, so that an
// interval is reproducible from the runs alone.
func bootstrapDefaults(conf float64, rng *rand.Rand, iterations int) (float64, *rand.Rand, int) {
	if !(conf > 0 && conf < 1) {
		conf = 0.95
	}
	if iterations <= 0 {
		iterations = DefaultIterations
	}
	if rng == nil {
		rng = rand.New(rand.NewPCG(1, 2))
	}
	return conf, rng, iterations
}
