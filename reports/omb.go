// This file writes a run as the OpenMessaging Benchmark writes its
// results: one JSON document per mode in the shape of OMB's TestResult, so
// OMB's own chart script (bin/create_charts.py) draws sharebench's modes as
// it draws OMB's drivers.

package reports

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/sharebench/sharebench/loadgen/result"
)

// ombPeriodNs is OMB's statistics period: its time series hold one value
// per 10 seconds, and its chart script draws point i at 10·i seconds.
const ombPeriodNs = int64(10e9)

// ombTicks is OMB's percentile iteration (HdrHistogram's percentiles(100))
// for the aggregated quantile maps.
const ombTicks = 100

// OMBResult is OMB's TestResult: the field names, units and types its
// Jackson serialization writes. Publish latency is sharebench's produce
// service time, in milliseconds; publish delay is the send lag (intended
// send time to actual send), in microseconds; end-to-end latency is
// sharebench's (intended send time to the output visible to a
// read_committed reader), in milliseconds. Series hold one value per
// OMB period of the measurement window (the last may be shorter).
type OMBResult struct {
	Workload          string `json:"workload"`
	Driver            string `json:"driver"`
	MessageSize       int64  `json:"messageSize"`
	Topics            int    `json:"topics"`
	Partitions        int    `json:"partitions"`
	ProducersPerTopic int    `json:"producersPerTopic"`
	ConsumersPerTopic int    `json:"consumersPerTopic"`

	PublishRate      []float64 `json:"publishRate"`
	PublishErrorRate []float64 `json:"publishErrorRate"`
	ConsumeRate      []float64 `json:"consumeRate"`
	Backlog          []int64   `json:"backlog"`

	PublishLatencyAvg     []float64 `json:"publishLatencyAvg"`
	PublishLatency50pct   []float64 `json:"publishLatency50pct"`
	PublishLatency75pct   []float64 `json:"publishLatency75pct"`
	PublishLatency95pct   []float64 `json:"publishLatency95pct"`
	PublishLatency99pct   []float64 `json:"publishLatency99pct"`
	PublishLatency999pct  []float64 `json:"publishLatency999pct"`
	PublishLatency9999pct []float64 `json:"publishLatency9999pct"`
	PublishLatencyMax     []float64 `json:"publishLatencyMax"`

	PublishDelayLatencyAvg     []float64 `json:"publishDelayLatencyAvg"`
	PublishDelayLatency50pct   []int64   `json:"publishDelayLatency50pct"`
	PublishDelayLatency75pct   []int64   `json:"publishDelayLatency75pct"`
	PublishDelayLatency95pct   []int64   `json:"publishDelayLatency95pct"`
	PublishDelayLatency99pct   []int64   `json:"publishDelayLatency99pct"`
	PublishDelayLatency999pct  []int64   `json:"publishDelayLatency999pct"`
	PublishDelayLatency9999pct []int64   `json:"publishDelayLatency9999pct"`
	PublishDelayLatencyMax     []int64   `json:"publishDelayLatencyMax"`

	AggregatedPublishLatencyAvg     float64 `json:"aggregatedPublishLatencyAvg"`
	AggregatedPublishLatency50pct   float64 `json:"aggregatedPublishLatency50pct"`
	AggregatedPublishLatency75pct   float64 `json:"aggregatedPublishLatency75pct"`
	AggregatedPublishLatency95pct   float64 `json:"aggregatedPublishLatency95pct"`
	AggregatedPublishLatency99pct   float64 `json:"aggregatedPublishLatency99pct"`
	AggregatedPublishLatency999pct  float64 `json:"aggregatedPublishLatency999pct"`
	AggregatedPublishLatency9999pct float64 `json:"aggregatedPublishLatency9999pct"`
	AggregatedPublishLatencyMax     float64 `json:"aggregatedPublishLatencyMax"`

	AggregatedPublishDelayLatencyAvg     float64 `json:"aggregatedPublishDelayLatencyAvg"`
	AggregatedPublishDelayLatency50pct   int64   `json:"aggregatedPublishDelayLatency50pct"`
	AggregatedPublishDelayLatency75pct   int64   `json:"aggregatedPublishDelayLatency75pct"`
	AggregatedPublishDelayLatency95pct   int64   `json:"aggregatedPublishDelayLatency95pct"`
	AggregatedPublishDelayLatency99pct   int64   `json:"aggregatedPublishDelayLatency99pct"`
	AggregatedPublishDelayLatency999pct  int64   `json:"aggregatedPublishDelayLatency999pct"`
	AggregatedPublishDelayLatency9999pct int64   `json:"aggregatedPublishDelayLatency9999pct"`
	AggregatedPublishDelayLatencyMax     int64   `json:"aggregatedPublishDelayLatencyMax"`

	// The quantile maps are keyed by percentile (Jackson writes a Double
	// key as its decimal text, which the chart script reads with float).
	AggregatedPublishLatencyQuantiles      map[string]float64 `json:"aggregatedPublishLatencyQuantiles"`
	AggregatedPublishDelayLatencyQuantiles map[string]int64   `json:"aggregatedPublishDelayLatencyQuantiles"`

	EndToEndLatencyAvg     []float64 `json:"endToEndLatencyAvg"`
	EndToEndLatency50pct   []float64 `json:"endToEndLatency50pct"`
	EndToEndLatency75pct   []float64 `json:"endToEndLatency75pct"`
	EndToEndLatency95pct   []float64 `json:"endToEndLatency95pct"`
	EndToEndLatency99pct   []float64 `json:"endToEndLatency99pct"`
	EndToEndLatency999pct  []float64 `json:"endToEndLatency999pct"`
	EndToEndLatency9999pct []float64 `json:"endToEndLatency9999pct"`
	EndToEndLatencyMax     []float64 `json:"endToEndLatencyMax"`

	AggregatedEndToEndLatencyQuantiles map[string]float64 `json:"aggregatedEndToEndLatencyQuantiles"`

	AggregatedEndToEndLatencyAvg     float64 `json:"aggregatedEndToEndLatencyAvg"`
	AggregatedEndToEndLatency50pct   float64 `json:"aggregatedEndToEndLatency50pct"`
	AggregatedEndToEndLatency75pct   float64 `json:"aggregatedEndToEndLatency75pct"`
	AggregatedEndToEndLatency95pct   float64 `json:"aggregatedEndToEndLatency95pct"`
	AggregatedEndToEndLatency99pct   float64 `json:"aggregatedEndToEndLatency99pct"`
	AggregatedEndToEndLatency999pct  float64 `json:"aggregatedEndToEndLatency999pct"`
	AggregatedEndToEndLatency9999pct float64 `json:"aggregatedEndToEndLatency9999pct"`
	AggregatedEndToEndLatencyMax     float64 `json:"aggregatedEndToEndLatencyMax"`
}

