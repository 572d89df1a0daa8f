// Package testsuite holds checks over the repository's own test suite, run
// by the default go test: that no test of the default suite compares a
// wall-clock figure (an elapsed time, a rate, a measured latency) with a
// threshold, since a loaded machine breaks such a test without a bug. The
// figures belong in benchmarks, and tests that must measure live in the
// long tier (the long build tag), which .ci/run runs on its own.
package testsuite
