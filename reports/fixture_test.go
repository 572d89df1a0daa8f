package reports_test

import (
	"encoding/json"
	"flag"
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/sharebench/sharebench/loadgen/result"
	"github.com/sharebench/sharebench/reports"
	"github.com/sharebench/sharebench/vocab"
	"github.com/sharebench/sharebench/workloads"
)

var update = flag.Bool("update", false, "rewrite testdata/run-small/result.json from the fixture builder")

// storedFixture is the stored small run (written by newFixture(smallRun())).
const storedFixture = "testdata/run-small"

// fixture describes a synthetic run.
type fixture struct {
	seed       uint64
	latSeed    uint64 // seeds the latency samples; 0: seed. Equal latSeeds give identical histograms.
	repeats    int
	modes      []string
	samples    int     // latency samples per histogram and repeat
	throughput float64 // scale on every mode's base throughput
	latency    float64 // scale on every mode's latency
	noise      float64 // relative standard deviation of throughput between repeats
	// forbidden adds a duplicate to transactional, which allows none.
	forbidden bool
}

func smallRun() fixture {
	return fixture{seed: 1, repeats: 2, modes: []string{"implicit", "explicit", "transactional"},
		samples: 2000, throughput: 1, latency: 1, noise: 0.01}
}

// modeBase is each mode's throughput (outputs/s) and median latencies (ms).
var modeBase = map[string]struct{ throughput, e2eMs, commitMs float64 }{
	"implicit":      {2000, 2, 0.6},
	"explicit":      {1950, 3, 0.9},
	"transactional": {1800, 5, 2.5},
	"deferred":      {1900, 4, 1.5},
}

// histogram records n lognormal samples (median medianMs, shape 0.5, plus a
// 1% slow tail) into an HdrHistogram and returns it with its summary.
func histogram(t testing.TB, rng *rand.Rand, n int, medianMs float64) result.Histogram {
	t.Helper()
	h := hdrhistogram.New(1, int64(60*time.Second), 3)
	for range n {
		ms := medianMs * math.Exp(0.5*rng.NormFloat64())
		if rng.Float64() < 0.01 {
			ms *= 8
		}
		if err := h.RecordValue(int64(ms * 1e6)); err != nil {
			t.Fatalf("recording: %v", err)
		}
	}
	enc, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		t.Fatalf("encoding: %v", err)
	}
	return result.Histogram{
		Unit: "ns", Count: h.TotalCount(), Min: h.Min(), Max: h.Max(), Mean: h.Mean(),
		P50: h.ValueAtQuantile(50), P90: h.ValueAtQuantile(90), P99: h.ValueAtQuantile(99),
		P999: h.ValueAtQuantile(99.9), P9999: h.ValueAtQuantile(99.99),
		EncodedV2: string(enc), // Encode returns the base64 text
	}
}

