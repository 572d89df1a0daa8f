// Tests of Codec, the one mapping of compression.type to franz-go's codecs.

package kafkatarget

import (
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sharebench/sharebench/vocab"
)

func TestCodec(t *testing.T) {
	t.Parallel()
	want := map[vocab.Compression]kgo.CompressionCodec{
		"": kgo.NoCompression(), vocab.CompressionNone: kgo.NoCompression(), vocab.CompressionGzip: kgo.GzipCompression(),
		vocab.CompressionSnappy: kgo.SnappyCompression(), vocab.CompressionLz4: kgo.Lz4Compression(), vocab.CompressionZstd: kgo.ZstdCompression(),
	}
	for c, w := range want {
		got, err := Codec(c)
		if err != nil || got != w {
			t.Errorf("Codec(%q) = %v, %v; want %v", c, got, err, w)
		}
	}
	if _, err := Codec("brotli"); err == nil || !strings.Contains(err.Error(), "brotli") || !strings.Contains(err.Error(), "zstd") {
		t.Errorf("Codec(brotli) error = %v; want one naming it and the valid codecs", err)
	}
	if _, err := (ProducerTuning{Compression: "brotli"}).opts(); err == nil {
		t.Error("a producer tuning with an unknown codec was accepted")
	}
}
