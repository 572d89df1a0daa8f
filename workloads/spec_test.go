// This file tests Spec's defaults, helpers and validation of specs built in
// Go, and the Error and Fault helpers.

package workloads_test

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/sharebench/sharebench/vocab"
	"github.com/sharebench/sharebench/workloads"
)

func TestDefaultsFillZeroSpec(t *testing.T) {
	t.Parallel()
	s := &workloads.Spec{Name: "zero"}
	s.Defaults()
	want := &workloads.Spec{
		Name: "zero", Topics: 1, PartitionsPerTopic: 4, OutputPartitionsPerTopic: 4,
		MessageSizeBytes: 256, ProducersPerTopic: 2,
		ProducerRate:     0, // zero is a valid setting (closed loop): Defaults keeps it
		RateDistribution: "constant",
		TestLength:       10 * time.Second,
		WarmupLength:     0, // zero is a valid setting (no warm-up)
		DrainTimeout:     30 * time.Second, Consumers: 4, MaxPollRecords: 500,
		ProcessingTime: workloads.ProcessingTime{Distribution: "constant"},
		LockDuration:   30 * time.Second, DeliveryLimit: 5, MaxRecordLocks: 2000,
		TransactionTimeout: 60 * time.Second,
		Transaction:        workloads.Transaction{MaxRecords: 500, MaxDuration: 100 * time.Millisecond},
		CheckpointInterval: time.Second,
		Checkpoint:         workloads.Checkpoint{Order: "acks-first", Staging: "barrier", Timeout: 10 * time.Second},
		ModeNames:          []string{"all"},
	}
	if !reflect.DeepEqual(s, want) {
		t.Errorf("Defaults on a zero spec:\ngot  %+v\nwant %+v", s, want)
	}
	if err := s.Validate(); err != nil {
		t.Errorf("Validate after Defaults: %v", err)
	}
}

func TestNewHoldsDefaults(t *testing.T) {
	t.Parallel()
	s := workloads.New("n")
	if got, want := s.ProducerRate, 2000; got != want {
		t.Errorf("ProducerRate = %d, want %d", got, want)
	}
	if got, want := s.Warmup(), time.Second; got != want {
		t.Errorf("Warmup() = %v, want %v", got, want)
	}
	if got, want := s.TestDuration(), 10*time.Second; got != want {
		t.Errorf("TestDuration() = %v, want %v", got, want)
	}
	if err := s.Validate(); err != nil {
		t.Errorf("Validate(New) = %v, want nil", err)
	}
	s.Defaults()
	if got, want := s.OutputPartitionsPerTopic, s.PartitionsPerTopic; got != want {
		t.Errorf("OutputPartitionsPerTopic = %d, want %d", got, want)
	}
}

// TestZeroSettingsRoundTrip checks that settings whose zero value means
// something survive YAML: a closed loop, no warm-up, a commit on time only.
func TestZeroSettingsRoundTrip(t *testing.T) {
	t.Parallel()
	s := workloads.New("zeros")
	s.ProducerRate = 0
	s.WarmupLength = 0
	s.Transaction.MaxRecords = 0
	s.Defaults()
	roundTrip(t, s)
}

func TestDefaultsFoldsMinutes(t *testing.T) {
	t.Parallel()
	s := &workloads.Spec{Name: "m", TestMinutes: 1.5, WarmupMinutes: 0.5}
	if got, want := s.TestDuration(), 90*time.Second; got != want {
		t.Errorf("TestDuration() before Defaults = %v, want %v", got, want)
	}
	s.Defaults()
	if s.TestLength != 90*time.Second || s.TestMinutes != 0 || s.WarmupLength != 30*time.Second || s.WarmupMinutes != 0 {
		t.Errorf("after Defaults: TestLength %v TestMinutes %v WarmupLength %v WarmupMinutes %v, want 1m30s 0 30s 0",
			s.TestLength, s.TestMinutes, s.WarmupLength, s.WarmupMinutes)
	}
}