// newFixture builds a result with real HdrHistograms filled from seeded
// samples, six seconds of series (one warm-up, four measured, one drain),
// one fault (explicit, repeat 1) and an allowed duplicate (explicit).
func newFixture(t testing.TB, f fixture) *result.Result {
	t.Helper()
	rng := rand.New(rand.NewPCG(f.seed, 0x5eed))
	latSeed := f.latSeed
	if latSeed == 0 {
		latSeed = f.seed
	}
	lat := rand.New(rand.NewPCG(latSeed, 0x1a7))
	// The producer-side histograms draw from their own stream, so adding
	// them left the end-to-end and commit samples as they were.
	prod := rand.New(rand.NewPCG(latSeed, 0x9d))
	spec := fixtureSpec(t)
	specJSON, err := json.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	specYAML, err := spec.YAML()
	if err != nil {
		t.Fatal(err)
	}
	started := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	r := &result.Result{
		Schema: result.Schema,
		Env: result.Env{
			Commit: "0123456789ab", GoVersion: "go1.26.8", OS: "linux", Arch: "amd64",
			CPU: "Fixture CPU @ 2.00GHz", NumCPU: 2, GOMAXPROCS: 2, Target: "engine", Embedded: true,
		},
		Workload:    "read-process-write",
		Spec:        specJSON,
		SpecYAML:    string(specYAML),
		Seed:        int64(f.seed),
		Args:        []string{"sharebench", "run", "--workload", "read-process-write", "--repeats", "2"},
		Flags:       map[string]string{"repeats": "2", "target": "engine"},
		TopicPrefix: "sb-fixture",
		Started:     started,
		Finished:    started.Add(time.Minute),
		OpenLoop:    true,
		Rate:        2000,
		Duration:    4 * time.Second,
		Warmup:      time.Second,
		Repeats:     f.repeats,
	}
	for _, mode := range f.modes {
		base := modeBase[mode]
		for rep := 1; rep <= f.repeats; rep++ {
			tput := base.throughput * f.throughput * (1 + f.noise*rng.NormFloat64())
			m := result.ModeResult{
				Mode: vocab.Mode(mode), Repeat: rep, MeasuredNs: int64(4 * time.Second),
				InputsProduced: 8000, OutputsVisible: int64(tput * 4), Throughput: tput, InputRate: 2000,
				TotalInputs: 12000, TotalOutputs: 12000, Processed: 12010,
				Redeliveries: int64(rng.IntN(20)), Commits: 400, Aborts: int64(rng.IntN(3)), LockExpiries: int64(rng.IntN(5)),
				DrainNs: int64(800 * time.Millisecond),
				// 0.9 to 1.1 CPU-seconds per second of the 4 s window, on 2 Ps.
				CPUNs: int64(4 * time.Second * time.Duration(90+prod.IntN(20)) / 100),
				Histograms: map[string]result.Histogram{
					result.HistEndToEnd: histogram(t, lat, f.samples, base.e2eMs*f.latency),
					result.HistCommit:   histogram(t, lat, f.samples, base.commitMs*f.latency),
					result.HistProduce:  histogram(t, prod, f.samples, 0.4*f.latency),
					result.HistSendLag:  histogram(t, prod, f.samples, 0.02*f.latency),
				},
				Verify: &result.Verification{Pass: true, Counts: map[vocab.Finding]int64{}, Inputs: 12000, Outputs: 12000},
			}
			m.Noise = &result.Noise{
				LoadAvgStart: []float64{1.2 + 0.1*float64(rep), 0.9, 0.7},
				LoadAvgEnd:   []float64{1.9 + 0.1*float64(rep), 1.1, 0.8},
				CPUShare:     float64(m.CPUNs) / float64(4*time.Second) / 2,
				GOMAXPROCS:   2,
			}
			if mode != "transactional" && mode != "classic-eos" {
				m.Verify.Allowed = []vocab.Finding{vocab.KindDuplicate}
			}
			for sec := 0; sec < 6; sec++ {
				s := result.Second{
					T: sec, Warmup: sec == 0, Drain: sec == 5, InputRate: 2000,
					OutputRate: int64(tput * (1 + 0.02*rng.NormFloat64())),
					Backlog:    int64(rng.IntN(50)), SendLagP99: int64(50 * time.Microsecond),
					P99: int64(base.e2eMs * f.latency * 3 * 1e6 * (1 + 0.1*rng.Float64())),
				}
				if sec == 5 {
					s.InputRate, s.OutputRate = 0, int64(tput/10)
				}
				m.Series = append(m.Series, s)
			}
			if mode == "explicit" && rep == 1 {
				m.Faults = []result.FaultEvent{{AtNs: int64(2500 * time.Millisecond), Kind: "worker-crash", Detail: "worker 1 after produce, before ack"}}
				m.Series[2].Faults = []string{"worker-crash"}
				m.Series[3].OutputRate /= 2
				m.Series[3].P99 *= 6
				m.WorkerCrashes = 1
				m.Verify.Counts["duplicate"] = 2
				m.Verify.Witnesses = map[vocab.Finding][]result.Witness{"duplicate": {
					{Kind: "duplicate", InputID: 4711, Partition: 1, Offset: 1234, State: "ACKNOWLEDGED", DeliveryCount: 2,
						Outputs: []result.OutputRef{{Partition: 0, Offset: 900, Committed: true, VisibleNs: 2400000000}, {Partition: 2, Offset: 905, Committed: true, VisibleNs: 2700000000}},
						Detail:  "redelivered after the worker crashed between produce and ack"},
					{Kind: "duplicate", InputID: 4712, Partition: 1, Offset: 1235, State: "ACKNOWLEDGED", DeliveryCount: 2,
						Outputs: []result.OutputRef{{Partition: 0, Offset: 901, Committed: true, VisibleNs: 2400100000}, {Partition: 2, Offset: 906, Committed: true, VisibleNs: 2700100000}}},
				}}
			}
			if mode == "transactional" && f.forbidden && rep == 1 {
				m.Verify.Pass = false
				m.Verify.Counts["duplicate"] = 1
				m.Verify.Forbidden = []vocab.Finding{vocab.KindDuplicate}
				m.Verify.Witnesses = map[vocab.Finding][]result.Witness{"duplicate": {
					{Kind: "duplicate", InputID: 99, Partition: 0, Offset: 42, State: "ACKNOWLEDGED", DeliveryCount: 1,
						Outputs: []result.OutputRef{
							{Partition: 0, Offset: 7, TransactionalID: "sb-tx-0", Epoch: 3, Committed: true, VisibleNs: 1500000000},
							{Partition: 0, Offset: 8, TransactionalID: "sb-tx-0", Epoch: 4, Committed: true, VisibleNs: 1600000000},
						}},
				}}
			}
			r.Modes = append(r.Modes, m)
		}
	}
	return r
}

// fixtureSpec is the fixture's workload, as Parse would return it.
func fixtureSpec(t testing.TB) *workloads.Spec {
	t.Helper()
	s := workloads.New("read-process-write")
	s.Description = "Read, process, write: the fixture's workload."
	s.PartitionsPerTopic = 3
	s.TestLength, s.WarmupLength = 4*time.Second, time.Second
	s.Defaults()
	if err := s.Validate(); err != nil {
		t.Fatalf("the fixture's workload: %v", err)
	}
	return s
}

// fixtureRun wraps a fixture result as a Run.
func fixtureRun(t testing.TB, name string, f fixture) *reports.Run {
	t.Helper()
	return &reports.Run{Name: name, Dir: filepath.Join("fixture", name), Result: newFixture(t, f)}
}

// loadStored loads testdata/run-small.
func loadStored(t testing.TB) *reports.Run {
	t.Helper()
	run, err := reports.Load(storedFixture)
	if err != nil {
		t.Fatalf("loading the stored fixture: %v (regenerate it with go test ./reports -run TestStoredFixture -update)", err)
	}
	return run
}
