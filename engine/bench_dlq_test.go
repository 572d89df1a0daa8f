package engine_test

import (
	"fmt"
	"testing"

	"github.com/sharebench/sharebench/engine"
)

// BenchmarkDLQ is the cost of a dead-letter queue per rejected record: a
// member polls 500 records and rejects them all (explicit Acknowledge),
// with no DLQ, a DLQ of headers only, and a DLQ that copies the record
// (1 KiB values). One iteration is one rejected record; compare ns/op
// across the three in one run, and cpu-ns/rejected, the process's CPU time
// per rejected record (every goroutine's), which a busy machine disturbs
// less than the wall clock.
func BenchmarkDLQ(b *testing.B) {
	for _, tc := range []struct {
		name       string
		topic      string
		copyRecord bool
	}{{"none", "", false}, {"headers", "dlq", false}, {"copy-record", "dlq", true}} {
		b.Run(fmt.Sprintf("dlq=%s", tc.name), func(b *testing.B) {
			e := benchEngine(b)
			for _, t := range []string{"in", "dlq"} {
				if err := e.CreateTopic(t, 1); err != nil {
					b.Fatal(err)
				}
			}
			cfg := engine.DefaultGroupConfig()
			cfg.AutoOffsetReset, cfg.DLQTopic, cfg.DLQCopyRecord = engine.ResetEarliest, tc.topic, tc.copyRecord
			if err := e.SetShareGroupConfig("g", cfg); err != nil {
				b.Fatal(err)
			}
			m, err := e.JoinShareGroup("g", []string{"in"}, engine.AckExplicit)
			if err != nil {
				b.Fatal(err)
			}
			var acks []engine.Acknowledgement
			var cpu int64 // the process's CPU time in the timed part
			produced := 0
			b.ReportAllocs()
			b.ResetTimer()
			for done := 0; done < b.N; {
				if done == produced {
					b.StopTimer()
					n := min(benchChunk, b.N-produced)
					benchFill(b, e, "in", 0, n, benchPayloadBytes)
					produced += n
					b.StartTimer()
				}
				c0 := processCPU()
				recs, err := m.Poll(500)
				if err != nil || len(recs) == 0 {
					b.Fatalf("poll: %d records, %v", len(recs), err)
				}
				acks = benchAcks(acks, recs)
				for i := range acks {
					acks[i].Type = engine.AckReject
				}
				if err := m.Acknowledge(acks); err != nil {
					b.Fatal(err)
				}
				cpu += processCPU() - c0
				done += len(recs)
			}
			if cpu > 0 {
				b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/rejected")
			}
		})
	}
}
