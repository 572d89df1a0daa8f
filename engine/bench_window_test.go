package engine_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/sharebench/sharebench/engine"
)

// BenchmarkWindowFinding measures the finding that long transactions cap
// a transactional share group's throughput, and the alternative a KIP
// reviewer asks about. Two workers on one input partition poll up to 500
// records every 10 ms of virtual time (the engine runs on a manual clock,
// so the figures are the engine's rules, not this machine's speed). An
// explicit worker acknowledges each poll at once; a transactional worker
// stages each poll in its open transaction and commits it when it is as
// old as the commit interval. With TX_PENDING records counted toward
// share.partition.max.record.locks (2000; the draft's choice and the
// default) the window fills with staged records and the throughput is
// about 2000 per commit interval; with them not counted (the
// TxPendingLimit knob, here 1<<20) it follows the polls. Metrics:
// records per virtual second of each mode and their ratio.
func BenchmarkWindowFinding(b *testing.B) {
	for _, interval := range []time.Duration{10 * time.Millisecond, 100 * time.Millisecond, time.Second} {
		for _, pending := range []struct {
			name  string
			limit int
		}{{"counted", 0}, {"not-counted", 1 << 20}} {
			b.Run(fmt.Sprintf("commit=%v/pending=%s", interval, pending.name), func(b *testing.B) {
				var exp, txn float64
				for i := 0; i < b.N; i++ {
					exp = windowRun(b, false, interval, pending.limit)
					txn = windowRun(b, true, interval, pending.limit)
				}
				b.ReportMetric(exp, "explicit-records/vs")
				b.ReportMetric(txn, "txn-records/vs")
				b.ReportMetric(txn/exp, "txn/explicit")
			})
		}
	}
}

// windowRun runs two workers for 4 virtual seconds and returns the
// records they completed per virtual second.
func windowRun(b *testing.B, transactional bool, interval time.Duration, pendingLimit int) float64 {
	const (
		workers  = 2
		maxPoll  = 500
		pollTime = 10 * time.Millisecond
		duration = 4 * time.Second
	)
	clk := engine.NewManualClock()
	e, err := engine.New(engine.WithClock(clk), engine.WithMarkerDelivery(engine.MarkersInline),
		engine.WithKnobs(engine.Knobs{TxPendingLimit: pendingLimit}),
		engine.WithGroupDefaults(engine.GroupConfig{LockDuration: 30 * time.Second, DeliveryLimit: 5, MaxRecordLocks: 2000,
			AutoOffsetReset: engine.ResetEarliest, AcquireMode: engine.AcquireRecordLimit}))
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	if err := e.CreateTopic("in", 1); err != nil {
		b.Fatal(err)
	}
	chunk := make([]engine.ProduceRecord, 1000)
	for i := range chunk {
		chunk[i].Value = benchPayload[:16]
	}
	produced := int64(0)
	mode := engine.AckExplicit
	if transactional {
		mode = engine.AckTransactional
	}
	type worker struct {
		m       *engine.ShareMember
		p       *engine.Producer
		open    bool
		started time.Duration
		staged  int64
	}
	ws := make([]*worker, workers)
	for i := range ws {
		m, err := e.JoinShareGroup("g", []string{"in"}, mode)
		if err != nil {
			b.Fatal(err)
		}
		ws[i] = &worker{m: m}
		if transactional {
			if ws[i].p, err = e.NewProducer(engine.ProducerConfig{TransactionalID: fmt.Sprint("w", i)}); err != nil {
				b.Fatal(err)
			}
		}
	}
	done, polled := int64(0), int64(0)
	var acks []engine.Acknowledgement
	for now := time.Duration(0); now < duration; now += pollTime {
		clk.Set(now)
		for _, w := range ws {
			for produced-polled < 2*workers*maxPoll {
				if _, err := e.Produce("in", 0, chunk); err != nil {
					b.Fatal(err)
				}
				produced += int64(len(chunk))
			}
			if transactional && !w.open {
				if err := w.p.Begin(); err != nil {
					b.Fatal(err)
				}
				w.open, w.started, w.staged = true, now, 0
			}
			recs, err := w.m.Poll(maxPoll)
			if err != nil {
				b.Fatal(err)
			}
			polled += int64(len(recs))
			if len(recs) > 0 {
				acks = benchAcks(acks, recs)
				if transactional {
					err = w.p.SendShareAcksToTransaction(acks, w.m.Metadata())
					w.staged += int64(len(recs))
				} else {
					err = w.m.Acknowledge(acks)
					done += int64(len(recs))
				}
				if err != nil {
					b.Fatal(err)
				}
			}
			if transactional && now+pollTime-w.started >= interval {
				if err := w.p.Commit(); err != nil {
					b.Fatal(err)
				}
				done += w.staged
				w.open = false
			}
		}
	}
	return float64(done) / duration.Seconds()
}
