// This file holds the readers of the output topic: the read_committed
// tail reader that measures end-to-end latency while the mode runs, and the
// whole-topic passes (read_committed and read_uncommitted, with markers)
// the verifier's ledgers are completed from.

package loadgen

import (
	"context"
	"time"

	"github.com/sharebench/sharebench/loadgen/result"
	"github.com/sharebench/sharebench/loadgen/targets"
)

// readLoop tails the output topic with read_committed: each output seen is
// one end-to-end latency sample, measured from its input's intended time.
func (mr *modeRun) readLoop(ctx context.Context, rd targets.Reader, stop chan struct{}) error {
	h := NewHist()
	defer mr.mergeHist(result.HistEndToEnd, h)
	var (
		lat   []time.Duration
		batch []outputRec
	)
	for {
		select {
		case <-stop:
			return nil
		default:
		}
		pctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
		recs, err := rd.Poll(pctx)
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		if len(recs) == 0 {
			continue
		}
		now := time.Now()
		vis := mr.sinceStart(now)
		lat = lat[:0]
		batch = batch[:0]
		for _, r := range recs {
			oh, err := readOutput(r.Value)
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
}

// recordVisible books outputs made visible outside the output topic
// (ack-only checkpoints).
func (mr *modeRun) recordVisible(now time.Time, intendedNs int64, n int64) {
	d := time.Duration(mr.sinceStart(now) - intendedNs)
	if mr.inWindowNs(intendedNs) {
		mr.histMu.Lock()
		if mr.hists[result.HistEndToEnd] == nil {
			mr.hists[result.HistEndToEnd] = NewHist()
		}
		mr.hists[result.HistEndToEnd].Record(d)
		mr.histMu.Unlock()
		mr.ivE2E.record(now, d)
	}
	mr.series.add(mr.series.outputs, mr.secondOf(now), n)
}

// readAll reads the whole output topic once at the given isolation level
// and adds what it sees to the ledger: with read_committed, the outputs
// the tail reader had not seen yet.
func (mr *modeRun) readAll(ctx context.Context, readCommitted bool) error {
	rd, err := mr.cfg.Target.NewReader(ctx, mr.tcfg, mr.tcfg.OutputTopic, readCommitted)
	if err != nil {
		return err
	}
	defer rd.Close()
	return drainReader(ctx, rd, func(r *targets.Record) {
		if !readCommitted {
			mr.ledger.addUncommitted(r)
			return
		}
		if oh, err := readOutput(r.Value); err == nil {
			mr.ledger.addCommitted(outputRec{id: oh.InputID, partition: r.Partition, offset: r.Offset,
				visible: mr.sinceStart(time.Now()), txnSeq: oh.TxnSeq, epoch: oh.Epoch, worker: oh.Worker})
		}
	})
}

// drainReader polls rd until three polls in a row return nothing.
func drainReader(ctx context.Context, rd targets.Reader, add func(*targets.Record)) error {
	for empty := 0; empty < 3; {
		pctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		recs, err := rd.Poll(pctx)
		cancel()
		if err != nil {
			return err
		}
		if len(recs) == 0 {
			empty++
			continue
		}
		empty = 0
		for _, r := range recs {
			add(r)
		}
	}
	return nil
}

// readUncommitted reads the whole output topic with read_uncommitted and
// adds every output to the ledger, with the transaction marker that
// followed it where the target's reader returns markers (it reports
// whether it did).
func (mr *modeRun) readUncommitted(ctx context.Context) (markers bool, err error) {
	mrd, ok := mr.cfg.Target.(targets.MarkerReader)
	if !ok {
		return false, mr.readAll(ctx, false)
	}
	rd, err := mrd.NewMarkerReader(ctx, mr.tcfg, mr.tcfg.OutputTopic)
	if err != nil {
		return false, err
	}
	defer rd.Close()
	return true, drainReader(ctx, rd, mr.ledger.addUncommitted)
}
