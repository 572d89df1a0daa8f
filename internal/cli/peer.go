// This file holds `sharebench peer`, a hidden command (not in the command
// list; documented in docs/real-kafka.md) behind scripts/peer-bench.sh:
// produce-only and share-consume-only runs straight on franz-go, measured and
// printed the way Kafka's own ProducerPerformance and
// ShareConsumerPerformance measure and print, so one script can run both on
// the same broker and compare them line for line.

package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	"github.com/spf13/pflag"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sharebench/sharebench/loadgen"
	"github.com/sharebench/sharebench/loadgen/targets/kafkatarget"
)

const peerUsage = `Usage: sharebench peer produce|share-consume [flags]

Produce-only and share-consume-only runs against a Kafka cluster, measured
like Kafka's own tools (scripts/peer-bench.sh runs both side by side):

  produce        like org.apache.kafka.tools.ProducerPerformance: N records of
                 S bytes as fast as possible, optionally in transactions that
                 commit every D; records/s and send-to-ack latency.
  share-consume  like org.apache.kafka.tools.ShareConsumerPerformance: one
                 share consumer (implicit acks) reads N records; records/s from
                 subscribe to the last record, plus poll latency.

Examples:
  sharebench peer produce --brokers 127.0.0.1:9092 --topic t1 --num-records 1000000 --record-size 100
  sharebench peer produce --brokers 127.0.0.1:9092 --topic t1 --num-records 1000000 --record-size 100 --transaction-duration 100ms
  sharebench peer share-consume --brokers 127.0.0.1:9092 --topic t1 --group g1 --num-records 1000000

Run 'sharebench peer produce --help' for a subcommand's flags.`

func peerCmd(env *Env, args []string) error {
	if len(args) == 0 {
		fmt.Fprintln(env.Stderr, peerUsage)
		return usageErr("a subcommand is needed: produce or share-consume")
	}
	switch args[0] {
	case "produce":
		return peerProduce(env, args[1:])
	case "share-consume":
		return peerShareConsume(env, args[1:])
	case "-h", "--help", "help":
		fmt.Fprintln(env.Stdout, peerUsage)
		return nil
	}
	return usageErr("peer: unknown subcommand %q (valid: produce, share-consume)", args[0])
}

// peerCommon are the flags both subcommands take.
type peerCommon struct {
	brokers string
	topic   string
	records int64
	format  string
}

func (c *peerCommon) register(fs *pflag.FlagSet) {
	fs.StringVar(&c.brokers, "brokers", "127.0.0.1:9092", "comma-separated seed brokers host:port")
	fs.StringVar(&c.topic, "topic", "", "topic (required; create it first, e.g. with Kafka's TopicCommand)")
	fs.Int64Var(&c.records, "num-records", 0, "records to produce or consume (required)")
	fs.StringVar(&c.format, "format", "text", "output: text (the Kafka tool's own line, then sharebench's extras) or json")
}

func (c *peerCommon) check(name string) error {
	if c.topic == "" {
		return usageErr("peer %s: --topic is required", name)
	}
	if c.records <= 0 {
		return usageErr("peer %s: --num-records %d: must be positive", name, c.records)
	}
	if c.format != "text" && c.format != "json" {
		return usageErr("peer %s: --format %q: valid: text, json", name, c.format)
	}
	return nil
}

// open connects to --brokers as the kafka target does (its seeds, client id
// prefix and reachability check); the caller closes the target.
func (c *peerCommon) open(ctx context.Context, name string) (*kafkatarget.Target, error) {
	seeds := c.seeds()
	if len(seeds) == 0 {
		return nil, usageErr("peer %s: --brokers is empty: give the seed brokers host:port", name)
	}
	t, err := kafkatarget.New(ctx, kafkatarget.Options{Brokers: seeds, ClientID: "sharebench-peer"})
	if err != nil {
		return nil, fmt.Errorf("peer %s: --brokers %s: %w", name, c.brokers, err)
	}
	return t, nil
}

func (c *peerCommon) seeds() []string {
	var out []string
	for _, b := range strings.Split(c.brokers, ",") {
		if b = strings.TrimSpace(b); b != "" {
			out = append(out, b)
		}
	}
	return out
}

