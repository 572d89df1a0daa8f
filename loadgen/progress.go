// This file holds the progress printer: one line a second while a mode
// runs.

package loadgen

import (
	"fmt"
	"time"
)

// scheduleWarnLag is how far an open loop's producers may fall behind
// their schedule before the progress says so, and scheduleWarnEvery how
// often it says it again while they stay behind.
const (
	scheduleWarnLag   = time.Second
	scheduleWarnEvery = 5 * time.Second
)

// progressLoop prints one line a second until done closes: the mode, the
// phase (warm-up; forming: waiting for every worker to receive records;
// backlog: building an OMB consumer backlog, or waiting for an open loop's
// consumers to catch up with the backlog; load; drain), the time since the mode started over the time planned
// (warm-up and window), the input rate of the last second (in the drain:
// the inputs still without an output), the output rate, the window's
// end-to-end p99 of the last whole bucket, and redeliveries and aborts when
// there are any. Lines stay under 80 columns for the usual mode names; a
// terminal cuts longer ones to its width. While an open loop's producers
// are more than scheduleWarnLag behind their schedule, a warning line says
// so every scheduleWarnEvery.
func (mr *modeRun) progressLoop(done chan struct{}) {
	w := mr.cfg.Progress
	if w == nil {
		<-done
		return
	}
	t := time.NewTicker(time.Second)
	defer t.Stop()
	planned := mr.spec.Warmup() + mr.spec.TestDuration()
	var lastIn, lastOut int64
	var lastWarned time.Time
	for {
		select {
		case <-done:
			return
		case now := <-t.C:
			in, outN := mr.produced.Load(), mr.ledger.CommittedOutputs()+mr.counts.sinkOutputs.Load()
			total := planned
			phase := "load"
			p99 := int64(0)
			inPart := fmt.Sprintf("in %6d/s", in-lastIn)
			switch {
			case now.Before(mr.start.Add(mr.spec.Warmup())):
				phase = "warm-up"
			case !mr.winOpen.Load() && !mr.backlogBuilt():
				phase = "backlog" // building an OMB consumer backlog
			case !mr.winOpen.Load() && mr.receivedN.Load() < mr.expectedReceivers():
				phase = "forming"
			case !mr.winOpen.Load():
				phase = "backlog"
			default:
				ws, we := mr.winStartNs.Load(), mr.winEndNs.Load()
				total = time.Duration(we)
				b := buckets{ws, we}
				if k := b.index(mr.sinceStart(now)) - 1; k >= 0 {
					p99 = mr.ivE2E.p99(k)
				}
				if mr.sinceStart(now) >= we {
					phase = "drain"
					inPart = fmt.Sprintf("pending %d", max(in-mr.settledInputs(), 0))
				}
			}
			line := fmt.Sprintf("%-13s %-7s %5.1f/%.0fs  %s  out %6d/s  p99 %s",
				mr.name, phase, now.Sub(mr.start).Seconds(), total.Seconds(), inPart, outN-lastOut, fmtNs(p99))
			if n := mr.counts.redelivered.Load(); n > 0 {
				line += fmt.Sprintf("  redel %d", n)
			}
			if n := mr.counts.aborts.Load(); n > 0 {
				line += fmt.Sprintf("  abort %d", n)
			}
			fmt.Fprintln(w, line)
			lastIn, lastOut = in, outN
			if behind := time.Duration(mr.behindNs.Load()); phase != "drain" && behind > scheduleWarnLag && now.Sub(lastWarned) >= scheduleWarnEvery {
				fmt.Fprintf(w, "warning: %s is %v behind its schedule of %d records/s: the target or the load generator cannot keep up; the producers stop a second after the window closes\n",
					mr.name, behind.Round(100*time.Millisecond), mr.spec.ProducerRate)
				lastWarned = now
			}
		}
	}
}

func fmtNs(ns int64) string {
	if ns == 0 {
		return "-"
	}
	return FormatDuration(time.Duration(ns))
}