// ErrOMB is returned when a run cannot be written as OMB results.
var ErrOMB = errors.New("reports: OMB result")

// ombSpec is what an OMB result takes from the run's workload.
type ombSpec struct {
	Name               string `json:"name"`
	Topics             int    `json:"topics"`
	PartitionsPerTopic int    `json:"partitionsPerTopic"`
	MessageSize        int64  `json:"messageSize"`
	ProducersPerTopic  int    `json:"producersPerTopic"`
	Consumers          int    `json:"consumers"`
}

// WriteOMB writes one OMB result per measured mode of r into runDir
// (result.OMBPath) and returns the files written. The driver of each is
// "sharebench-TARGET-MODE", so OMB's chart script, which groups results by
// workload and labels them by driver, compares the modes. A mode that
// failed or never opened its window is left out.
func WriteOMB(runDir string, r *result.Result) ([]string, error) {
	var spec ombSpec
	if err := json.Unmarshal(r.Spec, &spec); err != nil {
		return nil, fmt.Errorf("%w: the result's workload: %w", ErrOMB, err)
	}
	var files []string
	for _, m := range r.Modes {
		if m.Unsupported != "" || m.Error != "" || m.MeasuredNs <= 0 {
			continue
		}
		name := result.ModeRunName(m.Mode, m.Repeat, r.Repeats)
		o, err := ombMode(runDir, name, r.Env.Target.String(), spec, m)
		if err != nil {
			return files, err
		}
		data, err := json.MarshalIndent(o, "", "  ")
		if err != nil {
			return files, fmt.Errorf("%w: %w", ErrOMB, err)
		}
		path := result.OMBPath(runDir, name)
		if err := os.WriteFile(path, append(data, '\n'), 0o644); err != nil {
			return files, fmt.Errorf("%w: %w", ErrOMB, err)
		}
		files = append(files, path)
	}
	return files, nil
}

