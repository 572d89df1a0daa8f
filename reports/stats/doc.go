// Package stats holds the few robust statistics sharebench uses to compare
// benchmark repeats: medians and quantiles, the two-sided Mann–Whitney U test
// (exact for small samples, normal approximation with tie correction
// otherwise) and a seeded bootstrap confidence interval for the ratio of two
// medians.
//
// The functions take plain float64 samples (one value per repeat) and never
// panic: NaN values are dropped, and an empty sample yields NaN (or, for a
// p-value, 1: no evidence of a difference). Randomness comes only from the
// *rand.Rand (math/rand/v2) the caller passes, so a fixed seed gives the
// same interval on every run.
//
//	u, p := stats.MannWhitneyU(baseline, candidate)
//	ratio, lo, hi := stats.MedianRatioCI(baseline, candidate, 0.95, rand.New(rand.NewPCG(1, 2)), 10000)
package stats
