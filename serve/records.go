// This file holds the record-batch codec: decoding a produced batch
// (magic 2, any of Kafka's compression codecs) into engine records, and
// encoding engine records as batches for Fetch and ShareFetch: records of
// a batch produced compressed go out as that batch, compressed with its
// codec (batches.go), every other record in uncompressed batches.

package serve

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"slices"

	"github.com/klauspost/compress/snappy"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
	"github.com/twmb/franz-go/pkg/kbin"

	"github.com/sharebench/sharebench/engine"
)

// batchHeaderBytes is the size of a v2 record batch header.
const batchHeaderBytes = 61

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// errCorrupt is wrapped by every batch decoding error.
var errCorrupt = errors.New("serve: corrupt record batch")

// batch is one decoded produced batch.
type batch struct {
	producerID    int64
	epoch         int16
	baseSequence  int32
	transactional bool
	control       bool
	codec         int8 // compression codec, 0 for none
	recs          []engine.ProduceRecord
}

// maxDecompressedBytes bounds one batch's decompressed size.
const maxDecompressedBytes = 256 << 20

// decodeBatches decodes every batch in b, appending the records to buf
// (returned for reuse by the next call once the batches are done with).
// The records' keys and values alias b (or the decompressed buffer), which
// the caller must not reuse.
func decodeBatches(b []byte, buf []engine.ProduceRecord) ([]batch, []engine.ProduceRecord, error) {
	var out []batch
	for len(b) > 0 {
		if len(b) < 12 {
			return nil, buf, fmt.Errorf("%w: %d trailing bytes", errCorrupt, len(b))
		}
		length := int(int32(binary.BigEndian.Uint32(b[8:])))
		if length < batchHeaderBytes-12 || length > len(b)-12 {
			return nil, buf, fmt.Errorf("%w: batch length %d with %d bytes left", errCorrupt, length, len(b)-12)
		}
		raw := b[:12+length]
		b = b[12+length:]
		if raw[16] != 2 {
			return nil, buf, fmt.Errorf("%w: magic %d (only v2 batches are accepted)", errCorrupt, raw[16])
		}
		if crc32.Checksum(raw[21:], crcTable) != binary.BigEndian.Uint32(raw[17:]) {
			return nil, buf, fmt.Errorf("%w: CRC mismatch", errCorrupt)
		}
		attrs := int16(binary.BigEndian.Uint16(raw[21:]))
		bt := batch{
			producerID:    int64(binary.BigEndian.Uint64(raw[43:])),
			epoch:         int16(binary.BigEndian.Uint16(raw[51:])),
			baseSequence:  int32(binary.BigEndian.Uint32(raw[53:])),
			transactional: attrs&0x10 != 0,
			control:       attrs&0x20 != 0,
			codec:         int8(attrs & 0x7),
		}
		n := int(int32(binary.BigEndian.Uint32(raw[57:])))
		body := raw[batchHeaderBytes:]
		if n < 0 || n > len(body)*64+1 {
			return nil, buf, fmt.Errorf("%w: %d records", errCorrupt, n)
		}
		body, err := decompress(attrs&0x7, body)
		if err != nil {
			return nil, buf, err
		}
		start := len(buf)
		if buf, err = decodeRecords(buf, body, n); err != nil {
			return nil, buf, err
		}
		bt.recs = buf[start:len(buf):len(buf)]
		out = append(out, bt)
	}
	return out, buf, nil
}

func decompress(codec int16, b []byte) ([]byte, error) {
	var r io.Reader
	switch codec {
	case 0:
		return b, nil
	case 1:
		zr, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			return nil, fmt.Errorf("%w: gzip: %v", errCorrupt, err)
		}
		r = zr
	case 2:
		return unsnappy(b)
	case 3:
		r = lz4.NewReader(bytes.NewReader(b))
	case 4:
		zr, err := zstd.NewReader(bytes.NewReader(b), zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(maxDecompressedBytes))
		if err != nil {
			return nil, fmt.Errorf("%w: zstd: %v", errCorrupt, err)
		}
		defer zr.Close()
		r = zr
	default:
		return nil, fmt.Errorf("%w: compression codec %d", errCorrupt, codec)
	}
	out, err := io.ReadAll(io.LimitReader(r, maxDecompressedBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%w: decompressing: %v", errCorrupt, err)
	}
	if len(out) > maxDecompressedBytes {
		return nil, fmt.Errorf("%w: decompresses past %d bytes", errCorrupt, maxDecompressedBytes)
	}
	return out, nil
}