// peerProduceResult is what `peer produce` reports; the text form is
// ProducerPerformance's final line.
type peerProduceResult struct {
	Records       int64   `json:"records"`
	Failed        int64   `json:"failed"`
	RecordBytes   int     `json:"record_size"`
	Seconds       float64 `json:"seconds"`
	RecordsPerSec float64 `json:"records_per_sec"`
	MBPerSec      float64 `json:"mb_per_sec"`
	Transactions  int64   `json:"transactions,omitempty"`
	// Send-to-acknowledgement latency per record, ms.
	AvgMs  float64 `json:"latency_avg_ms"`
	MaxMs  float64 `json:"latency_max_ms"`
	P50Ms  float64 `json:"latency_p50_ms"`
	P95Ms  float64 `json:"latency_p95_ms"`
	P99Ms  float64 `json:"latency_p99_ms"`
	P999Ms float64 `json:"latency_p999_ms"`
	// Steady is the same without the --warmup-records records.
	Steady *peerProduceSteady `json:"steady_state,omitempty"`
}

// peerProduceSteady is the steady state after the warm-up records: from
// the first steady record's send to the end, their latencies only.
type peerProduceSteady struct {
	Records       int64   `json:"records"`
	Seconds       float64 `json:"seconds"`
	RecordsPerSec float64 `json:"records_per_sec"`
	MBPerSec      float64 `json:"mb_per_sec"`
	AvgMs         float64 `json:"latency_avg_ms"`
	MaxMs         float64 `json:"latency_max_ms"`
	P50Ms         float64 `json:"latency_p50_ms"`
	P95Ms         float64 `json:"latency_p95_ms"`
	P99Ms         float64 `json:"latency_p99_ms"`
	P999Ms        float64 `json:"latency_p999_ms"`
}

const peerProduceExamples = `  sharebench peer produce --topic t1 --num-records 1000000 --record-size 100
  sharebench peer produce --topic t1 --num-records 1000000 --record-size 100 --transaction-duration 100ms`

