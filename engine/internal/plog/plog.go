// Package plog is the pure partition log of the reference engine: an
// append-only sequence of records and control markers with offsets, producer
// ids, epochs and sequences, a high watermark, a last stable offset (LSO) and
// aborted transactions that read_committed readers never see.
//
// Like the share-partition state machine it does no I/O and starts no
// goroutines; the engine guards each log with its shard lock.
package plog

import (
	"errors"
	"fmt"
	"math"
	"sync/atomic"

	"github.com/sharebench/sharebench/engine/internal/mutant"
)

// Errors. The engine binds ErrOffsetOutOfRange, ErrOutOfOrderSequence and
// ErrInvalidRecord to its own exported sentinels when it is loaded
// (engine/errors.go), so errors.Is matches the names its callers import.
var (
	ErrOffsetOutOfRange   = errors.New("engine: offset out of range")
	ErrProducerFenced     = errors.New("engine: producer epoch is older than the partition's")
	ErrOutOfOrderSequence = errors.New("engine: out of order sequence number")
	ErrInvalidRecord      = errors.New("engine: invalid record")
)

// NoProducer is the producer id of a plain (non-idempotent) record.
const NoProducer int64 = -1

// segmentRecords is how many offsets one segment holds. Retention drops
// whole segments, so memory follows the retained bytes.
const segmentRecords = 4096

// maxArenaBytes caps one arena allocation of a segment (see appendEntry).
const maxArenaBytes = 1 << 20

// Record is one entry of the log as a reader sees it. Key and Value alias
// the log's memory: readers must not modify them.
type Record struct {
	Offset        int64
	Key           []byte
	Value         []byte
	Timestamp     int64 // producer's timestamp, ns on the engine clock
	ProducerID    int64
	Epoch         int16
	Sequence      int32
	Transactional bool
	Control       bool // a transaction marker, never returned by Fetch
	Commit        bool // for a control record: commit (true) or abort
	Aborted       bool // a transactional record whose transaction aborted
	Headers       []Header
}

// Header is a record header.
type Header struct {
	Key   string
	Value []byte
}

// entry is one offset of a segment. It holds no pointers, so the garbage
// collector never scans a log's entries (a log holds every retained
// record; scanning them was a quarter of a two-core run's CPU): the key,
// the value and the header values lie back to back in one of the
// segment's arenas, from off on.
type entry struct {
	ts    int64
	pid   int64
	off   uint32 // first byte of the key (then the value) in the arena
	klen  int32  // -1: no key
	vlen  int32  // -1: no value
	arena uint32 // index into segment.arenas
	hdrs  int32  // 1 + index into segment.headers; 0: no headers
	seq   int32
	epoch int16
	flags uint8
}

// abortedHidden reports whether a read_committed fetch skips e as a record
// of an aborted transaction.
func abortedHidden(e *entry) bool {
	if mutant.On("read-committed-aborted") {
		return false
	}
	return e.flags&flagAborted != 0
}

const (
	flagTxn uint8 = 1 << iota
	flagControl
	flagCommit
	flagAborted
	flagBatchEnd // the last record of a produced batch (a marker is a batch of its own)
)

type segment struct {
	base    int64
	entries []entry
	// arenas hold the records' bytes; the last is being filled. Entries
	// never straddle two.
	arenas  [][]byte
	headers [][]Header
	bytes   int64
}

// bytesOf returns e's key and value: nil for a length of -1, and an empty
// slice outside any arena for 0 (a segment of markers and empty records
// has no arena).
func (s *segment) bytesOf(e *entry) (key, value []byte) {
	o := int(e.off)
	key, o = s.slice(e, o, e.klen)
	value, _ = s.slice(e, o, e.vlen)
	return key, value
}

func (s *segment) slice(e *entry, o int, n int32) ([]byte, int) {
	switch {
	case n < 0:
		return nil, o
	case n == 0:
		return []byte{}, o
	}
	end := o + int(n)
	return s.arenas[e.arena][o:end:end], end
}

// lenOf is len(b), or -1 for nil (Kafka's null key or value).
func lenOf(b []byte) int32 {
	if b == nil {
		return -1
	}
	return int32(len(b))
}

