// This file holds the two-sided Wilcoxon signed-rank test of paired
// samples and the median of paired ratios.

package stats

import (
	"math"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/stat/distuv"
)

// signedRankExactMaxN is the largest number of nonzero differences for
// which WilcoxonSignedRank enumerates the exact distribution: its cost is
// O(n·n²) additions, and 2^25 sign patterns are still counted exactly in
// float64.
const signedRankExactMaxN = 25

// WilcoxonSignedRank runs the two-sided Wilcoxon signed-rank test of the
// hypothesis that the paired differences d[i] are symmetric about zero
// against the alternative that they tend to one side. It is the test for a
// paired design, where pair i's two measurements shared their conditions
// (ran at the same time on the same machine) so that what varies between
// pairs cancels in d[i].
//
// Zero differences are dropped (Wilcoxon's convention) and NaNs too; tied
// magnitudes share their midrank. w is the sum of the ranks of the positive
// differences; n the number of nonzero differences. p is exact (the
// distribution of w over all 2^n sign patterns of the observed ranks) when
// n ≤ 25, otherwise the normal approximation with tie and continuity
// corrections. With no nonzero difference p is 1.
func WilcoxonSignedRank(d []float64) (w float64, n int, p float64) {
	var nz []float64
	for _, v := range d {
		if !math.IsNaN(v) && v != 0 {
			nz = append(nz, v)
		}
	}
	n = len(nz)
	if n == 0 {
		return 0, 0, 1
	}
	ranks2, tieTerm := doubledAbsRanks(nz)
	var w2, total int64
	for i, r := range ranks2 {
		total += r
		if nz[i] > 0 {
			w2 += r
		}
	}
	w = float64(w2) / 2
	if n <= signedRankExactMaxN {
		return w, n, signedRankExactP(ranks2, w2, total)
	}
	fn := float64(n)
	mu := fn * (fn + 1) / 4
	v := fn*(fn+1)*(2*fn+1)/24 - tieTerm/48
	if !(v > 0) {
		return w, n, 1
	}
	z := math.Max(0, math.Abs(w-mu)-0.5) / math.Sqrt(v)
	return w, n, math.Min(1, 2*distuv.UnitNormal.Survival(z))
}

// doubledAbsRanks ranks |x| and returns twice each value's midrank (in x's
// order) and the tie term Σ(t³ − t) over groups of t tied magnitudes.
func doubledAbsRanks(x []float64) (ranks2 []int64, tieTerm float64) {
	idx := make([]int, len(x))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		switch xa, xb := math.Abs(x[a]), math.Abs(x[b]); {
		case xa < xb:
			return -1
		case xa > xb:
			return 1
		}
		return 0
	})
	ranks2 = make([]int64, len(x))
	for i := 0; i < len(idx); {
		j := i
		for j+1 < len(idx) && math.Abs(x[idx[j+1]]) == math.Abs(x[idx[i]]) {
			j++
		}
		for k := i; k <= j; k++ {
			ranks2[idx[k]] = int64(i + j + 2)
		}
		if t := float64(j - i + 1); t > 1 {
			tieTerm += t*t*t - t
		}
		i = j + 1
	}
	return ranks2, tieTerm
}

// signedRankExactP is the two-sided p-value of the doubled positive rank
// sum w2: the share of the 2^n sign patterns whose sum lies at least as far
// from the mean (total/2) as w2 does.
func signedRankExactP(ranks2 []int64, w2, total int64) float64 {
	ways := make([]float64, total+1)
	ways[0] = 1
	for _, r := range ranks2 {
		for s := total; s >= r; s-- {
			ways[s] += ways[s-r]
		}
	}
	// Distances from the mean, doubled to stay in integers.
	dev := func(s int64) int64 {
		d := 2*s - total
		if d < 0 {
			return -d
		}
		return d
	}
	obs := dev(w2)
	var hit, all float64
	for s, c := range ways {
		all += c
		if dev(int64(s)) >= obs {
			hit += c
		}
	}
	return math.Min(1, hit/all)
}

// MinSignedRankP is the smallest two-sided p-value WilcoxonSignedRank can
// return for n pairs: 2 / 2^n (every difference on one side), at most 1.
// Five pairs give 0.0625, so a paired gate at alpha 0.05 needs six.
func MinSignedRankP(n int) float64 {
	if n <= 0 {
		return 1
	}
	return math.Min(1, 2/math.Pow(2, float64(n)))
}

// PairedRatios returns cand[i]/base[i] for each pair where both are
// finite and base[i] is not zero; the two slices must be the same length
// (the caller pairs them).
func PairedRatios(base, cand []float64) []float64 {
	var out []float64
	for i := range min(len(base), len(cand)) {
		b, c := base[i], cand[i]
		if math.IsNaN(b) || math.IsNaN(c) || math.IsInf(b, 0) || math.IsInf(c, 0) || b == 0 {
			continue
		}
		out = append(out, c/b)
	}
	return out
}

// PairedRatioTest summarizes paired ratios r (candidate/baseline, one per
// pair): their median, a percentile-bootstrap interval of that median at
// level conf (rng and iterations as in MedianRatioCI), and the signed-rank
// p-value of log r (a ratio of 1 is no difference; logs put a halving and
// a doubling equally far from it). NaNs are dropped; with no ratio all four
// are NaN.
func PairedRatioTest(r []float64, conf float64, rng *rand.Rand, iterations int) (ratio, lo, hi, p float64) {
	r = clean(r)
	if len(r) == 0 {
		return math.NaN(), math.NaN(), math.NaN(), math.NaN()
	}
	logs := make([]float64, len(r))
	for i, v := range r {
		logs[i] = math.Log(v)
	}
	_, _, p = WilcoxonSignedRank(logs)
	conf, rng, iterations = bootstrapDefaults(conf, rng, iterations)
	buf := make([]float64, len(r))
	meds := make([]float64, iterations)
	for i := range meds {
		resample(rng, r, buf)
		meds[i] = quantileSorted(buf, 0.5)
	}
	slices.Sort(meds)
	tail := (1 - conf) / 2
	return quantileSorted(r, 0.5), quantileSorted(meds, tail), quantileSorted(meds, 1-tail), p
}