// peerProduce mirrors ProducerPerformance with --throughput -1: one client,
// records sent asynchronously as fast as the client takes them, a random
// payload per record, and (with --transaction-duration) a commit once the
// open transaction is that old. The clock starts after the client is made
// (and, transactional, after its producer id is initialised, as the tool's
// initTransactions) and stops once every record is acknowledged.
func peerProduce(env *Env, args []string) error {
	var c peerCommon
	var (
		size          int
		txnID         string
		txnDuration   time.Duration
		linger        time.Duration
		batchMaxBytes int32
		seed          uint64
		warmup        int64
		compression   string
	)
	fs := newFlags(env, "peer produce", "--topic T --num-records N --record-size S [flags]", peerProduceExamples)
	c.register(fs)
	fs.IntVar(&size, "record-size", 100, "bytes per record value (no key)")
	fs.StringVar(&txnID, "transactional-id", "", "produce in transactions with this id (default with --transaction-duration: sharebench-peer-<time>)")
	fs.DurationVar(&txnDuration, "transaction-duration", 0, "produce in transactions, committing once one is this old (ProducerPerformance's --transaction-duration-ms; default with --transactional-id: 3s)")
	// Kafka 4.x producer defaults, so both tools build the same batches.
	fs.DurationVar(&linger, "linger", 5*time.Millisecond, "linger per partition (Kafka's producer default linger.ms=5)")
	fs.Int32Var(&batchMaxBytes, "batch-max-bytes", 16384, "largest record batch (Kafka's producer default batch.size=16384)")
	fs.Uint64Var(&seed, "seed", 0, "payload seed")
	fs.Int64Var(&warmup, "warmup-records", 0, "records to treat as warm-up: a second line gives the steady state without them (ProducerPerformance's --warmup-records)")
	fs.StringVar(&compression, "compression", "none", "batch compression: none, gzip, snappy, lz4 or zstd (Kafka's compression.type; its default none)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := c.check("produce"); err != nil {
		return err
	}
	codec, ok := map[string]kgo.CompressionCodec{
		"none": kgo.NoCompression(), "gzip": kgo.GzipCompression(), "snappy": kgo.SnappyCompression(),
		"lz4": kgo.Lz4Compression(), "zstd": kgo.ZstdCompression(),
	}[compression]
	if !ok {
		return usageErr("peer produce: --compression %q: use none, gzip, snappy, lz4 or zstd", compression)
	}
	if warmup < 0 || warmup >= c.records {
		return usageErr("peer produce: --warmup-records %d: must be at least 0 and below --num-records %d", warmup, c.records)
	}
	if size < 1 || size > 1<<20 {
		return usageErr("peer produce: --record-size %d: must be 1..1048576", size)
	}
	txn := txnID != "" || txnDuration > 0
	if txn {
		if txnDuration <= 0 {
			txnDuration = 3 * time.Second
		}
		if txnID == "" {
			txnID = fmt.Sprintf("sharebench-peer-%d", time.Now().UnixNano())
		}
	}

	res := peerProduceResult{RecordBytes: size}
	hist, steadyHist := loadgen.NewHist(), loadgen.NewHist()
	var mu sync.Mutex // guards hist and res.Failed: promises run on kgo's goroutines
	var firstErr error
	ctx := context.Background()
	tgt, err := c.open(ctx, "produce")
	if err != nil {
		return err
	}
	defer tgt.Close()
	opts := []kgo.Opt{
		kgo.DefaultProduceTopic(c.topic),
		kgo.ProducerLinger(linger),
		kgo.ProducerBatchMaxBytes(batchMaxBytes),
		// The Java producer buffers up to buffer.memory (32 MiB).
		kgo.MaxBufferedBytes(32 << 20),
		kgo.MaxBufferedRecords(1 << 20),
		// The Java producer's default for records without a key: stick
		// to a partition for batch.size bytes, adaptively (KIP-794).
		kgo.RecordPartitioner(kgo.UniformBytesPartitioner(int(batchMaxBytes), true, false, nil)),
		kgo.UnknownTopicRetries(3),
		// Pinned, never franz-go's default (snappy), so both tools send
		// the same bytes.
		kgo.ProducerBatchCompression(codec),
	}
	if txn {
		opts = append(opts, kgo.TransactionalID(txnID))
	}
	cl, err := tgt.Client("producer", opts...)
	if err != nil {
		return usageErr("peer produce: %v", err)
	}
	defer cl.Close()
	if txn {
		ictx, cancel := context.WithTimeout(ctx, 30*time.Second)
		_, _, err := cl.ProducerID(ictx)
		cancel()
		if err != nil {
			return fmt.Errorf("peer produce: initialising transactional id %s on %s: %w", txnID, c.brokers, err)
		}
	}

	// Random upper-case letters, as ProducerPerformance writes; each record
	// is a different window of one buffer, so kgo keeps no copies.
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	buf := make([]byte, 1<<20+size)
	for i := range buf {
		buf[i] = byte('A' + rng.IntN(26))
	}
	promise := func(r *kgo.Record, err error) {
		lat := time.Since(r.Context.(*sentAt).at)
		mu.Lock()
		if err != nil {
			res.Failed++
			if firstErr == nil {
				firstErr = err
			}
		} else {
			hist.Record(lat)
			if r.Context.(*sentAt).steady {
				steadyHist.Record(lat)
			}
		}
		mu.Unlock()
	}

	const chunk = 4096
	var recs []kgo.Record
	var sent []sentAt
	start := time.Now()
	var steadyStart time.Time
	var txnStart time.Time
	inTxn := false
	endTxn := func() error {
		if err := cl.Flush(ctx); err != nil {
			return err
		}
		if err := cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
			return err
		}
		res.Transactions++
		inTxn = false
		return nil
	}
	for i := int64(0); i < c.records; i++ {
		if txn && !inTxn {
			if err := cl.BeginTransaction(); err != nil {
				return fmt.Errorf("peer produce: beginning a transaction: %w", err)
			}
			txnStart, inTxn = time.Now(), true
		}
		if len(recs) == 0 {
			recs, sent = make([]kgo.Record, chunk), make([]sentAt, chunk)
		}
		r, sa := &recs[0], &sent[0]
		recs, sent = recs[1:], sent[1:]
		off := rng.IntN(len(buf) - size)
		r.Value = buf[off : off+size : off+size]
		// The promise measures send-to-ack from here, as the tool's
		// callback does from its send time (kgo's own r.Timestamp is
		// truncated to the millisecond).
		sa.Context, sa.at, sa.steady = ctx, time.Now(), i >= warmup
		if i == warmup {
			steadyStart = sa.at
		}
		r.Context = sa
		cl.Produce(ctx, r, promise)
		if txn && time.Since(txnStart) >= txnDuration {
			if err := endTxn(); err != nil {
				return fmt.Errorf("peer produce: committing transaction %d: %w", res.Transactions+1, err)
			}
		}
	}
	if inTxn {
		if err := endTxn(); err != nil {
			return fmt.Errorf("peer produce: committing the last transaction: %w", err)
		}
	} else if err := cl.Flush(ctx); err != nil {
		return fmt.Errorf("peer produce: flushing: %w", err)
	}
	elapsed := time.Since(start)

	mu.Lock()
	defer mu.Unlock()
	s := hist.Summary()
	res.Records = c.records
	res.Seconds = elapsed.Seconds()
	res.RecordsPerSec = float64(c.records) / res.Seconds
	res.MBPerSec = res.RecordsPerSec * float64(size) / (1 << 20)
	ms := func(ns int64) float64 { return float64(ns) / 1e6 }
	res.AvgMs, res.MaxMs = s.Mean/1e6, ms(s.Max)
	res.P50Ms, res.P95Ms = ms(s.P50), ms(int64(hist.Percentile(95)))
	res.P99Ms, res.P999Ms = ms(s.P99), ms(s.P999)
	if warmup > 0 {
		st := steadyHist.Summary()
		sr := &peerProduceSteady{Records: c.records - warmup, Seconds: time.Since(steadyStart).Seconds()}
		sr.RecordsPerSec = float64(sr.Records) / sr.Seconds
		sr.MBPerSec = sr.RecordsPerSec * float64(size) / (1 << 20)
		sr.AvgMs, sr.MaxMs = st.Mean/1e6, ms(st.Max)
		sr.P50Ms, sr.P95Ms = ms(st.P50), ms(int64(steadyHist.Percentile(95)))
		sr.P99Ms, sr.P999Ms = ms(st.P99), ms(st.P999)
		res.Steady = sr
	}
	if err := writePeer(env.Stdout, c.format, res, func(w io.Writer) {
		// ProducerPerformance's final line (its latencies are whole ms).
		fmt.Fprintf(w, "%d records sent, %.1f records/sec (%.2f MB/sec), %.2f ms avg latency, %.2f ms max latency, %.2f ms 50th, %.2f ms 95th, %.2f ms 99th, %.2f ms 99.9th.\n",
			res.Records, res.RecordsPerSec, res.MBPerSec, res.AvgMs, res.MaxMs, res.P50Ms, res.P95Ms, res.P99Ms, res.P999Ms)
		if sr := res.Steady; sr != nil {
			// And its steady-state line after --warmup-records.
			fmt.Fprintf(w, "%d steady state records sent, %.1f records/sec (%.2f MB/sec), %.2f ms avg latency, %.2f ms max latency, %.2f ms 50th, %.2f ms 95th, %.2f ms 99th, %.2f ms 99.9th.\n",
				sr.Records, sr.RecordsPerSec, sr.MBPerSec, sr.AvgMs, sr.MaxMs, sr.P50Ms, sr.P95Ms, sr.P99Ms, sr.P999Ms)
		}
		if txn {
			fmt.Fprintf(w, "sharebench: %d transactions (%s, a commit every %v)\n", res.Transactions, txnID, txnDuration)
		}
	}); err != nil {
		return err
	}
	if res.Failed > 0 {
		return fmt.Errorf("peer produce: %d of %d records failed: %w", res.Failed, c.records, firstErr)
	}
	return nil
}

