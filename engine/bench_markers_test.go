package engine_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/sharebench/sharebench/engine"
)

// BenchmarkCommitLatency times Commit alone for a transaction of 500
// outputs and 500 staged acknowledgements over 4 input and 4 output
// partitions, with the markers asynchronous (Commit returns once
// PREPARE_COMMIT is durable, as Kafka's EndTxn) or inline (Commit sends
// every marker and logs COMPLETE_COMMIT first, the engine's behaviour
// before asynchronous markers), in memory and with a data directory
// (fsync per group commit). One iteration is one transaction; the
// metric ns/commit is the time inside Commit.
func BenchmarkCommitLatency(b *testing.B) {
	for _, store := range []string{"memory", "durable"} {
		for _, d := range []struct {
			name string
			mode engine.MarkerDelivery
		}{{"inline", engine.MarkersInline}, {"async", engine.MarkersAsync}} {
			b.Run(fmt.Sprintf("store=%s/markers=%s", store, d.name), func(b *testing.B) {
				opts := []engine.Option{engine.WithMarkerDelivery(d.mode)}
				if store == "durable" {
					opts = append(opts, engine.WithDataDir(b.TempDir()))
				}
				benchCommitLatency(b, opts...)
			})
		}
	}
}

func benchCommitLatency(b *testing.B, opts ...engine.Option) {
	const parts, batch = 4, 500
	e := benchEngine(b, opts...)
	for _, t := range []string{"in", "out"} {
		if err := e.CreateTopic(t, parts); err != nil {
			b.Fatal(err)
		}
	}
	m, err := e.JoinShareGroup("g", []string{"in"}, engine.AckTransactional)
	if err != nil {
		b.Fatal(err)
	}
	p, err := e.NewProducer(engine.ProducerConfig{TransactionalID: "copier"})
	if err != nil {
		b.Fatal(err)
	}
	outs := make([]engine.ProduceRecord, batch/parts)
	for i := range outs {
		outs[i].Value = benchPayload[:100]
	}
	var acks []engine.Acknowledgement
	var inCommit time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		for q := int32(0); q < parts; q++ {
			if _, err := e.Produce("in", q, outs); err != nil {
				b.Fatal(err)
			}
		}
		recs, err := m.Poll(batch)
		if err != nil || len(recs) == 0 {
			b.Fatalf("poll: %d records, %v", len(recs), err)
		}
		if err := p.Begin(); err != nil {
			b.Fatal(err)
		}
		for q := int32(0); q < parts; q++ {
			if _, err := p.Produce("out", q, outs); err != nil {
				b.Fatal(err)
			}
		}
		acks = benchAcks(acks, recs)
		if err := p.SendShareAcksToTransaction(acks, m.Metadata()); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		t0 := time.Now()
		if err := p.Commit(); err != nil {
			b.Fatal(err)
		}
		inCommit += time.Since(t0)
	}
	b.ReportMetric(float64(inCommit.Nanoseconds())/float64(b.N), "ns/commit")
}
