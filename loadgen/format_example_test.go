// This file pins the exact text tables TextFormatter prints, wide and
// compact, on a result built by hand: a passing mode, one with allowed
// duplicates, one failing, one unsupported and one that errored, with
// their footnotes; and an interrupted run, whose stopped and unstarted
// modes are INCONCLUSIVE.

package loadgen_test

import (
	"os"
	"time"

	"github.com/sharebench/sharebench/loadgen"
	"github.com/sharebench/sharebench/loadgen/result"
	"github.com/sharebench/sharebench/vocab"
)

// exampleResult is the hand-built result both examples print.
func exampleResult() *result.Result {
	ms := func(f float64) int64 { return int64(f * float64(time.Millisecond)) }
	return &result.Result{
		Schema:   result.Schema,
		Env:      result.Env{Target: "kafka", Embedded: true, GOMAXPROCS: 2},
		Workload: "quick",
		Seed:     42,
		OpenLoop: true,
		Rate:     2000,
		Duration: 2 * time.Second,
		Warmup:   500 * time.Millisecond,
		Repeats:  1,
		Modes: []result.ModeResult{
			{
				Mode: "explicit", Throughput: 1999.6, Redeliveries: 3,
				Histograms: map[string]result.Histogram{
					result.HistEndToEnd: {Count: 4000, P50: 627_000, P99: ms(12.8), P999: ms(15.84)},
					result.HistCommit:   {Count: 80, P99: 35_900},
				},
				Verify:         &result.Verification{Pass: true, Allowed: []vocab.Finding{"duplicate"}, Counts: map[vocab.Finding]int64{"duplicate": 3}},
				SendLagWarning: "send lag p99 150ms: the schedule of 2000 records/s was not met",
			},
			{
				Mode: "transactional", Throughput: 2040, Aborts: 7, FencedAborts: 3, Rebalances: 4, LockExpiries: 1,
				Histograms: map[string]result.Histogram{
					result.HistEndToEnd: {Count: 4000, P50: ms(42.5), P99: ms(52), P999: 1_500_000_000},
					result.HistCommit:   {Count: 40, P99: 950},
				},
				Verify:        &result.Verification{Pass: false, Allowed: []vocab.Finding{}, Counts: map[vocab.Finding]int64{"lost": 2, "duplicate": 1}, Forbidden: []vocab.Finding{"lost", "duplicate"}},
				DrainTimedOut: true, DrainNs: int64(30*time.Second + 4*time.Millisecond),
			},
			{
				Mode: "implicit", Throughput: 0,
				// No samples: the latency cells read "-".
				Histograms: map[string]result.Histogram{result.HistEndToEnd: {}},
				Verify:     &result.Verification{Pass: true, Allowed: []vocab.Finding{"duplicate"}, Counts: map[vocab.Finding]int64{}},
			},
			{Mode: "deferred", Unsupported: "kafka: mode deferred needs transactions; run --modes explicit"},
			{Mode: "classic-eos", Error: "setting up topics: boom"},
		},
	}
}

func ExampleTextFormatter() {
	if err := (loadgen.TextFormatter{}).Format(os.Stdout, exampleResult()); err != nil {
		panic(err)
	}
	// Output:
	// workload quick · target kafka (embedded kfake) · open loop, 2000 records/s · 2s measured after 500ms warm-up · seed 42
	//            mode  throughput/s  e2e p50  e2e p99  e2e p99.9  commit p99  redeliveries  aborts  fenced aborts  lock expiries                exactly-once
	//        explicit          2000    627µs   12.8ms     15.8ms      35.9µs             3       0              0              0  pass (duplicate 3 allowed)
	//   transactional          2040   42.5ms     52ms       1.5s       950ns             0       7              3              1   FAIL: lost 2, duplicate 1
	//        implicit             0        -        -          -           -             0       0              0              0                        PASS
	//        deferred             -        -        -          -           -             -       -              -              -                 unsupported
	//     classic-eos             -        -        -          -           -             -       -              -              -                       error
	// explicit: warning: send lag p99 150ms: the schedule of 2000 records/s was not met
	// transactional: 4 rebalances by membership churn, 3 aborts fenced by a stale member epoch: 0.75 per rebalance
	// transactional: warning: the drain timed out after 30.004s with inputs still unresolved
	// deferred: kafka: mode deferred needs transactions; run --modes explicit
	// classic-eos: error: setting up topics: boom
}

