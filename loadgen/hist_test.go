// This file tests Hist: merging per-goroutine histograms, overflow counted
// and never clamped, and the V2 encoding round trip of the result schema;
// and the interval histograms behind the .hlog files.

package loadgen

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/sharebench/sharebench/loadgen/result"
)

// near reports whether got is within HdrHistogram's 3-significant-figure
// precision (0.1%) of want.
func near(got, want time.Duration) bool {
	return math.Abs(float64(got-want)) <= 0.001*float64(want)+1
}

func TestHistMerge(t *testing.T) {
	t.Parallel()
	a, b := NewHist(), NewHist()
	for i := 1; i <= 1000; i++ {
		a.Record(time.Duration(i) * time.Microsecond)      // 1µs..1ms
		b.Record(time.Duration(1000+i) * time.Microsecond) // 1.001ms..2ms
	}
	if a.Count() != 1000 || b.Count() != 1000 {
		t.Fatalf("counts %d and %d, want 1000 each", a.Count(), b.Count())
	}
	if p := a.Percentile(50); !near(p, 500*time.Microsecond) {
		t.Errorf("a p50 = %v, want 500µs", p)
	}

	m := NewHist()
	m.Merge(a)
	m.Merge(b)
	m.Merge(nil) // merging nothing is a no-op
	if m.Count() != 2000 {
		t.Fatalf("merged count %d, want 2000", m.Count())
	}
	for _, tc := range []struct {
		p    float64
		want time.Duration
	}{
		{50, 1000 * time.Microsecond},
		{90, 1800 * time.Microsecond},
		{99, 1980 * time.Microsecond},
		{100, 2000 * time.Microsecond},
	} {
		if got := m.Percentile(tc.p); !near(got, tc.want) {
			t.Errorf("merged p%v = %v, want %v", tc.p, got, tc.want)
		}
	}
	// The inputs are unchanged.
	if a.Count() != 1000 || b.Count() != 1000 {
		t.Errorf("after merge: inputs hold %d and %d samples, want 1000 each", a.Count(), b.Count())
	}
}

func TestHistOverflowCountedNotClamped(t *testing.T) {
	t.Parallel()
	h := NewHist()
	h.Record(time.Millisecond)
	h.Record(time.Duration(histMax))     // the top of the range still counts
	h.Record(time.Duration(histMax) + 1) // beyond it: overflow
	h.Record(time.Hour)
	if h.Count() != 2 || h.Overflow() != 2 {
		t.Fatalf("count %d overflow %d, want 2 and 2", h.Count(), h.Overflow())
	}
	if mx := h.Percentile(100); mx > time.Duration(histMax)*1001/1000 {
		t.Errorf("max %v: an overflow sample was clamped into the range (max %v)", mx, time.Duration(histMax))
	}

	other := NewHist()
	other.Record(2 * time.Hour)
	other.Record(time.Second)
	h.Merge(other)
	if h.Count() != 3 || h.Overflow() != 3 {
		t.Fatalf("after merge: count %d overflow %d, want 3 and 3", h.Count(), h.Overflow())
	}
	s := h.Summary()
	if s.Count != 3 || s.Overflow != 3 {
		t.Fatalf("summary count %d overflow %d, want 3 and 3", s.Count, s.Overflow)
	}
}

func TestHistNegativeAndZeroCountAsOneNanosecond(t *testing.T) {
	t.Parallel()
	h := NewHist()
	h.Record(-time.Second)
	h.Record(0)
	s := h.Summary()
	if s.Count != 2 || s.Min != 1 || s.Max != 1 {
		t.Fatalf("summary %+v: want 2 samples of 1ns", s)
	}
}

func TestHistSummaryRoundTrip(t *testing.T) {
	t.Parallel()
	h := NewHist()
	for i := 1; i <= 10_000; i++ {
		h.Record(time.Duration(i*i) * time.Nanosecond) // 1ns..100ms, skewed
	}
	h.Record(time.Hour) // overflow
	s := h.Summary()
	if s.Unit != "ns" || s.Count != 10_000 || s.Overflow != 1 {
		t.Fatalf("summary unit %q count %d overflow %d, want ns, 10000, 1", s.Unit, s.Count, s.Overflow)
	}
	if !(s.Min <= s.P50 && s.P50 <= s.P90 && s.P90 <= s.P99 && s.P99 <= s.P999 && s.P999 <= s.P9999 && s.P9999 <= s.Max) {
		t.Fatalf("summary percentiles out of order: %+v", s)
	}
	if !near(time.Duration(s.P50), 25*time.Millisecond) {
		t.Errorf("p50 %v, want 25ms", time.Duration(s.P50))
	}
	if s.EncodedV2 == "" {
		t.Fatal("summary has no V2 encoding")
	}

	d, err := DecodeHist(s)
	if err != nil {
		t.Fatalf("DecodeHist: %v", err)
	}
	if d.Count() != h.Count() || d.Overflow() != h.Overflow() {
		t.Fatalf("decoded count %d overflow %d, want %d and %d", d.Count(), d.Overflow(), h.Count(), h.Overflow())
	}
	got := d.Summary()
	got.EncodedV2, s.EncodedV2 = "", ""
	if got != s {
		t.Fatalf("summary after the round trip:\n got %+v\nwant %+v", got, s)
	}

	// An empty histogram round-trips too.
	e, err := DecodeHist(NewHist().Summary())
	if err != nil || e.Count() != 0 {
		t.Fatalf("empty histogram: DecodeHist = %v, %v", e, err)
	}
}

func TestDecodeHistErrors(t *testing.T) {
	t.Parallel()
	for _, enc := range []string{"not base64!", "aGVsbG8gd29ybGQ="} {
		if _, err := DecodeHist(result.Histogram{EncodedV2: enc}); err == nil || !strings.HasPrefix(err.Error(), "loadgen: ") {
			t.Errorf("DecodeHist(%q) = %v, want a loadgen: error", enc, err)
		}
	}
}

func TestIntervalsHlog(t *testing.T) {
	t.Parallel()
	start := time.Now()
	iv := newIntervals(start)
	iv.record(start.Add(-time.Second), time.Millisecond) // before the start: second 0
	iv.record(start.Add(100*time.Millisecond), 2*time.Millisecond, 3*time.Millisecond)
	iv.record(start.Add(2500*time.Millisecond), 10*time.Millisecond)
	if p := iv.p99(0); !near(time.Duration(p), 3*time.Millisecond) {
		t.Errorf("p99 of second 0 = %v, want 3ms", time.Duration(p))
	}
	if p := iv.p99(1); p != 0 {
		t.Errorf("p99 of the empty second 1 = %d, want 0", p)
	}
	if p := iv.p99(99); p != 0 {
		t.Errorf("p99 beyond the run = %d, want 0", p)
	}

	var buf bytes.Buffer
	if _, err := iv.writeHlog(&buf, "test log"); err != nil {
		t.Fatalf("writeHlog: %v", err)
	}
	if !strings.Contains(buf.String(), "#test log") {
		t.Errorf("hlog lacks its comment:\n%s", buf.String())
	}
	r := hdrhistogram.NewHistogramLogReader(&buf)
	var counts []int64
	for {
		h, err := r.NextIntervalHistogram()
		if err != nil {
			t.Fatalf("reading the hlog back: %v", err)
		}
		if h == nil {
			break
		}
		counts = append(counts, h.TotalCount())
	}
	if len(counts) != 2 || counts[0] != 3 || counts[1] != 1 {
		t.Fatalf("hlog interval counts %v, want [3 1]", counts)
	}
}