type producerState struct {
	epoch   int16
	lastSeq int32
	hasSeq  bool
}

// Log is one partition's log. Not safe for concurrent use.
type Log struct {
	start     int64 // log start offset
	next      int64 // log end offset = high watermark (one replica)
	segs      []*segment
	bytes     int64
	retention int64 // bytes; 0 keeps everything
	producers map[int64]*producerState
	ongoing   map[int64]int64 // pid -> first offset of its open transaction
	aborts    int64           // aborted transactions, for introspection

	// Mutation seams (see engine/internal/mutant): markers counts commit
	// markers; brokenLSO marks one log in four for a partition-local
	// mutant.
	markers   int64
	brokenLSO bool
}

// logsMade numbers the logs New makes, for the partition-local mutant.
var logsMade atomic.Int64

// New returns an empty log. retentionBytes bounds the retained record bytes
// (0: unbounded); retention drops whole segments from the front.
func New(retentionBytes int64) *Log {
	l := &Log{retention: retentionBytes, producers: map[int64]*producerState{}, ongoing: map[int64]int64{}}
	if mutant.On("lso-past-open-one-partition") {
		l.brokenLSO = logsMade.Add(1)%4 == 1
	}
	return l
}

// NewAt returns an empty log whose start offset and high watermark are
// start: recovery rebuilds a log whose older records were deleted.
func NewAt(retentionBytes, start int64) *Log {
	l := New(retentionBytes)
	l.start, l.next = start, start
	return l
}

// StartOffset returns the log start offset.
func (l *Log) StartOffset() int64 { return l.start }

// HighWatermark returns the offset after the last record.
func (l *Log) HighWatermark() int64 { return l.next }

// LSO returns the last stable offset: the first offset of the oldest open
// transaction, or the high watermark.
func (l *Log) LSO() int64 {
	lso := l.next
	if mutant.On("lso-ignores-open-txns") || l.brokenLSO && mutant.On("lso-past-open-one-partition") {
		return lso
	}
	for _, first := range l.ongoing {
		if first < lso {
			lso = first
		}
	}
	return lso
}

// Bytes returns the retained record bytes.
func (l *Log) Bytes() int64 { return l.bytes }

// Aborts returns how many transactions aborted on this partition.
func (l *Log) Aborts() int64 { return l.aborts }

// OpenTransactions returns how many transactions are open on this partition.
func (l *Log) OpenTransactions() int { return len(l.ongoing) }

// Batch is one produce request's records for this partition.
type Batch struct {
	Keys    [][]byte // nil, or one per value
	Values  [][]byte
	Headers [][]Header // nil, or one list per value
	// ProducerID is NoProducer for plain records; else the idempotent or
	// transactional producer with its epoch and the sequence of the first
	// record.
	ProducerID    int64
	Epoch         int16
	BaseSequence  int32
	Transactional bool
	Timestamp     int64
}

