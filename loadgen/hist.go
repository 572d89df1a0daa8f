// This file holds latency histograms: HdrHistograms in nanoseconds with
// three significant figures, one per goroutine, merged at report time, with
// overflows counted rather than clamped; and the per-second interval
// histograms behind the .hlog files and the per-second p99 series.

package loadgen

import (
	"fmt"
	"io"
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

// Quantile returns the value at quantile q (0..100 percentile scale).
func (h *Hist) Percentile(p float64) time.Duration {
	return time.Duration(h.h.ValueAtPercentile(p))
}

// Summary returns the result-schema form: percentiles and the V2 encoding.
func (h *Hist) Summary() result.Histogram {
	s := result.Histogram{Unit: "ns", Count: h.h.TotalCount(), Overflow: h.overflow}
	if s.Count > 0 {
		s.Min, s.Max, s.Mean = h.h.Min(), h.h.Max(), h.h.Mean()
		s.P50 = h.h.ValueAtPercentile(50)
		s.P90 = h.h.ValueAtPercentile(90)
		s.P99 = h.h.ValueAtPercentile(99)
		s.P999 = h.h.ValueAtPercentile(99.9)
		s.P9999 = h.h.ValueAtPercentile(99.99)
	}
	// Encode already returns the base64 text HdrHistogram's tools exchange.
	if b, err := h.h.Encode(hdrhistogram.V2CompressedEncodingCookieBase); err == nil {
		s.EncodedV2 = string(b)
	}
	return s
}

// DecodeHist decodes a result histogram's V2 encoding.
func DecodeHist(s result.Histogram) (*Hist, error) {
	h, err := hdrhistogram.Decode([]byte(s.EncodedV2))
	if err != nil {
		return nil, fmt.Errorf("loadgen: histogram encoding: %w", err)
	}
	return &Hist{h: h, overflow: s.Overflow}, nil
}

// intervals keeps one histogram per second of a run for one metric, shared
// by the goroutines that record it (a mutex per record call; callers record
// per batch or per commit, not per byte, so it stays cheap).
type intervals struct {
	mu    sync.Mutex
	start time.Time
	secs  []*Hist
}

func newIntervals(start time.Time) *intervals { return &intervals{start: start} }

func (iv *intervals) record(at time.Time, ds ...time.Duration) {
	sec := int(at.Sub(iv.start) / time.Second)
	if sec < 0 {
		sec = 0
	}
	iv.mu.Lock()
	for len(iv.secs) <= sec {
		iv.secs = append(iv.secs, nil)
	}
	if iv.secs[sec] == nil {
		iv.secs[sec] = NewHist()
	}
	for _, d := range ds {
		iv.secs[sec].Record(d)
	}
	iv.mu.Unlock()
}

// p99 returns the p99 of second sec, or 0.
func (iv *intervals) p99(sec int) int64 {
	iv.mu.Lock()
	defer iv.mu.Unlock()
	if sec >= len(iv.secs) || iv.secs[sec] == nil || iv.secs[sec].Count() == 0 {
		return 0
	}
	return int64(iv.secs[sec].Percentile(99))
}

// writeHlog writes the intervals as an HdrHistogram interval log, the
// format HdrHistogram's own tools (HistogramLogProcessor, HdrHistogram
// plotter) read.
func (iv *intervals) writeHlog(w io.Writer, comment string) error {
	iv.mu.Lock()
	defer iv.mu.Unlock()
	lw := hdrhistogram.NewHistogramLogWriter(w)
	startMs := iv.start.UnixMilli()
	if err := lw.OutputLogFormatVersion(); err != nil {
		return err
	}
	if err := lw.OutputComment(comment); err != nil {
		return err
	}
	if err := lw.OutputStartTime(startMs); err != nil {
		return err
	}
	lw.SetBaseTime(startMs)
	if err := lw.OutputBaseTime(startMs); err != nil {
		return err
	}
	if err := lw.OutputLegend(); err != nil {
		return err
	}
	for sec, h := range iv.secs {
		if h == nil {
			continue
		}
		h.h.SetStartTimeMs(startMs + int64(sec)*1000)
		h.h.SetEndTimeMs(startMs + int64(sec+1)*1000)
		if err := lw.OutputIntervalHistogram(h.h); err != nil {
			return err
		}
	}
	return nil
}
