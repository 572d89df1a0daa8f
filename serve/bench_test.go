package serve_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"runtime"
	"testing"

	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sharebench/sharebench/engine"
	"github.com/sharebench/sharebench/serve"
)

// batchBytes encodes n records of value size bytes as one uncompressed v2
// batch.
func batchBytes(n, size int) []byte { return codedBatchBytes(n, size, nil) }

// codedBatchBytes is batchBytes compressed with codec (nil: none).
func codedBatchBytes(n, size int, codec *kgo.CompressionCodec) []byte {
	var recs []byte
	val := make([]byte, size)
	for i := range n {
		var r []byte
		r = append(r, 0)
		r = kbin.AppendVarlong(r, 0)
		r = kbin.AppendVarint(r, int32(i))
		r = kbin.AppendVarint(r, -1)
		r = kbin.AppendVarint(r, int32(size))
		r = append(r, val...)
		r = kbin.AppendVarint(r, 0)
		recs = kbin.AppendVarint(recs, int32(len(r)))
		recs = append(recs, r...)
	}
	rb := kmsg.RecordBatch{Magic: 2, LastOffsetDelta: int32(n - 1), ProducerID: -1, ProducerEpoch: -1, FirstSequence: -1, NumRecords: int32(n), Records: recs}
	if codec != nil {
		c, _ := kgo.DefaultCompressor(*codec)
		out, typ := c.Compress(new(bytes.Buffer), recs)
		rb.Records, rb.Attributes = append([]byte(nil), out...), int16(typ)
	}
	b := rb.AppendTo(nil)
	binary.BigEndian.PutUint32(b[8:], uint32(len(b)-12))
	binary.BigEndian.PutUint32(b[17:], crc32.Checksum(b[21:], crc32.MakeTable(crc32.Castagnoli)))
	return b
}

func produceFrame(topic string, n, size int) []byte { return codedProduceFrame(topic, n, size, nil) }

func codedProduceFrame(topic string, n, size int, codec *kgo.CompressionCodec) []byte {
	req := kmsg.NewPtrProduceRequest()
	req.Acks = -1
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Records = codedBatchBytes(n, size, codec)
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return frame(req, 9)
}

// allocCounter sums heap allocations over the timed sections of a
// benchmark, so allocations per record can be reported with decimals
// (allocs/op rounds to an integer).
type allocCounter struct {
	ms          runtime.MemStats
	start       uint64
	mallocs     uint64
	bytes, from uint64
}

func (a *allocCounter) resume() {
	runtime.ReadMemStats(&a.ms)
	a.start, a.from = a.ms.Mallocs, a.ms.TotalAlloc
}

func (a *allocCounter) pause() {
	runtime.ReadMemStats(&a.ms)
	a.mallocs += a.ms.Mallocs - a.start
	a.bytes += a.ms.TotalAlloc - a.from
}

func (a *allocCounter) report(b *testing.B) {
	b.ReportMetric(float64(a.mallocs)/float64(b.N), "allocs/record")
	b.ReportMetric(float64(a.bytes)/float64(b.N), "B/record")
}

