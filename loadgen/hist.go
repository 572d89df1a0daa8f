// This file holds latency histograms: HdrHistograms in nanoseconds with
// three significant figures, one per goroutine, merged at report time, with
// overflows counted rather than clamped; and the per-second interval
// histograms behind the .hlog files and the per-second p99 series.

package loadgen

import (
	"fmt"
	"io"
	"math"
	"sync"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/sharebench/sharebench/loadgen/result"
)

// histMax is the highest latency a histogram tracks. Larger samples are
// counted as overflow, never clamped into the top bucket.
const histMax = int64(10 * time.Minute)

// Hist is one goroutine's histogram. Not safe for concurrent use.
type Hist struct {
	h        *hdrhistogram.Histogram
	overflow int64
}

// NewHist returns an empty histogram (1 ns to 10 min, 3 significant
// figures).
func NewHist() *Hist { return &Hist{h: hdrhistogram.New(1, histMax, 3)} }

// Record adds one sample; negative samples count as zero.
func (h *Hist) Record(d time.Duration) {
	v := int64(d)
	if v < 1 {
		v = 1
	}
	if v > histMax {
		h.overflow++
		return
	}
	_ = h.h.RecordValue(v)
}

// RecordN adds n samples of d.
func (h *Hist) RecordN(d time.Duration, n int64) {
	v := int64(d)
	if v < 1 {
		v = 1
	}
	if v > histMax {
		h.overflow += n
		return
	}
	_ = h.h.RecordValues(v, n)
}

// Merge adds o's samples into h.
func (h *Hist) Merge(o *Hist) {
	if o == nil {
		return
	}
	h.overflow += o.overflow + h.h.Merge(o.h)
}

// Count returns the recorded samples, overflow excluded.
func (h *Hist) Count() int64 { return h.h.TotalCount() }

// Overflow returns the samples above the tracked range.
func (h *Hist) Overflow() int64 { return h.overflow }

// Percentile returns the value at percentile p (0..100), as HdrHistogram
// defines it (result.ValueAtPercentile).
func (h *Hist) Percentile(p float64) time.Duration {
	return time.Duration(result.ValueAtPercentile(h.h, p))
}

// Summary returns the result-schema form: percentiles and the V2 encoding.
func (h *Hist) Summary() result.Histogram {
	s := result.Histogram{Unit: "ns", Count: h.h.TotalCount(), Overflow: h.overflow}
	if s.Count > 0 {
		s.Min, s.Max, s.Mean = h.h.Min(), h.h.Max(), h.h.Mean()
		s.P50 = result.ValueAtPercentile(h.h, 50)
		s.P90 = result.ValueAtPercentile(h.h, 90)
		s.P99 = result.ValueAtPercentile(h.h, 99)
		s.P999 = result.ValueAtPercentile(h.h, 99.9)
		s.P9999 = result.ValueAtPercentile(h.h, 99.99)
	}
	s.EncodedV2 = result.EncodeHistogram(h.h)
	return s
}

// DecodeHist decodes a result histogram's V2 encoding.
func DecodeHist(s result.Histogram) (*Hist, error) {
	h, err := s.Decode()
	if err != nil {
		return nil, fmt.Errorf("loadgen: histogram encoding: %w", err)
	}
	return &Hist{h: h, overflow: s.Overflow}, nil
}

// buckets cuts a mode's timeline into the buckets of its series and its
// interval logs, aligned with the measurement window [ws, we) (ns since the
// mode started): whole seconds back from ws through the warm-up (the first
// one may be shorter), whole seconds from ws to we (the last one may be
// shorter, never merged with the drain), then whole seconds from we on.
// Bucket k >= 0 starts at or after ws; warm-up buckets are negative. we = 0
// means no end is known yet: whole seconds from ws on.
type buckets struct{ ws, we int64 }

const bucketNs = int64(time.Second)

// winBuckets is the number of buckets inside the window.
func (b buckets) winBuckets() int {
	if b.we <= b.ws {
		return math.MaxInt32
	}
	return int((b.we - b.ws + bucketNs - 1) / bucketNs)
}

// index returns the bucket holding ns.
func (b buckets) index(ns int64) int {
	switch {
	case ns < b.ws:
		return -int((b.ws - ns + bucketNs - 1) / bucketNs)
	case b.we <= b.ws || ns < b.we:
		return int((ns - b.ws) / bucketNs)
	}
	return b.winBuckets() + int((ns-b.we)/bucketNs)
}

// bounds returns bucket k's [from, to) in ns since the mode started.
func (b buckets) bounds(k int) (from, to int64) {
	n := b.winBuckets()
	switch {
	case k < 0:
		from, to = b.ws+int64(k)*bucketNs, b.ws+int64(k+1)*bucketNs
		return max(from, 0), to
	case k < n:
		from, to = b.ws+int64(k)*bucketNs, b.ws+int64(k+1)*bucketNs
		if b.we > b.ws {
			to = min(to, b.we)
		}
		return from, to
	}
	from = b.we + int64(k-n)*bucketNs
	return from, from + bucketNs
}