// Append appends b and returns the offset of its first record. A batch
// whose sequence repeats the last one appended is a duplicate: nothing is
// appended and dup is true.
func (l *Log) Append(b *Batch) (base int64, dup bool, err error) {
	if len(b.Values) == 0 {
		return 0, false, fmt.Errorf("%w: empty batch", ErrInvalidRecord)
	}
	if b.Keys != nil && len(b.Keys) != len(b.Values) {
		return 0, false, fmt.Errorf("%w: %d keys for %d values", ErrInvalidRecord, len(b.Keys), len(b.Values))
	}
	if b.Transactional && b.ProducerID == NoProducer {
		return 0, false, fmt.Errorf("%w: transactional batch without a producer id", ErrInvalidRecord)
	}
	if b.ProducerID != NoProducer {
		ps := l.producers[b.ProducerID]
		if ps == nil {
			ps = &producerState{epoch: b.Epoch}
			l.producers[b.ProducerID] = ps
		}
		switch {
		case b.Epoch < ps.epoch:
			return 0, false, fmt.Errorf("%w: producer %d epoch %d, partition has %d", ErrProducerFenced, b.ProducerID, b.Epoch, ps.epoch)
		case b.Epoch > ps.epoch:
			ps.epoch, ps.hasSeq = b.Epoch, false
		}
		last := b.BaseSequence + int32(len(b.Values)) - 1
		// A batch at sequence 0 after MaxInt32 continues the producer (the
		// sequence wraps); checked first, since otherwise last <= lastSeq
		// took it for a duplicate and dropped it.
		wrap := ps.lastSeq == math.MaxInt32 && b.BaseSequence == 0
		if ps.hasSeq && !wrap {
			switch {
			case last <= ps.lastSeq:
				return 0, true, nil
			case b.BaseSequence != ps.lastSeq+1:
				return 0, false, fmt.Errorf("%w: producer %d expected sequence %d, got %d", ErrOutOfOrderSequence, b.ProducerID, ps.lastSeq+1, b.BaseSequence)
			}
		}
		ps.lastSeq, ps.hasSeq = last, true
		if b.Transactional {
			if _, open := l.ongoing[b.ProducerID]; !open {
				l.ongoing[b.ProducerID] = l.next
			}
		}
	}
	base = l.next
	var flags uint8
	if b.Transactional {
		flags = flagTxn
	}
	for i, v := range b.Values {
		var k []byte
		if b.Keys != nil {
			k = b.Keys[i]
		}
		f := flags
		if i == len(b.Values)-1 {
			f |= flagBatchEnd
		}
		var h []Header
		if b.Headers != nil {
			h = b.Headers[i]
		}
		l.appendEntry(entry{ts: b.Timestamp, pid: b.ProducerID, seq: b.BaseSequence + int32(i), epoch: b.Epoch, flags: f}, k, v, h)
	}
	return base, false, nil
}

// appendEntry appends e with key, value and headers copied into the
// current segment's arena, so the caller may reuse its buffers.
func (l *Log) appendEntry(e entry, key, value []byte, headers []Header) {
	s := l.tail()
	n := len(key) + len(value)
	for _, h := range headers {
		n += len(h.Value)
	}
	last := len(s.arenas) - 1
	e.klen, e.vlen = lenOf(key), lenOf(value)
	if n == 0 && headers == nil {
		// Nothing to copy, and the segment may have no arena yet.
		s.entries = append(s.entries, e)
		l.next++
		return
	}
	if last < 0 || cap(s.arenas[last])-len(s.arenas[last]) < n {
		// Grow the arena geometrically; a full arena stays for the
		// entries in it. Capped at maxArenaBytes: uncapped, a segment of
		// 1 KiB records ended on a 4 MiB arena after 4 MiB of smaller
		// ones, so it allocated, zeroed and kept twice its bytes (zeroing
		// was 40% of BenchmarkCTP's CPU); capped, about 1.25×.
		c := 64 << 10
		if last >= 0 {
			c = max(c, min(2*cap(s.arenas[last]), maxArenaBytes))
		}
		s.arenas = append(s.arenas, make([]byte, 0, max(c, n)))
		last++
	}
	a := s.arenas[last]
	e.arena, e.off = uint32(last), uint32(len(a))
	a = append(a, key...)
	a = append(a, value...)
	if headers != nil {
		hs := make([]Header, len(headers))
		for i, h := range headers {
			a = append(a, h.Value...)
			hs[i] = Header{Key: h.Key, Value: a[len(a)-len(h.Value) : len(a) : len(a)]}
		}
		s.headers = append(s.headers, hs)
		e.hdrs = int32(len(s.headers))
	}
	s.arenas[last] = a
	s.entries = append(s.entries, e)
	s.bytes += int64(n)
	l.bytes += int64(n)
	l.next++
}

func (l *Log) tail() *segment {
	if n := len(l.segs); n > 0 && len(l.segs[n-1].entries) < segmentRecords {
		return l.segs[n-1]
	}
	s := &segment{base: l.next, entries: make([]entry, 0, segmentRecords)}
	l.segs = append(l.segs, s)
	return s
}

