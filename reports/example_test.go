package reports_test

import (
	"fmt"
	"os"

	"github.com/sharebench/sharebench/loadgen/result"
	"github.com/sharebench/sharebench/reports"
)

// A candidate whose transactional throughput fell 20% over five repeats
// fails the gate with exit code 4.
func Example() {
	run := func(name string, throughputs ...float64) *reports.Run {
		r := &result.Result{Schema: result.Schema}
		for i, v := range throughputs {
			r.Modes = append(r.Modes, result.ModeResult{Mode: "transactional", Repeat: i + 1, Throughput: v,
				Verify: &result.Verification{Pass: true}})
		}
		return &reports.Run{Name: name, Result: r}
	}
	base := run("main", 1000, 1010, 990, 1005, 995)
	cand := run("pr-123", 800, 810, 790, 805, 795)

	cmp := reports.Compare([]*reports.Run{base}, []*reports.Run{cand})
	cmp.WriteText(os.Stdout)
	fmt.Println()
	g := reports.Gate(cmp, reports.GateOptions{MaxThroughputDrop: 0.05, MaxP99Rise: 0.10, Alpha: 0.05})
	g.WriteText(os.Stdout)
	fmt.Println("exit code", g.ExitCode())
	// Output:
	// baseline:  main
	// candidate: pr-123
	// ratio = candidate median / baseline median over repeats; 95% bootstrap interval; p = two-sided Mann–Whitney U
	//
	// mode           metric      baseline  candidate  ratio  interval        p      repeats
	// transactional  throughput  1,000 /s  800 /s     0.800  [0.787, 0.813]  0.008  5/5
	//
	// gate: FAIL (exit 4): regression
	// limits: throughput drop 5.0% (records/s and records per CPU-second), e2e/commit p99 rise 10.0%; significance required (p < alpha), alpha 0.05 (Mann–Whitney U over the repeats)
	// exactly-once: no forbidden anomaly in the candidate
	//
	// mode           metric      ratio  interval        p      status      why
	// transactional  throughput  0.800  [0.787, 0.813]  0.008  REGRESSION  throughput fell 20.0%, beyond the 5.0% drop limit, p = 0.008 < 0.05
	// exit code 4
}
