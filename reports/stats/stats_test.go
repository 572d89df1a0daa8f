package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

func near(got, want, tol float64) bool {
	if math.IsNaN(want) {
		return math.IsNaN(got)
	}
	return math.Abs(got-want) <= tol
}

func TestMedianQuantile(t *testing.T) {
	t.Parallel()
	nan := math.NaN()
	for _, tc := range []struct {
		name string
		x    []float64
		q    float64
		want float64
	}{
		{"empty", nil, 0.5, nan},
		{"only NaN", []float64{nan}, 0.5, nan},
		{"one", []float64{7}, 0.5, 7},
		{"odd", []float64{3, 1, 2}, 0.5, 2},
		{"even", []float64{4, 1, 3, 2}, 0.5, 2.5},
		{"NaN dropped", []float64{nan, 1, 3}, 0.5, 2},
		{"min", []float64{5, 1, 9}, 0, 1},
		{"max", []float64{5, 1, 9}, 1, 9},
		{"type 7 quartile", []float64{1, 2, 3, 4}, 0.25, 1.75},
		{"q out of range", []float64{1, 2}, 1.5, nan},
	} {
		if got := Quantile(tc.x, tc.q); !near(got, tc.want, 1e-12) {
			t.Errorf("%s: Quantile(%v, %v) = %v, want %v", tc.name, tc.x, tc.q, got, tc.want)
		}
	}
	x := []float64{3, 1, 2}
	if got := Median(x); got != 2 || x[0] != 3 {
		t.Errorf("Median(%v) = %v (input must stay unsorted), want 2", x, got)
	}
}

func TestMannWhitneyUKnownValues(t *testing.T) {
	t.Parallel()
	seq := func(from, to float64) []float64 {
		var s []float64
		for v := from; v <= to; v++ {
			s = append(s, v)
		}
		return s
	}
	for _, tc := range []struct {
		name  string
		a, b  []float64
		u, p  float64
		tolP  float64
		about string
	}{
		// Complete separation, 5 v 5: U = 0, exact p = 2/C(10,5) = 2/252
		// (R: wilcox.test(1:5, 6:10) gives W = 0, p-value = 0.007937).
		{"separated 5v5", seq(1, 5), seq(6, 10), 0, 2.0 / 252, 1e-12, "exact"},
		{"separated 5v5 reversed", seq(6, 10), seq(1, 5), 25, 2.0 / 252, 1e-12, "exact"},
		// Complete separation, 15 v 15 (normal approximation with continuity
		// correction): mu = 112.5, var = 15·15·31/12 = 581.25,
		// z = 112/24.1091 = 4.6455, p = 3.39e-6.
		{"separated 15v15", seq(1, 15), seq(16, 30), 0, 3.39e-6, 0.01e-6, "normal"},
		{"identical", []float64{1, 1, 1}, []float64{1, 1, 1}, 4.5, 1, 0, "all tied"},
		{"empty", nil, []float64{1}, 0, 1, 0, "no data"},
	} {
		u, p := MannWhitneyU(tc.a, tc.b)
		if u != tc.u || !near(p, tc.p, tc.tolP) {
			t.Errorf("%s (%s): MannWhitneyU = (%v, %v), want (%v, %v±%v)", tc.name, tc.about, u, p, tc.u, tc.p, tc.tolP)
		}
	}
}

// TestMannWhitneyNormalMinitab checks the normal approximation against the
// worked example in Minitab's documentation ("Calculating Mann-Whitney
// statistics"): samples 22 24 25 29 30 and 16 21 22 23 give W = 33.5
// (U = 18.5), z = 1.9596 and a two-sided p of 0.05 without tie correction.
// With the tie correction (one pair of 22s: Σ(t³−t) = 6) the variance is
// 20/12 · (10 − 6/72) = 16.528, z = 8/4.0654 = 1.9678, p = 0.0491.
func TestMannWhitneyNormalMinitab(t *testing.T) {
	t.Parallel()
	a := []float64{22, 24, 25, 29, 30}
	b := []float64{16, 21, 22, 23}
	u, _ := MannWhitneyU(a, b)
	if u != 18.5 {
		t.Fatalf("U = %v, want 18.5", u)
	}
	_, tie := doubledMidranks(clean(a), clean(b))
	if tie != 6 {
		t.Fatalf("tie term = %v, want 6", tie)
	}
	if p := normalP(u, 5, 4, tie, false); !near(p, 0.0500, 0.0005) {
		t.Errorf("p without tie correction = %.5f, want 0.0500 (Minitab)", p)
	}
	if p := normalP(u, 5, 4, tie, true); !near(p, 0.0491, 0.0001) {
		t.Errorf("p with tie correction = %.5f, want 0.0491", p)
	}
}