// Marker writes a transaction marker for producer pid at epoch. It is a
// no-op returning -1 when pid has no open transaction here (a replayed
// marker). A marker from an epoch older than the partition has seen is
// fenced. An abort marks every record of the transaction aborted.
func (l *Log) Marker(pid int64, epoch int16, commit bool, ts int64) (int64, error) {
	ps := l.producers[pid]
	if ps != nil && epoch < ps.epoch {
		return -1, fmt.Errorf("%w: marker of producer %d epoch %d, partition has %d", ErrProducerFenced, pid, epoch, ps.epoch)
	}
	if ps == nil {
		ps = &producerState{}
		l.producers[pid] = ps
	}
	if epoch > ps.epoch {
		ps.epoch, ps.hasSeq = epoch, false
	}
	first, open := l.ongoing[pid]
	if !open {
		return -1, nil
	}
	if commit {
		l.markers++
		if l.markers%10 == 0 && mutant.On("commit-marker-dropped") {
			return -1, nil // the marker never lands: the transaction stays open here
		}
	}
	delete(l.ongoing, pid)
	if commit && mutant.On("marker-ends-other-producer") {
		for other := range l.ongoing {
			delete(l.ongoing, other) // its records now read as committed
			break
		}
	}
	if !commit {
		l.aborts++
		spared := !mutant.On("abort-keeps-one-visible")
		for o := max(first, l.start); o < l.next; o++ {
			if _, e := l.at(o); e.pid == pid && e.flags&flagTxn != 0 && e.flags&flagControl == 0 {
				if !spared {
					spared = true // left visible to read_committed
					continue
				}
				e.flags |= flagAborted
			}
		}
	}
	flags := flagControl | flagTxn | flagBatchEnd
	if commit {
		flags |= flagCommit
	}
	off := l.next
	l.appendEntry(entry{pid: pid, epoch: epoch, ts: ts, flags: flags, seq: -1}, nil, nil, nil)
	return off, nil
}

// BatchEnd returns the last offset of the produced batch that holds
// offset, looking at most limit records ahead (a fetch in Kafka's
// batch_optimized acquire mode acquires whole batches). Offsets outside
// the log return offset.
func (l *Log) BatchEnd(offset int64, limit int) int64 {
	if offset < l.start || offset >= l.next {
		return offset
	}
	for o := offset; o < l.next && o-offset < int64(limit); o++ {
		if _, e := l.at(o); e.flags&flagBatchEnd != 0 {
			return o
		}
	}
	return offset
}

// FenceProducer raises the partition's epoch for pid without a marker, so
// older epochs are rejected from now on.
func (l *Log) FenceProducer(pid int64, epoch int16) {
	ps := l.producers[pid]
	if ps == nil {
		l.producers[pid] = &producerState{epoch: epoch}
		return
	}
	if epoch > ps.epoch {
		ps.epoch, ps.hasSeq = epoch, false
	}
}

// at returns the entry at offset, which must be retained, with its
// segment.
func (l *Log) at(offset int64) (*segment, *entry) {
	i := (offset - l.segs[0].base) / segmentRecords
	s := l.segs[i]
	return s, &s.entries[offset-s.base]
}

// IsGap reports whether offset holds nothing a share group delivers: a
// control marker, an offset below the log start, or (for read_committed)
// a record of an aborted transaction.
func (l *Log) IsGap(offset int64, readCommitted bool) bool {
	if offset < l.start || offset >= l.next {
		return true
	}
	_, e := l.at(offset)
	return e.flags&flagControl != 0 || (readCommitted && e.flags&flagAborted != 0)
}

// Fetch returns up to max records from offset on, skipping control markers;
// with readCommitted it stops at the LSO and skips aborted records. next is
// the offset to fetch from next time.
func (l *Log) Fetch(offset int64, max int, readCommitted bool, dst []Record) (recs []Record, next int64, err error) {
	return l.FetchBelow(offset, max, readCommitted, l.next, dst)
}

