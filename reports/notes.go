// This file builds the summary's one-line notes: the modes the verifier
// found nothing in (one line instead of a chart of zeros each) and the
// noise around the measurement windows, with the per-window detail behind
// the noise line.

package reports

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// anomalySummary splits the measured modes into those the verifier found
// nothing in, in every run (clean), those with a finding of any kind in some
// run (charted: their anomaly chart is drawn) and those no run verified,
// and says so in one line. The line is "" when no mode was measured.
func anomalySummary(runs []*runData) (line string, charted []string) {
	var clean, unverified []string
	for _, mode := range measuredModes(runs) {
		verifiedAll, verifiedAny, findings := true, false, int64(0)
		for _, rd := range runs {
			md := rd.find(mode)
			if md == nil || len(md.repeats) == 0 {
				continue
			}
			v := verdictOf(md)
			if v.verified == 0 {
				verifiedAll = false
				continue
			}
			verifiedAny = true
			for _, n := range v.counts {
				findings += n
			}
		}
		switch {
		case !verifiedAny:
			unverified = append(unverified, mode)
		case verifiedAll && findings == 0:
			clean = append(clean, mode)
		default:
			charted = append(charted, mode)
		}
	}
	var parts []string
	switch {
	case len(clean) > 0 && len(charted) == 0 && len(unverified) == 0:
		parts = append(parts, "No anomalies: the verifier found nothing of any kind in any mode ("+strings.Join(clean, ", ")+").")
	case len(clean) > 0:
		parts = append(parts, "No anomalies in "+strings.Join(clean, ", ")+": every verifier count is zero.")
	}
	if len(charted) > 0 {
		parts = append(parts, "Verifier findings in "+strings.Join(charted, ", ")+" are charted in the report's Anomalies section.")
	}
	if len(unverified) > 0 {
		parts = append(parts, "Not verified: "+strings.Join(unverified, ", ")+".")
	}
	return strings.Join(parts, " "), charted
}

// noiseRow is one measured repeat's window: the load average at its ends
// and the process's CPU share in it.
type noiseRow struct {
	Run, Mode       string
	Repeat          int
	LoadStart       string // "0.52 / 0.58 / 0.59", or "unknown"
	LoadEnd         string
	CPUShare, Procs string
}

// noiseNote sums up the noise of every measured window in one line per
// run, and lists every window. A performance figure taken on a machine
// whose load exceeds its CPUs, or by a process that could not keep its Ps
// busy, is less trustworthy than its digits suggest: the line says which.
func noiseNote(runs []*runData) (lines []string, rows []noiseRow) {
	for _, rd := range runs {
		var loads, shares []float64
		windows, recorded, procs := 0, 0, 0
		for _, md := range rd.modes {
			for _, rp := range md.repeats {
				windows++
				n := rp.m.Noise
				if n == nil {
					continue
				}
				recorded++
				procs = max(procs, n.GOMAXPROCS)
				row := noiseRow{Run: rd.label, Mode: md.mode, Repeat: rp.m.Repeat,
					LoadStart: loadText(n.LoadAvgStart), LoadEnd: loadText(n.LoadAvgEnd),
					CPUShare: "unknown", Procs: positive(n.GOMAXPROCS)}
				for _, l := range [][]float64{n.LoadAvgStart, n.LoadAvgEnd} {
					if len(l) > 0 {
						loads = append(loads, l[0])
					}
				}
				if n.CPUShare >= 0 && !math.IsNaN(n.CPUShare) {
					shares = append(shares, n.CPUShare)
					row.CPUShare = percent(n.CPUShare)
				}
				rows = append(rows, row)
			}
		}
		if windows == 0 {
			continue
		}
		var b strings.Builder
		if len(runs) > 1 {
			b.WriteString(rd.label + ": ")
		}
		if recorded == 0 {
			b.WriteString("not recorded (the result was written before sharebench recorded the load average and CPU share of each window).")
			lines = append(lines, b.String())
			continue
		}
		cpus := rd.run.Result.Env.NumCPU
		if len(loads) == 0 {
			b.WriteString("load average unknown (the OS does not report it)")
		} else {
			lo, hi := spanOf(loads)
			fmt.Fprintf(&b, "1-minute load average %s at the opening and closing of %s", rangeText(lo, hi, formatLoad), plural(recorded, "window"))
			if cpus > 0 {
				fmt.Fprintf(&b, " on %s", plural(cpus, "CPU"))
			}
		}
		if len(shares) == 0 {
			b.WriteString("; the process's CPU share unknown (the OS does not report its CPU time)")
		} else {
			lo, hi := spanOf(shares)
			fmt.Fprintf(&b, "; sharebench kept %s of its %s busy (CPU time ÷ wall time ÷ GOMAXPROCS in each window)", percentRange(lo, hi), plural(procs, "P"))
		}
		b.WriteString(".")
		if _, hi := spanOf(loads); len(loads) > 0 && cpus > 0 && hi > float64(cpus) {
			fmt.Fprintf(&b, " The load exceeded the %s: runnable threads waited for a CPU, so the tail latencies may show the machine rather than the system under test.", plural(cpus, "CPU"))
		}
		lines = append(lines, b.String())
	}
	return lines, rows
}

func loadText(l []float64) string {
	if len(l) == 0 {
		return "unknown"
	}
	parts := make([]string, len(l))
	for i, v := range l {
		parts[i] = formatLoad(v)
	}
	return strings.Join(parts, " / ")
}

func formatLoad(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }

func percent(v float64) string { return strconv.FormatFloat(100*v, 'f', 0, 64) + "%" }

// percentRange is rangeText for percentages: "48–55%".
func percentRange(lo, hi float64) string {
	if percent(lo) == percent(hi) {
		return percent(lo)
	}
	return strings.TrimSuffix(percent(lo), "%") + "–" + percent(hi)
}

func spanOf(vs []float64) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, v := range vs {
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	return lo, hi
}

// rangeText is "f(lo)–f(hi)", or one value when they print the same.
func rangeText(lo, hi float64, f func(float64) string) string {
	if f(lo) == f(hi) {
		return f(lo)
	}
	return f(lo) + "–" + f(hi)
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}
