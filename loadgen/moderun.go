// This file holds the parts a mode run is made of besides what it runs,
// each owning its fields: its timeline and measurement window
// (window), its counters (counts, in worker.go), the books the verifier
// reads (books), the figures it reports (figures) and its workers (crew).
// The goroutines of a run write through the methods of the part that owns
// what they change.

package loadgen

import (
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sharebench/sharebench/loadgen/ledger"
	"github.com/sharebench/sharebench/loadgen/result"
)

// window is a mode run's timeline: its start, the measurement window (set
// once when it opens) and which workers have received records (the
// window waits for them).
type window struct {
	start time.Time
	// warmEnd and loadEnd are the window's bounds, read after windowOpen
	// is closed or the producers have stopped; winStartNs and winEndNs
	// hold the same bounds in ns since start for the goroutines that run
	// while it opens.
	warmEnd, loadEnd      time.Time
	windowOpen            chan struct{}
	winOpen               atomic.Bool
	winStartNs, winEndNs  atomic.Int64
	windowNote            string
	cpuAtOpen, cpuAtClose int64         // processCPUNs when the window opened and closed
	noiseOpen, noiseClose noiseProbe    // the machine when the window opened and closed
	received              []atomic.Bool // worker id has received records
	receivedN             atomic.Int32
	seconds               int // the series' length
}

// begin starts the timeline at start, for a run of consumers workers whose
// series holds seconds slots.
func (w *window) begin(start time.Time, consumers, seconds int) {
	w.start = start
	w.windowOpen = make(chan struct{})
	w.received = make([]atomic.Bool, consumers)
	w.seconds = seconds
}

// open opens the measurement window on [ws, we) (ns since start), noting
// why it opened early when note is set.
func (w *window) open(ws, we int64, note string) {
	w.noiseOpen = probeNoise()
	w.cpuAtOpen = w.noiseOpen.cpuNs
	w.windowNote = note
	w.warmEnd, w.loadEnd = w.start.Add(time.Duration(ws)), w.start.Add(time.Duration(we))
	w.winStartNs.Store(ws)
	w.winEndNs.Store(we)
	w.winOpen.Store(true)
	close(w.windowOpen)
}

// closed records the process's CPU time and the machine's load when the
// load stopped.
func (w *window) closed() {
	w.noiseClose = probeNoise()
	w.cpuAtClose = w.noiseClose.cpuNs
}

func (w *window) sinceStart(t time.Time) int64 { return int64(t.Sub(w.start)) }

// secondOf returns the series slot of t (see series).
func (w *window) secondOf(t time.Time) int { return int(t.Sub(w.start) / slotNs) }

// inWindow reports whether t falls inside the measurement window; false
// until the window has opened.
func (w *window) inWindow(t time.Time) bool { return w.inWindowNs(w.sinceStart(t)) }

// inWindowNs is inWindow for ns since the mode's start.
func (w *window) inWindowNs(ns int64) bool {
	if !w.winOpen.Load() {
		return false
	}
	return ns >= w.winStartNs.Load() && ns < w.winEndNs.Load()
}

// loadOver reports whether the producers must stop at t: the window has
// opened and t is past its end.
func (w *window) loadOver(t time.Time) bool {
	return w.winOpen.Load() && w.sinceStart(t) >= w.winEndNs.Load()
}

// noteReceived records that worker id received records.
func (w *window) noteReceived(id int) {
	if id < len(w.received) && !w.received[id].Load() && w.received[id].CompareAndSwap(false, true) {
		w.receivedN.Add(1)
	}
}

// books are what the verifier reads after the run: the ledger, and the
// checkpoint model's sink and snapshots (ackOnly workloads).
type books struct {
	ledger *ledger.Ledger
	cp     *ledger.Checkpoints // nil: the mode runs no checkpoint model
}

