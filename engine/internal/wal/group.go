// This file holds Group: the writer shared by a set of logs — Append
// without I/O, Wait under the flush policy with group commit, Flush, the
// interval fsync goroutine, Crash and Close.

package wal

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// Mode is a flush policy.
type Mode int8

// Flush policies.
const (
	// SyncAlways: Wait returns once the record is fsynced (group commit).
	SyncAlways Mode = iota
	// SyncInterval: Wait returns once the record is written; a goroutine
	// fsyncs every Options.Interval.
	SyncInterval
	// SyncNever: Wait returns once the record is written; nothing is
	// fsynced except sealed segments.
	SyncNever
)

// Options configure a Group.
type Options struct {
	Mode Mode
	// Interval is the fsync period of SyncInterval.
	Interval time.Duration
	// SegmentBytes is the size at which a log starts a new segment.
	SegmentBytes int64
}

// maxPrio bounds flush priorities.
const maxPrio = 8

// Group errors.
var (
	// ErrCrashed: the group was crashed (Crash); nothing more is written.
	ErrCrashed = errors.New("engine: crashed")
	// ErrClosed: the group was closed.
	ErrClosed = errors.New("engine: closed")
)

// Stats are cumulative counters of a Group.
type Stats struct {
	Appends         atomic.Int64 // frames appended
	AppendedBytes   atomic.Int64 // frame bytes appended
	Writes          atomic.Int64 // write calls
	BytesWritten    atomic.Int64 // bytes written (frames and segment headers)
	Fsyncs          atomic.Int64 // fsync calls on segment files
	Flushes         atomic.Int64 // leader flushes
	SegmentsCreated atomic.Int64
	SegmentsDeleted atomic.Int64
}

// Group is the writer of a set of logs. All methods are safe for
// concurrent use. Lock order: g.mu is a leaf for callers (Append takes it
// under the engine's locks); the flush leader releases it for I/O and then
// takes each log's file lock alone.
type Group struct {
	opts  Options
	stats Stats

	mu       sync.Mutex
	cond     sync.Cond
	logs     []*Log
	dirty    [maxPrio][]*Log
	appended Ticket
	written  Ticket
	synced   Ticket
	flushing bool
	err      error // sticky: crashed, closed, or an I/O error
	// durable mirrors written (synced with SyncAlways): the ticket up to
	// which appends are as durable as the policy promises, readable
	// without the lock.
	durable atomic.Uint64

	stop chan struct{}
	done chan struct{}
}

// NewGroup returns a writer. With SyncInterval it starts the fsync
// goroutine, which exits on Close or Crash.
func NewGroup(opts Options) (*Group, error) {
	if opts.SegmentBytes < HeaderBytes+FrameHeaderBytes+1 {
		return nil, fmt.Errorf("engine: segment size %d bytes is too small", opts.SegmentBytes)
	}
	if opts.Mode == SyncInterval && opts.Interval <= 0 {
		return nil, fmt.Errorf("engine: fsync interval %v must be positive", opts.Interval)
	}
	g := &Group{opts: opts}
	g.cond.L = &g.mu
	g.stop, g.done = make(chan struct{}), make(chan struct{})
	if opts.Mode == SyncInterval {
		go g.syncLoop(g.stop)
	} else {
		close(g.done)
	}
	return g, nil
}

// Durable returns the ticket up to which every append is as durable as the
// policy promises (see Wait).
func (g *Group) Durable() Ticket { return Ticket(g.durable.Load()) }

// Stats returns the group's counters.
func (g *Group) Stats() *Stats { return &g.stats }

