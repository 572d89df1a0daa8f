// This file holds the durability benchmarks: consume-transform-produce in
// transactional mode (BenchmarkCTP's workload: 1 KiB records, one output
// per input, acknowledgements in the producer's transaction) with a data
// directory under each flush policy against the in-memory engine, for one
// worker and for eight concurrent workers (group commit), reporting where
// the time goes (fsyncs per second and per transaction, bytes written per
// record); and recovery time as a function of the log's size.
//
//	go test -run x -bench CTPDurable -benchtime 20000x ./engine/
//	go test -run x -bench Recovery -benchtime 3x ./engine/

package engine_test

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sharebench/sharebench/engine"
)

var benchFlushes = []struct {
	name string
	opts func(dir string) []engine.Option
}{
	{"memory", func(string) []engine.Option { return nil }},
	{"always", func(dir string) []engine.Option {
		return []engine.Option{engine.WithDataDir(dir), engine.WithFlushPolicy(engine.FlushAlways)}
	}},
	{"interval:10ms", func(dir string) []engine.Option {
		return []engine.Option{engine.WithDataDir(dir), engine.WithFlushPolicy(engine.FlushInterval(10 * time.Millisecond))}
	}},
	{"never", func(dir string) []engine.Option {
		return []engine.Option{engine.WithDataDir(dir), engine.WithFlushPolicy(engine.FlushNever)}
	}},
}

// BenchmarkCTPDurable is BenchmarkCTP's transactional mode with a data
// directory. workers=1 is one member and one transactional producer, as in
// BenchmarkCTP; workers=8 runs eight of them on an 8-partition input
// concurrently, where group commit shares fsyncs among them. Input
// production (and its journal traffic) is outside the timer and the
// counters.
//
// Metrics: records/s; fsyncs/s and fsyncs/txn (with always, bounded by the
// flush rate: one leader fsyncs each dirty file for every waiter); B/record
// (journal bytes written per consumed record: its output, its share-state
// and transaction records); txns/s.
func BenchmarkCTPDurable(b *testing.B) {
	for _, workers := range []int{1, 8} {
		for _, batch := range []int{100, 500} {
			for _, fl := range benchFlushes {
				b.Run(fmt.Sprintf("workers=%d/batch=%d/flush=%s", workers, batch, fl.name), func(b *testing.B) {
					benchCTPDurable(b, workers, batch, fl.opts(b.TempDir()))
				})
			}
		}
	}
}

func benchCTPDurable(b *testing.B, workers, batch int, opts []engine.Option) {
	parts := int32(1)
	if workers > 1 {
		parts = int32(workers)
	}
	e := benchEngine(b, opts...)
	for _, t := range []string{"in", "out"} {
		if err := e.CreateTopic(t, parts); err != nil {
			b.Fatal(err)
		}
	}
	ws := benchTxnWorkers(b, e, workers)
	// Inputs are produced in chunks with the timer stopped; the journal's
	// counters are read around the timed parts only.
	var timedFsyncs, timedBytes int64
	var txns atomic.Int64
	produced := 0
	refill := func() {
		n := min(benchChunk, b.N-produced)
		for p := int32(0); p < parts; p++ {
			k := n / int(parts)
			if int(p) < n%int(parts) {
				k++
			}
			if k > 0 {
				benchFill(b, e, "in", p, k, benchPayloadBytes)
			}
		}
		produced += n
	}
	b.ReportAllocs()
	b.ResetTimer()
	for produced < b.N {
		b.StopTimer()
		before := int64(produced)
		refill()
		st0 := e.Stats().Journal
		b.StartTimer()
		var done atomic.Int64
		target := int64(produced)
		var wg sync.WaitGroup
		errs := make(chan error, workers)
		for _, w := range ws {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := ctpWorker(w.m, w.p, batch, &done, &txns); err != nil {
					errs <- err
				}
			}()
		}
		wg.Wait()
		b.StopTimer()
		st1 := e.Stats().Journal
		timedFsyncs += st1.Fsyncs - st0.Fsyncs
		timedBytes += st1.BytesWritten - st0.BytesWritten
		close(errs)
		for err := range errs {
			b.Fatal(err)
		}
		if got := done.Load(); got != target-before {
			b.Fatalf("processed %d records of %d", got, target-before)
		}
		b.StartTimer()
	}
	b.StopTimer()
	secs := b.Elapsed().Seconds()
	b.ReportMetric(float64(b.N)/secs, "records/s")
	b.ReportMetric(float64(txns.Load())/secs, "txns/s")
	b.ReportMetric(float64(timedFsyncs)/secs, "fsyncs/s")
	if n := txns.Load(); n > 0 {
		b.ReportMetric(float64(timedFsyncs)/float64(n), "fsyncs/txn")
	}
	b.ReportMetric(float64(timedBytes)/float64(b.N), "B/record")
}