func ombMode(runDir, name, target string, spec ombSpec, m result.ModeResult) (*OMBResult, error) {
	o := &OMBResult{
		Workload: spec.Name, Driver: "sharebench-" + target + "-" + name, MessageSize: spec.MessageSize,
		Topics: spec.Topics, Partitions: spec.PartitionsPerTopic, ProducersPerTopic: spec.ProducersPerTopic, ConsumersPerTopic: spec.Consumers,
	}
	n := int((m.MeasuredNs + ombPeriodNs - 1) / ombPeriodNs)
	// A bucket (a second of the series, an interval of a log) belongs to
	// the period that holds its middle, so the window's partial first and
	// last seconds fall in the first and last periods.
	period := func(midNs int64) int {
		return min(max(int((midNs-m.WindowStartNs)/ombPeriodNs), 0), n-1)
	}

	// Rates and backlog from the per-second series, over the window: a
	// period's rate is its seconds' counts over their length.
	inputs, outputs, spanNs := make([]int64, n), make([]int64, n), make([]int64, n)
	o.Backlog = make([]int64, n)
	for _, s := range m.Series {
		if s.EndNs <= m.WindowStartNs || s.StartNs >= m.WindowEndNs {
			continue
		}
		k := period((s.StartNs + s.EndNs) / 2)
		inputs[k] += s.Inputs
		outputs[k] += s.Outputs
		spanNs[k] += s.EndNs - s.StartNs
		o.Backlog[k] = s.Backlog
	}
	for k := range n {
		secs := float64(spanNs[k]) / 1e9
		if secs <= 0 {
			secs = 1
		}
		o.PublishRate = append(o.PublishRate, float64(inputs[k])/secs)
		o.ConsumeRate = append(o.ConsumeRate, float64(outputs[k])/secs)
		// A failed produce fails the run: no error is left to count.
		o.PublishErrorRate = append(o.PublishErrorRate, 0)
	}

	// Latencies from the interval logs, which hold exactly the window's
	// samples, merged per period.
	hists := map[string][]*hdrhistogram.Histogram{}
	for _, h := range []string{result.HistProduce, result.HistSendLag, result.HistEndToEnd} {
		ps, err := readPeriods(result.HlogPath(runDir, name, h), n, period)
		if err != nil {
			return nil, err
		}
		hists[h] = ps
	}
	ms := func(ns int64) float64 { return float64(ns) / 1e6 }
	us := func(ns int64) int64 { return ns / 1e3 }
	for _, h := range hists[result.HistProduce] {
		o.PublishLatencyAvg = append(o.PublishLatencyAvg, h.Mean()/1e6)
		o.PublishLatency50pct = append(o.PublishLatency50pct, ms(result.ValueAtPercentile(h, 50)))
		o.PublishLatency75pct = append(o.PublishLatency75pct, ms(result.ValueAtPercentile(h, 75)))
		o.PublishLatency95pct = append(o.PublishLatency95pct, ms(result.ValueAtPercentile(h, 95)))
		o.PublishLatency99pct = append(o.PublishLatency99pct, ms(result.ValueAtPercentile(h, 99)))
		o.PublishLatency999pct = append(o.PublishLatency999pct, ms(result.ValueAtPercentile(h, 99.9)))
		o.PublishLatency9999pct = append(o.PublishLatency9999pct, ms(result.ValueAtPercentile(h, 99.99)))
		o.PublishLatencyMax = append(o.PublishLatencyMax, ms(h.Max()))
	}
	for _, h := range hists[result.HistSendLag] {
		o.PublishDelayLatencyAvg = append(o.PublishDelayLatencyAvg, h.Mean()/1e3)
		o.PublishDelayLatency50pct = append(o.PublishDelayLatency50pct, us(result.ValueAtPercentile(h, 50)))
		o.PublishDelayLatency75pct = append(o.PublishDelayLatency75pct, us(result.ValueAtPercentile(h, 75)))
		o.PublishDelayLatency95pct = append(o.PublishDelayLatency95pct, us(result.ValueAtPercentile(h, 95)))
		o.PublishDelayLatency99pct = append(o.PublishDelayLatency99pct, us(result.ValueAtPercentile(h, 99)))
		o.PublishDelayLatency999pct = append(o.PublishDelayLatency999pct, us(result.ValueAtPercentile(h, 99.9)))
		o.PublishDelayLatency9999pct = append(o.PublishDelayLatency9999pct, us(result.ValueAtPercentile(h, 99.99)))
		o.PublishDelayLatencyMax = append(o.PublishDelayLatencyMax, us(h.Max()))
	}
	for _, h := range hists[result.HistEndToEnd] {
		o.EndToEndLatencyAvg = append(o.EndToEndLatencyAvg, h.Mean()/1e6)
		o.EndToEndLatency50pct = append(o.EndToEndLatency50pct, ms(result.ValueAtPercentile(h, 50)))
		o.EndToEndLatency75pct = append(o.EndToEndLatency75pct, ms(result.ValueAtPercentile(h, 75)))
		o.EndToEndLatency95pct = append(o.EndToEndLatency95pct, ms(result.ValueAtPercentile(h, 95)))
		o.EndToEndLatency99pct = append(o.EndToEndLatency99pct, ms(result.ValueAtPercentile(h, 99)))
		o.EndToEndLatency999pct = append(o.EndToEndLatency999pct, ms(result.ValueAtPercentile(h, 99.9)))
		o.EndToEndLatency9999pct = append(o.EndToEndLatency9999pct, ms(result.ValueAtPercentile(h, 99.99)))
		o.EndToEndLatencyMax = append(o.EndToEndLatencyMax, ms(h.Max()))
	}

	// The aggregates merge the periods: the whole window, as result.json.
	agg := func(ps []*hdrhistogram.Histogram) *hdrhistogram.Histogram {
		all := newOMBHist()
		for _, h := range ps {
			all.Merge(h)
		}
		return all
	}
	pub, lag, e2e := agg(hists[result.HistProduce]), agg(hists[result.HistSendLag]), agg(hists[result.HistEndToEnd])
	o.AggregatedPublishLatencyAvg = pub.Mean() / 1e6
	o.AggregatedPublishLatency50pct = ms(result.ValueAtPercentile(pub, 50))
	o.AggregatedPublishLatency75pct = ms(result.ValueAtPercentile(pub, 75))
	o.AggregatedPublishLatency95pct = ms(result.ValueAtPercentile(pub, 95))
	o.AggregatedPublishLatency99pct = ms(result.ValueAtPercentile(pub, 99))
	o.AggregatedPublishLatency999pct = ms(result.ValueAtPercentile(pub, 99.9))
	o.AggregatedPublishLatency9999pct = ms(result.ValueAtPercentile(pub, 99.99))
	o.AggregatedPublishLatencyMax = ms(pub.Max())
	o.AggregatedPublishDelayLatencyAvg = lag.Mean() / 1e3
	o.AggregatedPublishDelayLatency50pct = us(result.ValueAtPercentile(lag, 50))
	o.AggregatedPublishDelayLatency75pct = us(result.ValueAtPercentile(lag, 75))
	o.AggregatedPublishDelayLatency95pct = us(result.ValueAtPercentile(lag, 95))
	o.AggregatedPublishDelayLatency99pct = us(result.ValueAtPercentile(lag, 99))
	o.AggregatedPublishDelayLatency999pct = us(result.ValueAtPercentile(lag, 99.9))
	o.AggregatedPublishDelayLatency9999pct = us(result.ValueAtPercentile(lag, 99.99))
	o.AggregatedPublishDelayLatencyMax = us(lag.Max())
	o.AggregatedEndToEndLatencyAvg = e2e.Mean() / 1e6
	o.AggregatedEndToEndLatency50pct = ms(result.ValueAtPercentile(e2e, 50))
	o.AggregatedEndToEndLatency75pct = ms(result.ValueAtPercentile(e2e, 75))
	o.AggregatedEndToEndLatency95pct = ms(result.ValueAtPercentile(e2e, 95))
	o.AggregatedEndToEndLatency99pct = ms(result.ValueAtPercentile(e2e, 99))
	o.AggregatedEndToEndLatency999pct = ms(result.ValueAtPercentile(e2e, 99.9))
	o.AggregatedEndToEndLatency9999pct = ms(result.ValueAtPercentile(e2e, 99.99))
	o.AggregatedEndToEndLatencyMax = ms(e2e.Max())
	o.AggregatedPublishLatencyQuantiles = map[string]float64{}
	o.AggregatedPublishDelayLatencyQuantiles = map[string]int64{}
	o.AggregatedEndToEndLatencyQuantiles = map[string]float64{}
	for _, b := range ombQuantiles(pub) {
		o.AggregatedPublishLatencyQuantiles[b.key] = ms(b.value)
	}
	for _, b := range ombQuantiles(lag) {
		o.AggregatedPublishDelayLatencyQuantiles[b.key] = us(b.value)
	}
	for _, b := range ombQuantiles(e2e) {
		o.AggregatedEndToEndLatencyQuantiles[b.key] = ms(b.value)
	}
	return o, nil
}

