// This file holds the engine's benchmarks: consume-transform-produce per
// acknowledgement mode and batch size against a copy-only baseline
// (BenchmarkCTP), scaling over cores and lock shards (BenchmarkScaling),
// and the memory cost of an in-flight record (BenchmarkInFlightMemory).
// They measure; they assert nothing about speed. On a shared machine run
// them several times (-count) and compare medians.
//
//	go test -run x -bench CTP -benchtime 200000x -count 5 ./engine/
//	go test -run x -bench Scaling -cpu 1,2 -benchtime 200000x -count 5 ./engine/
//	go test -run x -bench InFlightMemory ./engine/

package engine_test

import (
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sharebench/sharebench/engine"
)

const (
	benchPayloadBytes = 1 << 10
	// benchChunk is how many input records are produced at a time, with
	// the timer stopped. A multiple of every batch size, so batches stay
	// full.
	benchChunk = 4000
	// benchRetentionBytes bounds each partition log. Small enough that a
	// run soon reaches a steady state in which the logs drop segments and
	// the heap reuses their memory, instead of measuring mostly the
	// kernel's page faults while the heap grows; large enough to keep a
	// whole unconsumed input chunk.
	benchRetentionBytes = 16 << 20
)

var benchPayload = func() []byte {
	b := make([]byte, benchPayloadBytes)
	for i := range b {
		b[i] = byte(i)
	}
	return b
}()

// benchEngine returns an engine as the load generator runs it in-process:
// real clock, timer goroutine on, default shards, and bounded retention
// (benchRetentionBytes; opts may override it).
func benchEngine(b *testing.B, opts ...engine.Option) *engine.Engine {
	b.Helper()
	e, err := newBenchEngine(opts...)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = e.Close() })
	return e
}

// newBenchEngine is benchEngine's engine, which the caller closes.
func newBenchEngine(opts ...engine.Option) (*engine.Engine, error) {
	all := append([]engine.Option{
		engine.WithRetentionBytes(benchRetentionBytes),
		engine.WithGroupDefaults(engine.GroupConfig{
			LockDuration: 30 * time.Second, DeliveryLimit: 5, MaxRecordLocks: 2000,
			AutoOffsetReset: engine.ResetEarliest,
		}),
	}, opts...)
	return engine.New(all...)
}

// benchFill produces n records of size bytes into topic-part in batches
// of 500.
func benchFill(b *testing.B, e *engine.Engine, topic string, part int32, n, size int) {
	b.Helper()
	recs := make([]engine.ProduceRecord, 500)
	for i := range recs {
		recs[i].Value = benchPayload[:size]
	}
	for n > 0 {
		k := min(n, len(recs))
		if _, err := e.Produce(topic, part, recs[:k]); err != nil {
			b.Fatal(err)
		}
		n -= k
	}
}

// benchAcks appends one ACCEPT range per contiguous run of recs.
func benchAcks(dst []engine.Acknowledgement, recs []engine.Record) []engine.Acknowledgement {
	dst = dst[:0]
	for _, r := range recs {
		if n := len(dst); n > 0 && dst[n-1].Partition == r.Partition && dst[n-1].Topic == r.Topic && dst[n-1].Last+1 == r.Offset {
			dst[n-1].Last = r.Offset
			continue
		}
		dst = append(dst, engine.Acknowledgement{Topic: r.Topic, Partition: r.Partition, First: r.Offset, Last: r.Offset, Type: engine.AckAccept})
	}
	return dst
}

// benchTxnWorker is one consume-transform-produce worker of the
// multi-worker benchmarks: a transactional share member and its own
// transactional producer.
type benchTxnWorker struct {
	m *engine.ShareMember
	p *engine.Producer
}

// benchTxnWorkers joins n members to share group "g" on topic "in", each
// with a transactional producer "copier-<i>"; distinct transactional IDs so
// that no worker fences another.
func benchTxnWorkers(b *testing.B, e *engine.Engine, n int) []benchTxnWorker {
	b.Helper()
	ws := make([]benchTxnWorker, n)
	for i := range ws {
		m, err := e.JoinShareGroup("g", []string{"in"}, engine.AckTransactional)
		if err != nil {
			b.Fatal(err)
		}
		p, err := e.NewProducer(engine.ProducerConfig{TransactionalID: fmt.Sprintf("copier-%d", i)})
		if err != nil {
			b.Fatal(err)
		}
		ws[i] = benchTxnWorker{m, p}
	}
	return ws
}

