// This file tests that batches produced compressed are fetched as Kafka
// keeps them: Fetch and ShareFetch return each such batch whole, with its
// codec, its base offset and its last offset delta, also when the fetch
// offset lies inside it, when the byte limit is smaller than it, and when
// a share fetch acquires only part of it; uncompressed batches in between
// stay uncompressed; read_committed hides an aborted compressed batch.

package serve_test

import (
	"bytes"
	"fmt"
	"hash/crc32"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sharebench/sharebench/engine"
	"github.com/sharebench/sharebench/serve"
)

// compressedCodecs are kgo's codecs by Kafka's name.
var compressedCodecs = map[string]kgo.CompressionCodec{
	"gzip": kgo.GzipCompression(), "snappy": kgo.SnappyCompression(),
	"lz4": kgo.Lz4Compression(), "zstd": kgo.ZstdCompression(),
}

// rawBatch encodes a plain (producer -1) v2 batch of values, compressed
// with codec unless codec is nil.
func rawBatch(t *testing.T, values []string, codec *kgo.CompressionCodec) []byte {
	t.Helper()
	var recs []byte
	for i, v := range values {
		var body []byte
		body = append(body, 0)
		body = kbin.AppendVarlong(body, 0)
		body = kbin.AppendVarint(body, int32(i))
		body = kbin.AppendVarint(body, -1)
		body = kbin.AppendVarint(body, int32(len(v)))
		body = append(body, v...)
		body = kbin.AppendVarint(body, 0)
		recs = kbin.AppendVarint(recs, int32(len(body)))
		recs = append(recs, body...)
	}
	rb := kmsg.RecordBatch{Magic: 2, LastOffsetDelta: int32(len(values) - 1), ProducerID: -1, ProducerEpoch: -1,
		FirstSequence: -1, NumRecords: int32(len(values)), Records: recs}
	if codec != nil {
		c, err := kgo.DefaultCompressor(*codec)
		if err != nil {
			t.Fatal(err)
		}
		out, typ := c.Compress(new(bytes.Buffer), recs)
		rb.Records, rb.Attributes = append([]byte(nil), out...), int16(typ)
	}
	rb.Length = int32(len(rb.AppendTo(nil)) - 12)
	b := rb.AppendTo(nil)
	rb.CRC = int32(crc32.Checksum(b[21:], crc32.MakeTable(crc32.Castagnoli)))
	return rb.AppendTo(nil)
}

// produceRaw sends one Produce of batch to partition 0 of topic.
func produceRaw(t *testing.T, s *serve.Server, cl *kgo.Client, topic string, batch []byte) int64 {
	t.Helper()
	req := kmsg.NewPtrProduceRequest()
	req.Acks, req.TimeoutMillis = -1, 5000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic, rt.TopicID = topic, serve.TopicID(s, topic)
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Records = batch
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx(t), cl)
	if err != nil {
		t.Fatal(err)
	}
	p := resp.Topics[0].Partitions[0]
	if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
		t.Fatalf("produce: %v", err)
	}
	return p.BaseOffset
}

// batchShape is what a fetched batch's header says.
type batchShape struct {
	base, last int64
	codec      int16
	n          int32
}

func (b batchShape) String() string {
	return fmt.Sprintf("%d-%d/codec %d/%d records", b.base, b.last, b.codec, b.n)
}

// shapes reads the batch headers of a record set.
func shapes(t *testing.T, b []byte) []batchShape {
	t.Helper()
	var out []batchShape
	for len(b) > 0 {
		var rb kmsg.RecordBatch
		if err := rb.ReadFrom(b); err != nil {
			t.Fatalf("batch header: %v", err)
		}
		n := int(rb.Length) + 12
		if crc32.Checksum(b[21:n], crc32.MakeTable(crc32.Castagnoli)) != uint32(rb.CRC) {
			t.Fatalf("batch at %d: CRC mismatch", rb.FirstOffset)
		}
		if rb.Attributes&0x20 == 0 {
			out = append(out, batchShape{rb.FirstOffset, rb.FirstOffset + int64(rb.LastOffsetDelta), rb.Attributes & 7, rb.NumRecords})
		}
		b = b[n:]
	}
	return out
}

