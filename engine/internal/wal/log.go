// This file holds Log: one stream of records in a directory of segment
// files — opening it, replaying it (with torn-tail truncation), scanning it
// read-only, rolling to a new segment and deleting old ones.

package wal

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
)

// Ticket orders appends within a Group; Wait(t) waits for every append up
// to t.
type Ticket uint64

// Pos says where an append went: its segment and its ticket.
type Pos struct {
	Seg    uint64
	Ticket Ticket
}

type segInfo struct {
	index, base uint64
	path        string
}

type rollMark struct {
	at          int // offset in the pending buffer where the new segment starts
	index, base uint64
}

// Log is one stream of records. Append, Wait and the other writers go
// through its Group.
type Log struct {
	g    *Group
	dir  string
	prio int

	// Pending state, guarded by g.mu.
	buf      []byte
	rolls    []rollMark
	spare    []byte
	projSeg  uint64 // segment the last append went to (0: none yet)
	projSize int64  // its size once everything pending is written
	rollNext bool   // the next append starts a new segment
	dirty    bool   // pending bytes, listed in g.dirty
	unsynced bool   // written but not fsynced
	replayed bool

	oldest    atomic.Uint64 // oldest live segment
	firstBase atomic.Int64  // base of the oldest segment, -1 if none

	// File state, guarded by fmu: the flush leader writes and rolls,
	// DeleteBefore removes. Never held with g.mu.
	fmu  sync.Mutex
	segs []segInfo // live segments, oldest first; the last is active
	f    *os.File  // active segment, open for append
}

// Dir returns the log's directory.
func (l *Log) Dir() string { return l.dir }

// Truncation reports bytes dropped from a torn tail.
type Truncation struct {
	File   string
	Offset int64 // where the file now ends
	Bytes  int64 // bytes dropped
	Cause  string
}

// ReplayStats reports one Replay.
type ReplayStats struct {
	Frames    int64
	Bytes     int64 // frame bytes replayed
	Segments  int
	Truncated []Truncation
}

// CorruptError is corruption that is not a torn tail: a bad frame followed
// by valid ones, or any bad frame in a sealed segment. It wraps ErrCorrupt
// (or ErrNotSegment / ErrVersion for a bad header).
type CorruptError struct {
	File   string
	Offset int64
	Err    error
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("engine: %s at offset %d: %v", e.File, e.Offset, e.Err)
}

func (e *CorruptError) Unwrap() error { return e.Err }