func TestModes(t *testing.T) {
	t.Parallel()
	all := []string{"implicit", "explicit", "deferred", "transactional", "classic-eos"}
	tests := []struct {
		in   []string
		want []string
	}{
		{nil, all},
		{[]string{"all"}, all},
		{[]string{"classic-eos", "implicit"}, []string{"implicit", "classic-eos"}},
		{[]string{"transactional", "transactional"}, []string{"transactional"}},
		{[]string{"deferred", "bogus"}, []string{"deferred"}},
	}
	for _, tt := range tests {
		s := &workloads.Spec{ModeNames: tt.in}
		if got := vocab.Names(s.Modes()); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Modes() of %v = %v, want %v", tt.in, got, tt.want)
		}
	}
	if got := vocab.ModeNames(); !reflect.DeepEqual(got, all) {
		t.Errorf("vocab.ModeNames() = %v, want %v", got, all)
	}
}

// TestValidateGoSpec checks specs built in Go: each change to a valid spec
// gives an *Error on the named field, without a file or line.
func TestValidateGoSpec(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		change func(s *workloads.Spec)
		field  string
	}{
		{"no name", func(s *workloads.Spec) { s.Name = "" }, "name"},
		{"partitions", func(s *workloads.Spec) { s.PartitionsPerTopic = 1025 }, "partitionsPerTopic"},
		{"output partitions", func(s *workloads.Spec) { s.OutputPartitionsPerTopic = -1 }, "outputPartitionsPerTopic"},
		{"message size", func(s *workloads.Spec) { s.MessageSizeBytes = 1<<20 + 1 }, "messageSize"},
		{"producers", func(s *workloads.Spec) { s.ProducersPerTopic = 0 }, "producersPerTopic"},
		{"rate distribution", func(s *workloads.Spec) { s.RateDistribution = "bursty" }, "rateDistribution"},
		{"both test lengths", func(s *workloads.Spec) { s.TestMinutes = 1 }, "testDurationMinutes"},
		{"test length zero", func(s *workloads.Spec) { s.TestLength = 0 }, "testDuration"},
		{"test too long", func(s *workloads.Spec) { s.TestLength = 25 * time.Hour }, "testDuration"},
		{"warmup negative", func(s *workloads.Spec) { s.WarmupLength = -time.Second }, "warmupDuration"},
		{"warmup minutes", func(s *workloads.Spec) { s.WarmupLength, s.WarmupMinutes = 0, 61 }, "warmupDurationMinutes"},
		{"drain", func(s *workloads.Spec) { s.DrainTimeout = 0 }, "drainTimeout"},
		{"consumers", func(s *workloads.Spec) { s.Consumers = 2000 }, "consumers"},
		{"max poll", func(s *workloads.Spec) { s.MaxPollRecords = 0 }, "maxPollRecords"},
		{"distribution", func(s *workloads.Spec) { s.ProcessingTime.Distribution = "pareto" }, "processingTime.distribution"},
		{"lognormal stddev", func(s *workloads.Spec) {
			s.ProcessingTime = workloads.ProcessingTime{Distribution: "lognormal", Mean: time.Millisecond}
		}, "processingTime.stddev"},
		{"exponential mean", func(s *workloads.Spec) {
			s.ProcessingTime = workloads.ProcessingTime{Distribution: "exponential"}
		}, "processingTime.mean"},
		{"lock above max", func(s *workloads.Spec) { s.LockDuration = 2 * time.Hour }, "lockDuration"},
		{"delivery limit", func(s *workloads.Spec) { s.DeliveryLimit = 1 }, "deliveryLimit"},
		{"record locks", func(s *workloads.Spec) { s.MaxRecordLocks = 99 }, "maxRecordLocks"},
		{"compression", func(s *workloads.Spec) { s.Compression = "brotli" }, "compression.type"},
		{"txn timeout", func(s *workloads.Spec) { s.TransactionTimeout = 16 * time.Minute }, "transactionTimeout"},
		{"txn records", func(s *workloads.Spec) { s.Transaction.MaxRecords = -1 }, "transaction.maxRecords"},
		{"reject ratio", func(s *workloads.Spec) { s.RejectRatio = -0.1 }, "rejectRatio"},
		{"checkpoint", func(s *workloads.Spec) { s.CheckpointInterval = -time.Second }, "checkpointInterval"},
		{"no modes", func(s *workloads.Spec) { s.ModeNames = []string{} }, "modes"},
		{"mode twice", func(s *workloads.Spec) { s.ModeNames = []string{"explicit", "explicit"} }, "modes[1]"},
		{"fault kind", func(s *workloads.Spec) { s.Faults = []workloads.Fault{{At: time.Second}} }, "faults[0].kind"},
		{"fault every tiny", func(s *workloads.Spec) {
			s.Faults = []workloads.Fault{{Every: time.Millisecond, Kind: "engine-restart"}}
		}, "faults[0].every"},
		{"fault both times", func(s *workloads.Spec) {
			s.Faults = []workloads.Fault{{At: time.Second, Every: time.Second, Kind: "engine-restart"}}
		}, "faults[0].every"},
		{"engine-restart param", func(s *workloads.Spec) {
			s.Faults = []workloads.Fault{{At: time.Second, Kind: "engine-restart", Params: map[string]string{"x": "1"}}}
		}, "faults[0].params.x"},
		{"ratio param", func(s *workloads.Spec) {
			s.Faults = []workloads.Fault{{At: time.Second, Kind: "abort-ratio", Params: map[string]string{"ratio": "2", "for": "1s"}}}
		}, "faults[0].params.ratio"},
		{"for param", func(s *workloads.Spec) {
			s.Faults = []workloads.Fault{{At: time.Second, Kind: "stall-worker", Params: map[string]string{"for": "soon"}}}
		}, "faults[0].params.for"},
		{"state param", func(s *workloads.Spec) {
			s.Faults = []workloads.Fault{{At: time.Second, Kind: "coordinator-crash", Params: map[string]string{"state": "dead"}}}
		}, "faults[0].params.state"},
		{"partition param", func(s *workloads.Spec) {
			s.Faults = []workloads.Fault{{At: time.Second, Kind: "share-failover", Params: map[string]string{"partition": "4"}}}
		}, "faults[0].params.partition"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := workloads.New("go-spec")
			s.Defaults()
			tt.change(s)
			err := s.Validate()
			var e *workloads.Error
			if !errors.As(err, &e) {
				t.Fatalf("Validate() = %v, want a *workloads.Error", err)
			}
			if e.Field != tt.field || e.File != "" || e.Line != 0 {
				t.Errorf("Validate() = %q (field %q, file %q, line %d), want field %q with no file or line",
					err, e.Field, e.File, e.Line, tt.field)
			}
		})
	}
	var nilSpec *workloads.Spec
	if err := nilSpec.Validate(); err == nil {
		t.Error("Validate of a nil spec = nil, want an error")
	}
}