// decodeFrom decodes a record set as kgo's consumer does, from offset.
func decodeFrom(t *testing.T, b []byte, offset int64) []string {
	t.Helper()
	fp := kmsg.NewFetchResponseTopicPartition()
	fp.RecordBatches = b
	got, _ := kgo.ProcessFetchPartition(kgo.ProcessFetchPartitionOpts{Offset: offset, Topic: "t"}, &fp, kgo.DefaultDecompressor(), nil)
	if got.Err != nil {
		t.Fatalf("decoding: %v", got.Err)
	}
	var out []string
	for _, r := range got.Records {
		out = append(out, fmt.Sprintf("%d=%s", r.Offset, r.Value))
	}
	return out
}

func fetchRaw(t *testing.T, s *serve.Server, cl *kgo.Client, topic string, offset int64, maxBytes int32, committed bool) []byte {
	t.Helper()
	req := kmsg.NewPtrFetchRequest()
	req.MaxBytes, req.MaxWaitMillis = 1<<20, 0
	if committed {
		req.IsolationLevel = 1
	}
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic, rt.TopicID = topic, serve.TopicID(s, topic)
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.FetchOffset, rp.PartitionMaxBytes = offset, maxBytes
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx(t), cl)
	if err != nil {
		t.Fatal(err)
	}
	p := resp.Topics[0].Partitions[0]
	if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
		t.Fatalf("fetch: %v", err)
	}
	return p.RecordBatches
}

