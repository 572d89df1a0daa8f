// This file holds Produce, the ProducerPerformance peer: one client sending
// records asynchronously as fast as it takes them, optionally in
// transactions, with send-to-acknowledgement latency per record.

package peer

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sharebench/sharebench/loadgen"
	"github.com/sharebench/sharebench/loadgen/targets/kafkatarget"
	"github.com/sharebench/sharebench/vocab"
)

// ProduceConfig is one produce run.
type ProduceConfig struct {
	// Cluster names the cluster in errors (the seed brokers as given).
	Cluster string
	Topic   string
	// Records is how many records to send, RecordBytes the size of each
	// (a value, no key), 1 to 1 MiB.
	Records     int64
	RecordBytes int
	// TransactionalID and TransactionDuration: with either set, records
	// are produced in transactions, one committed once it is
	// TransactionDuration old. The other defaults: 3s, and
	// sharebench-peer-<Unix nanoseconds>.
	TransactionalID     string
	TransactionDuration time.Duration
	// Linger and BatchMaxBytes are linger.ms and batch.size; Compression
	// is compression.type, pinned ("": none).
	Linger        time.Duration
	BatchMaxBytes int32
	Compression   vocab.Compression
	// Seed seeds the payload.
	Seed uint64
	// WarmupRecords, when positive, are the first records the steady
	// state leaves out; below Records.
	WarmupRecords int64
}

// transactional reports whether the run produces in transactions.
func (c ProduceConfig) transactional() bool {
	return c.TransactionalID != "" || c.TransactionDuration > 0
}

// withDefaults fills the transaction settings a transactional run left out.
func (c ProduceConfig) withDefaults() ProduceConfig {
	if !c.transactional() {
		return c
	}
	if c.TransactionDuration <= 0 {
		c.TransactionDuration = 3 * time.Second
	}
	if c.TransactionalID == "" {
		c.TransactionalID = fmt.Sprintf("sharebench-peer-%d", time.Now().UnixNano())
	}
	return c
}

// ProduceResult is what a produce run measured; WriteText prints it as
// ProducerPerformance's final line.
type ProduceResult struct {
	Records       int64   `json:"records"`
	Failed        int64   `json:"failed"`
	RecordBytes   int     `json:"record_size"`
	Seconds       float64 `json:"seconds"`
	RecordsPerSec float64 `json:"records_per_sec"`
	MBPerSec      float64 `json:"mb_per_sec"`
	Transactions  int64   `json:"transactions,omitempty"`
	LatencyMs
	// Steady is the same without the warm-up records.
	Steady *ProduceSteady `json:"steady_state,omitempty"`

	transactionalID     string
	transactionDuration time.Duration
	firstErr            error // of the first failed record
}

// ProduceSteady is the steady state after the warm-up records: from the
// first steady record's send to the end, their latencies only.
type ProduceSteady struct {
	Records       int64   `json:"records"`
	Seconds       float64 `json:"seconds"`
	RecordsPerSec float64 `json:"records_per_sec"`
	MBPerSec      float64 `json:"mb_per_sec"`
	LatencyMs
}

// LatencyMs is the send-to-acknowledgement latency of records, in ms.
type LatencyMs struct {
	AvgMs  float64 `json:"latency_avg_ms"`
	MaxMs  float64 `json:"latency_max_ms"`
	P50Ms  float64 `json:"latency_p50_ms"`
	P95Ms  float64 `json:"latency_p95_ms"`
	P99Ms  float64 `json:"latency_p99_ms"`
	P999Ms float64 `json:"latency_p999_ms"`
}

// WriteText writes ProducerPerformance's final line (its latencies are
// whole ms), its steady-state line after warm-up records, and, for a
// transactional run, sharebench's transaction count.
func (r *ProduceResult) WriteText(w io.Writer) {
	fmt.Fprintf(w, "%d records sent, %.1f records/sec (%.2f MB/sec), %.2f ms avg latency, %.2f ms max latency, %.2f ms 50th, %.2f ms 95th, %.2f ms 99th, %.2f ms 99.9th.\n",
		r.Records, r.RecordsPerSec, r.MBPerSec, r.AvgMs, r.MaxMs, r.P50Ms, r.P95Ms, r.P99Ms, r.P999Ms)
	if sr := r.Steady; sr != nil {
		fmt.Fprintf(w, "%d steady state records sent, %.1f records/sec (%.2f MB/sec), %.2f ms avg latency, %.2f ms max latency, %.2f ms 50th, %.2f ms 95th, %.2f ms 99th, %.2f ms 99.9th.\n",
			sr.Records, sr.RecordsPerSec, sr.MBPerSec, sr.AvgMs, sr.MaxMs, sr.P50Ms, sr.P95Ms, sr.P99Ms, sr.P999Ms)
	}
	if r.transactionalID != "" {
		fmt.Fprintf(w, "sharebench: %d transactions (%s, a commit every %v)\n", r.Transactions, r.transactionalID, r.transactionDuration)
	}
}

