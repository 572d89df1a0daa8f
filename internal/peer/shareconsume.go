// This file holds ShareConsume, the ShareConsumerPerformance peer: one
// share consumer in implicit mode reading a number of records, with the
// rate from subscribe to the last record and the poll latency.

package peer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sharebench/sharebench/loadgen"
	"github.com/sharebench/sharebench/loadgen/targets/kafkatarget"
)

// ShareConsumeConfig is one share-consume run.
type ShareConsumeConfig struct {
	Topic string
	// Group is the share group; a new one per run.
	Group string
	// Records is how many records to read.
	Records int64
	// MaxPollRecords is max.poll.records.
	MaxPollRecords int
	// Timeout ends the run when no record came for this long.
	Timeout time.Duration
	// Earliest sets share.auto.offset.reset=earliest on the group before
	// the clock starts, so it reads records produced before it joined.
	Earliest bool
	// WarmupRecords, when positive: the steady rate counts from the poll
	// that passes them.
	WarmupRecords int64
	// RecordLimit is share.acquire.mode=record_limit (a fetch acquires at
	// most MaxPollRecords); false is batch_optimized (whole batches,
	// Kafka's client default).
	RecordLimit bool
}

// ShareConsumeResult is what a share-consume run measured; WriteText
// prints it as ShareConsumerPerformance's header and line.
type ShareConsumeResult struct {
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
	// WarmupRecords and SteadyAfterWarmupPerSec: with warm-up records,
	// the rate from the poll that passed the warm-up to the last record.
	WarmupRecords           int64   `json:"warmup_records,omitempty"`
	SteadyAfterWarmupPerSec float64 `json:"steady_after_warmup_records_per_sec,omitempty"`
	Polls                   int64   `json:"polls"`
	PollP50Ms               float64 `json:"poll_p50_ms"`
	PollP99Ms               float64 `json:"poll_p99_ms"`
	TimedOut                bool    `json:"timed_out,omitempty"`

	wanted  int64         // the records asked for
	timeout time.Duration // of the run that timed out
}

// WriteText writes ShareConsumerPerformance's header and line, then
// sharebench's first-record, poll and steady-state figures.
func (r *ShareConsumeResult) WriteText(w io.Writer) {
	const layout = "2006-01-02 15:04:05.000"
	df := func(t time.Time) string { s := t.Format(layout); return s[:19] + ":" + s[20:] }
	fmt.Fprintln(w, "start.time, end.time, data.consumed.in.MB, MB.sec, nMsg.sec, data.consumed.in.nMsg, fetch.time.ms")
	fmt.Fprintf(w, "%s, %s, %.4f, %.4f, %.4f, %d, %d\n", df(r.Start), df(r.End), float64(r.Bytes)/(1<<20),
		r.MBPerSec, r.RecordsPerSec, r.Records, r.End.Sub(r.Start).Milliseconds())
	fmt.Fprintf(w, "sharebench: first record after %.0f ms, then %.1f records/s; %d polls, poll p50 %.2f ms, p99 %.2f ms\n",
		r.FirstRecordMs, r.SteadyPerSec, r.Polls, r.PollP50Ms, r.PollP99Ms)
	if r.WarmupRecords > 0 {
		fmt.Fprintf(w, "sharebench: steady state after %d warm-up records: %.1f records/s\n", r.WarmupRecords, r.SteadyAfterWarmupPerSec)
	}
}

// Err says the run timed out before it had its records; nil when it had
// them.
func (r *ShareConsumeResult) Err() error {
	if !r.TimedOut {
		return nil
	}
	return fmt.Errorf("peer share-consume: got %d of %d records: none came for %v (is share.auto.offset.reset=earliest set, and were the records produced?)", r.Records, r.wanted, r.timeout)
}

// ShareConsume mirrors ShareConsumerPerformance with one thread: a share
// consumer in implicit mode (each poll accepts the previous one) polls until
// it has Records records or none came for Timeout. The clock runs from
// subscribe (client creation) to the last record, as the tool's does; the
// last poll's acknowledgement and the leave happen after it.
func ShareConsume(ctx context.Context, tgt *kafkatarget.Target, cfg ShareConsumeConfig) (*ShareConsumeResult, error) {
	if cfg.Earliest {
		if err := tgt.SetShareGroupEarliest(ctx, cfg.Group); err != nil {
			return nil, fmt.Errorf("peer share-consume: %w", err)
		}
	}
	c := &consumeRun{cfg: cfg, polls: loadgen.NewHist()}
	c.res.Start = time.Now()
	cl, err := newShareConsumer(tgt, cfg)
	if err != nil {
		return nil, err
	}
	if err := c.pollAll(ctx, cl); err != nil {
		cl.Close()
		return nil, err
	}
	c.res.End = time.Now()
	if c.res.Records > 0 {
		c.res.End = c.last
	}
	leave(ctx, cl)
	return c.result(), nil
}

