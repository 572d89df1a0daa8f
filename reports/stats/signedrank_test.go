package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestWilcoxonSignedRankKnownValues checks published values: Hollander &
// Wolfe's depression scores (R's wilcox.test example, paired: V = 40,
// two-sided p = 0.03906), and cases worked by hand.
func TestWilcoxonSignedRankKnownValues(t *testing.T) {
	t.Parallel()
	x := []float64{1.83, 0.50, 1.62, 2.48, 1.68, 1.88, 1.55, 3.06, 1.30}
	y := []float64{0.878, 0.647, 0.598, 2.05, 1.06, 1.29, 1.06, 3.14, 1.29}
	d := make([]float64, len(x))
	for i := range x {
		d[i] = x[i] - y[i]
	}
	for _, tc := range []struct {
		name string
		d    []float64
		w    float64
		n    int
		p    float64
	}{
		{"hollander-wolfe", d, 40, 9, 0.0390625},
		{"all positive, 5", []float64{1, 2, 3, 4, 5}, 15, 5, 0.0625},
		{"all negative, 6", []float64{-1, -2, -3, -4, -5, -6}, 0, 6, 0.03125},
		// ranks 1..4, positive 1 and 4: w = 5 = the mean, p = 1.
		{"balanced", []float64{1, -2, -3, 4}, 5, 4, 1},
		// zeros dropped: the same as all positive, 5.
		{"zeros dropped", []float64{0, 1, 2, 0, 3, 4, 5}, 15, 5, 0.0625},
		{"nothing", []float64{0, 0, math.NaN()}, 0, 0, 1},
	} {
		w, n, p := WilcoxonSignedRank(tc.d)
		if w != tc.w || n != tc.n || !near(p, tc.p, 1e-9) {
			t.Errorf("%s: w %v n %d p %v, want w %v n %d p %v", tc.name, w, n, p, tc.w, tc.n, tc.p)
		}
	}
}

// TestWilcoxonSignedRankExactMatchesEnumeration compares the exact p-value
// with brute force over every sign pattern, ties included.
func TestWilcoxonSignedRankExactMatchesEnumeration(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(5, 6))
	for trial := range 200 {
		n := 1 + rng.IntN(12)
		d := make([]float64, n)
		for i := range d {
			d[i] = float64(rng.IntN(7) - 3) // ties and zeros on purpose
		}
		_, _, got := WilcoxonSignedRank(d)
		if want := bruteSignedRankP(d); !near(got, want, 1e-12) {
			t.Errorf("trial %d (seed 5,6) %v: p %v, brute force %v", trial, d, got, want)
		}
	}
}

// bruteSignedRankP flips the sign of every nonzero difference in every
// way and counts the patterns whose positive rank sum is at least as far
// from its mean as the observed one.
func bruteSignedRankP(d []float64) float64 {
	var nz []float64
	for _, v := range d {
		if v != 0 {
			nz = append(nz, v)
		}
	}
	if len(nz) == 0 {
		return 1
	}
	ranks2, _ := doubledAbsRanks(nz)
	var total, obs int64
	for i, r := range ranks2 {
		total += r
		if nz[i] > 0 {
			obs += r
		}
	}
	dist := func(s int64) int64 { return max(2*s-total, total-2*s) }
	hit := 0
	for mask := 0; mask < 1<<len(nz); mask++ {
		var s int64
		for i, r := range ranks2 {
			if mask&(1<<i) != 0 {
				s += r
			}
		}
		if dist(s) >= dist(obs) {
			hit++
		}
	}
	return float64(hit) / float64(int(1)<<len(nz))
}

// TestWilcoxonSignedRankNormal checks the approximation past the exact
// range against the exact distribution it approximates: 30 pairs, the same
// ranks, p within 0.005 of the enumeration.
func TestWilcoxonSignedRankNormal(t *testing.T) {
	t.Parallel()
	d := make([]float64, 30)
	for i := range d {
		d[i] = float64(i + 1)
		if i%3 == 0 {
			d[i] = -d[i]
		}
	}
	_, n, p := WilcoxonSignedRank(d)
	ranks2, _ := doubledAbsRanks(d)
	var w2, total int64
	for i, r := range ranks2 {
		total += r
		if d[i] > 0 {
			w2 += r
		}
	}
	exact := signedRankExactP(ranks2, w2, total)
	if n != 30 || math.Abs(p-exact) > 0.005 {
		t.Errorf("30 pairs: n %d, normal p %v, exact %v", n, p, exact)
	}
}

func TestMinSignedRankP(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		n    int
		want float64
	}{{0, 1}, {1, 1}, {5, 0.0625}, {6, 0.03125}, {12, 2.0 / 4096}} {
		if got := MinSignedRankP(tc.n); !near(got, tc.want, 1e-12) {
			t.Errorf("MinSignedRankP(%d) = %v, want %v", tc.n, got, tc.want)
		}
		if tc.n > 0 {
			d := make([]float64, tc.n)
			for i := range d {
				d[i] = float64(i + 1)
			}
			if _, _, p := WilcoxonSignedRank(d); !near(p, MinSignedRankP(tc.n), 1e-12) {
				t.Errorf("%d pairs all one way: p %v, MinSignedRankP %v", tc.n, p, MinSignedRankP(tc.n))
			}
		}
	}
}

// TestPairedRatioTest: ratios all below one by varying amounts are
// significant, the median ratio is the middle one, and the interval holds
// it; ratios on both sides of one are not.
func TestPairedRatioTest(t *testing.T) {
	t.Parallel()
	down := []float64{0.80, 0.84, 0.86, 0.87, 0.88, 0.90, 0.93, 0.97}
	ratio, lo, hi, p := PairedRatioTest(down, 0.95, rand.New(rand.NewPCG(1, 2)), 2000)
	if !near(ratio, 0.875, 1e-12) || !(lo <= ratio && ratio <= hi) || hi >= 1 || !near(p, 2.0/256, 1e-12) {
		t.Errorf("all down: ratio %v [%v, %v] p %v; want 0.875 inside an interval below 1, p 2/256", ratio, lo, hi, p)
	}
	mixed := []float64{0.8, 1.25, 0.9, 1.1, 0.95, 1.05}
	if _, _, _, p := PairedRatioTest(mixed, 0.95, nil, 0); p < 0.5 {
		t.Errorf("symmetric ratios: p %v, want ≥ 0.5", p)
	}
	if r, _, _, p := PairedRatioTest(nil, 0.95, nil, 0); !math.IsNaN(r) || !math.IsNaN(p) {
		t.Errorf("no ratios: ratio %v p %v, want NaN", r, p)
	}
	if got := PairedRatios([]float64{2, 0, math.NaN(), 4}, []float64{1, 1, 1, 5}); len(got) != 2 || got[0] != 0.5 || got[1] != 1.25 {
		t.Errorf("PairedRatios = %v, want [0.5 1.25] (zero and NaN baselines dropped)", got)
	}
}