// Err says how many records failed, wrapping the first one's error; nil
// when every record was acknowledged.
func (r *ProduceResult) Err() error {
	if r.Failed == 0 {
		return nil
	}
	return fmt.Errorf("peer produce: %d of %d records failed: %w", r.Failed, r.Records, r.firstErr)
}

// Produce mirrors ProducerPerformance with --throughput -1: one client,
// records sent asynchronously as fast as the client takes them, a random
// payload per record, and (transactional) a commit once the open
// transaction is TransactionDuration old. The clock starts after the client
// is made (and, transactional, after its producer id is initialised, as the
// tool's initTransactions) and stops once every record is acknowledged.
func Produce(ctx context.Context, tgt *kafkatarget.Target, cfg ProduceConfig) (*ProduceResult, error) {
	cfg = cfg.withDefaults()
	cl, err := newProducer(ctx, tgt, cfg)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	p := newProduceRun(cfg, cl)
	start := time.Now()
	if err := p.sendAll(ctx); err != nil {
		return nil, err
	}
	return p.result(time.Since(start)), nil
}

// newProducer makes the run's client, configured as Kafka 4.x's Java
// producer is by default so both tools build the same batches, and
// initialises a transactional one's producer id.
func newProducer(ctx context.Context, tgt *kafkatarget.Target, cfg ProduceConfig) (*kgo.Client, error) {
	codec, err := kafkatarget.Codec(cfg.Compression)
	if err != nil {
		return nil, fmt.Errorf("peer produce: %w", configError{err})
	}
	opts := []kgo.Opt{
		kgo.DefaultProduceTopic(cfg.Topic),
		kgo.ProducerLinger(cfg.Linger),
		kgo.ProducerBatchMaxBytes(cfg.BatchMaxBytes),
		// The Java producer buffers up to buffer.memory (32 MiB).
		kgo.MaxBufferedBytes(32 << 20),
		kgo.MaxBufferedRecords(1 << 20),
		// The Java producer's default for records without a key: stick
		// to a partition for batch.size bytes, adaptively (KIP-794).
		kgo.RecordPartitioner(kgo.UniformBytesPartitioner(int(cfg.BatchMaxBytes), true, false, nil)),
		kgo.UnknownTopicRetries(3),
		// Pinned, never franz-go's default (snappy), so both tools send
		// the same bytes.
		kgo.ProducerBatchCompression(codec),
	}
	if cfg.transactional() {
		opts = append(opts, kgo.TransactionalID(cfg.TransactionalID))
	}
	cl, err := tgt.Client("producer", opts...)
	if err != nil {
		return nil, fmt.Errorf("peer produce: %w", configError{err})
	}
	if cfg.transactional() {
		ictx, cancel := context.WithTimeout(ctx, 30*time.Second)
		_, _, err := cl.ProducerID(ictx)
		cancel()
		if err != nil {
			cl.Close()
			return nil, fmt.Errorf("peer produce: initialising transactional id %s on %s: %w", cfg.TransactionalID, cfg.Cluster, err)
		}
	}
	return cl, nil
}

// sendChunk is how many records (and their send times) are allocated at
// once.
const sendChunk = 4096

// produceRun is one produce run under way.
type produceRun struct {
	cfg     ProduceConfig
	cl      *kgo.Client
	rng     *rand.Rand
	buf     []byte // the payload: each record's value is a window of it
	promise func(*kgo.Record, error)

	recs []kgo.Record // the chunk's records not sent yet
	sent []sentAt     // and their send times

	steadyStart  time.Time // the first steady record's send
	inTxn        bool
	txnStart     time.Time
	transactions int64 // committed

	// mu guards what the promise records: promises run on kgo's
	// goroutines.
	mu struct {
		sync.Mutex
		hist, steady *loadgen.Hist
		failed       int64
		firstErr     error
	}
}

// sentAt rides on a produced record's Context to carry its send time to the
// promise without an allocation per record.
type sentAt struct {
	context.Context
	at     time.Time
	steady bool // sent after the warm-up records
}

// newProduceRun makes the payload: random upper-case letters, as
// ProducerPerformance writes; each record is a different window of one
// buffer, so kgo keeps no copies.
func newProduceRun(cfg ProduceConfig, cl *kgo.Client) *produceRun {
	p := &produceRun{cfg: cfg, cl: cl, rng: rand.New(rand.NewPCG(cfg.Seed, 0x5eed))}
	p.buf = make([]byte, 1<<20+cfg.RecordBytes)
	for i := range p.buf {
		p.buf[i] = byte('A' + p.rng.IntN(26))
	}
	p.mu.hist, p.mu.steady = loadgen.NewHist(), loadgen.NewHist()
	p.promise = p.acked // once: a method value per record would allocate
	return p
}