// figures are what the run reports besides the verdict: histograms merged
// from the goroutines, the per-second interval histograms (for the .hlog
// files and series), the series and the fault events.
type figures struct {
	series                                   *series
	ivE2E, ivLag, ivProduce, ivCommit, ivP2C *intervals

	histMu sync.Mutex
	hists  map[string]*Hist

	faultsMu sync.Mutex
	faults   []result.FaultEvent
}

// begin makes the figures of a run that started at start and lasts at
// most seconds.
func (f *figures) begin(start time.Time, seconds int) {
	f.hists = map[string]*Hist{}
	f.series = newSeries(seconds)
	f.ivE2E, f.ivLag = newIntervals(start), newIntervals(start)
	f.ivProduce, f.ivCommit, f.ivP2C = newIntervals(start), newIntervals(start), newIntervals(start)
}

// mergeHist adds a goroutine's histogram h to the run's histogram name.
func (f *figures) mergeHist(name string, h *Hist) {
	f.histMu.Lock()
	defer f.histMu.Unlock()
	if f.hists[name] == nil {
		f.hists[name] = NewHist()
	}
	f.hists[name].Merge(h)
}

// recordHist adds one sample d to the run's histogram name.
func (f *figures) recordHist(name string, d time.Duration) {
	f.histMu.Lock()
	defer f.histMu.Unlock()
	if f.hists[name] == nil {
		f.hists[name] = NewHist()
	}
	f.hists[name].Record(d)
}

// summaries returns every histogram's summary.
func (f *figures) summaries() map[string]result.Histogram {
	f.histMu.Lock()
	defer f.histMu.Unlock()
	out := make(map[string]result.Histogram, len(f.hists))
	for name, h := range f.hists {
		out[name] = h.Summary()
	}
	return out
}

// hist returns the run's histogram name (nil when it has no samples yet);
// read once the goroutines that merge into it have stopped.
func (f *figures) hist(name string) *Hist {
	f.histMu.Lock()
	defer f.histMu.Unlock()
	return f.hists[name]
}

// addFaultEvent records a fault event and marks it on the series at its
// start.
func (f *figures) addFaultEvent(ev result.FaultEvent) {
	f.faultsMu.Lock()
	f.faults = append(f.faults, ev)
	f.faultsMu.Unlock()
	f.series.fault(int(ev.AtNs/int64(slotNs)), ev.Kind)
}

// faultEvents returns the fault events so far.
func (f *figures) faultEvents() []result.FaultEvent {
	f.faultsMu.Lock()
	defer f.faultsMu.Unlock()
	return append([]result.FaultEvent(nil), f.faults...)
}

// crew is a mode run's workers: how faults reach each worker id (across
// incarnations), the abort ratio an abort-ratio fault adds, and the stop
// signal.
type crew struct {
	ctl         []*workerCtl
	abortBoost  atomic.Uint64 // float64 bits: extra abort ratio from an abort-ratio fault
	abortUntil  atomic.Int64  // unix ns
	stopWorkers chan struct{}
	workersWG   sync.WaitGroup
}

// begin makes the controls of n workers.
func (c *crew) begin(n int) {
	c.ctl = make([]*workerCtl, n)
	for i := range c.ctl {
		c.ctl[i] = &workerCtl{}
	}
}

// boostAborts raises the abort ratio to at least ratio until until.
func (c *crew) boostAborts(ratio float64, until time.Time) {
	c.abortBoost.Store(math.Float64bits(ratio))
	c.abortUntil.Store(until.UnixNano())
}

// abortRatio is the abort ratio in force at now, given the workload's.
func (c *crew) abortRatio(now time.Time, base float64) float64 {
	if now.UnixNano() < c.abortUntil.Load() {
		return math.Max(base, math.Float64frombits(c.abortBoost.Load()))
	}
	return base
}

// stopping reports whether the workers were asked to stop.
func (c *crew) stopping() bool {
	select {
	case <-c.stopWorkers:
		return true
	default:
		return false
	}
}