// Append frames payload onto l's pending buffer and returns where it went.
// It does no I/O. base names the segment if this append starts a new one
// (partition logs pass the record's offset, so old segments can be
// deleted by offset). The checksum is computed before the lock is taken.
func (g *Group) Append(l *Log, payload []byte, base uint64) (Pos, error) {
	if len(payload) == 0 || len(payload) > MaxFrameBytes {
		return Pos{}, fmt.Errorf("engine: payload of %d bytes", len(payload))
	}
	var h [FrameHeaderBytes]byte
	binary.LittleEndian.PutUint32(h[0:4], uint32(len(payload)))
	binary.LittleEndian.PutUint32(h[4:8], crc32.Update(crc32.Checksum(h[0:4], castagnoli), castagnoli, payload))
	n := int64(FrameHeaderBytes + len(payload))

	g.mu.Lock()
	defer g.mu.Unlock()
	if g.err != nil {
		return Pos{}, g.err
	}
	if !l.replayed {
		return Pos{}, fmt.Errorf("engine: %s: append before replay", l.dir)
	}
	if l.rollNext || l.projSeg == 0 || (l.projSize+n > g.opts.SegmentBytes && l.projSize > HeaderBytes) {
		l.projSeg++
		l.rolls = append(l.rolls, rollMark{at: len(l.buf), index: l.projSeg, base: base})
		l.projSize = HeaderBytes
		l.rollNext = false
	}
	l.buf = append(l.buf, h[:]...)
	l.buf = append(l.buf, payload...)
	l.projSize += n
	g.appended++
	if !l.dirty {
		l.dirty = true
		g.dirty[l.prio] = append(g.dirty[l.prio], l)
	}
	g.stats.Appends.Add(1)
	g.stats.AppendedBytes.Add(n)
	return Pos{Seg: l.projSeg, Ticket: g.appended}, nil
}

// Last returns the ticket of the latest append.
func (g *Group) Last() Ticket {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.appended
}

// Wait returns once every append up to t is as durable as the policy
// promises (see the package comment), or the group's error. ErrCrashed
// means the record at t is not written and never will be: no flush took it
// before the crash. (After an I/O error a record may be partly written.)
func (g *Group) Wait(t Ticket) error { return g.wait(t, g.opts.Mode == SyncAlways) }

// Flush writes and fsyncs everything appended so far, whatever the policy.
func (g *Group) Flush() error {
	g.mu.Lock()
	t := g.appended
	g.mu.Unlock()
	return g.wait(t, true)
}

func (g *Group) wait(t Ticket, sync bool) error {
	if t == 0 {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	for {
		done := g.written
		if sync {
			done = g.synced
		}
		if done >= t {
			return nil
		}
		if g.flushing {
			// A flush in progress may hold t, and it finishes its writes
			// even when the group crashes meanwhile (Crash waits for it):
			// t's fate is known only once it ends. An error here would
			// tell the caller its record is lost while it is written.
			g.cond.Wait()
			continue
		}
		if g.err != nil {
			return g.err
		}
		g.flushLocked(sync)
	}
}

type flushItem struct {
	l     *Log
	buf   []byte
	rolls []rollMark
}

// flushLocked makes the caller the leader: it takes every pending buffer,
// writes the logs in priority order without the lock, fsyncs (when sync)
// every file written since its last fsync, and publishes the new written
// and synced tickets. g.mu is held on entry and on return.
func (g *Group) flushLocked(sync bool) {
	g.flushing = true
	target := g.appended
	var work []flushItem
	for p := range g.dirty {
		for _, l := range g.dirty[p] {
			work = append(work, flushItem{l: l, buf: l.buf, rolls: l.rolls})
			l.buf, l.rolls, l.spare = l.spare[:0], nil, nil
			l.dirty = false
		}
		g.dirty[p] = g.dirty[p][:0]
	}
	var toSync []*Log
	if sync {
		for _, l := range g.logs {
			if l.unsynced {
				toSync = append(toSync, l)
			}
		}
		for _, w := range work {
			if !w.l.unsynced {
				toSync = append(toSync, w.l)
			}
		}
	}
	g.mu.Unlock()

	var err error
	for _, w := range work {
		if err = w.l.writeOut(w.buf, w.rolls, &g.stats); err != nil {
			break
		}
	}
	if err == nil {
		err = syncAll(toSync, &g.stats)
	}
	g.stats.Flushes.Add(1)

	g.mu.Lock()
	for _, w := range work {
		if w.l.spare == nil && cap(w.buf) <= 4<<20 {
			w.l.spare = w.buf[:0] // reuse unless a burst made it huge
		}
		if !sync {
			w.l.unsynced = true
		}
	}
	g.flushing = false
	switch {
	case err != nil:
		if g.err == nil {
			g.err = err
		}
	default:
		g.written = target
		if sync {
			for _, l := range toSync {
				l.unsynced = false
			}
			g.synced = target
		}
		if g.opts.Mode == SyncAlways {
			g.durable.Store(uint64(g.synced))
		} else {
			g.durable.Store(uint64(g.written))
		}
	}
	g.cond.Broadcast()
}

// syncAll fsyncs the logs' active segments, concurrently when there are
// several: a flush then costs about one fsync's latency however many logs
// it touched (the file system can also merge their journal commits).
func syncAll(logs []*Log, st *Stats) error {
	switch len(logs) {
	case 0:
		return nil
	case 1:
		return logs[0].syncActive(st)
	}
	errs := make([]error, len(logs))
	var wg sync.WaitGroup
	for i, l := range logs[1:] {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i+1] = l.syncActive(st)
		}()
	}
	errs[0] = logs[0].syncActive(st)
	wg.Wait()
	return errors.Join(errs...)
}