// acked is every record's promise: it records the record's latency, or
// counts its failure.
func (p *produceRun) acked(r *kgo.Record, err error) {
	sa := r.Context.(*sentAt)
	lat := time.Since(sa.at)
	p.mu.Lock()
	defer p.mu.Unlock()
	if err != nil {
		p.mu.failed++
		if p.mu.firstErr == nil {
			p.mu.firstErr = err
		}
		return
	}
	p.mu.hist.Record(lat)
	if sa.steady {
		p.mu.steady.Record(lat)
	}
}

// sendAll sends every record, beginning and committing transactions on
// the way, and returns once every record is acknowledged.
func (p *produceRun) sendAll(ctx context.Context) error {
	txn := p.cfg.transactional()
	for i := int64(0); i < p.cfg.Records; i++ {
		if txn && !p.inTxn {
			if err := p.cl.BeginTransaction(); err != nil {
				return fmt.Errorf("peer produce: beginning a transaction: %w", err)
			}
			p.txnStart, p.inTxn = time.Now(), true
		}
		p.send(ctx, i)
		if txn && time.Since(p.txnStart) >= p.cfg.TransactionDuration {
			if err := p.endTxn(ctx); err != nil {
				return fmt.Errorf("peer produce: committing transaction %d: %w", p.transactions+1, err)
			}
		}
	}
	if p.inTxn {
		if err := p.endTxn(ctx); err != nil {
			return fmt.Errorf("peer produce: committing the last transaction: %w", err)
		}
	} else if err := p.cl.Flush(ctx); err != nil {
		return fmt.Errorf("peer produce: flushing: %w", err)
	}
	return nil
}

// send produces record i asynchronously.
func (p *produceRun) send(ctx context.Context, i int64) {
	if len(p.recs) == 0 {
		p.recs, p.sent = make([]kgo.Record, sendChunk), make([]sentAt, sendChunk)
	}
	r, sa := &p.recs[0], &p.sent[0]
	p.recs, p.sent = p.recs[1:], p.sent[1:]
	size := p.cfg.RecordBytes
	off := p.rng.IntN(len(p.buf) - size)
	r.Value = p.buf[off : off+size : off+size]
	// The promise measures send-to-ack from here, as the tool's callback
	// does from its send time (kgo's own r.Timestamp is truncated to the
	// millisecond).
	sa.Context, sa.at, sa.steady = ctx, time.Now(), i >= p.cfg.WarmupRecords
	if i == p.cfg.WarmupRecords {
		p.steadyStart = sa.at
	}
	r.Context = sa
	p.cl.Produce(ctx, r, p.promise)
}

// endTxn flushes the open transaction's records and commits it.
func (p *produceRun) endTxn(ctx context.Context) error {
	if err := p.cl.Flush(ctx); err != nil {
		return err
	}
	if err := p.cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
		return err
	}
	p.transactions++
	p.inTxn = false
	return nil
}

// result is what the run measured, elapsed being its clock.
func (p *produceRun) result(elapsed time.Duration) *ProduceResult {
	p.mu.Lock()
	defer p.mu.Unlock()
	cfg := p.cfg
	res := &ProduceResult{
		Records: cfg.Records, Failed: p.mu.failed, RecordBytes: cfg.RecordBytes, Seconds: elapsed.Seconds(),
		Transactions: p.transactions, LatencyMs: latencyOf(p.mu.hist),
		transactionalID: cfg.TransactionalID, transactionDuration: cfg.TransactionDuration, firstErr: p.mu.firstErr,
	}
	res.RecordsPerSec = float64(cfg.Records) / res.Seconds
	res.MBPerSec = res.RecordsPerSec * float64(cfg.RecordBytes) / (1 << 20)
	if cfg.WarmupRecords > 0 {
		sr := &ProduceSteady{Records: cfg.Records - cfg.WarmupRecords, Seconds: time.Since(p.steadyStart).Seconds(), LatencyMs: latencyOf(p.mu.steady)}
		sr.RecordsPerSec = float64(sr.Records) / sr.Seconds
		sr.MBPerSec = sr.RecordsPerSec * float64(cfg.RecordBytes) / (1 << 20)
		res.Steady = sr
	}
	return res
}

// latencyOf summarises a latency histogram in ms.
func latencyOf(h *loadgen.Hist) LatencyMs {
	s := h.Summary()
	ms := func(ns int64) float64 { return float64(ns) / 1e6 }
	return LatencyMs{
		AvgMs: s.Mean / 1e6, MaxMs: ms(s.Max),
		P50Ms: ms(s.P50), P95Ms: ms(int64(h.Percentile(95))),
		P99Ms: ms(s.P99), P999Ms: ms(s.P999),
	}
}
