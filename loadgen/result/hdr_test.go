package result_test

import (
	"encoding/base64"
	"errors"
	"testing"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/sharebench/sharebench/loadgen/result"
)

// TestHistogramCodec: an encoded histogram decodes to the same counts, also
// when base64-encoded once more; a malformed encoding is ErrHistogram,
// never a panic.
func TestHistogramCodec(t *testing.T) {
	t.Parallel()
	h := hdrhistogram.New(1, 3_600_000_000_000, 3)
	for v := int64(1); v <= 1000; v++ {
		_ = h.RecordValue(v * 1000)
	}
	enc := result.EncodeHistogram(h)
	for _, tc := range []struct{ name, enc string }{
		{"v2", enc},
		{"v2 base64 once more", base64.StdEncoding.EncodeToString([]byte(enc))},
	} {
		d, err := result.Histogram{EncodedV2: tc.enc}.Decode()
		if err != nil || d.TotalCount() != h.TotalCount() || d.ValueAtQuantile(99) != h.ValueAtQuantile(99) {
			t.Errorf("%s: Decode = %v, %v; want %d values, p99 %d", tc.name, d, err, h.TotalCount(), h.ValueAtQuantile(99))
		}
	}
	for _, bad := range []string{"", "not base64!", "HISTFAAAAB94nJNpmSzMwMDAxAABzFCaEUoz", base64.StdEncoding.EncodeToString([]byte("junk"))} {
		if _, err := (result.Histogram{EncodedV2: bad}).Decode(); !errors.Is(err, result.ErrHistogram) {
			t.Errorf("Decode(%q) err = %v, want ErrHistogram", bad, err)
		}
	}
}
