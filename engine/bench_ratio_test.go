package engine_test

import (
	"context"
	"runtime/pprof"
	"slices"
	"testing"
	"time"

	"github.com/sharebench/sharebench/engine"
)

// BenchmarkCTPRatio measures the transactional/explicit throughput ratio of
// BenchmarkCTP's consume-transform-produce loop in one process, the two
// modes interleaved in rounds of benchChunk records on two engines, so
// that load from elsewhere on a shared machine falls on both alike (two
// BenchmarkCTP runs minutes apart on a busy machine can differ by 3×). One
// iteration is one record of each mode. Metrics: each mode's records/s
// over the time spent in its own rounds (input production excluded), and
// txn/explicit, the median over rounds of the ratio of the two modes'
// throughputs in that round; txn/explicit-cpu is the same ratio for the
// process's CPU time per record (every goroutine's, the marker
// goroutine's included), which an oversubscribed machine disturbs less
// than the wall clock. Markers are the engine's default
// (asynchronous); markers=inline sends them inside Commit.
//
// control=explicit runs the same harness with an explicit loop in the
// transactional loop's place and reports control/explicit: the figure a
// mode exactly as fast as explicit gets, so a harness that favours one
// place over the other (the order of the engines, of their fills, of the
// rounds) shows there rather than inside txn/explicit.
//
//	go test -run x -bench CTPRatio -count 6 ./engine/
func BenchmarkCTPRatio(b *testing.B) {
	for _, tc := range []struct {
		name   string
		second string // the mode compared with explicit
		metric string // the ratio's name: <metric>/explicit
		opts   []engine.Option
	}{
		{"markers=async", "transactional", "txn", []engine.Option{engine.WithMarkerDelivery(engine.MarkersAsync)}},
		{"markers=inline", "transactional", "txn", []engine.Option{engine.WithMarkerDelivery(engine.MarkersInline)}},
		{"control=explicit", "explicit", "control", nil},
	} {
		b.Run("batch=500/"+tc.name, func(b *testing.B) {
			ex := newCTPLoop(b, "explicit", 500)
			tx := newCTPLoop(b, tc.second, 500, tc.opts...)
			var exT, txT time.Duration
			var ratios []float64    // per round: explicit time / transactional time
			var cpuRatios []float64 // per round: the same for the process's CPU time
			b.ReportAllocs()
			b.ResetTimer()
			for done := 0; done < b.N; {
				n := min(benchChunk, b.N-done)
				// Alternate which mode goes first, and fill each mode's
				// input (timer stopped) right before its own round, so
				// that both start on an input just produced. Filling both
				// before the first one's round favoured the one filled
				// last (the second loop): control/explicit read 1.03 and
				// 1.06 that way, 0.98-0.99 this way (medians of 6).
				var et, tt time.Duration
				var ecpu, tcpu int64
				if (done/benchChunk)%2 == 0 {
					et, ecpu = ex.fillRun(n)
					tt, tcpu = tx.fillRun(n)
				} else {
					tt, tcpu = tx.fillRun(n)
					et, ecpu = ex.fillRun(n)
				}
				exT, txT = exT+et, txT+tt
				ratios = append(ratios, et.Seconds()/tt.Seconds())
				if ecpu > 0 && tcpu > 0 {
					cpuRatios = append(cpuRatios, float64(ecpu)/float64(tcpu))
				}
				done += n
			}
			b.StopTimer()
			exRate := float64(b.N) / exT.Seconds()
			txRate := float64(b.N) / txT.Seconds()
			b.ReportMetric(exRate, "explicit-records/s")
			b.ReportMetric(txRate, tc.metric+"-records/s")
			// The median of the rounds' ratios: a burst of load from
			// elsewhere spoils a round or two, not the figure.
			slices.Sort(ratios)
			b.ReportMetric(ratios[len(ratios)/2], tc.metric+"/explicit")
			if len(cpuRatios) > 0 {
				slices.Sort(cpuRatios)
				b.ReportMetric(cpuRatios[len(cpuRatios)/2], tc.metric+"/explicit-cpu")
			}
		})
	}
}