// xerialHeader starts snappy data framed as the Java client frames it.
var xerialHeader = []byte{0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0}

func unsnappy(b []byte) ([]byte, error) {
	if !bytes.HasPrefix(b, xerialHeader) {
		return snappyBlock(nil, b)
	}
	if len(b) < 16 {
		return nil, fmt.Errorf("%w: short xerial snappy header", errCorrupt)
	}
	b = b[16:]
	var out []byte
	for len(b) > 0 {
		if len(b) < 4 {
			return nil, fmt.Errorf("%w: truncated xerial snappy chunk", errCorrupt)
		}
		n := int(binary.BigEndian.Uint32(b))
		if n < 0 || n > len(b)-4 {
			return nil, fmt.Errorf("%w: xerial snappy chunk of %d bytes", errCorrupt, n)
		}
		var err error
		if out, err = snappyBlock(out, b[4:4+n]); err != nil {
			return nil, err
		}
		b = b[4+n:]
	}
	return out, nil
}

func snappyBlock(dst, b []byte) ([]byte, error) {
	n, err := snappy.DecodedLen(b)
	if err != nil || n > maxDecompressedBytes || len(dst)+n > maxDecompressedBytes {
		return nil, fmt.Errorf("%w: snappy: bad length", errCorrupt)
	}
	start := len(dst)
	dst = slices.Grow(dst, n)[:start+n]
	if _, err := snappy.Decode(dst[start:], b); err != nil {
		return nil, fmt.Errorf("%w: snappy: %v", errCorrupt, err)
	}
	return dst, nil
}

// decodeRecords decodes n records, appending them to recs. Headers are
// read and dropped: the engine stores keys and values only.
func decodeRecords(recs []engine.ProduceRecord, b []byte, n int) ([]engine.ProduceRecord, error) {
	r := kbin.Reader{Src: b}
	for range n {
		l := r.Varint()
		if !r.Ok() || l < 0 || int(l) > len(r.Src) {
			return recs, fmt.Errorf("%w: record length", errCorrupt)
		}
		rr := kbin.Reader{Src: r.Span(int(l))}
		rr.Int8()    // attributes
		rr.Varlong() // timestamp delta
		rr.Varint()  // offset delta
		key := varBytes(&rr)
		value := varBytes(&rr)
		nh := rr.Varint()
		if nh < 0 || int(nh) > len(rr.Src) {
			return recs, fmt.Errorf("%w: header count", errCorrupt)
		}
		for range nh {
			varBytes(&rr)
			varBytes(&rr)
		}
		if !rr.Ok() {
			return recs, fmt.Errorf("%w: truncated record", errCorrupt)
		}
		recs = append(recs, engine.ProduceRecord{Key: key, Value: value})
	}
	return recs, nil
}

// varBytes reads varint-length bytes (-1: null).
func varBytes(r *kbin.Reader) []byte {
	l := r.Varint()
	if l < 0 {
		return nil
	}
	if int(l) > len(r.Src) {
		r.Src = nil
		r.Int8()
		return nil
	}
	b := r.Span(int(l))
	if b == nil {
		b = []byte{}
	}
	return b
}

// batchWriter appends engine records as v2 batches: one batch per run of
// offsets from one producer batch shape (same producer, same transactional
// flag), and the records of a batch produced compressed (coded) as that
// batch: its base offset, its last offset delta and its codec, whichever
// of its records are shown. Offsets inside a batch may skip (records that
// are not shown, such as records of a share fetch that were not acquired).
type batchWriter struct {
	// coded are the compressed batches the records written may fall in,
	// in offset order (nil: none); next indexes the first that may still
	// come, open the one the open batch is (-1: a plain batch).
	coded []codedBatch
	next  int
	open  int
	dst   []byte
	start int // where the open batch starts, -1 if none
	base  int64
	last  int64
	pid   int64
	epoch int16
	txn   bool
	n     int32
	ts    int64
	// tsBase turns engine timestamps (time since the engine's clock
	// started) into Unix milliseconds.
	tsBase int64
}

