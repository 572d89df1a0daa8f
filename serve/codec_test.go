package serve_test

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
)

// TestCompressionCodecs produces with every codec kgo has and reads the
// records back.
func TestCompressionCodecs(t *testing.T) {
	s, e := start(t)
	codecs := map[string]kgo.CompressionCodec{
		"none": kgo.NoCompression(), "gzip": kgo.GzipCompression(), "snappy": kgo.SnappyCompression(),
		"lz4": kgo.Lz4Compression(), "zstd": kgo.ZstdCompression(),
	}
	for name, codec := range codecs {
		t.Run(name, func(t *testing.T) {
			if err := e.CreateTopic(name, 1); err != nil {
				t.Fatal(err)
			}
			p := client(t, s, kgo.ProducerBatchCompression(codec), kgo.DefaultProduceTopic(name))
			var recs []*kgo.Record
			for i := range 50 {
				recs = append(recs, &kgo.Record{Value: []byte(name + "-value-" + string(rune('a'+i%26)))})
			}
			if err := p.ProduceSync(ctx(t), recs...).FirstErr(); err != nil {
				t.Fatal(err)
			}
			c := client(t, s, kgo.ConsumeTopics(name), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
			var got []*kgo.Record
			for len(got) < 50 {
				fs := c.PollFetches(ctx(t))
				if err := fs.Err(); err != nil {
					t.Fatal(err)
				}
				got = append(got, fs.Records()...)
			}
			for i := range got {
				if string(got[i].Value) != string(recs[i].Value) {
					t.Fatalf("record %d: %q, want %q", i, got[i].Value, recs[i].Value)
				}
			}
		})
	}
}
