// This file tests the OMB results of a run directory against a hand-built
// one: the series are cut into OMB's 10-second periods of the window, the
// units are OMB's, and the aggregates hold every period's samples.

package reports_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/sharebench/sharebench/loadgen/result"
	"github.com/sharebench/sharebench/reports"
)

// writeHlog writes an interval log whose intervals start at the given
// seconds since the mode's start, each holding n samples of its value.
func writeHlog(t *testing.T, path string, startMs int64, at []float64, value time.Duration, n int64) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	lw := hdrhistogram.NewHistogramLogWriter(f)
	lw.SetBaseTime(startMs)
	for _, err := range []error{lw.OutputLogFormatVersion(), lw.OutputStartTime(startMs), lw.OutputBaseTime(startMs), lw.OutputLegend()} {
		if err != nil {
			t.Fatal(err)
		}
	}
	for i, s := range at {
		h := hdrhistogram.New(1, 3_600_000_000_000, 3)
		// Each interval's value grows with its index, so a sample put in
		// the wrong period shows.
		if err := h.RecordValues(int64(value)*int64(i+1), n); err != nil {
			t.Fatal(err)
		}
		h.SetStartTimeMs(startMs + int64(s*1000))
		h.SetEndTimeMs(startMs + int64(s*1000) + 1000)
		if err := lw.OutputIntervalHistogram(h); err != nil {
			t.Fatal(err)
		}
	}
}

func TestWriteOMB(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	const startMs = 1_700_000_000_000
	// A 25 s window from 0.5 s: three OMB periods, the last 5 s long.
	m := result.ModeResult{Mode: "explicit", WindowStartNs: 5e8, WindowEndNs: 25.5e9, MeasuredNs: 25e9}
	for s := 0; s < 27; s++ {
		m.Series = append(m.Series, result.Second{T: s, StartNs: int64(s) * 1e9, EndNs: int64(s+1) * 1e9, Inputs: 100, Outputs: 90, Backlog: int64(s)})
	}
	// One interval per period: in the first, second and third.
	at := []float64{0.5, 12, 24}
	writeHlog(t, result.HlogPath(dir, "explicit", result.HistProduce), startMs, at, 2*time.Millisecond, 10)
	writeHlog(t, result.HlogPath(dir, "explicit", result.HistSendLag), startMs, at, 3*time.Microsecond, 10)
	writeHlog(t, result.HlogPath(dir, "explicit", result.HistEndToEnd), startMs, at, 5*time.Millisecond, 10)
	spec, _ := json.Marshal(map[string]any{"name": "omb-test", "topics": 1, "partitionsPerTopic": 8, "messageSize": 1024, "producersPerTopic": 2, "consumers": 4})
	r := &result.Result{Spec: spec, Env: result.Env{Target: "engine"}, Repeats: 1, Modes: []result.ModeResult{m, {Mode: "transactional", Unsupported: "not here"}}}
	files, err := reports.WriteOMB(dir, r)
	if err != nil {
		t.Fatalf("WriteOMB: %v", err)
	}
	if want := result.OMBPath(dir, "explicit"); len(files) != 1 || files[0] != want {
		t.Fatalf("files %q, want only %s (an unsupported mode has none)", files, want)
	}
	data, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	var o reports.OMBResult
	if err := json.Unmarshal(data, &o); err != nil {
		t.Fatal(err)
	}
	if o.Workload != "omb-test" || o.Driver != "sharebench-engine-explicit" || o.Partitions != 8 || o.ConsumersPerTopic != 4 || o.MessageSize != 1024 {
		t.Errorf("header %+v", o)
	}
	near := func(got, want float64) bool { return got > want*0.99 && got < want*1.01 }
	for k, want := range []struct {
		publish, e2e float64 // ms
		delay        int64   // µs
	}{{2, 5, 3}, {4, 10, 6}, {6, 15, 9}} {
		if len(o.PublishLatency50pct) != 3 || !near(o.PublishLatency50pct[k], want.publish) || !near(o.EndToEndLatency95pct[k], want.e2e) ||
			o.PublishDelayLatency99pct[k] != want.delay {
			t.Fatalf("period %d: publish p50 %v ms, e2e p95 %v ms, delay p99 %v µs; want %v, %v, %v",
				k, o.PublishLatency50pct, o.EndToEndLatency95pct, o.PublishDelayLatency99pct, want.publish, want.e2e, want.delay)
		}
	}
	// By their middles, seconds 0..9 are in the first period (second 0
	// only partly in the window), 10..19 in the second, 20..25 in the
	// third; each period's rate is its seconds' counts over their length.
	if len(o.PublishRate) != 3 || !near(o.PublishRate[0], 100) || !near(o.ConsumeRate[1], 90) || o.Backlog[2] != 25 || o.PublishErrorRate[2] != 0 {
		t.Errorf("rates %v %v backlog %v errors %v", o.PublishRate, o.ConsumeRate, o.Backlog, o.PublishErrorRate)
	}
	if !near(o.AggregatedEndToEndLatencyMax, 15) || !near(o.AggregatedPublishLatency50pct, 4) || o.AggregatedPublishDelayLatencyMax != 9 {
		t.Errorf("aggregates: e2e max %v, publish p50 %v, delay max %v", o.AggregatedEndToEndLatencyMax, o.AggregatedPublishLatency50pct, o.AggregatedPublishDelayLatencyMax)
	}
	if v, ok := o.AggregatedEndToEndLatencyQuantiles["100.0"]; !ok || !near(v, 15) {
		t.Errorf("quantiles lack 100.0 at the max: %v", o.AggregatedEndToEndLatencyQuantiles)
	}
	if _, err := reports.WriteOMB(filepath.Join(dir, "none"), &result.Result{Spec: []byte("{")}); err == nil {
		t.Errorf("a damaged workload gave no error")
	}
}
