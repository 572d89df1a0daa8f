// This file holds ProcessingTime, the simulated per-record work of a worker,
// and its sampler.

package workloads

import (
	"math"
	"math/rand/v2"
	"time"
)

// Processing-time distributions.
const (
	DistConstant    = "constant"    // always Mean
	DistUniform     = "uniform"     // uniform over [Min, Max]
	DistExponential = "exponential" // exponential with Mean, clamped to [Min, Max]
	DistLognormal   = "lognormal"   // lognormal with Mean and Stddev, clamped to [Min, Max]
)

// maxProcessingTime caps every processing-time setting and draw.
const maxProcessingTime = time.Hour

// ProcessingTime is how long a worker works on each record it polls, drawn
// from a distribution:
//
//   - constant: always Mean; Min, Max and Stddev must be 0.
//   - uniform: uniform over [Min, Max]; Mean and Stddev must be 0.
//   - exponential: mean Mean (> 0); Stddev must be 0.
//   - lognormal: mean Mean and standard deviation Stddev (both > 0) of the
//     distribution itself, not of its logarithm.
//
// For exponential and lognormal, Min and Max clamp the draws when set (Max 0
// means no clamp; draws never exceed one hour).
type ProcessingTime struct {
	Distribution string        `yaml:"distribution" json:"distribution"`
	Mean         time.Duration `yaml:"mean" json:"mean"`
	Min          time.Duration `yaml:"min,omitempty" json:"min,omitempty"`
	Max          time.Duration `yaml:"max,omitempty" json:"max,omitempty"`
	Stddev       time.Duration `yaml:"stddev,omitempty" json:"stddev,omitempty"`
}

// Sampler returns a function that draws processing times from p using rng,
// so the same seed gives the same draws. The function is not safe for
// concurrent use, like rng itself: give each worker its own. p should have
// passed Validate; an unknown distribution draws Mean. A nil rng is replaced
// by one with the fixed seed 0, 0.
func (p ProcessingTime) Sampler(rng *rand.Rand) func() time.Duration {
	if rng == nil {
		rng = rand.New(rand.NewPCG(0, 0))
	}
	lo, hi := p.Min, p.Max
	if hi <= 0 || hi > maxProcessingTime {
		hi = maxProcessingTime
	}
	lo = max(lo, 0)
	clamp := func(x float64) time.Duration {
		// Compare as floats first: a huge draw must not overflow int64.
		switch {
		case !(x >= float64(lo)): // also catches NaN
			return lo
		case x >= float64(hi):
			return hi
		}
		return time.Duration(x)
	}
	switch p.Distribution {
	case DistUniform:
		if p.Max <= p.Min {
			return func() time.Duration { return max(p.Min, 0) }
		}
		span := int64(p.Max - p.Min)
		return func() time.Duration { return p.Min + time.Duration(rng.Int64N(span+1)) }
	case DistExponential:
		mean := float64(p.Mean)
		return func() time.Duration { return clamp(mean * rng.ExpFloat64()) }
	case DistLognormal:
		m, sd := float64(p.Mean), float64(p.Stddev)
		if m <= 0 {
			return func() time.Duration { return lo }
		}
		// For a lognormal with mean m and standard deviation sd:
		// sigma² = ln(1 + sd²/m²), mu = ln(m) − sigma²/2.
		sigma2 := math.Log1p((sd * sd) / (m * m))
		mu, sigma := math.Log(m)-sigma2/2, math.Sqrt(sigma2)
		return func() time.Duration { return clamp(math.Exp(mu + sigma*rng.NormFloat64())) }
	default:
		d := max(p.Mean, 0)
		return func() time.Duration { return d }
	}
}
