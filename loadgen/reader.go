// This file holds the readers of the output topic: the read_committed
// tail reader that measures end-to-end latency while the mode runs, and the
// whole-topic passes (read_committed and read_uncommitted, with markers)
// the verifier's ledgers are completed from.

package loadgen

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/sharebench/sharebench/loadgen/ledger"
	"github.com/sharebench/sharebench/loadgen/result"
	"github.com/sharebench/sharebench/loadgen/targets"
)

// readLoop tails the output topic with read_committed: each output seen is
// one end-to-end latency sample, measured from its input's intended time.
// Once stop is closed (the producers and workers have stopped) it reads
// on until it has reached the topic's end offsets, and returns a note
// when it could not (the final read_committed pass books what it missed,
// later).
func (mr *modeRun) readLoop(ctx context.Context, rd targets.Reader, stop chan struct{}) (string, error) {
	h := NewHist()
	defer mr.mergeHist(result.HistEndToEnd, h)
	var (
		lat   []time.Duration
		batch []outputRec
	)
	take := func(recs []*targets.Record) {
		now := time.Now()
		vis := mr.sinceStart(now)
		lat = lat[:0]
		batch = batch[:0]
		for _, r := range recs {
			oh, err := ledger.ReadOutput(r.Value)
			if err != nil {
				continue
			}
			// One sample per output of an input intended inside the
			// window.
			if d := time.Duration(vis - oh.IntendedNs); mr.inWindowNs(oh.IntendedNs) {
				h.Record(d)
				lat = append(lat, d)
			}
			batch = append(batch, outputRec{id: oh.InputID, partition: r.Partition, offset: r.Offset, visible: vis, txnSeq: oh.TxnSeq, epoch: oh.Epoch, worker: oh.Worker})
		}
		mr.ledger.addCommittedBatch(batch)
		if len(lat) > 0 {
			mr.ivE2E.record(now, lat...)
		}
		mr.series.add(mr.series.outputs, mr.secondOf(now), int64(len(batch)))
	}
	for {
		select {
		case <-stop:
			ends, err := mr.cfg.Target.EndOffsets(ctx, mr.tcfg, mr.tcfg.OutputTopic, true)
			if err != nil {
				if ctx.Err() != nil {
					return "", nil
				}
				return fmt.Sprintf("the tail reader could not learn the output topic's end offsets (%v): the final read_committed pass booked what it had not seen, with that pass's time as their visibility", err), nil
			}
			short, err := readTo(ctx, rd, ends, mr.stallBound(), take)
			if err != nil || short == "" || ctx.Err() != nil {
				return "", err
			}
			return "the tail reader " + short + ": the final read_committed pass booked what it had not seen, with that pass's time as their visibility", nil
		default:
		}
		pctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
		recs, err := rd.Poll(pctx)
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				return "", nil
			}
			return "", err
		}
		if len(recs) > 0 {
			take(recs)
		}
	}
}

// recordVisible books outputs made visible outside the output topic
// (ack-only checkpoints).
func (mr *modeRun) recordVisible(now time.Time, intendedNs int64, n int64) {
	d := time.Duration(mr.sinceStart(now) - intendedNs)
	if mr.inWindowNs(intendedNs) {
		mr.recordHist(result.HistEndToEnd, d)
		mr.ivE2E.record(now, d)
	}
	mr.counts.sinkOutputs.Add(n)
	mr.series.add(mr.series.outputs, mr.secondOf(now), n)
}

// readStall bounds a read to known end offsets: a reader short of them
// whose position has not moved for this long gives up, and the read is
// reported short (missing evidence), never taken as complete.
const readStall = 10 * time.Second

// readPoll bounds each poll of such a read.
const readPoll = 200 * time.Millisecond

// stallBound is readStall, or the test's override.
func (mr *modeRun) stallBound() time.Duration {
	if mr.cfg.readStall > 0 {
		return mr.cfg.readStall
	}
	return readStall
}

// readToEndOf learns topic's end offsets on t at the reader's isolation
// level and reads rd up to them (readTo).
func readToEndOf(ctx context.Context, t targets.Target, cfg targets.Config, topic string, readCommitted bool, rd targets.Reader, stall time.Duration, take func([]*targets.Record)) (string, error) {
	ends, err := t.EndOffsets(ctx, cfg, topic, readCommitted)
	if err != nil {
		return "", fmt.Errorf("learning the end offsets of %s: %w", topic, err)
	}
	return readTo(ctx, rd, ends, stall, take)
}

// readTo polls rd, handing each poll's records to take, until the reader's
// position has reached ends in every partition. It returns "" then;
// otherwise a phrase naming why it stopped and the partitions it did not
// reach. It stops when the position has not moved for stall, or, with
// stall 0 (a reader that returns at once with what there is, as on a
// manual clock), at the first poll that moves no position; when ctx ends;
// and when the reader has returned more records than the offsets it had
// to pass, since a read returns at most one record per offset and a reader
// that breaks that rule would otherwise grow the ledger without bound.
func readTo(ctx context.Context, rd targets.Reader, ends map[int32]int64, stall time.Duration, take func([]*targets.Record)) (string, error) {
	lastMove := time.Now()
	prev := rd.Positions()
	var span, taken int64
	for p, e := range ends {
		span += max(e-prev[p], 0)
	}
	for polled := false; ; polled = true {
		pos := rd.Positions()
		missing := shortOf(pos, ends)
		if len(missing) == 0 {
			return "", nil
		}
		moved := !maps.Equal(pos, prev)
		if moved {
			prev, lastMove = pos, time.Now()
		}
		why := ""
		switch {
		case ctx.Err() != nil:
			why = "was interrupted"
		case taken > span:
			why = fmt.Sprintf("the reader returned %d records for the %d offsets it had to pass", taken, span)
		case stall == 0 && polled && !moved:
			why = "a poll made no progress"
		case stall > 0 && time.Since(lastMove) >= stall:
			why = fmt.Sprintf("made no progress for %v", stall)
		}
		if why != "" {
			return fmt.Sprintf("stopped short of the end offsets (%s; %s)", why, strings.Join(missing, ", ")), nil
		}
		pctx, cancel := context.WithTimeout(ctx, readPoll)
		recs, err := rd.Poll(pctx)
		cancel()
		if err != nil {
			if ctx.Err() != nil || (stall == 0 && pctx.Err() != nil) {
				continue
			}
			return "", err
		}
		taken += int64(len(recs))
		if len(recs) > 0 && taken <= span {
			take(recs)
		}
	}
}

// shortOf lists the partitions whose position is below their end, as
// "partition p at offset o of e", in partition order.
func shortOf(pos, ends map[int32]int64) []string {
	var out []string
	for _, p := range slices.Sorted(maps.Keys(ends)) {
		if pos[p] < ends[p] {
			out = append(out, fmt.Sprintf("partition %d at offset %d of %d", p, pos[p], ends[p]))
		}
	}
	return out
}
