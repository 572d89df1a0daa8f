// This file holds what the server keeps of the batches producers wrote
// compressed, so Fetch and ShareFetch return them as Kafka does: Kafka
// keeps a batch as written, and a reader gets it whole, with its codec and
// its record boundaries. The engine stores records, not batches; the
// server remembers each compressed batch's codec and offsets per partition
// and compresses the records it sends per remembered batch. Uncompressed
// batches are not remembered at all, so their path costs one atomic load.
//
// A produced batch replaces whatever it overlaps (offsets reused after a
// topic is deleted and created again, or after an engine restart lost
// unsynced records). Batches below the partition's log start offset are
// dropped when the next compressed batch of the partition is kept. None of
// this is durable: after a server restart every batch is served
// uncompressed, as before it was produced compressed. Lock order:
// storedBatches.mu is a leaf; no other lock is taken while it is held.

package serve

import (
	"bytes"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sharebench/sharebench/engine"
)

// codedBatch is one batch a producer wrote compressed: its offsets and its
// codec (the attributes' low three bits, 1 to 4).
type codedBatch struct {
	base, last int64
	codec      int8
}

// storedBatches holds the compressed batches of every partition, each
// partition's sorted by offset and never overlapping. The zero value is
// empty and ready.
type storedBatches struct {
	n  atomic.Int64 // batches held, so uncompressed traffic skips the lock
	mu struct {
		sync.RWMutex
		parts map[engine.TopicPartition][]codedBatch
	}
}

// keep remembers that [base, last] of tp was produced as one batch of
// codec (0: uncompressed, which only forgets what it overlaps). logStart
// is the partition's log start offset: batches wholly below it go.
func (sb *storedBatches) keep(tp engine.TopicPartition, base, last int64, codec int8, logStart int64) {
	if codec == 0 && sb.n.Load() == 0 {
		return
	}
	sb.mu.Lock()
	defer sb.mu.Unlock()
	bs := sb.mu.parts[tp]
	before := len(bs)
	if drop := sort.Search(len(bs), func(i int) bool { return bs[i].last >= logStart }); drop > 0 {
		bs = append([]codedBatch(nil), bs[drop:]...) // frees the dropped prefix
	}
	lo := sort.Search(len(bs), func(i int) bool { return bs[i].last >= base })
	hi := sort.Search(len(bs), func(i int) bool { return bs[i].base > last })
	if codec != 0 {
		nb := codedBatch{base: base, last: last, codec: codec}
		bs = append(bs[:lo], append([]codedBatch{nb}, bs[hi:]...)...)
	} else {
		bs = append(bs[:lo], bs[hi:]...)
	}
	if len(bs) == 0 {
		delete(sb.mu.parts, tp)
	} else {
		if sb.mu.parts == nil {
			sb.mu.parts = map[engine.TopicPartition][]codedBatch{}
		}
		// Changed in place: readers copy elements under the read lock
		// and never keep the slice.
		sb.mu.parts[tp] = bs
	}
	sb.n.Add(int64(len(bs) - before))
}

// covering appends to dst the compressed batches of tp that hold an offset
// in [first, last], in offset order; nil when there are none.
func (sb *storedBatches) covering(dst []codedBatch, tp engine.TopicPartition, first, last int64) []codedBatch {
	if sb.n.Load() == 0 {
		return dst
	}
	sb.mu.RLock()
	defer sb.mu.RUnlock()
	bs := sb.mu.parts[tp]
	lo := sort.Search(len(bs), func(i int) bool { return bs[i].last >= first })
	for _, b := range bs[lo:] {
		if b.base > last {
			break
		}
		dst = append(dst, b)
	}
	return dst
}

// at returns the compressed batch of tp that holds offset, if any.
func (sb *storedBatches) at(tp engine.TopicPartition, offset int64) (codedBatch, bool) {
	var one [1]codedBatch
	got := sb.covering(one[:0], tp, offset, offset)
	if len(got) == 0 {
		return codedBatch{}, false
	}
	return got[0], true
}

// compressors are franz-go's, one per codec, made on first use; each is
// safe for concurrent use (it pools its encoders).
var compressors struct {
	once sync.Once
	by   [5]kgo.Compressor
}

func compressorFor(codec int8) kgo.Compressor {
	compressors.once.Do(func() {
		for i, c := range []kgo.CompressionCodec{kgo.GzipCompression(), kgo.SnappyCompression(), kgo.Lz4Compression(), kgo.ZstdCompression()} {
			compressors.by[i+1], _ = kgo.DefaultCompressor(c)
		}
	})
	if codec < 1 || codec > 4 {
		return nil
	}
	return compressors.by[codec]
}

// compressBuffers pools the buffers compressed record bodies are written
// into before they are copied into the response.
var compressBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// compressBody returns body compressed with codec, appended to dst, and
// whether it was: a codec that fails leaves the body as it is (still a
// valid batch, uncompressed).
func compressBody(dst, body []byte, codec int8) ([]byte, bool) {
	c := compressorFor(codec)
	if c == nil {
		return append(dst, body...), false
	}
	buf := compressBuffers.Get().(*bytes.Buffer)
	defer compressBuffers.Put(buf)
	buf.Reset()
	out, typ := c.Compress(buf, body)
	if int8(typ) != codec {
		return append(dst, body...), false
	}
	return append(dst, out...), true
}
