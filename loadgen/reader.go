// This file holds the read_committed tail reader of the output topic,
// which measures end-to-end latency while the mode runs and books what it
// sees in the ledger (the whole-topic passes after the drain are the
// ledger's gathering), and the booking of outputs made visible in an
// external sink.

package loadgen

import (
	"context"
	"fmt"
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
	var lat []time.Duration
	take := func(recs []*targets.Record) {
		now := time.Now()
		vis := mr.sinceStart(now)
		lat = lat[:0]
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
		}
		n := mr.ledger.AddVisible(recs, vis)
		if len(lat) > 0 {
			mr.ivE2E.record(now, lat...)
		}
		mr.series.add(mr.series.outputs, mr.secondOf(now), int64(n))
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
			short, err := ledger.ReadTo(ctx, rd, ends, mr.stallBound(), take)
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

// stallBound is readStall, or the test's override.
func (mr *modeRun) stallBound() time.Duration {
	if mr.cfg.readStall > 0 {
		return mr.cfg.readStall
	}
	return readStall
}