// BenchmarkCTP is consume-transform-produce on one input and one output
// partition: one worker polls `batch` records, produces one 1 KiB output per
// input and acknowledges them per its mode. One iteration is one record.
// Input production is outside the timer (chunks of benchChunk records,
// produced with the timer stopped whenever the worker has consumed the
// previous chunk), identically for every mode; output production is inside.
//
//   - copy-only: the physical limit: the same payloads copied from an input
//     slice into a preallocated output ring with the same batching, no
//     engine (see benchCopyOnly).
//   - explicit: ShareMember.Poll, idempotent Produce, Acknowledge.
//   - transactional: Poll, Begin, Produce, SendShareAcksToTransaction, Commit.
//   - classic-eos: ClassicMember.Poll, Begin, Produce,
//     SendOffsetsToTransaction, Commit.
func BenchmarkCTP(b *testing.B) {
	for _, mode := range []string{"copy-only", "explicit", "transactional", "classic-eos"} {
		for _, batch := range []int{1, 10, 100, 500} {
			b.Run(fmt.Sprintf("mode=%s/batch=%d", mode, batch), func(b *testing.B) {
				if mode == "copy-only" {
					benchCopyOnly(b, batch)
				} else {
					benchCTP(b, mode, batch)
				}
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
			})
		}
	}
}

// benchCopyOnly copies each input payload into an output ring as big as
// one partition's retention, allocated and touched before the timer starts:
// the cost of moving the bytes and nothing else (no allocation, no zeroing,
// no page faults), which is the limit any engine approaches.
func benchCopyOnly(b *testing.B, batch int) {
	inputs := make([][]byte, benchChunk)
	for i := range inputs {
		inputs[i] = append([]byte(nil), benchPayload...)
	}
	ring := make([]byte, benchRetentionBytes)
	for i := range ring {
		ring[i] = 1
	}
	outputs := make([][]byte, 0, batch)
	pos := 0
	b.ResetTimer()
	for done := 0; done < b.N; {
		n := min(batch, b.N-done)
		outputs = outputs[:0]
		for i := 0; i < n; i++ {
			in := inputs[(done+i)%len(inputs)]
			if pos+len(in) > len(ring) {
				pos = 0
			}
			out := ring[pos : pos+len(in)]
			copy(out, in)
			outputs = append(outputs, out)
			pos += len(in)
		}
		done += n
	}
	runtime.KeepAlive(outputs)
}

func benchCTP(b *testing.B, mode string, batch int) {
	e := benchEngine(b)
	for _, t := range []string{"in", "out"} {
		if err := e.CreateTopic(t, 1); err != nil {
			b.Fatal(err)
		}
	}
	in := engine.TopicPartition{Topic: "in"}
	var (
		sm   *engine.ShareMember
		cm   *engine.ClassicMember
		prod *engine.Producer
		err  error
	)
	switch mode {
	case "explicit":
		sm, err = e.JoinShareGroup("g", []string{"in"}, engine.AckExplicit)
		if err == nil {
			prod, err = e.NewProducer(engine.ProducerConfig{Idempotent: true})
		}
	case "transactional":
		sm, err = e.JoinShareGroup("g", []string{"in"}, engine.AckTransactional)
		if err == nil {
			prod, err = e.NewProducer(engine.ProducerConfig{TransactionalID: "copier"})
		}
	case "classic-eos":
		cm, err = e.JoinClassicGroup("g", []string{"in"}, engine.ResetEarliest)
		if err == nil {
			prod, err = e.NewProducer(engine.ProducerConfig{TransactionalID: "copier"})
		}
	}
	if err != nil {
		b.Fatal(err)
	}
	outs := make([]engine.ProduceRecord, 0, batch)
	var acks []engine.Acknowledgement
	produced := 0
	refill := func() {
		n := min(benchChunk, b.N-produced)
		benchFill(b, e, "in", 0, n, benchPayloadBytes)
		produced += n
	}
	refill()
	b.ReportAllocs()
	b.ResetTimer()
	for done := 0; done < b.N; {
		if done == produced {
			b.StopTimer()
			refill()
			b.StartTimer()
		}
		var recs []engine.Record
		if cm != nil {
			recs, err = cm.Poll(batch)
		} else {
			recs, err = sm.Poll(batch)
		}
		if err != nil {
			b.Fatal(err)
		}
		if len(recs) == 0 {
			b.Fatalf("poll returned nothing with %d of %d records done", done, b.N)
		}
		outs = outs[:0]
		for i := range recs {
			outs = append(outs, engine.ProduceRecord{Value: recs[i].Value})
		}
		switch mode {
		case "explicit":
			if _, err := prod.Produce("out", 0, outs); err != nil {
				b.Fatal(err)
			}
			acks = benchAcks(acks, recs)
			if err := sm.Acknowledge(acks); err != nil {
				b.Fatal(err)
			}
		case "transactional":
			if err := prod.Begin(); err != nil {
				b.Fatal(err)
			}
			if _, err := prod.Produce("out", 0, outs); err != nil {
				b.Fatal(err)
			}
			acks = benchAcks(acks, recs)
			if err := prod.SendShareAcksToTransaction(acks, sm.Metadata()); err != nil {
				b.Fatal(err)
			}
			if err := prod.Commit(); err != nil {
				b.Fatal(err)
			}
		case "classic-eos":
			if err := prod.Begin(); err != nil {
				b.Fatal(err)
			}
			if _, err := prod.Produce("out", 0, outs); err != nil {
				b.Fatal(err)
			}
			next := map[engine.TopicPartition]int64{in: recs[len(recs)-1].Offset + 1}
			if err := prod.SendOffsetsToTransaction(next, cm.Metadata()); err != nil {
				b.Fatal(err)
			}
			if err := prod.Commit(); err != nil {
				b.Fatal(err)
			}
		}
		done += len(recs)
	}
}