// syncLoop fsyncs every interval until stop closes (Close or Crash).
func (g *Group) syncLoop(stop <-chan struct{}) {
	defer close(g.done)
	t := time.NewTicker(g.opts.Interval)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		g.mu.Lock()
		if g.err == nil && !g.flushing && g.synced < g.appended {
			g.flushLocked(true)
		}
		g.mu.Unlock()
	}
}

// Crash stops the group as a process crash would: appends not yet written
// are dropped, nothing more is written or fsynced, files are closed. It
// waits for a flush in progress (its writes happened before the crash).
func (g *Group) Crash() { g.shut(ErrCrashed) }

// Close flushes everything (fsynced) and closes the files.
func (g *Group) Close() error {
	err := g.Flush()
	if errors.Is(err, ErrClosed) || errors.Is(err, ErrCrashed) {
		err = nil
	}
	if serr := g.shut(ErrClosed); err == nil {
		err = serr
	}
	return err
}

func (g *Group) shut(cause error) error {
	g.mu.Lock()
	if g.err == nil {
		g.err = cause
	}
	for g.flushing {
		g.cond.Wait()
	}
	for p := range g.dirty {
		for _, l := range g.dirty[p] {
			l.buf, l.rolls, l.dirty = nil, nil, false
		}
		g.dirty[p] = nil
	}
	logs := g.logs
	stop := g.stop
	g.stop = nil
	g.cond.Broadcast()
	g.mu.Unlock()
	if stop != nil {
		close(stop)
		<-g.done
	}
	var err error
	for _, l := range logs {
		if cerr := l.closeFile(); err == nil {
			err = cerr
		}
	}
	return err
}

// Err returns the group's sticky error (nil while it runs).
func (g *Group) Err() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.err
}

// Remove takes l out of the group and deletes its directory: the log of a
// deleted partition. Whatever l still had pending is dropped; the caller
// appends nothing to l afterwards. It waits for a flush in progress, which
// may be writing l.
func (g *Group) Remove(l *Log) error {
	g.mu.Lock()
	for g.flushing {
		g.cond.Wait()
	}
	for i, x := range g.logs {
		if x == l {
			g.logs = append(g.logs[:i], g.logs[i+1:]...)
			break
		}
	}
	if l.dirty {
		d := g.dirty[l.prio]
		for i, x := range d {
			if x == l {
				g.dirty[l.prio] = append(d[:i], d[i+1:]...)
				break
			}
		}
		l.buf, l.rolls, l.dirty = nil, nil, false
	}
	l.unsynced = false
	g.mu.Unlock()
	if err := l.closeFile(); err != nil {
		return fmt.Errorf("engine: closing %s: %w", l.dir, err)
	}
	if err := os.RemoveAll(l.dir); err != nil {
		return fmt.Errorf("engine: %w", err)
	}
	return nil
}