func (w *batchWriter) reset(dst []byte, tsBase int64) {
	*w = batchWriter{dst: dst, start: -1, tsBase: tsBase, open: -1}
}

// setCoded gives the writer the compressed batches of the partition the
// next records come from (reset clears them).
func (w *batchWriter) setCoded(coded []codedBatch) {
	w.coded, w.next, w.open = coded, 0, -1
}

// codedAt returns the index of the compressed batch holding offset, or -1.
// Offsets come in increasing order, so the search only moves forward.
func (w *batchWriter) codedAt(offset int64) int {
	for w.next < len(w.coded) && w.coded[w.next].last < offset {
		w.next++
	}
	if w.next < len(w.coded) && w.coded[w.next].base <= offset {
		return w.next
	}
	return -1
}

// inOpenCoded reports whether offset belongs to the open batch, which is
// a compressed one: a fetch never cuts such a batch short.
func (w *batchWriter) inOpenCoded(offset int64) bool {
	return w.start >= 0 && w.open >= 0 && offset <= w.coded[w.open].last
}

// shownThrough is the last offset the batches written so far cover.
func (w *batchWriter) shownThrough(last int64) int64 {
	if w.start >= 0 && w.open >= 0 {
		return max(last, w.coded[w.open].last)
	}
	return last
}

// encodedSize bounds what add writes for recs in one batch, plus room for
// a few batch headers: callers size the buffer once instead of growing it
// record by record.
func encodedSize(recs []engine.Record) int {
	n := 4 * batchHeaderBytes
	for i := range recs {
		n += len(recs[i].Key) + len(recs[i].Value) + 24
	}
	return n
}

// grow makes room for n more bytes.
func (w *batchWriter) grow(n int) {
	if cap(w.dst)-len(w.dst) < n {
		b := make([]byte, len(w.dst), len(w.dst)+n)
		copy(b, w.dst)
		w.dst = b
	}
}

// add appends r, opening a new batch when r cannot join the open one. A
// transaction marker becomes a control batch of its own.
func (w *batchWriter) add(r *engine.Record) {
	ts := w.tsBase + int64(r.Timestamp/1e6)
	if r.Control {
		w.flush()
		w.openBatch(r.Offset, r.ProducerID, r.Epoch, true, true, ts)
		typ := byte(0) // abort
		if r.Commit {
			typ = 1
		}
		w.dst = appendRecord(w.dst, 0, 0, []byte{0, 0, 0, typ}, []byte{0, 0, 0, 0, 0, 0})
		w.n++
		w.flush()
		return
	}
	if w.coded != nil {
		if i := w.codedAt(r.Offset); i >= 0 || w.open >= 0 {
			if i != w.open || w.start < 0 {
				w.flush()
				base := r.Offset
				if i >= 0 {
					base = w.coded[i].base
				}
				w.openBatch(base, r.ProducerID, r.Epoch, r.Transactional, false, ts)
				w.open = i
			}
			w.appendRec(r, ts)
			return
		}
	}
	if w.start < 0 || r.ProducerID != w.pid || r.Epoch != w.epoch || r.Transactional != w.txn || r.Offset-w.base > 1<<30 {
		w.flush()
		w.openBatch(r.Offset, r.ProducerID, r.Epoch, r.Transactional, false, ts)
	}
	w.appendRec(r, ts)
}

func (w *batchWriter) appendRec(r *engine.Record, ts int64) {
	w.dst = appendRecord(w.dst, r.Offset-w.base, ts-w.ts, r.Key, r.Value)
	w.last = r.Offset
	w.n++
}