// Open opens the log in dir (created if missing) with the given flush
// priority (lower is written first). Call Replay before the first Append.
func (g *Group) Open(dir string, prio int) (*Log, error) {
	if prio < 0 || prio >= maxPrio {
		return nil, fmt.Errorf("engine: priority %d out of range [0, %d)", prio, maxPrio)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	idx, err := listSegments(dir)
	if err != nil {
		return nil, err
	}
	l := &Log{g: g, dir: dir, prio: prio}
	l.firstBase.Store(-1)
	for _, i := range idx {
		l.segs = append(l.segs, segInfo{index: i, path: filepath.Join(dir, segmentName(i))})
	}
	g.mu.Lock()
	if g.err != nil {
		g.mu.Unlock()
		return nil, g.err
	}
	g.logs = append(g.logs, l)
	g.mu.Unlock()
	return l, nil
}

// FirstBase returns the base of the oldest segment (as given to Append when
// it was created), or def when the log has no segment. Valid during Replay
// (from the first frame on) and after.
func (l *Log) FirstBase(def uint64) uint64 {
	if b := l.firstBase.Load(); b >= 0 {
		return uint64(b)
	}
	return def
}

// Replay reads every frame in order and calls fn with its segment and
// payload (which aliases a buffer valid only during the call). A torn tail
// of the last segment is truncated and reported; other damage is a
// *CorruptError. An error from fn stops the replay and is returned wrapped
// with the file and offset. After Replay the log accepts appends.
func (l *Log) Replay(fn func(seg uint64, payload []byte) error) (ReplayStats, error) {
	var st ReplayStats
	l.fmu.Lock()
	defer l.fmu.Unlock()
	if l.replayed {
		return st, errors.New("engine: log replayed twice")
	}
	var activeSize int64
	for i := 0; i < len(l.segs); i++ {
		s := &l.segs[i]
		last := i == len(l.segs)-1
		data, err := os.ReadFile(s.path)
		if err != nil {
			return st, err
		}
		st.Segments++
		if len(data) < HeaderBytes {
			if !last {
				return st, &CorruptError{File: s.path, Offset: int64(len(data)), Err: fmt.Errorf("%w: %d-byte file is shorter than a segment header", ErrCorrupt, len(data))}
			}
			// A segment whose header never fully reached the disk: the
			// crash came as it was created. Nothing in it was written.
			if err := os.Remove(s.path); err != nil {
				return st, err
			}
			st.Truncated = append(st.Truncated, Truncation{File: s.path, Offset: 0, Bytes: int64(len(data)), Cause: "torn segment header"})
			l.segs = l.segs[:i]
			if i == 0 {
				l.firstBase.Store(-1)
			}
			break
		}
		h, err := decodeHeader(data)
		if err != nil {
			return st, &CorruptError{File: s.path, Offset: 0, Err: err}
		}
		if h.index != s.index {
			return st, &CorruptError{File: s.path, Offset: 0, Err: fmt.Errorf("%w: header names segment %d", ErrCorrupt, h.index)}
		}
		s.base = h.base
		if i == 0 {
			l.firstBase.Store(int64(h.base))
		}
		pos := HeaderBytes
		for pos < len(data) {
			payload, n, err := DecodeFrame(data[pos:])
			if err != nil {
				if !last || validAfter(data, pos) {
					return st, &CorruptError{File: s.path, Offset: int64(pos), Err: err}
				}
				if err := os.Truncate(s.path, int64(pos)); err != nil {
					return st, err
				}
				st.Truncated = append(st.Truncated, Truncation{File: s.path, Offset: int64(pos), Bytes: int64(len(data) - pos), Cause: err.Error()})
				break
			}
			if err := fn(s.index, payload); err != nil {
				return st, fmt.Errorf("%s at offset %d: %w", s.path, pos, err)
			}
			st.Frames++
			st.Bytes += int64(n)
			pos += n
		}
		activeSize = int64(pos)
	}
	l.g.mu.Lock()
	defer l.g.mu.Unlock()
	l.replayed = true
	if len(l.segs) == 0 {
		l.rollNext = true
		l.oldest.Store(1)
		return st, nil
	}
	a := l.segs[len(l.segs)-1]
	f, err := os.OpenFile(a.path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return st, err
	}
	l.f = f
	l.projSeg, l.projSize = a.index, activeSize
	l.oldest.Store(l.segs[0].index)
	return st, nil
}

// Scan reads the frames written so far, read-only, while the log may be
// appended to: it stops quietly at a torn frame at the end of the active
// segment. Call Group.Flush first to include everything appended. It is
// for reloading one component (a failover) from its log.
func (l *Log) Scan(fn func(seg uint64, payload []byte) error) error {
	l.fmu.Lock()
	segs := append([]segInfo(nil), l.segs...)
	l.fmu.Unlock()
	for i, s := range segs {
		f, err := os.Open(s.path)
		if err != nil {
			return err
		}
		data, err := io.ReadAll(f)
		f.Close()
		if err != nil {
			return err
		}
		if len(data) < HeaderBytes {
			return &CorruptError{File: s.path, Err: fmt.Errorf("%w: short segment", ErrCorrupt)}
		}
		if _, err := decodeHeader(data); err != nil {
			return &CorruptError{File: s.path, Err: err}
		}
		for pos := HeaderBytes; pos < len(data); {
			payload, n, err := DecodeFrame(data[pos:])
			if err != nil {
				if i == len(segs)-1 && errors.Is(err, ErrTorn) {
					break
				}
				return &CorruptError{File: s.path, Offset: int64(pos), Err: err}
			}
			if err := fn(s.index, payload); err != nil {
				return fmt.Errorf("%s at offset %d: %w", s.path, pos, err)
			}
			pos += n
		}
	}
	return nil
}

// Segments returns the oldest live segment and the one the next append
// goes to (after RollNext, one past the active one).
func (l *Log) Segments() (oldest, next uint64) {
	l.g.mu.Lock()
	next = l.projSeg
	if l.rollNext || next == 0 {
		next++
	}
	l.g.mu.Unlock()
	return l.oldest.Load(), next
}

// RollNext makes the next append start a new segment and returns that
// segment's index: every append after RollNext returns lands in it or a
// later one. Compaction calls it, rewrites what the older segments hold,
// and then deletes them with DeleteBefore.
func (l *Log) RollNext() uint64 {
	l.g.mu.Lock()
	defer l.g.mu.Unlock()
	if !l.rollNext {
		l.rollNext = true
	}
	return l.projSeg + 1
}

// DeleteBefore removes the written segments older than index, never the
// active one.
func (l *Log) DeleteBefore(index uint64) error {
	l.fmu.Lock()
	defer l.fmu.Unlock()
	n := 0
	for n < len(l.segs)-1 && l.segs[n].index < index {
		n++
	}
	return l.dropLocked(n)
}

// DeleteBelowBase removes the written segments that hold nothing at or
// above base: those whose successor starts at or below it (segment bases
// must grow with the records, as partition offsets do).
func (l *Log) DeleteBelowBase(base uint64) error {
	l.fmu.Lock()
	defer l.fmu.Unlock()
	n := 0
	for n < len(l.segs)-1 && l.segs[n+1].base <= base {
		n++
	}
	return l.dropLocked(n)
}

func (l *Log) dropLocked(n int) error {
	if n == 0 {
		return nil
	}
	for _, s := range l.segs[:n] {
		if err := os.Remove(s.path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	l.segs = append(l.segs[:0], l.segs[n:]...)
	l.oldest.Store(l.segs[0].index)
	l.firstBase.Store(int64(l.segs[0].base))
	l.g.stats.SegmentsDeleted.Add(int64(n))
	return syncDir(l.dir)
}

// writeOut writes pending bytes, creating segments at the roll marks. It
// is called by the flush leader only, without g.mu.
func (l *Log) writeOut(buf []byte, rolls []rollMark, st *Stats) error {
	l.fmu.Lock()
	defer l.fmu.Unlock()
	prev := 0
	for _, r := range rolls {
		if err := l.writeLocked(buf[prev:r.at], st); err != nil {
			return err
		}
		if err := l.rollLocked(r, st); err != nil {
			return err
		}
		prev = r.at
	}
	return l.writeLocked(buf[prev:], st)
}

func (l *Log) writeLocked(b []byte, st *Stats) error {
	if len(b) == 0 {
		return nil
	}
	if l.f == nil {
		return fmt.Errorf("engine: %s: write with no segment open", l.dir)
	}
	if _, err := l.f.Write(b); err != nil {
		return fmt.Errorf("engine: %w", err)
	}
	st.Writes.Add(1)
	st.BytesWritten.Add(int64(len(b)))
	return nil
}

// rollLocked seals the active segment (fsynced, so a sealed segment is
// always complete) and creates the next.
func (l *Log) rollLocked(r rollMark, st *Stats) error {
	if l.f != nil {
		if err := l.f.Sync(); err != nil {
			return fmt.Errorf("engine: %w", err)
		}
		st.Fsyncs.Add(1)
		if err := l.f.Close(); err != nil {
			return fmt.Errorf("engine: %w", err)
		}
		l.f = nil
	}
	path := filepath.Join(l.dir, segmentName(r.index))
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("engine: %w", err)
	}
	if _, err := f.Write(header{version: FormatVersion, index: r.index, base: r.base}.encode()); err != nil {
		f.Close()
		return fmt.Errorf("engine: %w", err)
	}
	st.BytesWritten.Add(HeaderBytes)
	if err := syncDir(l.dir); err != nil {
		f.Close()
		return fmt.Errorf("engine: %w", err)
	}
	l.f = f
	l.segs = append(l.segs, segInfo{index: r.index, base: r.base, path: path})
	if len(l.segs) == 1 {
		l.oldest.Store(r.index)
		l.firstBase.Store(int64(r.base))
	}
	st.SegmentsCreated.Add(1)
	return nil
}

func (l *Log) syncActive(st *Stats) error {
	l.fmu.Lock()
	defer l.fmu.Unlock()
	if l.f == nil {
		return nil
	}
	if err := l.f.Sync(); err != nil {
		return fmt.Errorf("engine: %w", err)
	}
	st.Fsyncs.Add(1)
	return nil
}

func (l *Log) closeFile() error {
	l.fmu.Lock()
	defer l.fmu.Unlock()
	if l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}