// TestMannWhitneyExactMatchesEnumeration cross-checks the exact p-value
// against brute-force enumeration of every split of the pooled sample,
// on small samples with many ties.
func TestMannWhitneyExactMatchesEnumeration(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 7))
	for trial := range 50 {
		n1, n2 := 1+rng.IntN(6), 1+rng.IntN(6)
		a, b := make([]float64, n1), make([]float64, n2)
		for i := range a {
			a[i] = float64(rng.IntN(5))
		}
		for i := range b {
			b[i] = float64(rng.IntN(5))
		}
		u, p := MannWhitneyU(a, b)
		want := bruteForceP(a, b)
		if !near(p, want, 1e-12) {
			t.Errorf("trial %d: MannWhitneyU(%v, %v) = (%v, %v), enumeration gives p = %v", trial, a, b, u, p, want)
		}
	}
}

// bruteForceP enumerates every assignment of the pooled values to a sample
// of len(a) and counts those whose U is at least as far from n1·n2/2.
func bruteForceP(a, b []float64) float64 {
	pooled := append(append([]float64{}, a...), b...)
	n, n1 := len(pooled), len(a)
	uOf := func(x, y []float64) float64 {
		var u float64
		for _, xv := range x {
			for _, yv := range y {
				switch {
				case xv > yv:
					u++
				case xv == yv:
					u += 0.5
				}
			}
		}
		return u
	}
	mu := float64(n1*(n-n1)) / 2
	obs := math.Abs(uOf(a, b) - mu)
	var hit, all float64
	for mask := 0; mask < 1<<n; mask++ {
		var x, y []float64
		for i, v := range pooled {
			if mask&(1<<i) != 0 {
				x = append(x, v)
			} else {
				y = append(y, v)
			}
		}
		if len(x) != n1 {
			continue
		}
		all++
		if math.Abs(uOf(x, y)-mu) >= obs-1e-9 {
			hit++
		}
	}
	return hit / all
}

func TestMinPValue(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		n1, n2 int
		want   float64
	}{
		{0, 3, 1}, {1, 1, 1}, {2, 2, 1.0 / 3}, {3, 3, 0.1}, {5, 5, 2.0 / 252},
	} {
		if got := MinPValue(tc.n1, tc.n2); !near(got, tc.want, 1e-9) {
			t.Errorf("MinPValue(%d, %d) = %v, want %v", tc.n1, tc.n2, got, tc.want)
		}
	}
}

func TestMedianRatioCI(t *testing.T) {
	t.Parallel()
	base := []float64{100, 101, 99, 100, 102}
	same := append([]float64{}, base...)
	if r, lo, hi := MedianRatioCI(base, same, 0.95, rand.New(rand.NewPCG(1, 1)), 2000); r != 1 || lo > 1 || hi < 1 {
		t.Errorf("identical samples: ratio %v [%v, %v], want 1 inside the interval", r, lo, hi)
	}
	cand := make([]float64, len(base))
	for i, v := range base {
		cand[i] = 0.8 * v
	}
	r, lo, hi := MedianRatioCI(base, cand, 0.95, rand.New(rand.NewPCG(1, 1)), 2000)
	if !near(r, 0.8, 1e-12) || !(lo <= r && r <= hi) || hi >= 0.85 || lo <= 0.75 {
		t.Errorf("20%% drop: ratio %v [%v, %v], want 0.8 inside a narrow interval", r, lo, hi)
	}
	r2, lo2, hi2 := MedianRatioCI(base, cand, 0.95, rand.New(rand.NewPCG(1, 1)), 2000)
	if r2 != r || lo2 != lo || hi2 != hi {
		t.Errorf("same seed gave [%v, %v] then [%v, %v]", lo, hi, lo2, hi2)
	}
	if r, lo, hi := MedianRatioCI([]float64{5}, []float64{4}, 0.95, nil, 0); r != 0.8 || lo != 0.8 || hi != 0.8 {
		t.Errorf("one value a side: %v [%v, %v], want the ratio with a collapsed interval", r, lo, hi)
	}
	for _, tc := range []struct {
		name       string
		base, cand []float64
	}{
		{"empty base", nil, []float64{1}},
		{"empty cand", []float64{1}, nil},
		{"zero base median", []float64{0, 0, 1}, []float64{1, 2, 3}},
	} {
		if r, lo, hi := MedianRatioCI(tc.base, tc.cand, 2, nil, -1); !math.IsNaN(r) || !math.IsNaN(lo) || !math.IsNaN(hi) {
			t.Errorf("%s: got %v [%v, %v], want NaN", tc.name, r, lo, hi)
		}
	}
}