func TestFetchServesCompressedBatchesAsProduced(t *testing.T) {
	s, e := start(t)
	cl := client(t, s)
	for name, codec := range compressedCodecs {
		t.Run(name, func(t *testing.T) {
			if err := e.CreateTopic(name, 1); err != nil {
				t.Fatal(err)
			}
			produceRaw(t, s, cl, name, rawBatch(t, []string{"a", "b", "c", "d", "e"}, &codec))
			produceRaw(t, s, cl, name, rawBatch(t, []string{"f", "g"}, nil))
			produceRaw(t, s, cl, name, rawBatch(t, []string{"h", "i", "j"}, &codec))
			typ := int16(map[string]int{"gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}[name])
			want := fmt.Sprint([]batchShape{{0, 4, typ, 5}, {5, 6, 0, 2}, {7, 9, typ, 3}})
			all := "[0=a 1=b 2=c 3=d 4=e 5=f 6=g 7=h 8=i 9=j]"
			for _, committed := range []bool{false, true} {
				b := fetchRaw(t, s, cl, name, 0, 1<<20, committed)
				if got := fmt.Sprint(shapes(t, b)); got != want {
					t.Errorf("read_committed %v: batches %s, want %s", committed, got, want)
				}
				if got := fmt.Sprint(decodeFrom(t, b, 0)); got != all {
					t.Errorf("read_committed %v: records %s, want %s", committed, got, all)
				}
			}
			// From inside the first batch: the whole batch, and the
			// client skips the records below its offset.
			b := fetchRaw(t, s, cl, name, 2, 1<<20, false)
			if got := fmt.Sprint(shapes(t, b)); got != want {
				t.Errorf("fetch from offset 2: batches %s, want %s (whole batches)", got, want)
			}
			if got, w := fmt.Sprint(decodeFrom(t, b, 2)), "[2=c 3=d 4=e 5=f 6=g 7=h 8=i 9=j]"; got != w {
				t.Errorf("fetch from offset 2: records %s, want %s", got, w)
			}
			// A byte limit below one batch still gets that batch whole.
			b = fetchRaw(t, s, cl, name, 8, 1, false)
			if got, w := fmt.Sprint(shapes(t, b)), fmt.Sprint([]batchShape{{7, 9, typ, 3}}); got != w {
				t.Errorf("fetch of 1 byte from offset 8: batches %s, want %s", got, w)
			}
		})
	}
}

// TestFetchHidesAbortedCompressedBatch: a transactional producer writes a
// compressed batch and aborts, then another and commits; read_committed
// sees only the committed batch, compressed.
func TestFetchHidesAbortedCompressedBatch(t *testing.T) {
	s, e := start(t)
	if err := e.CreateTopic("t", 1); err != nil {
		t.Fatal(err)
	}
	p := client(t, s, kgo.TransactionalID("tx"), kgo.ProducerBatchCompression(kgo.ZstdCompression()), kgo.DefaultProduceTopic("t"))
	for _, commit := range []bool{false, true} {
		if err := p.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		var recs []*kgo.Record
		for i := range 4 {
			// Long repetitive values: kgo sends a batch uncompressed
			// when compressing would not shrink it.
			recs = append(recs, &kgo.Record{Value: fmt.Appendf(nil, "%v-%d-%s", commit, i, bytes.Repeat([]byte("x"), 200))})
		}
		if err := p.ProduceSync(ctx(t), recs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
		if err := p.EndTransaction(ctx(t), kgo.TransactionEndTry(commit)); err != nil {
			t.Fatal(err)
		}
	}
	// The markers reach the partition after EndTxn answers, as in
	// Kafka: read until the committed records show (or the test's
	// deadline ends it).
	rc := client(t, s)
	var b []byte
	var got []string
	for dl := ctx(t); len(got) == 0 && dl.Err() == nil; {
		b = fetchRaw(t, s, rc, "t", 0, 1<<20, true)
		got = decodeFrom(t, b, 0)
	}
	for _, sh := range shapes(t, b) {
		if sh.codec != 4 {
			t.Errorf("batch %s: codec %d, want 4 (zstd, as produced)", sh, sh.codec)
		}
	}
	x := string(bytes.Repeat([]byte("x"), 200))
	if w := fmt.Sprintf("[5=true-0-%[1]s 6=true-1-%[1]s 7=true-2-%[1]s 8=true-3-%[1]s]", x); fmt.Sprint(got) != w {
		t.Errorf("read_committed records %v, want %s (the aborted batch and the markers hidden)", got, w)
	}
}

// TestShareFetchPartOfCompressedBatch: a share fetch that acquires three
// records of a five-record compressed batch gets them in that batch,
// compressed, with the batch's offsets, and AcquiredRecords naming the
// three; the next fetch gets the other two in the same batch shape.
func TestShareFetchPartOfCompressedBatch(t *testing.T) {
	s, e := start(t)
	if err := e.CreateTopic("t", 1); err != nil {
		t.Fatal(err)
	}
	if err := e.SetShareGroupConfig("g", engine.GroupConfig{LockDuration: 30 * time.Second, DeliveryLimit: 5, MaxRecordLocks: 100, AutoOffsetReset: engine.ResetEarliest}); err != nil {
		t.Fatal(err)
	}
	cl := client(t, s)
	lz4 := kgo.Lz4Compression()
	produceRaw(t, s, cl, "t", rawBatch(t, []string{"a", "b", "c", "d", "e"}, &lz4))
	m := &shareRaw{t: t, cl: cl, id: "q2mR4hT0QcOWbCgkW3eCEw"}
	m.heartbeat(false)
	for _, tc := range []struct {
		acquired, records string
		n                 int32
	}{
		{"[0-2]", "[0=a 1=b 2=c]", 3},
		{"[3-4]", "[3=d 4=e]", 2},
	} {
		req := kmsg.NewPtrShareFetchRequest()
		req.Version = 2
		req.GroupID, req.MemberID, req.ShareSessionEpoch = kmsg.StringPtr("g"), kmsg.StringPtr(m.id), m.session
		req.MaxWaitMillis, req.MaxBytes, req.MaxRecords, req.BatchSize, req.ShareAcquireMode = 2000, 1<<20, 3, 3, 1
		rt := kmsg.NewShareFetchRequestTopic()
		rt.TopicID = serve.TopicID(s, "t")
		rp := kmsg.NewShareFetchRequestTopicPartition()
		rp.PartitionMaxBytes = 1 << 20
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(ctx(t), cl)
		if err != nil || resp.ErrorCode != 0 {
			t.Fatalf("share fetch: %v code %d", err, resp.ErrorCode)
		}
		m.session++
		p := resp.Topics[0].Partitions[0]
		var acq []string
		for _, a := range p.AcquiredRecords {
			acq = append(acq, fmt.Sprintf("%d-%d", a.FirstOffset, a.LastOffset))
		}
		if fmt.Sprint(acq) != tc.acquired {
			t.Fatalf("acquired %v, want %s", acq, tc.acquired)
		}
		if got, w := fmt.Sprint(shapes(t, p.Records)), fmt.Sprint([]batchShape{{0, 4, 3, tc.n}}); got != w {
			t.Errorf("batches %s, want %s (the produced lz4 batch, holding the acquired records)", got, w)
		}
		if got := fmt.Sprint(decodeFrom(t, p.Records, 0)); got != tc.records {
			t.Errorf("records %s, want %s", got, tc.records)
		}
	}
}
