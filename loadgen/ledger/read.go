// This file holds the reads of a topic up to known end offsets, which
// the gathering makes of the output and dead-letter topics and a run's
// tail reader of the output topic once the load has stopped.

package ledger

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/sharebench/sharebench/loadgen/targets"
)

// readPoll bounds each poll of such a read.
const readPoll = 200 * time.Millisecond

// readToEndOf learns topic's end offsets on t at the reader's isolation
// level and reads rd up to them (ReadTo).
func readToEndOf(ctx context.Context, t targets.Target, cfg targets.Config, topic string, readCommitted bool, rd targets.Reader, stall time.Duration, take func([]*targets.Record)) (string, error) {
	ends, err := t.EndOffsets(ctx, cfg, topic, readCommitted)
	if err != nil {
		return "", fmt.Errorf("learning the end offsets of %s: %w", topic, err)
	}
	return ReadTo(ctx, rd, ends, stall, take)
}

// ReadTo polls rd, handing each poll's records to take, until the reader's
// position has reached ends in every partition. It returns "" then;
// otherwise a phrase naming why it stopped and the partitions it did not
// reach. It stops when the position has not moved for stall, or, with
// stall 0 (a reader that returns at once with what there is, as on a
// manual clock), at the first poll that moves no position; when ctx ends;
// and when the reader has returned more records than the offsets it had
// to pass, since a read returns at most one record per offset and a reader
// that breaks that rule would otherwise grow the ledger without bound.
func ReadTo(ctx context.Context, rd targets.Reader, ends map[int32]int64, stall time.Duration, take func([]*targets.Record)) (string, error) {
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

// sleepCtx sleeps d or until ctx is done.
func sleepCtx(ctx context.Context, d time.Duration) {
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}