// intervals keeps one histogram per bucket of a run for one metric, shared
// by the goroutines that record it (a mutex per record call; callers record
// per batch or per commit, not per byte, so it stays cheap). The load
// generator records only samples of the measurement window, so the interval
// log holds exactly the samples of the result's histogram.
type intervals struct {
	mu    sync.Mutex
	start time.Time
	b     buckets
	win   bool // b is the measurement window (written into the log)
	secs  []*Hist
}

// newIntervals returns intervals of whole seconds from start.
func newIntervals(start time.Time) *intervals { return &intervals{start: start} }

// setWindow aligns the buckets with the window [ws, we), ns since start.
// It is called before any sample is recorded.
func (iv *intervals) setWindow(ws, we int64) {
	iv.mu.Lock()
	iv.b, iv.win = buckets{ws, we}, true
	iv.mu.Unlock()
}

func (iv *intervals) record(at time.Time, ds ...time.Duration) {
	iv.mu.Lock()
	h := iv.bucketLocked(at)
	for _, d := range ds {
		h.Record(d)
	}
	iv.mu.Unlock()
}

// recordN records n samples of d.
func (iv *intervals) recordN(at time.Time, d time.Duration, n int64) {
	iv.mu.Lock()
	iv.bucketLocked(at).RecordN(d, n)
	iv.mu.Unlock()
}

// bucketLocked returns the histogram of the bucket holding at (samples
// before the first bucket go to it); iv.mu must be held.
func (iv *intervals) bucketLocked(at time.Time) *Hist {
	k := max(iv.b.index(int64(at.Sub(iv.start))), 0)
	for len(iv.secs) <= k {
		iv.secs = append(iv.secs, nil)
	}
	if iv.secs[k] == nil {
		iv.secs[k] = NewHist()
	}
	return iv.secs[k]
}

// p99 returns the p99 of bucket k, or 0.
func (iv *intervals) p99(k int) int64 {
	iv.mu.Lock()
	defer iv.mu.Unlock()
	if k < 0 || k >= len(iv.secs) || iv.secs[k] == nil || iv.secs[k].Count() == 0 {
		return 0
	}
	return int64(iv.secs[k].Percentile(99))
}

// count returns the samples recorded in every bucket.
func (iv *intervals) count() int64 {
	iv.mu.Lock()
	defer iv.mu.Unlock()
	var n int64
	for _, h := range iv.secs {
		if h != nil {
			n += h.Count()
		}
	}
	return n
}

// writeHlog writes the intervals as an HdrHistogram interval log, the
// format HdrHistogram's own tools (HistogramLogProcessor, HdrHistogram
// plotter) read. StartTime and BaseTime are the mode's start, so interval
// times are seconds since the mode started; a comment gives the
// measurement window in the same seconds (HistogramLogProcessor -start and
// -end take them). Empty buckets are left out; with no sample at all
// nothing is written and ok is false (HdrHistogram's Java tools fail on a
// log without intervals).
func (iv *intervals) writeHlog(w io.Writer, comment string) (ok bool, err error) {
	iv.mu.Lock()
	defer iv.mu.Unlock()
	any := false
	for _, h := range iv.secs {
		if h != nil && h.Count() > 0 {
			any = true
		}
	}
	if !any {
		return false, nil
	}
	lw := hdrhistogram.NewHistogramLogWriter(w)
	startMs := iv.start.UnixMilli()
	if err := lw.OutputLogFormatVersion(); err != nil {
		return false, err
	}
	if err := lw.OutputComment(comment); err != nil {
		return false, err
	}
	if iv.win {
		if err := lw.OutputComment(fmt.Sprintf("[MeasurementWindow: start %.3f s, end %.3f s after StartTime; every interval holds only samples of this window]",
			float64(iv.b.ws)/1e9, float64(iv.b.we)/1e9)); err != nil {
			return false, err
		}
	}
	if err := lw.OutputStartTime(startMs); err != nil {
		return false, err
	}
	lw.SetBaseTime(startMs)
	if err := lw.OutputBaseTime(startMs); err != nil {
		return false, err
	}
	if err := lw.OutputLegend(); err != nil {
		return false, err
	}
	for k, h := range iv.secs {
		if h == nil || h.Count() == 0 {
			continue
		}
		from, to := iv.b.bounds(k)
		h.h.SetStartTimeMs(startMs + from/1e6)
		h.h.SetEndTimeMs(startMs + to/1e6)
		if err := lw.OutputIntervalHistogram(h.h); err != nil {
			return false, err
		}
	}
	return true, nil
}
