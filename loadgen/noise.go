// This file records the noise around a mode's measurement window: the
// machine's load average when it opens and closes, and the share of its
// Ps the process kept busy in between.

package loadgen

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/sharebench/sharebench/loadgen/result"
)

// loadAvgFile is where Linux publishes the load averages; other systems
// have no such file, and their load is recorded as unknown.
const loadAvgFile = "/proc/loadavg"

// readLoadAvg returns the 1-, 5- and 15-minute load averages, or nil when
// the OS does not say.
func readLoadAvg() []float64 {
	b, err := os.ReadFile(loadAvgFile)
	if err != nil {
		return nil
	}
	return parseLoadAvg(string(b))
}

// parseLoadAvg reads the first three fields of a /proc/loadavg line like
// "0.52 0.58 0.59 1/467 12345"; nil when they are not three numbers.
func parseLoadAvg(s string) []float64 {
	f := strings.Fields(s)
	if len(f) < 3 {
		return nil
	}
	out := make([]float64, 3)
	for i := range out {
		v, err := strconv.ParseFloat(f[i], 64)
		if err != nil || v < 0 {
			return nil
		}
		out[i] = v
	}
	return out
}

// noiseProbe is one reading of what the noise note needs.
type noiseProbe struct {
	at      time.Time
	cpuNs   int64 // processCPUNs, -1 unknown
	loadAvg []float64
	procs   int // GOMAXPROCS
}

func probeNoise() noiseProbe {
	return noiseProbe{at: time.Now(), cpuNs: processCPUNs(), loadAvg: readLoadAvg(), procs: runtime.GOMAXPROCS(0)}
}

// noiseBetween is the noise of the window opened at a and closed at b,
// its CPU share taken over the Ps the process had when it opened.
func noiseBetween(a, b noiseProbe) *result.Noise {
	gomaxprocs := a.procs
	n := &result.Noise{LoadAvgStart: a.loadAvg, LoadAvgEnd: b.loadAvg, CPUShare: -1, GOMAXPROCS: gomaxprocs}
	wall := b.at.Sub(a.at)
	if a.cpuNs >= 0 && b.cpuNs >= a.cpuNs && wall > 0 && gomaxprocs > 0 {
		n.CPUShare = float64(b.cpuNs-a.cpuNs) / float64(wall) / float64(gomaxprocs)
	}
	return n
}