// peerConsumeResult is what `peer share-consume` reports; the text form is
// ShareConsumerPerformance's header and line.
type peerConsumeResult struct {
	Start         time.Time `json:"start"`
	End           time.Time `json:"end"`
	Records       int64     `json:"records"`
	Bytes         int64     `json:"bytes"`
	Seconds       float64   `json:"seconds"`
	RecordsPerSec float64   `json:"records_per_sec"`
	MBPerSec      float64   `json:"mb_per_sec"`
	// FirstRecordMs is the time from subscribe to the first record (the
	// group join and assignment); SteadyPerSec counts from then on.
	FirstRecordMs float64 `json:"first_record_ms"`
	SteadyPerSec  float64 `json:"steady_records_per_sec"`
	// WarmupRecords and SteadyAfterWarmupPerSec: with --warmup-records,
	// the rate from the poll that passed the warm-up to the last record.
	WarmupRecords           int64   `json:"warmup_records,omitempty"`
	SteadyAfterWarmupPerSec float64 `json:"steady_after_warmup_records_per_sec,omitempty"`
	Polls                   int64   `json:"polls"`
	PollP50Ms               float64 `json:"poll_p50_ms"`
	PollP99Ms               float64 `json:"poll_p99_ms"`
	TimedOut                bool    `json:"timed_out,omitempty"`
}