// BenchmarkProduce: one op is one produced record, sent in batches of
// batch through the Produce handler (frame decode, batch decode, engine
// append, response encode). B/op and allocs/op are per record.
func BenchmarkProduce(b *testing.B) {
	for _, bc := range []struct{ batch, value int }{{1, 100}, {100, 100}, {500, 100}, {250, 1024}} {
		batch, value := bc.batch, bc.value
		b.Run(fmt.Sprintf("batch=%d/value=%dB", batch, value), func(b *testing.B) {
			s, e := start(b)
			if err := e.CreateTopic("t", 1); err != nil {
				b.Fatal(err)
			}
			c, done := s.NewTestConn()
			defer done()
			f := produceFrame("t", batch, value)
			var out []byte
			var ac allocCounter
			b.ReportAllocs()
			b.SetBytes(int64(value))
			b.ResetTimer()
			ac.resume()
			for i := 0; i < b.N; i += batch {
				req := serve.ReadFrame(f) // into a buffer as the server reads a frame
				var err error
				if out, _, err = s.Handle(c, req, out[:0]); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			ac.pause()
			ac.report(b)
		})
	}
}

// BenchmarkShareFetch: one op is one record acquired by a ShareFetch of
// up to batch records that also accepts the previous fetch's records.
// Records are produced with the timer stopped, uncompressed unless a codec
// is named (then each fetch compresses the batch it sends); B/op and
// allocs/op are per record of the fetch path alone.
func BenchmarkShareFetch(b *testing.B) {
	zstd, lz4 := kgo.ZstdCompression(), kgo.Lz4Compression()
	for _, bc := range []struct {
		batch, value int
		codec        *kgo.CompressionCodec
		name         string
	}{{100, 100, nil, ""}, {500, 100, nil, ""}, {500, 1024, nil, ""}, {500, 100, &lz4, "/codec=lz4"}, {500, 100, &zstd, "/codec=zstd"}} {
		batch, value := bc.batch, bc.value
		b.Run(fmt.Sprintf("batch=%d/value=%dB%s", batch, value, bc.name), func(b *testing.B) {
			s, e := start(b)
			if err := e.CreateTopic("t", 1); err != nil {
				b.Fatal(err)
			}
			if err := e.SetShareGroupConfig("g", engine.GroupConfig{LockDuration: 600e9, DeliveryLimit: 5, MaxRecordLocks: 1 << 20, AutoOffsetReset: engine.ResetEarliest}); err != nil {
				b.Fatal(err)
			}
			c, done := s.NewTestConn()
			defer done()
			hb := kmsg.NewPtrShareGroupHeartbeatRequest()
			hb.GroupID, hb.MemberID, hb.SubscribedTopicNames = "g", "bench-member", []string{"t"}
			if _, _, err := s.Handle(c, frame(hb, 1), nil); err != nil {
				b.Fatal(err)
			}
			pf := codedProduceFrame("t", batch, value, bc.codec)
			epoch := int32(0)
			var prev [2]int64
			var out []byte
			var ac allocCounter
			b.ReportAllocs()
			b.SetBytes(int64(value))
			b.ResetTimer()
			for i := 0; i < b.N; i += batch {
				b.StopTimer()
				if _, _, err := s.Handle(c, serve.ReadFrame(pf), nil); err != nil {
					b.Fatal(err)
				}
				req := kmsg.NewPtrShareFetchRequest()
				req.GroupID, req.MemberID = kmsg.StringPtr("g"), kmsg.StringPtr("bench-member")
				req.ShareSessionEpoch, req.MaxRecords, req.BatchSize, req.MaxBytes = epoch, int32(batch), int32(batch), 50<<20
				rt := kmsg.NewShareFetchRequestTopic()
				rt.TopicID = serve.TopicID(s, "t")
				rp := kmsg.NewShareFetchRequestTopicPartition()
				if epoch > 0 {
					ab := kmsg.NewShareFetchRequestTopicPartitionAcknowledgementBatch()
					ab.FirstOffset, ab.LastOffset, ab.AcknowledgeTypes = prev[0], prev[1], []int8{1}
					rp.AcknowledgementBatches = append(rp.AcknowledgementBatches, ab)
				}
				rt.Partitions = append(rt.Partitions, rp)
				req.Topics = append(req.Topics, rt)
				f := frame(req, 1)
				ac.resume()
				b.StartTimer()
				var err error
				if out, _, err = s.Handle(c, f, out[:0]); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				ac.pause()
				resp := kmsg.NewPtrShareFetchResponse()
				resp.Version = 1
				if err := resp.ReadFrom(out[4+4+1:]); err != nil {
					b.Fatal(err)
				}
				if resp.ErrorCode != 0 || len(resp.Topics) != 1 || len(resp.Topics[0].Partitions[0].AcquiredRecords) == 0 {
					b.Fatalf("share fetch %d: %+v", i, resp)
				}
				ar := resp.Topics[0].Partitions[0].AcquiredRecords
				prev = [2]int64{ar[0].FirstOffset, ar[len(ar)-1].LastOffset}
				epoch++
				b.StartTimer()
			}
			b.StopTimer()
			ac.report(b)
		})
	}
}
