// This file holds the engine's durability API (docs/design.md §3.6): the flush
// policy, Crash and Restart, the coordinator-only crash, share-partition
// failover, the recovery report, and the gate that keeps operations out
// while the engine is crashed or restarting.

package engine

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sharebench/sharebench/engine/internal/wal"
)

// FlushPolicy says when the journal fsyncs. The zero value is FlushAlways.
type FlushPolicy int64

const (
	// FlushAlways: every call that changes durable state returns only
	// after its records are fsynced; concurrent callers share one fsync
	// (group commit). The default with a data directory.
	FlushAlways FlushPolicy = 0
	// FlushNever: records are written to the OS before the call returns
	// and never fsynced (the OS decides). A process crash loses nothing
	// acknowledged; a machine crash may.
	FlushNever FlushPolicy = -1
)

// FlushInterval: records are written to the OS before the call returns
// and fsynced every d.
func FlushInterval(d time.Duration) FlushPolicy {
	if d <= 0 {
		return FlushAlways
	}
	return FlushPolicy(d)
}

func (p FlushPolicy) String() string {
	switch {
	case p == FlushAlways:
		return "always"
	case p < 0:
		return "never"
	}
	return "interval:" + time.Duration(p).String()
}

// ParseFlushPolicy parses always, never or interval:DURATION (as the CLI's
// --flush flag takes it).
func ParseFlushPolicy(s string) (FlushPolicy, error) {
	switch {
	case s == "always":
		return FlushAlways, nil
	case s == "never":
		return FlushNever, nil
	case strings.HasPrefix(s, "interval:"):
		d, err := time.ParseDuration(strings.TrimPrefix(s, "interval:"))
		if err != nil || d <= 0 {
			return 0, fmt.Errorf("%w: flush policy %q: the interval must be a positive duration such as interval:10ms", ErrInvalidConfig, s)
		}
		return FlushInterval(d), nil
	}
	return 0, fmt.Errorf("%w: flush policy %q (valid: always, never, interval:DURATION)", ErrInvalidConfig, s)
}

func (p FlushPolicy) walOptions(segmentBytes int64) wal.Options {
	o := wal.Options{Mode: wal.SyncAlways, SegmentBytes: segmentBytes}
	switch {
	case p < 0:
		o.Mode = wal.SyncNever
	case p > 0:
		o.Mode, o.Interval = wal.SyncInterval, time.Duration(p)
	}
	return o
}

// durable is the engine's durability state; nil without a data directory.
type durable struct {
	dir string
	// restartMu serialises Crash, Restart, CrashCoordinator and
	// FailoverSharePartition. It is taken before any engine lock.
	restartMu sync.Mutex
	// The gate: operations count themselves in inflight and are refused
	// while crashed; Restart waits for inflight to drain.
	inflight    atomic.Int64
	crashed     atomic.Bool
	incarnation atomic.Int64 // bumped by every Restart
	j           atomic.Pointer[journal]
	nextTopicID atomic.Uint64
	last        RecoveryReport // guarded by restartMu
	// upMu guards up: a channel closed while the engine runs, replaced by
	// an open one when it crashes and closed again when a recovery
	// completes, so a caller can wait for the engine without polling
	// Crashed. upMu is a leaf lock (lockorder.go).
	upMu sync.Mutex
	up   chan struct{}
	// statsMu guards base: the counters of the journals before the
	// current one.
	statsMu   sync.Mutex
	base      JournalStats
	shareBase Counters // share partitions' counters before they were rebuilt
}

// keepCounters adds the counters of share partitions being replaced
// (Restart, failover) to the engine's totals, so Stats stays monotonic.
func (d *durable) keepCounters(c Counters) {
	d.statsMu.Lock()
	defer d.statsMu.Unlock()
	addCounters(&d.shareBase, c)
}

func addCounters(dst *Counters, c Counters) {
	dst.Acquired += c.Acquired
	dst.Redelivered += c.Redelivered
	dst.Accepted += c.Accepted
	dst.Released += c.Released
	dst.Rejected += c.Rejected
	dst.Archived += c.Archived
	dst.LockExpiries += c.LockExpiries
	dst.Staged += c.Staged
	dst.TxCommitted += c.TxCommitted
	dst.TxAborted += c.TxAborted
	dst.SessionRel += c.SessionRel
}

