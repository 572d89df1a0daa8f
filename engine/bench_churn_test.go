package engine_test

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sharebench/sharebench/engine"
)

// BenchmarkChurnAborts measures what membership churn costs transactional
// acknowledgements (docs/design.md §3.9): four transactional workers copy records
// (poll up to 100, 500µs of processing, produce, stage, commit) on 4 input partitions while one
// iteration is one rebalance: an extra member joins the group, and leaves
// at the next iteration. Each rebalance bumps every member's epoch; a
// worker that polled before it and stages after it is fenced and aborts.
// Metrics: aborts per rebalance, and the workers' records per second.
func BenchmarkChurnAborts(b *testing.B) {
	for _, every := range []time.Duration{time.Millisecond, 10 * time.Millisecond} {
		b.Run(fmt.Sprintf("rebalance-every=%v", every), func(b *testing.B) {
			benchChurn(b, every)
		})
	}
}

func benchChurn(b *testing.B, every time.Duration) {
	const workers, parts = 4, 4
	const processing = 500 * time.Microsecond
	e := benchEngine(b)
	for _, t := range []string{"in", "out"} {
		if err := e.CreateTopic(t, parts); err != nil {
			b.Fatal(err)
		}
	}
	recs := make([]engine.ProduceRecord, 500)
	for i := range recs {
		recs[i].Value = benchPayload[:64]
	}
	var stop atomic.Bool
	var aborts, done atomic.Int64
	var wg sync.WaitGroup
	ws := benchTxnWorkers(b, e, workers)
	for i := range ws {
		w := ws[i]
		wg.Add(1)
		go func() {
			defer wg.Done()
			var acks []engine.Acknowledgement
			outs := make([]engine.ProduceRecord, 0, 100)
			for !stop.Load() {
				got, err := w.m.Poll(100)
				if err != nil {
					b.Error(err)
					return
				}
				if len(got) == 0 {
					time.Sleep(50 * time.Microsecond)
					continue
				}
				time.Sleep(processing) // process the batch between poll and staging
				if err := w.p.Begin(); err != nil {
					b.Error(err)
					return
				}
				outs = outs[:0]
				for _, r := range got {
					outs = append(outs, engine.ProduceRecord{Value: r.Value})
				}
				if _, err := w.p.Produce("out", got[0].Partition, outs); err != nil {
					b.Error(err)
					return
				}
				acks = benchAcks(acks, got)
				err = w.p.SendShareAcksToTransaction(acks, w.m.Metadata())
				switch {
				case errors.Is(err, engine.ErrFencedMemberEpoch):
					aborts.Add(1)
					if err := w.p.Abort(); err != nil {
						b.Error(err)
						return
					}
				case err != nil:
					b.Error(err)
					return
				default:
					if err := w.p.Commit(); err != nil {
						b.Error(err)
						return
					}
					done.Add(int64(len(got)))
				}
			}
		}()
	}
	feed := func() {
		for p := int32(0); p < parts; p++ {
			if _, err := e.Produce("in", p, recs); err != nil {
				b.Error(err)
			}
		}
	}
	feed()
	var extra *engine.ShareMember
	b.ResetTimer()
	t0 := time.Now()
	for i := 0; i < b.N; i++ {
		time.Sleep(every)
		if extra == nil {
			m, err := e.JoinShareGroup("g", []string{"in"}, engine.AckTransactional)
			if err != nil {
				b.Fatal(err)
			}
			extra = m
		} else {
			if err := extra.Leave(); err != nil {
				b.Fatal(err)
			}
			extra = nil
		}
		if i%4 == 0 {
			feed()
		}
	}
	elapsed := time.Since(t0)
	stop.Store(true)
	wg.Wait()
	b.ReportMetric(float64(aborts.Load())/float64(b.N), "aborts/rebalance")
	b.ReportMetric(float64(done.Load())/elapsed.Seconds(), "records/s")
}