// BenchmarkScaling runs 8 transactional share members, each with its own
// transactional producer, over one 16-partition input topic (batch 100) in
// parallel goroutines; b.N records split among them as they come. Run with
// -cpu 1,2 to see how throughput follows cores, and compare shards=1 (one
// lock for everything) with the default shard count (4×GOMAXPROCS). Input
// production is outside the timer.
//
// payload=1024 is the workload of BenchmarkCTP; payload=16 takes the
// copying out of the picture so the engine's own scaling shows.
// copy-only/payload=1024 is the physical reference: 8 goroutines copying
// the same payloads into preallocated rings, no engine; where that does not
// scale with cores (memory bandwidth), the engine cannot either.
func BenchmarkScaling(b *testing.B) {
	for _, payload := range []int{benchPayloadBytes, 16} {
		for _, shards := range []string{"1", "default"} {
			b.Run(fmt.Sprintf("shards=%s/payload=%d", shards, payload), func(b *testing.B) {
				benchScaling(b, shards, payload)
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
			})
		}
	}
	b.Run(fmt.Sprintf("copy-only/payload=%d", benchPayloadBytes), func(b *testing.B) {
		// BenchmarkCTP's copy-only on 8 goroutines: each copies from the
		// shared inputs into its own ring (an output partition's
		// retention).
		const workers = 8
		inputs := make([][]byte, benchChunk)
		for i := range inputs {
			inputs[i] = append([]byte(nil), benchPayload...)
		}
		rings := make([][]byte, workers)
		for w := range rings {
			rings[w] = make([]byte, benchRetentionBytes)
			for i := range rings[w] {
				rings[w][i] = 1
			}
		}
		var wg sync.WaitGroup
		b.ResetTimer()
		for w := 0; w < workers; w++ {
			n := b.N / workers
			if w < b.N%workers {
				n++
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				ring, pos := rings[w], 0
				for i := 0; i < n; i++ {
					in := inputs[(w*len(inputs)/workers+i)%len(inputs)]
					if pos+len(in) > len(ring) {
						pos = 0
					}
					copy(ring[pos:pos+len(in)], in)
					pos += len(in)
				}
			}()
		}
		wg.Wait()
		b.StopTimer()
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
	})
}

// scalingRetry is how long a scaling worker whose poll found nothing waits
// before polling again; scalingStall is how long it keeps trying without
// finding a record before it reports the run stuck.
const (
	scalingRetry = 100 * time.Microsecond
	scalingStall = 30 * time.Second
)

func benchScaling(b *testing.B, shards string, payload int) {
	b.ReportAllocs()
	scalingRun(b, shards, payload, b.N, b.ResetTimer, b.StopTimer)
}