// An 80-column terminal gets the compact table: the columns a reader needs
// first, and each verdict's details on a line of their own.
func ExampleTextFormatter_compact() {
	if err := (loadgen.TextFormatter{Width: 80}).Format(os.Stdout, exampleResult()); err != nil {
		panic(err)
	}
	// Output:
	// workload quick · target kafka (embedded kfake) · open loop, 2000 records/s
	// 2s measured after 500ms warm-up · seed 42
	//           mode records/s    p50    p99  p99.9 redel aborts     verdict
	//       explicit      2000  627µs 12.8ms 15.8ms     3      0        pass
	//  transactional      2040 42.5ms   52ms   1.5s     0      7        FAIL
	//       implicit         0      -      -      -     0      0        PASS
	//       deferred         -      -      -      -     -      - unsupported
	//    classic-eos         -      -      -      -     -      -       error
	// explicit: pass (duplicate 3 allowed)
	// transactional: FAIL: lost 2, duplicate 1
	// explicit: warning: send lag p99 150ms: the schedule of 2000 records/s was not met
	// transactional: 4 rebalances by membership churn, 3 aborts fenced by a stale member epoch: 0.75 per rebalance
	// transactional: warning: the drain timed out after 30.004s with inputs still unresolved
	// deferred: kafka: mode deferred needs transactions; run --modes explicit
	// classic-eos: error: setting up topics: boom
}

// An interrupted run: the first mode finished, the second was stopped
// before its verdict, the third never started. Neither of the last two
// reads as passed.
func ExampleTextFormatter_interrupted() {
	res := &result.Result{
		Schema: result.Schema, Env: result.Env{Target: "engine"}, Workload: "quick", Seed: 7,
		OpenLoop: true, Rate: 2000, Duration: 2 * time.Second, Warmup: 500 * time.Millisecond, Repeats: 1,
		Interrupted: true,
		Modes: []result.ModeResult{
			{
				Mode: "explicit", Throughput: 2000,
				Histograms: map[string]result.Histogram{result.HistEndToEnd: {Count: 4000, P50: 627_000, P99: 900_000, P999: 1_200_000}},
				Verify:     &result.Verification{Pass: true, Allowed: []vocab.Finding{"duplicate"}, Counts: map[vocab.Finding]int64{}},
			},
			{
				Mode: "transactional", Throughput: 1200, Interrupted: true, Error: "interrupted before the mode finished",
				Histograms: map[string]result.Histogram{result.HistEndToEnd: {Count: 1000, P50: 5_000_000, P99: 9_000_000, P999: 9_500_000}},
			},
		},
		NotRun: []result.ModeRef{{Mode: "classic-eos"}},
	}
	if err := (loadgen.TextFormatter{}).Format(os.Stdout, res); err != nil {
		panic(err)
	}
	// Output:
	// workload quick · target engine · open loop, 2000 records/s · 2s measured after 500ms warm-up · seed 7
	//            mode  throughput/s  e2e p50  e2e p99  e2e p99.9  commit p99  redeliveries  aborts  fenced aborts  lock expiries               exactly-once
	//        explicit          2000    627µs    900µs      1.2ms           -             0       0              0              0                       PASS
	//   transactional          1200      5ms      9ms      9.5ms           -             0       0              0              0  INCONCLUSIVE: interrupted
	//     classic-eos             -        -        -          -           -             -       -              -              -    INCONCLUSIVE: never ran
	// transactional: interrupted before the mode finished: no verdict
	// classic-eos: never ran: the run was interrupted first
}
