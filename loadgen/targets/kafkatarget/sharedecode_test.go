// Tests of decodeShareRecords: share-fetched batches of every codec, with
// control batches and a partial batch at the end, as a broker sends them.

package kafkatarget

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"hash/crc32"
	"testing"

	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// testBatch encodes a v2 batch at base of values, compressed with codec
// (nil: uncompressed); control makes it a commit marker.
func testBatch(t *testing.T, base int64, values []string, codec *kgo.CompressionCodec, control bool) []byte {
	t.Helper()
	var recs []byte
	for i, v := range values {
		var body []byte
		body = append(body, 0)
		body = kbin.AppendVarlong(body, 0)
		body = kbin.AppendVarint(body, int32(i))
		if control {
			body = kbin.AppendVarint(body, 4)
			body = append(body, 0, 0, 0, 1)
		} else {
			body = kbin.AppendVarint(body, -1)
		}
		body = kbin.AppendVarint(body, int32(len(v)))
		body = append(body, v...)
		body = kbin.AppendVarint(body, 0)
		recs = kbin.AppendVarint(recs, int32(len(body)))
		recs = append(recs, body...)
	}
	rb := kmsg.RecordBatch{FirstOffset: base, Magic: 2, LastOffsetDelta: int32(len(values) - 1),
		ProducerID: -1, ProducerEpoch: -1, FirstSequence: -1, NumRecords: int32(len(values)), Records: recs}
	if control {
		rb.Attributes |= 0x30
	}
	if codec != nil {
		c, err := kgo.DefaultCompressor(*codec)
		if err != nil {
			t.Fatalf("compressor: %v", err)
		}
		var buf bytes.Buffer
		out, typ := c.Compress(&buf, recs)
		if typ == 0 {
			t.Fatalf("codec %v did not compress", codec)
		}
		rb.Records = append([]byte(nil), out...)
		rb.Attributes |= int16(typ)
	}
	b := rb.AppendTo(nil)
	rb.Length = int32(len(b) - 12)
	b = rb.AppendTo(nil)
	rb.CRC = int32(crc32.Checksum(b[21:], crc32.MakeTable(crc32.Castagnoli)))
	return rb.AppendTo(nil)
}

func TestDecodeShareRecordsEveryCodec(t *testing.T) {
	t.Parallel()
	codecs := map[string]*kgo.CompressionCodec{"none": nil}
	for name, c := range map[string]kgo.CompressionCodec{"gzip": kgo.GzipCompression(), "snappy": kgo.SnappyCompression(), "lz4": kgo.Lz4Compression(), "zstd": kgo.ZstdCompression()} {
		codecs[name] = &c
	}
	for name, codec := range codecs {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var b []byte
			b = append(b, testBatch(t, 10, []string{"a", "b", "c"}, codec, false)...)
			b = append(b, testBatch(t, 13, []string{"\x00\x00\x00\x00\x00\x00"}, nil, true)...)
			b = append(b, testBatch(t, 14, []string{"d", "e"}, codec, false)...)
			partial := testBatch(t, 16, []string{"f"}, codec, false)
			b = append(b, partial[:len(partial)-3]...)
			got, err := decodeShareRecords("in", 2, b)
			if err != nil {
				t.Fatalf("decodeShareRecords: %v", err)
			}
			var s []string
			for _, r := range got {
				s = append(s, fmt.Sprintf("%d=%s", r.Offset, r.Value))
			}
			if want := "[10=a 11=b 12=c 14=d 15=e]"; fmt.Sprint(s) != want {
				t.Errorf("records = %v, want %s (control batch skipped, partial batch dropped)", s, want)
			}
		})
	}
}

func TestDecodeShareRecordsCorrupt(t *testing.T) {
	t.Parallel()
	b := testBatch(t, 0, []string{"a"}, nil, false)
	b[len(b)-1] ^= 0xff
	if _, err := decodeShareRecords("in", 0, b); err == nil {
		t.Fatal("decodeShareRecords of a batch with a bad CRC: no error")
	}
}

// TestNewMemberID checks the member ids are Kafka's UUID text: 22
// characters of base64url that decode to a version-4 UUID, never starting
// with '-', and distinct.
func TestNewMemberID(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for range 1000 {
		id := newMemberID()
		b, err := base64.RawURLEncoding.DecodeString(id)
		if err != nil || len(id) != 22 || len(b) != 16 {
			t.Fatalf("member id %q: %d characters, decodes to %d bytes (%v); want 22 characters of base64url, 16 bytes", id, len(id), len(b), err)
		}
		if b[6]>>4 != 4 || b[8]>>6 != 2 {
			t.Fatalf("member id %q is not a version-4 UUID", id)
		}
		if id[0] == '-' || seen[id] {
			t.Fatalf("member id %q starts with '-' or repeats", id)
		}
		seen[id] = true
	}
}