// scalingRun fills a new engine with n inputs and processes them with
// BenchmarkScaling's workers, calling start and stop around the processing,
// and returns how long the processing took. The engine is closed and
// dropped before it returns.
func scalingRun(b *testing.B, shards string, payload, n int, start, stop func()) time.Duration {
	const parts, members, batch = 16, 8, 100
	// Every input is produced before the timer starts: retention must keep
	// a partition's share of them.
	opts := []engine.Option{engine.WithRetentionBytes(max(benchRetentionBytes, 2*int64(n/parts+1)*int64(payload)))}
	if shards == "1" {
		opts = append(opts, engine.WithShards(1))
	}
	e, err := newBenchEngine(opts...)
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = e.Close() }()
	for _, t := range []string{"in", "out"} {
		if err := e.CreateTopic(t, parts); err != nil {
			b.Fatal(err)
		}
	}
	for p := int32(0); p < parts; p++ {
		k := n / parts
		if int(p) < n%parts {
			k++
		}
		if k > 0 {
			benchFill(b, e, "in", p, k, payload)
		}
	}
	ws := benchTxnWorkers(b, e, members)
	var done atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, members)
	// Every run starts from a collected heap holding only its own inputs.
	// Otherwise the garbage of the previous run (its engine, of a size
	// set by its b.N) sets this run's GC pacing, and the one-core and
	// two-core runs, whose b.N differ, are paced differently.
	runtime.GC()
	start()
	t0 := time.Now()
	for _, w := range ws {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := scalingWorker(w.m, w.p, batch, parts, &done, int64(n)); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	d := time.Since(t0)
	stop()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	if got := done.Load(); got != int64(n) {
		b.Fatalf("processed %d records, want %d", got, n)
	}
	return d
}

// BenchmarkScalingRatio measures the figure BenchmarkScaling's -cpu 1,2
// compares (default shards, 16-byte payloads) as one ratio: two-core over
// one-core throughput, the two interleaved in rounds of scalingRound
// records, each on a new engine created under its GOMAXPROCS (so with its
// default shard count), alternating which goes first. -cpu 1,2 -count N
// runs all N one-core runs before the first two-core run, so load on a
// shared machine that drifts over those minutes falls on one side only.
// The metric 2cpu/1cpu is the median over rounds of the round's ratio; a
// burst of load from elsewhere spoils a round, not the figure. One
// iteration is one record at each core count.
//
//	go test -run x -bench ScalingRatio -benchtime 4000000x ./engine/
func BenchmarkScalingRatio(b *testing.B) {
	const scalingRound = 400_000
	nop := func() {}
	var ratios []float64
	var d1, d2 time.Duration
	for done, r := 0, 0; done < b.N; r++ {
		n := min(scalingRound, b.N-done)
		var d [3]time.Duration
		for i := range 2 {
			procs := 1 + (i+r)%2 // 1 then 2 in even rounds, 2 then 1 in odd ones
			prev := runtime.GOMAXPROCS(procs)
			d[procs] = scalingRun(b, "default", 16, n, nop, nop)
			runtime.GOMAXPROCS(prev)
		}
		d1, d2 = d1+d[1], d2+d[2]
		ratios = append(ratios, d[1].Seconds()/d[2].Seconds())
		done += n
	}
	slices.Sort(ratios)
	b.ReportMetric(float64(b.N)/d1.Seconds(), "1cpu-records/s")
	b.ReportMetric(float64(b.N)/d2.Seconds(), "2cpu-records/s")
	b.ReportMetric(ratios[len(ratios)/2], "2cpu/1cpu")
}

// scalingWorker copies batches until the group has processed all total
// inputs. A poll can find nothing before that: the rest is acquired by
// other workers, or TX_PENDING in transactions whose markers have not
// landed yet, and TX_PENDING records fill the in-flight window and hold
// SPSO back (docs/design.md §3.4), so what lies past the window is not
// acquirable until they resolve. The worker then polls again a little
// later, as a share consumer's next poll would. Taking an empty poll for
// the end left records AVAILABLE that no worker came back for, and the
// benchmark failed its own count check ("processed N records, want
// b.N"), mostly with one CPU, where the goroutine sending the markers
// waits its turn longest. With no progress for scalingStall the worker
// gives up with an error instead of hanging.
func scalingWorker(m *engine.ShareMember, p *engine.Producer, batch int, parts int32, done *atomic.Int64, total int64) error {
	outs := make([][]engine.ProduceRecord, parts)
	var acks []engine.Acknowledgement
	var idleSince time.Time
	for {
		recs, err := m.Poll(batch)
		if err != nil {
			return err
		}
		if len(recs) == 0 {
			n := done.Load()
			if n >= total {
				return nil
			}
			switch {
			case idleSince.IsZero():
				idleSince = time.Now()
			case time.Since(idleSince) > scalingStall: // wallclock: a benchmark harness guard against a stalled run, called by benchmarks only
				return fmt.Errorf("no record to poll for %v with %d of %d processed", scalingStall, n, total)
			}
			time.Sleep(scalingRetry)
			continue
		}
		idleSince = time.Time{}
		if err := p.Begin(); err != nil {
			return err
		}
		for i := range outs {
			outs[i] = outs[i][:0]
		}
		for i := range recs {
			outs[recs[i].Partition] = append(outs[recs[i].Partition], engine.ProduceRecord{Value: recs[i].Value})
		}
		for part, o := range outs {
			if len(o) == 0 {
				continue
			}
			if _, err := p.Produce("out", int32(part), o); err != nil {
				return err
			}
		}
		acks = benchAcks(acks, recs)
		if err := p.SendShareAcksToTransaction(acks, m.Metadata()); err != nil {
			return err
		}
		if err := p.Commit(); err != nil {
			return err
		}
		done.Add(int64(len(recs)))
	}
}