// enter admits an operation; it fails with ErrCrashed while the engine is
// crashed. Every enter is paired with exit. Nested calls are fine.
func (e *Engine) enter() error {
	d := e.dur
	if d == nil {
		return nil
	}
	d.inflight.Add(1)
	if d.crashed.Load() {
		d.inflight.Add(-1)
		return ErrCrashed
	}
	return nil
}

func (e *Engine) exit() {
	if e.dur != nil {
		e.dur.inflight.Add(-1)
	}
}

// crashNow puts the engine in the crashed state: nothing more is written
// and every call fails with ErrCrashed until Restart. With flush, what was
// appended so far is made durable first (an injected crash strikes after
// the step it names completed). Safe to call with any lock held.
func (e *Engine) crashNow(flush bool) {
	d := e.dur
	if d == nil {
		return
	}
	d.upMu.Lock()
	crashed := d.crashed.CompareAndSwap(false, true)
	if crashed {
		d.up = make(chan struct{})
	}
	d.upMu.Unlock()
	if !crashed {
		return
	}
	j := d.j.Load()
	if j == nil {
		return
	}
	if flush {
		_ = j.g.Flush()
	}
	j.g.Crash()
	close(j.stop)
}

// journalFailed maps a journal error to the engine's: a crashed or closed
// journal, or an I/O error, after which the engine crashes itself (as a
// broker halts on a log I/O error) rather than acknowledge what it could
// not make durable.
func (e *Engine) journalFailed(err error) error {
	switch {
	case errors.Is(err, wal.ErrCrashed):
		return ErrCrashed
	case errors.Is(err, wal.ErrClosed):
		return ErrClosed
	}
	e.crashNow(false)
	return fmt.Errorf("%w: journal: %w", ErrCrashed, err)
}

// Crash simulates a process crash: every in-memory state change that is
// not yet durable is lost (appends not yet written are dropped, nothing is
// flushed) and every call fails with ErrCrashed until Restart. Calls in
// flight finish against the old state and fail. It needs a data directory.
func (e *Engine) Crash() error {
	if e.dur == nil {
		return ErrNoDataDir
	}
	e.dur.restartMu.Lock()
	defer e.dur.restartMu.Unlock()
	e.crashNow(false)
	return nil
}

// Crashed reports whether the engine is crashed (by Crash, an injected
// crash at a hook, or a journal I/O error) and waits for Restart.
func (e *Engine) Crashed() bool { return e.dur != nil && e.dur.crashed.Load() }

// Restart recovers the engine from its data directory, crashing it first
// if it is running, and reports what recovery did. Partition logs,
// share-state and transactions are rebuilt; acquisitions, locks and
// sessions are gone (ACQUIRED records come back AVAILABLE at their durable
// delivery count; TX_PENDING records stay pending); a transaction that
// reached PREPARE_COMMIT completes as a commit, PREPARE_ABORT as an abort;
// ONGOING transactions wait for their producer or their timeout. Old
// ShareMember and ClassicMember handles get ErrUnknownMember; Producer
// handles keep working while their epoch is current. It waits for calls
// in flight to finish; it must not be called from a hook.
func (e *Engine) Restart() (RecoveryReport, error) {
	d := e.dur
	if d == nil {
		return RecoveryReport{}, ErrNoDataDir
	}
	d.restartMu.Lock()
	defer d.restartMu.Unlock()
	e.crashNow(false)
	for d.inflight.Load() != 0 {
		time.Sleep(50 * time.Microsecond)
	}
	if j := d.j.Load(); j != nil {
		<-j.done
	}
	rep, err := e.recover()
	if err != nil {
		return rep, err
	}
	d.incarnation.Add(1)
	d.last = rep
	d.running()
	return rep, nil
}

// running opens the gate after a recovery and wakes whoever waits in
// Running.
func (d *durable) running() {
	d.upMu.Lock()
	defer d.upMu.Unlock()
	d.crashed.Store(false)
	if d.up == nil {
		d.up = make(chan struct{})
	}
	close(d.up)
}