type ombQuantile struct {
	key   string
	value int64
}

// ombQuantiles is HdrHistogram's percentile iteration as OMB runs it
// (percentiles(100)); the keys are the percentiles as Jackson writes a
// Double ("50.0", "99.90234375").
func ombQuantiles(h *hdrhistogram.Histogram) []ombQuantile {
	if h.TotalCount() == 0 {
		return nil
	}
	var out []ombQuantile
	for _, b := range h.CumulativeDistributionWithTicks(ombTicks) {
		k := strconv.FormatFloat(b.Quantile, 'f', -1, 64)
		if !strings.Contains(k, ".") {
			k += ".0"
		}
		out = append(out, ombQuantile{k, b.ValueAt})
	}
	return out
}

// newOMBHist is an empty histogram of the range sharebench records.
func newOMBHist() *hdrhistogram.Histogram { return hdrhistogram.New(1, 3_600_000_000_000, 3) }

// readPeriods reads an interval log and merges its intervals into n
// periods (period maps an interval's middle, in ns since the mode started,
// to its period). A missing log is a histogram without samples: loadgen
// writes none for it.
func readPeriods(path string, n int, period func(midNs int64) int) ([]*hdrhistogram.Histogram, error) {
	out := make([]*hdrhistogram.Histogram, n)
	for i := range out {
		out[i] = newOMBHist()
	}
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return out, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrOMB, err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	for line := 1; sc.Scan(); line++ {
		// An interval line: start (s since StartTime, the mode's start),
		// length (s), max, the V2 histogram; the others are comments and
		// the legend.
		fields := strings.Split(sc.Text(), ",")
		if len(fields) != 4 || strings.HasPrefix(fields[0], "#") || strings.HasPrefix(fields[0], `"`) {
			continue
		}
		start, err := strconv.ParseFloat(fields[0], 64)
		if err != nil {
			return nil, fmt.Errorf("%w: %s:%d: interval start %q: %w", ErrOMB, path, line, fields[0], err)
		}
		length, err := strconv.ParseFloat(fields[1], 64)
		if err != nil {
			return nil, fmt.Errorf("%w: %s:%d: interval length %q: %w", ErrOMB, path, line, fields[1], err)
		}
		h, err := result.Histogram{EncodedV2: fields[3]}.Decode()
		if err != nil {
			return nil, fmt.Errorf("%w: %s:%d: %w", ErrOMB, path, line, err)
		}
		out[period(int64((start+length/2)*1e9))].Merge(h)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrOMB, path, err)
	}
	return out, nil
}