const peerConsumeExamples = `  sharebench peer share-consume --topic t1 --group g1 --num-records 1000000`

// peerShareConsume mirrors ShareConsumerPerformance with one thread: a share
// consumer in implicit mode (each poll accepts the previous one) polls until
// it has N records or none came for --timeout. The clock runs from subscribe
// (client creation) to the last record, as the tool's does; the last poll's
// acknowledgement and the leave happen after it.
func peerShareConsume(env *Env, args []string) error {
	var c peerCommon
	var (
		group    string
		maxPoll  int
		timeout  time.Duration
		setReset bool
		warmup   int64
		acquire  string
	)
	fs := newFlags(env, "peer share-consume", "--topic T --group G --num-records N [flags]", peerConsumeExamples)
	c.register(fs)
	fs.StringVar(&group, "group", "", "share group id (required; use a new one per run)")
	fs.IntVar(&maxPoll, "max-poll-records", 500, "records per poll (Kafka's share consumer default max.poll.records=500)")
	fs.DurationVar(&timeout, "timeout", 10*time.Second, "give up when no record came for this long (the tool's --timeout)")
	fs.BoolVar(&setReset, "earliest", true, "set share.auto.offset.reset=earliest on the group first (before the clock), so it reads records produced before it joined")
	fs.Int64Var(&warmup, "warmup-records", 0, "records to treat as warm-up: the steady rate counts from the poll that passes them")
	fs.StringVar(&acquire, "acquire-mode", "batch_optimized", "share.acquire.mode: record_limit (a fetch acquires at most --max-poll-records, as run's share workers) or batch_optimized (whole batches, Kafka's client default)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := c.check("share-consume"); err != nil {
		return err
	}
	if acquire != "record_limit" && acquire != "batch_optimized" {
		return usageErr("peer share-consume: --acquire-mode %q: want record_limit or batch_optimized", acquire)
	}
	if group == "" {
		return usageErr("peer share-consume: --group is required")
	}
	ctx := context.Background()
	tgt, err := c.open(ctx, "share-consume")
	if err != nil {
		return err
	}
	defer tgt.Close()
	if setReset {
		if err := tgt.SetShareGroupEarliest(ctx, group); err != nil {
			return fmt.Errorf("peer share-consume: %w", err)
		}
	}

	res := peerConsumeResult{}
	polls := loadgen.NewHist()
	res.Start = time.Now()
	// Configured as `sharebench run`'s share workers are
	// (loadgen/targets/kafkatarget): a ShareFetch waits at most 100 ms at the
	// broker, and a poll returns at most --max-poll-records records.
	opts := []kgo.Opt{
		kgo.ShareGroup(group),
		kgo.ConsumeTopics(c.topic),
		kgo.FetchMaxWait(100 * time.Millisecond),
		kgo.ShareMaxRecords(int32(maxPoll)),
	}
	if acquire == "record_limit" {
		opts = append(opts, kgo.ShareMaxRecordsStrict())
	}
	cl, err := tgt.Client("share-consumer", opts...)
	if err != nil {
		return usageErr("peer share-consume: %v", err)
	}
	var first, warmEnd time.Time
	var warmRecords int64
	last := time.Now()
	for res.Records < c.records {
		if time.Since(last) > timeout {
			res.TimedOut = true
			break
		}
		pctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
		t0 := time.Now()
		fetches := cl.PollRecords(pctx, maxPoll)
		d := time.Since(t0)
		cancel()
		n := 0
		fetches.EachRecord(func(r *kgo.Record) {
			n++
			res.Bytes += int64(len(r.Key) + len(r.Value))
		})
		for _, fe := range fetches.Errors() {
			if errors.Is(fe.Err, context.DeadlineExceeded) || errors.Is(fe.Err, context.Canceled) {
				continue
			}
			cl.Close()
			return fmt.Errorf("peer share-consume: polling %s/%d: %w", fe.Topic, fe.Partition, fe.Err)
		}
		if n == 0 {
			continue
		}
		now := time.Now()
		if first.IsZero() {
			first = now
		}
		last = now
		if warmup > 0 && res.Records < warmup && res.Records+int64(n) >= warmup {
			warmEnd, warmRecords = now, res.Records+int64(n)
		}
		res.Records += int64(n)
		res.Polls++
		polls.Record(d)
	}
	res.End = time.Now()
	if res.Records > 0 {
		res.End = last
	}
	// After the clock, as the tool's commitSync and close: accept the last
	// poll and leave.
	cl.MarkAcks(kgo.AckAccept)
	fctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	_ = cl.FlushAcks(fctx)
	cancel()
	cl.Close()

	res.Seconds = res.End.Sub(res.Start).Seconds()
	if res.Seconds > 0 {
		res.RecordsPerSec = float64(res.Records) / res.Seconds
		res.MBPerSec = float64(res.Bytes) / (1 << 20) / res.Seconds
	}
	if !first.IsZero() {
		res.FirstRecordMs = float64(first.Sub(res.Start)) / 1e6
		if steady := last.Sub(first).Seconds(); steady > 0 {
			res.SteadyPerSec = float64(res.Records) / steady
		}
	}
	if !warmEnd.IsZero() {
		if steady := last.Sub(warmEnd).Seconds(); steady > 0 {
			res.WarmupRecords = warmRecords
			res.SteadyAfterWarmupPerSec = float64(res.Records-warmRecords) / steady
		}
	}
	res.PollP50Ms = float64(polls.Percentile(50)) / 1e6
	res.PollP99Ms = float64(polls.Percentile(99)) / 1e6
	if err := writePeer(env.Stdout, c.format, res, func(w io.Writer) {
		// ShareConsumerPerformance's header and line.
		const layout = "2006-01-02 15:04:05.000"
		df := func(t time.Time) string { s := t.Format(layout); return s[:19] + ":" + s[20:] }
		fmt.Fprintln(w, "start.time, end.time, data.consumed.in.MB, MB.sec, nMsg.sec, data.consumed.in.nMsg, fetch.time.ms")
		fmt.Fprintf(w, "%s, %s, %.4f, %.4f, %.4f, %d, %d\n", df(res.Start), df(res.End), float64(res.Bytes)/(1<<20),
			res.MBPerSec, res.RecordsPerSec, res.Records, res.End.Sub(res.Start).Milliseconds())
		fmt.Fprintf(w, "sharebench: first record after %.0f ms, then %.1f records/s; %d polls, poll p50 %.2f ms, p99 %.2f ms\n",
			res.FirstRecordMs, res.SteadyPerSec, res.Polls, res.PollP50Ms, res.PollP99Ms)
		if res.WarmupRecords > 0 {
			fmt.Fprintf(w, "sharebench: steady state after %d warm-up records: %.1f records/s\n", res.WarmupRecords, res.SteadyAfterWarmupPerSec)
		}
	}); err != nil {
		return err
	}
	if res.TimedOut {
		return fmt.Errorf("peer share-consume: got %d of %d records: none came for %v (is share.auto.offset.reset=earliest set, and were the records produced?)", res.Records, c.records, timeout)
	}
	return nil
}

// sentAt rides on a produced record's Context to carry its send time to the
// promise without an allocation per record.
type sentAt struct {
	context.Context
	at     time.Time
	steady bool // sent after the warm-up records
}

// writePeer writes v as JSON, or calls text.
func writePeer(w io.Writer, format string, v any, text func(io.Writer)) error {
	if format == "json" {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	}
	text(w)
	return nil
}