// ctpWorker copies batches in transactions until a poll finds nothing
// (every produced input is then held or done by some worker).
func ctpWorker(m *engine.ShareMember, p *engine.Producer, batch int, done, txns *atomic.Int64) error {
	outs := make([]engine.ProduceRecord, 0, batch)
	var acks []engine.Acknowledgement
	for {
		recs, err := m.Poll(batch)
		if err != nil {
			return err
		}
		if len(recs) == 0 {
			return nil
		}
		if err := p.Begin(); err != nil {
			return err
		}
		// One output batch per input partition polled.
		outs = outs[:0]
		part := recs[0].Partition
		flush := func() error {
			if len(outs) == 0 {
				return nil
			}
			_, err := p.Produce("out", part, outs)
			outs = outs[:0]
			return err
		}
		for i := range recs {
			if recs[i].Partition != part {
				if err := flush(); err != nil {
					return err
				}
				part = recs[i].Partition
			}
			outs = append(outs, engine.ProduceRecord{Value: recs[i].Value})
		}
		if err := flush(); err != nil {
			return err
		}
		acks = benchAcks(acks, recs)
		if err := p.SendShareAcksToTransaction(acks, m.Metadata()); err != nil {
			return err
		}
		if err := p.Commit(); err != nil {
			return err
		}
		done.Add(int64(len(recs)))
		txns.Add(1)
	}
}

// BenchmarkRecovery measures recovery (New over an existing data
// directory) as a function of the log's size: a topic of 128-byte records
// half consumed by a share group in transactions (so the share-state and
// transaction logs hold records too). One iteration is one recovery.
// Metrics: records/s replayed (partition records and markers), MB/s of
// log replayed, frames replayed.
func BenchmarkRecovery(b *testing.B) {
	for _, n := range []int{10_000, 100_000, 1_000_000} {
		b.Run(fmt.Sprintf("records=%d", n), func(b *testing.B) {
			dir := b.TempDir()
			e, err := engine.New(engine.WithDataDir(dir), engine.WithFlushPolicy(engine.FlushNever),
				engine.WithRetentionBytes(0), engine.WithGroupDefaults(engine.GroupConfig{
					LockDuration: time.Minute, DeliveryLimit: 5, MaxRecordLocks: 2000, AutoOffsetReset: engine.ResetEarliest}))
			if err != nil {
				b.Fatal(err)
			}
			for _, t := range []string{"in", "out"} {
				if err := e.CreateTopic(t, 1); err != nil {
					b.Fatal(err)
				}
			}
			benchFill(b, e, "in", 0, n, 128)
			m, _ := e.JoinShareGroup("g", []string{"in"}, engine.AckTransactional)
			p, _ := e.NewProducer(engine.ProducerConfig{TransactionalID: "tx"})
			var done, txns atomic.Int64
			for done.Load() < int64(n/2) {
				recs, err := m.Poll(500)
				if err != nil || len(recs) == 0 {
					b.Fatal("poll", err)
				}
				_ = p.Begin()
				outs := make([]engine.ProduceRecord, len(recs))
				for i := range recs {
					outs[i].Value = recs[i].Value
				}
				if _, err := p.Produce("out", 0, outs); err != nil {
					b.Fatal(err)
				}
				if err := p.SendShareAcksToTransaction(benchAcks(nil, recs), m.Metadata()); err != nil {
					b.Fatal(err)
				}
				if err := p.Commit(); err != nil {
					b.Fatal(err)
				}
				done.Add(int64(len(recs)))
				txns.Add(1)
			}
			if err := e.Close(); err != nil {
				b.Fatal(err)
			}
			var rep engine.RecoveryReport
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				r, err := engine.New(engine.WithDataDir(dir), engine.WithFlushPolicy(engine.FlushNever), engine.WithRetentionBytes(0))
				if err != nil {
					b.Fatal(err)
				}
				rep = r.Recovery()
				b.StopTimer()
				_ = r.Crash()
				_ = r.Close()
				b.StartTimer()
			}
			b.StopTimer()
			per := b.Elapsed().Seconds() / float64(b.N)
			b.ReportMetric(float64(rep.Records)/per, "records/s")
			b.ReportMetric(float64(rep.Bytes)/per/1e6, "MB/s")
			b.ReportMetric(float64(rep.Frames), "frames")
		})
	}
}