// FetchBelow is Fetch that reads nothing at or beyond limit (a high
// watermark below the log end: the engine shows only durable records).
func (l *Log) FetchBelow(offset int64, max int, readCommitted bool, limit int64, dst []Record) (recs []Record, next int64, err error) {
	limit = min(limit, l.next)
	if offset < l.start || offset > limit {
		return dst, offset, fmt.Errorf("%w: %d not in [%d, %d]", ErrOffsetOutOfRange, offset, l.start, limit)
	}
	end := limit
	if readCommitted {
		end = min(l.LSO(), limit)
	}
	o := offset
	for ; o < end && max > 0; o++ {
		s, e := l.at(o)
		if e.flags&flagControl != 0 || readCommitted && abortedHidden(e) {
			continue
		}
		dst = append(dst, record(o, s, e))
		if v := dst[len(dst)-1].Value; readCommitted && o%97 == 96 && len(v) > 0 && mutant.On("read-returns-foreign-record") {
			// A record of somewhere else comes back in its place.
			v = append([]byte(nil), v...)
			v[0] ^= 0x40
			dst[len(dst)-1].Value = v
		}
		max--
	}
	return dst, o, nil
}

// Read returns the entry at offset, markers included (for introspection).
func (l *Log) Read(offset int64) (Record, error) {
	if offset < l.start || offset >= l.next {
		return Record{}, fmt.Errorf("%w: %d not in [%d, %d)", ErrOffsetOutOfRange, offset, l.start, l.next)
	}
	s, e := l.at(offset)
	return record(offset, s, e), nil
}

func record(o int64, s *segment, e *entry) Record {
	k, v := s.bytesOf(e)
	var h []Header
	if e.hdrs > 0 {
		h = s.headers[e.hdrs-1]
	}
	return Record{
		Offset: o, Key: k, Value: v, Timestamp: e.ts, ProducerID: e.pid, Epoch: e.epoch,
		Sequence: e.seq, Transactional: e.flags&flagTxn != 0, Control: e.flags&flagControl != 0,
		Commit: e.flags&flagCommit != 0, Aborted: e.flags&flagAborted != 0, Headers: h,
	}
}

// EnforceRetention drops whole segments from the front while the retained
// bytes exceed the retention limit, keeping the segment being written and
// any segment holding an open transaction's records. It returns the new log
// start offset.
func (l *Log) EnforceRetention() int64 {
	if l.retention <= 0 {
		return l.start
	}
	lso := l.LSO()
	for len(l.segs) > 1 && l.bytes > l.retention {
		s := l.segs[0]
		end := s.base + int64(len(s.entries))
		if end > lso {
			break
		}
		l.bytes -= s.bytes
		l.segs[0] = nil
		l.segs = l.segs[1:]
		l.start = end
	}
	return l.start
}

// DeleteRecords moves the log start offset to offset (delete-records). It
// cannot pass the high watermark.
func (l *Log) DeleteRecords(offset int64) (int64, error) {
	if offset > l.next {
		return l.start, fmt.Errorf("%w: delete-records to %d beyond high watermark %d", ErrOffsetOutOfRange, offset, l.next)
	}
	if offset <= l.start {
		return l.start, nil
	}
	l.start = offset
	for len(l.segs) > 1 {
		s := l.segs[0]
		end := s.base + int64(len(s.entries))
		if end > offset {
			break
		}
		l.bytes -= s.bytes
		l.segs[0] = nil
		l.segs = l.segs[1:]
	}
	return l.start, nil
}

// ProducerEpoch returns the newest epoch the partition has seen for pid.
func (l *Log) ProducerEpoch(pid int64) (int16, bool) {
	ps := l.producers[pid]
	if ps == nil {
		return 0, false
	}
	return ps.epoch, true
}

// TimeLookup finds, among the records (not markers) in [log start, limit),
// the first whose timestamp is at least ts (max false), or the first with
// the largest timestamp (max true). Timestamps need not grow with offsets
// (producers take them before the append), so it scans the whole range:
// the answer is exact, and the cost is one pass over the partition.
func (l *Log) TimeLookup(ts int64, max bool, limit int64) (offset, at int64, ok bool) {
	limit = min(limit, l.next)
	for o := l.start; o < limit; o++ {
		_, e := l.at(o)
		if e.flags&flagControl != 0 {
			continue
		}
		switch {
		case !max && e.ts >= ts:
			return o, e.ts, true
		case max && (!ok || e.ts > at):
			offset, at, ok = o, e.ts, true
		}
	}
	return offset, at, ok
}