// ctpLoop is one mode's consume-transform-produce worker over its own
// engine, as benchCTP runs it.
type ctpLoop struct {
	b     *testing.B
	e     *engine.Engine
	mode  string
	batch int
	sm    *engine.ShareMember
	prod  *engine.Producer
	outs  []engine.ProduceRecord
	acks  []engine.Acknowledgement
}

func newCTPLoop(b *testing.B, mode string, batch int, opts ...engine.Option) *ctpLoop {
	l := &ctpLoop{b: b, e: benchEngine(b, opts...), mode: mode, batch: batch, outs: make([]engine.ProduceRecord, 0, batch)}
	for _, t := range []string{"in", "out"} {
		if err := l.e.CreateTopic(t, 1); err != nil {
			b.Fatal(err)
		}
	}
	ack, pc := engine.AckExplicit, engine.ProducerConfig{Idempotent: true}
	if mode == "transactional" {
		ack, pc = engine.AckTransactional, engine.ProducerConfig{TransactionalID: "copier"}
	}
	var err error
	if l.sm, err = l.e.JoinShareGroup("g", []string{"in"}, ack); err != nil {
		b.Fatal(err)
	}
	if l.prod, err = l.e.NewProducer(pc); err != nil {
		b.Fatal(err)
	}
	return l
}

// fillRun produces n inputs with the benchmark timer stopped and then
// processes them (run).
func (l *ctpLoop) fillRun(n int) (time.Duration, int64) {
	l.b.StopTimer()
	benchFill(l.b, l.e, "in", 0, n, benchPayloadBytes)
	l.b.StartTimer()
	return l.run(n)
}

// run processes n records and returns the time it took and the CPU time
// the process used meanwhile (0 where it cannot be read). Its samples in a
// CPU profile carry the label mode=<mode>, so that the two modes' own
// costs can be told apart (go tool pprof -tagfocus mode=transactional).
func (l *ctpLoop) run(n int) (d time.Duration, cpu int64) {
	pprof.Do(context.Background(), pprof.Labels("mode", l.mode), func(context.Context) { d, cpu = l.runLabelled(n) })
	return d, cpu
}

func (l *ctpLoop) runLabelled(n int) (time.Duration, int64) {
	b := l.b
	cpu0 := processCPU()
	start := time.Now()
	for done := 0; done < n; {
		recs, err := l.sm.Poll(min(l.batch, n-done))
		if err != nil {
			b.Fatal(err)
		}
		if len(recs) == 0 {
			b.Fatalf("%s: poll returned nothing with %d of %d records done", l.mode, done, n)
		}
		l.outs = l.outs[:0]
		for i := range recs {
			l.outs = append(l.outs, engine.ProduceRecord{Value: recs[i].Value})
		}
		l.acks = benchAcks(l.acks, recs)
		if l.mode == "explicit" {
			if _, err := l.prod.Produce("out", 0, l.outs); err != nil {
				b.Fatal(err)
			}
			if err := l.sm.Acknowledge(l.acks); err != nil {
				b.Fatal(err)
			}
		} else {
			if err := l.prod.Begin(); err != nil {
				b.Fatal(err)
			}
			if _, err := l.prod.Produce("out", 0, l.outs); err != nil {
				b.Fatal(err)
			}
			if err := l.prod.SendShareAcksToTransaction(l.acks, l.sm.Metadata()); err != nil {
				b.Fatal(err)
			}
			if err := l.prod.Commit(); err != nil {
				b.Fatal(err)
			}
		}
		done += len(recs)
	}
	elapsed := time.Since(start)
	if cpu0 < 0 {
		return elapsed, 0
	}
	return elapsed, processCPU() - cpu0
}