// BenchmarkInFlightMemory measures the heap held per in-flight (ACQUIRED,
// not yet acknowledged) record: the share state only. Each iteration builds
// a fresh engine whose 64 partitions already hold their records (the log is
// not measured), then one member acquires in polls of 500 until every
// partition's window (Kafka's default 2000 record locks) is full. The clock
// moves 1ms between polls so no two polls share a lock deadline and each
// poll's batch stays a batch of its own, as in a live consumer.
//
// pattern=acks-alternate then acknowledges every other record (per-offset
// ACCEPT/RENEW), the worst case for the run representation: the state of
// each remaining in-flight record is its own run. It uses 8 partitions,
// since splitting runs costs time quadratic in the window.
func BenchmarkInFlightMemory(b *testing.B) {
	for _, tc := range []struct {
		pattern string
		parts   int32
	}{{"acquire-500", 64}, {"acks-alternate", 8}} {
		b.Run(fmt.Sprintf("pattern=%s/partitions=%d/window=2000", tc.pattern, tc.parts), func(b *testing.B) {
			const window, batch = 2000, 500
			var bytes, records, runs float64
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				clk := engine.NewManualClock()
				e, err := engine.New(engine.WithClock(clk), engine.WithGroupDefaults(engine.GroupConfig{
					LockDuration: time.Hour, DeliveryLimit: 5, MaxRecordLocks: window, AutoOffsetReset: engine.ResetEarliest,
				}))
				if err != nil {
					b.Fatal(err)
				}
				if err := e.CreateTopic("in", tc.parts); err != nil {
					b.Fatal(err)
				}
				recs := make([]engine.ProduceRecord, window+1)
				for j := range recs {
					recs[j].Value = benchPayload[:8]
				}
				for p := int32(0); p < tc.parts; p++ {
					if _, err := e.Produce("in", p, recs); err != nil {
						b.Fatal(err)
					}
				}
				m, err := e.JoinShareGroup("g", []string{"in"}, engine.AckExplicit)
				if err != nil {
					b.Fatal(err)
				}
				// Warm up: create every share partition and move its
				// window past one acknowledged record.
				for p := int32(0); p < tc.parts; p++ {
					got, err := m.Poll(1)
					if err != nil || len(got) != 1 {
						b.Fatalf("warm-up poll: %v, %d records", err, len(got))
					}
					if err := m.Acknowledge(benchAcks(nil, got)); err != nil {
						b.Fatal(err)
					}
				}
				var before, after runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&before)
				b.StartTimer()
				acquired := 0
				for {
					clk.Advance(time.Millisecond)
					got, err := m.Poll(batch)
					if err != nil {
						b.Fatal(err)
					}
					if len(got) == 0 {
						break
					}
					acquired += len(got)
				}
				inFlight := acquired
				if tc.pattern == "acks-alternate" {
					types := make([]engine.AckType, window)
					for j := range types {
						types[j] = engine.AckAccept
						if j%2 == 1 {
							types[j] = engine.AckRenew
						}
					}
					for p := int32(0); p < tc.parts; p++ {
						if err := m.Acknowledge([]engine.Acknowledgement{{Topic: "in", Partition: p, First: 1, Last: window, Types: types}}); err != nil {
							b.Fatal(err)
						}
					}
					inFlight = acquired / 2
				}
				b.StopTimer()
				runtime.GC()
				runtime.ReadMemStats(&after)
				if acquired != int(tc.parts)*window {
					b.Fatalf("acquired %d, want %d", acquired, int(tc.parts)*window)
				}
				n := 0
				for p := int32(0); p < tc.parts; p++ {
					info, err := e.SharePartition("g", engine.TopicPartition{Topic: "in", Partition: p})
					if err != nil {
						b.Fatal(err)
					}
					n += info.Runs
				}
				bytes += float64(int64(after.HeapAlloc) - int64(before.HeapAlloc))
				records += float64(inFlight)
				runs += float64(n)
				runtime.KeepAlive(m)
				_ = e.Close()
			}
			b.ReportMetric(bytes/records, "B/inflight-record")
			b.ReportMetric(runs/float64(b.N), "runs")
		})
	}
}