func TestErrorString(t *testing.T) {
	t.Parallel()
	tests := []struct {
		err  *workloads.Error
		want string
	}{
		{&workloads.Error{File: "my.yaml", Line: 7, Field: "lockDuration", Msg: "too short; use 1s"},
			`workloads: my.yaml:7: field "lockDuration": too short; use 1s`},
		{&workloads.Error{File: "my.yaml", Msg: "is empty"}, `workloads: my.yaml: is empty`},
		{&workloads.Error{Field: "name", Msg: "missing"}, `workloads: field "name": missing`},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("Error() = %q, want %q", got, tt.want)
		}
	}
}

func TestFaultHelpers(t *testing.T) {
	t.Parallel()
	f := workloads.Fault{Every: 1500 * time.Millisecond, Kind: "slow-processing",
		Params: map[string]string{"worker": "2", "for": "2s", "delay": "1500ms"}}
	if got, want := f.String(), "slow-processing every 1.5s (delay=1500ms for=2s worker=2)"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	if i, random := f.Index("worker"); i != 2 || random {
		t.Errorf("Index(worker) = %d, %v; want 2, false", i, random)
	}
	if _, random := f.Index("partition"); !random {
		t.Error("Index of an absent param is not random")
	}
	if got, want := f.Duration("delay"), 1500*time.Millisecond; got != want {
		t.Errorf("Duration(delay) = %v, want %v", got, want)
	}
	if got := f.Duration("missing"); got != 0 {
		t.Errorf("Duration(missing) = %v, want 0", got)
	}
	r := workloads.Fault{At: time.Hour, Kind: "abort-ratio", Params: map[string]string{"ratio": "0.1"}}
	if got := r.Float("ratio"); got != 0.1 {
		t.Errorf("Float(ratio) = %v, want 0.1", got)
	}
	if got, want := r.String(), "abort-ratio at 1h (ratio=0.1)"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}