func (w *batchWriter) openBatch(base, pid int64, epoch int16, txn, control bool, ts int64) {
	w.start = len(w.dst)
	w.base, w.last, w.pid, w.epoch, w.txn, w.n, w.ts = base, base, pid, epoch, txn, 0, ts
	var attrs int16
	if txn {
		attrs |= 0x10
	}
	if control {
		attrs |= 0x20
	}
	w.dst = binary.BigEndian.AppendUint64(w.dst, uint64(base))
	w.dst = append(w.dst, make([]byte, 4)...) // length
	w.dst = binary.BigEndian.AppendUint32(w.dst, 0)
	w.dst = append(w.dst, 2)
	w.dst = append(w.dst, make([]byte, 4)...) // crc
	w.dst = binary.BigEndian.AppendUint16(w.dst, uint16(attrs))
	w.dst = append(w.dst, make([]byte, 4)...) // last offset delta
	w.dst = binary.BigEndian.AppendUint64(w.dst, uint64(ts))
	w.dst = binary.BigEndian.AppendUint64(w.dst, uint64(ts))
	w.dst = binary.BigEndian.AppendUint64(w.dst, uint64(pid))
	w.dst = binary.BigEndian.AppendUint16(w.dst, uint16(epoch))
	w.dst = binary.BigEndian.AppendUint32(w.dst, 0xffffffff) // base sequence unknown
	w.dst = append(w.dst, make([]byte, 4)...)                // record count
}

// flush closes the open batch.
func (w *batchWriter) flush() {
	if w.start < 0 {
		return
	}
	if w.open >= 0 {
		// A compressed batch: its body compressed as produced, and its
		// last offset delta the produced batch's, whichever records show.
		cb := w.coded[w.open]
		body := w.dst[w.start+batchHeaderBytes:]
		enc, ok := compressBody(getBuf(len(body)), body, cb.codec)
		w.dst = append(w.dst[:w.start+batchHeaderBytes], enc...)
		putBuf(enc)
		if ok {
			attrs := binary.BigEndian.Uint16(w.dst[w.start+21:])
			binary.BigEndian.PutUint16(w.dst[w.start+21:], attrs|uint16(cb.codec))
		}
		w.last = max(w.last, cb.last)
		w.open = -1
	}
	b := w.dst[w.start:]
	binary.BigEndian.PutUint32(b[8:], uint32(len(b)-12))
	binary.BigEndian.PutUint32(b[23:], uint32(w.last-w.base))
	binary.BigEndian.PutUint32(b[57:], uint32(w.n))
	binary.BigEndian.PutUint32(b[17:], crc32.Checksum(b[21:], crcTable))
	w.start = -1
}

// skipTo makes readers continue at next: when the last batch ends before
// next (the offsets between hold markers or hidden records), a control
// batch at next-1 moves a reader past them, as Kafka's own commit marker
// would.
func (w *batchWriter) skipTo(lastShown, next int64) {
	if next-1 <= lastShown {
		return
	}
	w.flush()
	w.openBatch(next-1, -1, -1, true, true, w.tsBase)
	// A commit control record: key (version 0, type 1), value (version
	// 0, coordinator epoch 0).
	w.dst = appendRecord(w.dst, 0, 0, []byte{0, 0, 0, 1}, []byte{0, 0, 0, 0, 0, 0})
	w.n++
	w.flush()
}

// bytes closes the open batch and returns everything written.
func (w *batchWriter) bytes() []byte {
	w.flush()
	return w.dst
}

func appendRecord(dst []byte, offsetDelta, tsDelta int64, key, value []byte) []byte {
	var body [32]byte
	b := body[:0]
	b = append(b, 0) // attributes
	b = kbin.AppendVarlong(b, tsDelta)
	b = kbin.AppendVarint(b, int32(offsetDelta))
	if key == nil {
		b = kbin.AppendVarint(b, -1)
	} else {
		b = kbin.AppendVarint(b, int32(len(key)))
	}
	n := len(b) + len(key) + varintLen(int32(len(value))) + len(value) + 1
	if value == nil {
		n = len(b) + len(key) + 1 + 1
	}
	dst = kbin.AppendVarint(dst, int32(n))
	dst = append(dst, b...)
	dst = append(dst, key...)
	if value == nil {
		dst = kbin.AppendVarint(dst, -1)
	} else {
		dst = kbin.AppendVarint(dst, int32(len(value)))
		dst = append(dst, value...)
	}
	return append(dst, 0) // no headers
}

func varintLen(v int32) int {
	u := uint32(v<<1) ^ uint32(v>>31)
	n := 1
	for u >= 0x80 {
		u >>= 7
		n++
	}
	return n
}
