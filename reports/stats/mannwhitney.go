// This file holds the two-sided Mann–Whitney U test (Wilcoxon rank-sum test).

package stats

import (
	"math"
	"slices"
)

// exactMaxN is the largest total sample size for which MannWhitneyU
// enumerates the exact permutation distribution. Benchmark comparisons have
// a handful of repeats per side, where the normal approximation is poor;
// the exact distribution of (mid)rank sums costs O(n1·n2·N) additions, so
// 20 (ten repeats a side) is far from expensive.
const exactMaxN = 20

// MannWhitneyU runs the two-sided Mann–Whitney U test of the hypothesis
// that a and b come from the same distribution against the alternative
// that one tends to be larger.
//
// u is the statistic of a: the number of pairs (a[i], b[j]) with
// a[i] > b[j], ties counting one half (U_b = len(a)·len(b) − u; tables
// usually list min(u, U_b)). p is the two-sided p-value: exact (the
// permutation distribution of the midrank sum, which also handles ties)
// when len(a)+len(b) ≤ 20, otherwise the normal approximation with tie
// correction and continuity correction.
//
// NaN values are dropped. With an empty sample u is 0 and p is 1; when
// every value is equal p is 1.
func MannWhitneyU(a, b []float64) (u, p float64) {
	a, b = clean(a), clean(b)
	n1, n2 := len(a), len(b)
	if n1 == 0 || n2 == 0 {
		return 0, 1
	}
	ranks2, tieTerm := doubledMidranks(a, b)
	// r2 is twice a's rank sum: midranks are multiples of one half.
	var r2 int64
	for _, r := range ranks2[:n1] {
		r2 += r
	}
	u = float64(r2)/2 - float64(n1*(n1+1))/2
	if n1+n2 <= exactMaxN {
		return u, exactP(ranks2, n1, r2)
	}
	return u, normalP(u, n1, n2, tieTerm, true)
}

// doubledMidranks ranks the pooled sample a ++ b (both sorted) and returns
// twice each value's midrank, in pooled order (a first), and the tie term
// Σ(t³ − t) over groups of t tied values.
func doubledMidranks(a, b []float64) (ranks2 []int64, tieTerm float64) {
	type item struct {
		v   float64
		idx int
	}
	n := len(a) + len(b)
	items := make([]item, 0, n)
	for i, v := range a {
		items = append(items, item{v, i})
	}
	for i, v := range b {
		items = append(items, item{v, len(a) + i})
	}
	slices.SortStableFunc(items, func(x, y item) int {
		switch {
		case x.v < y.v:
			return -1
		case x.v > y.v:
			return 1
		}
		return 0
	})
	ranks2 = make([]int64, n)
	for i := 0; i < n; {
		j := i
		for j+1 < n && items[j+1].v == items[i].v {
			j++
		}
		// Ranks i+1 … j+1 share the midrank (i+j+2)/2.
		for k := i; k <= j; k++ {
			ranks2[items[k].idx] = int64(i + j + 2)
		}
		if t := float64(j - i + 1); t > 1 {
			tieTerm += t*t*t - t
		}
		i = j + 1
	}
	return ranks2, tieTerm
}

// exactP is the two-sided permutation p-value of the doubled rank sum r2 of
// the first n1 of the pooled doubled midranks: the share of all n1-subsets
// whose sum lies at least as far from its mean as r2 does.
func exactP(ranks2 []int64, n1 int, r2 int64) float64 {
	var total int64
	for _, r := range ranks2 {
		total += r
	}
	// ways[k][s]: number of k-subsets of the ranks seen so far with doubled
	// sum s. Counts are float64: C(20,10) is far below 2^53.
	ways := make([][]float64, n1+1)
	for k := range ways {
		ways[k] = make([]float64, total+1)
	}
	ways[0][0] = 1
	for _, r := range ranks2 {
		for k := n1; k >= 1; k-- {
			for s := total; s >= r; s-- {
				ways[k][s] += ways[k-1][s-r]
			}
		}
	}
	// Mean of the doubled sum, times N, to stay in integers:
	// E[2R] = n1·total/N.
	n := int64(len(ranks2))
	dev := func(s int64) int64 {
		d := s*n - int64(n1)*total
		if d < 0 {
			return -d
		}
		return d
	}
	obs := dev(r2)
	var hit, all float64
	for s := int64(0); s <= total; s++ {
		w := ways[n1][s]
		if w == 0 {
			continue
		}
		all += w
		if dev(s) >= obs {
			hit += w
		}
	}
	if all == 0 {
		return 1
	}
	return math.Min(1, hit/all)
}

// normalP is the two-sided p-value of U under the normal approximation.
// tieTerm is Σ(t³ − t) over tied groups; tieCorrect applies it to the
// variance; the continuity correction moves |U − μ| half a unit toward μ.
func normalP(u float64, n1, n2 int, tieTerm float64, tieCorrect bool) float64 {
	fn1, fn2 := float64(n1), float64(n2)
	n := fn1 + fn2
	mu := fn1 * fn2 / 2
	v := fn1 * fn2 / 12 * (n + 1)
	if tieCorrect && n > 1 {
		v = fn1 * fn2 / 12 * ((n + 1) - tieTerm/(n*(n-1)))
	}
	if !(v > 0) {
		return 1
	}
	d := math.Abs(u-mu) - 0.5
	if d < 0 {
		d = 0
	}
	z := d / math.Sqrt(v)
	return math.Min(1, math.Erfc(z/math.Sqrt2))
}

// MinPValue is the smallest two-sided p-value MannWhitneyU can return for
// samples of sizes n1 and n2 without ties: 2 / C(n1+n2, n1), at most 1.
// When it is not below the significance level, no outcome of the test can
// be significant: the samples are too small (one repeat a side gives 1;
// three a side give 0.1).
func MinPValue(n1, n2 int) float64 {
	if n1 <= 0 || n2 <= 0 {
		return 1
	}
	// log C(n, k) through the log-gamma function; exact enough for a bound.
	lg := func(x float64) float64 { v, _ := math.Lgamma(x); return v }
	n := float64(n1 + n2)
	logC := lg(n+1) - lg(float64(n1)+1) - lg(float64(n2)+1)
	return math.Min(1, 2*math.Exp(-logC))
}