// closedChan is closed from the start: Running's answer for an engine
// that cannot crash (in memory).
var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// Running returns a channel that is closed once the engine runs: at once
// when it is running (or has no data directory), or when the Restart that
// recovers it from a crash completes. A crash after that takes effect on
// the next call to Running, so a waiter loops while Crashed reports true.
func (e *Engine) Running() <-chan struct{} {
	d := e.dur
	if d == nil {
		return closedChan
	}
	d.upMu.Lock()
	defer d.upMu.Unlock()
	if d.up == nil {
		return closedChan
	}
	return d.up
}

// Recovery returns the report of the last recovery (New with a data
// directory, or Restart).
func (e *Engine) Recovery() RecoveryReport {
	if e.dur == nil {
		return RecoveryReport{}
	}
	e.dur.restartMu.Lock()
	defer e.dur.restartMu.Unlock()
	return e.dur.last
}

// DataDir returns the data directory ("" when the engine runs in memory).
func (e *Engine) DataDir() string {
	if e.dur == nil {
		return ""
	}
	return e.dur.dir
}

// Truncation is a torn tail recovery dropped.
type Truncation struct {
	File   string
	Offset int64 // where the file now ends
	Bytes  int64 // bytes dropped
	Cause  string
}

// RecoveryReport says what a recovery read and rebuilt.
type RecoveryReport struct {
	Dir       string
	Frames    int64 // records replayed
	Bytes     int64 // record bytes replayed
	Segments  int   // segment files read
	Truncated []Truncation
	// What was rebuilt.
	Topics          int
	Partitions      int
	Records         int64 // partition records and markers replayed
	SharePartitions int
	Transactions    int
	// Completed counts transactions found in PREPARE_COMMIT or
	// PREPARE_ABORT and completed; Ongoing those left ONGOING.
	Completed, Ongoing int
	Duration           time.Duration
}

// TruncatedBytes sums the bytes dropped from torn tails.
func (r RecoveryReport) TruncatedBytes() int64 {
	var n int64
	for _, t := range r.Truncated {
		n += t.Bytes
	}
	return n
}

func (r RecoveryReport) String() string {
	s := fmt.Sprintf("recovered %s: %d records (%d bytes) from %d segments in %v: %d topics, %d partitions, %d share partitions, %d transactions (%d completed, %d ongoing)",
		r.Dir, r.Frames, r.Bytes, r.Segments, r.Duration.Round(time.Microsecond), r.Topics, r.Partitions, r.SharePartitions, r.Transactions, r.Completed, r.Ongoing)
	for _, t := range r.Truncated {
		s += fmt.Sprintf("; dropped %d bytes of a torn tail at %s offset %d", t.Bytes, t.File, t.Offset)
	}
	return s
}

// JournalStats are the journal's cumulative counters (zero without a data
// directory). They survive Restart.
type JournalStats struct {
	Appends         int64 // records appended
	AppendedBytes   int64 // framed record bytes appended
	Writes          int64 // write calls
	BytesWritten    int64
	Fsyncs          int64
	Flushes         int64 // group-commit flushes
	SegmentsCreated int64
	SegmentsDeleted int64
}

func (e *Engine) journalStats() JournalStats {
	if e.dur == nil {
		return JournalStats{}
	}
	e.dur.statsMu.Lock()
	out := e.dur.base
	e.dur.statsMu.Unlock()
	j := e.dur.j.Load()
	if j == nil {
		return out
	}
	st := j.g.Stats()
	out.Appends += st.Appends.Load()
	out.AppendedBytes += st.AppendedBytes.Load()
	out.Writes += st.Writes.Load()
	out.BytesWritten += st.BytesWritten.Load()
	out.Fsyncs += st.Fsyncs.Load()
	out.Flushes += st.Flushes.Load()
	out.SegmentsCreated += st.SegmentsCreated.Load()
	out.SegmentsDeleted += st.SegmentsDeleted.Load()
	return out
}

// enterWrite is enter for a call that changes the engine: after Close it
// fails with ErrClosed, in memory as with a data directory, while reads
// (Fetch, Offsets, introspection) keep working.
func (e *Engine) enterWrite() error {
	if e.closed.Load() {
		return ErrClosed
	}
	return e.enter()
}
