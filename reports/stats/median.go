// This file holds the order statistics: Median and Quantile.

package stats

import (
	"math"
	"slices"
)

// clean returns the non-NaN values of x, sorted, in a new slice.
func clean(x []float64) []float64 {
	out := make([]float64, 0, len(x))
	for _, v := range x {
		if !math.IsNaN(v) {
			out = append(out, v)
		}
	}
	slices.Sort(out)
	return out
}

// Median returns the median of x (the mean of the two middle values for an
// even count), ignoring NaN values. It returns NaN when x holds no number.
// x is not modified.
func Median(x []float64) float64 {
	return Quantile(x, 0.5)
}

// Quantile returns the q-quantile of x (0 ≤ q ≤ 1) by linear interpolation
// between closest ranks (R's type 7, the default of R and NumPy), ignoring
// NaN values. It returns NaN when x holds no number or q is outside [0, 1].
// x is not modified.
func Quantile(x []float64, q float64) float64 {
	if !(q >= 0 && q <= 1) {
		return math.NaN()
	}
	s := clean(x)
	return quantileSorted(s, q)
}

// quantileSorted is Quantile for a sorted slice without NaN values.
func quantileSorted(s []float64, q float64) float64 {
	switch len(s) {
	case 0:
		return math.NaN()
	case 1:
		return s[0]
	}
	h := q * float64(len(s)-1)
	lo := int(math.Floor(h))
	if lo >= len(s)-1 {
		return s[len(s)-1]
	}
	frac := h - float64(lo)
	if frac == 0 {
		return s[lo]
	}
	return s[lo] + frac*(s[lo+1]-s[lo])
}