// newShareConsumer makes the share consumer, configured as `sharebench
// run`'s share workers are (loadgen/targets/kafkatarget): a ShareFetch
// waits at most 100 ms at the broker, and a poll returns at most
// MaxPollRecords records.
func newShareConsumer(tgt *kafkatarget.Target, cfg ShareConsumeConfig) (*kgo.Client, error) {
	opts := []kgo.Opt{
		kgo.ShareGroup(cfg.Group),
		kgo.ConsumeTopics(cfg.Topic),
		kgo.FetchMaxWait(100 * time.Millisecond),
		kgo.ShareMaxRecords(int32(cfg.MaxPollRecords)),
	}
	if cfg.RecordLimit {
		opts = append(opts, kgo.ShareMaxRecordsStrict())
	}
	cl, err := tgt.Client("share-consumer", opts...)
	if err != nil {
		return nil, fmt.Errorf("peer share-consume: %w", configError{err})
	}
	return cl, nil
}

// leave, after the clock, is the tool's commitSync and close: it accepts
// the last poll and leaves the group.
func leave(ctx context.Context, cl *kgo.Client) {
	cl.MarkAcks(kgo.AckAccept)
	fctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	_ = cl.FlushAcks(fctx)
	cancel()
	cl.Close()
}

// consumeRun is one share-consume run under way.
type consumeRun struct {
	cfg   ShareConsumeConfig
	res   ShareConsumeResult
	polls *loadgen.Hist // latency of the polls that returned records
	// first and last are when the first and the last record came;
	// warmEnd when the poll that passed the warm-up records did, with
	// warmRecords the count after it.
	first, last, warmEnd time.Time
	warmRecords          int64
}

// pollAll polls until the run has its records or none came for Timeout.
func (c *consumeRun) pollAll(ctx context.Context, cl *kgo.Client) error {
	c.last = time.Now()
	for c.res.Records < c.cfg.Records {
		if time.Since(c.last) > c.cfg.Timeout {
			c.res.TimedOut = true
			return nil
		}
		if err := c.poll(ctx, cl); err != nil {
			return err
		}
	}
	return nil
}

// poll runs one poll of at most 100 ms and counts what it returned.
func (c *consumeRun) poll(ctx context.Context, cl *kgo.Client) error {
	pctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	t0 := time.Now()
	fetches := cl.PollRecords(pctx, c.cfg.MaxPollRecords)
	d := time.Since(t0)
	cancel()
	n := 0
	fetches.EachRecord(func(r *kgo.Record) {
		n++
		c.res.Bytes += int64(len(r.Key) + len(r.Value))
	})
	for _, fe := range fetches.Errors() {
		if errors.Is(fe.Err, context.DeadlineExceeded) || errors.Is(fe.Err, context.Canceled) {
			continue
		}
		return fmt.Errorf("peer share-consume: polling %s/%d: %w", fe.Topic, fe.Partition, fe.Err)
	}
	if n == 0 {
		return nil
	}
	now := time.Now()
	if c.first.IsZero() {
		c.first = now
	}
	c.last = now
	if w := c.cfg.WarmupRecords; w > 0 && c.res.Records < w && c.res.Records+int64(n) >= w {
		c.warmEnd, c.warmRecords = now, c.res.Records+int64(n)
	}
	c.res.Records += int64(n)
	c.res.Polls++
	c.polls.Record(d)
	return nil
}

// result derives the rates from the counts and times of the run.
func (c *consumeRun) result() *ShareConsumeResult {
	res := c.res
	res.wanted, res.timeout = c.cfg.Records, c.cfg.Timeout
	res.Seconds = res.End.Sub(res.Start).Seconds()
	if res.Seconds > 0 {
		res.RecordsPerSec = float64(res.Records) / res.Seconds
		res.MBPerSec = float64(res.Bytes) / (1 << 20) / res.Seconds
	}
	if !c.first.IsZero() {
		res.FirstRecordMs = float64(c.first.Sub(res.Start)) / 1e6
		if steady := c.last.Sub(c.first).Seconds(); steady > 0 {
			res.SteadyPerSec = float64(res.Records) / steady
		}
	}
	if !c.warmEnd.IsZero() {
		if steady := c.last.Sub(c.warmEnd).Seconds(); steady > 0 {
			res.WarmupRecords = c.warmRecords
			res.SteadyAfterWarmupPerSec = float64(res.Records-c.warmRecords) / steady
		}
	}
	res.PollP50Ms = float64(c.polls.Percentile(50)) / 1e6
	res.PollP99Ms = float64(c.polls.Percentile(99)) / 1e6
	return &res
}
