// This file tests the registry and the built-in workloads.

package workloads_test

import (
	"fmt"
	"io/fs"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sharebench/sharebench/vocab"
	"github.com/sharebench/sharebench/workloads"
)

// builtinNames lists the embedded built-in files by workload name.
func builtinNames(t *testing.T) []string {
	t.Helper()
	files, err := fs.Glob(workloads.BuiltinFS, "builtin/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range files {
		names = append(names, strings.TrimSuffix(strings.TrimPrefix(f, "builtin/"), ".yaml"))
	}
	return names
}

func TestBuiltins(t *testing.T) {
	t.Parallel()
	names := builtinNames(t)
	want := []string{"chaos", "checkpoint-chaos", "checkpoint-dwell-norenew", "checkpoint-dwell", "checkpoint", "consumers-beyond-partitions", "ctp-latency",
		"ctp-throughput", "kafka-chaos", "kafka-kill-probe", "quick", "small-batches"}
	if !reflect.DeepEqual(names, want) {
		t.Errorf("built-in files = %v, want %v", names, want)
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			data, err := fs.ReadFile(workloads.BuiltinFS, "builtin/"+name+".yaml")
			if err != nil {
				t.Fatal(err)
			}
			parsed, err := workloads.Parse(name+".yaml", data)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if err := parsed.Validate(); err != nil {
				t.Errorf("Validate: %v", err)
			}
			got, ok := workloads.Lookup(name)
			if !ok {
				t.Fatalf("Lookup(%q) found nothing", name)
			}
			if !reflect.DeepEqual(got, parsed) {
				t.Errorf("Lookup(%q) = %+v, want the parsed file %+v", name, got, parsed)
			}
			if len(got.Description) < 40 {
				t.Errorf("description %q is too short to say what the workload is for", got.Description)
			}
			roundTrip(t, got)
		})
	}
}

// TestBuiltinSettings pins the settings the built-ins promise.
func TestBuiltinSettings(t *testing.T) {
	t.Parallel()
	all := vocab.AllModes()
	tests := []struct {
		name string
		want func(s *workloads.Spec) bool
	}{
		{"quick", func(s *workloads.Spec) bool {
			perMode := s.TestDuration() + s.Warmup()
			total := time.Duration(len(s.Modes())) * perMode
			return s.TestDuration() == 2*time.Second && s.Warmup() == 500*time.Millisecond &&
				total >= 10*time.Second && total <= 20*time.Second &&
				slices.Equal(s.Modes(), all) && s.PartitionsPerTopic == 4 && s.Consumers == 4 &&
				s.ProducerRate == 2000 && s.MessageSizeBytes == 256 &&
				s.ProcessingTime == workloads.ProcessingTime{Distribution: workloads.DistConstant} &&
				s.Transaction == workloads.Transaction{MaxRecords: 100, MaxDuration: 50 * time.Millisecond}
		}},
		{"ctp-throughput", func(s *workloads.Spec) bool {
			return s.ProducerRate == 0 && s.PartitionsPerTopic == 8 && s.Consumers == 8 &&
				s.MessageSizeBytes == 1024 && s.MaxPollRecords == 500 && s.Transaction.MaxRecords == 500 &&
				s.TestDuration() == 20*time.Second
		}},
		{"ctp-latency", func(s *workloads.Spec) bool {
			return s.ProducerRate == 1000 && s.MessageSizeBytes == 1024 &&
				s.Transaction == workloads.Transaction{MaxRecords: 10, MaxDuration: 10 * time.Millisecond} &&
				s.TestDuration() == 20*time.Second
		}},
		{"consumers-beyond-partitions", func(s *workloads.Spec) bool {
			return s.PartitionsPerTopic == 2 && s.Consumers == 8 && slices.Equal(s.Modes(), all) &&
				strings.Contains(s.Description, "classic-eos") && strings.Contains(s.Description, "only 2")
		}},
		{"checkpoint", func(s *workloads.Spec) bool {
			return s.AckOnly && s.CheckpointInterval == 500*time.Millisecond &&
				slices.Equal(s.Modes(), []vocab.Mode{vocab.Explicit, vocab.Transactional}) && s.TestDuration() == 10*time.Second
		}},
		{"small-batches", func(s *workloads.Spec) bool {
			return s.MaxPollRecords == 10 && s.Transaction.MaxRecords == 10 && s.TestDuration() == 10*time.Second
		}},
		{"chaos", func(s *workloads.Spec) bool {
			phases := map[string]bool{}
			kinds := map[vocab.FaultKind]bool{}
			for _, f := range s.Faults {
				kinds[f.Kind] = true
				if f.Kind == vocab.FaultWorkerCrash {
					phases[f.Params["phase"]] = true
				}
			}
			return len(phases) == 4 && len(kinds) == 10 && slices.Equal(s.Modes(), all) &&
				s.TestDuration() == 10*time.Second && s.Warmup() == 500*time.Millisecond &&
				s.DrainTimeout == 30*time.Second && s.PartitionsPerTopic == 4 && s.Consumers == 4 &&
				s.ProducerRate == 1000 && s.DeliveryLimit == 5 && s.LockDuration == time.Second
		}},
		{"kafka-chaos", func(s *workloads.Spec) bool {
			selectors := map[string]vocab.FaultKind{}
			for _, f := range s.Faults {
				if vocab.BrokerFault(f.Kind) {
					selectors[f.Params["broker"]] = f.Kind
				}
			}
			return s.ReplicationFactor == 3 && s.MinInsyncReplicas == 2 &&
				slices.Equal(s.Modes(), []vocab.Mode{vocab.Explicit, vocab.Deferred, vocab.ClassicEOS}) &&
				selectors[workloads.BrokerTxnCoordinator] == vocab.FaultBrokerKill &&
				selectors[workloads.BrokerGroupCoordinator] == vocab.FaultBrokerPause &&
				selectors[workloads.BrokerShareCoordinator] == vocab.FaultBrokerPause &&
				selectors[workloads.BrokerLeader] == vocab.FaultBrokerKill &&
				selectors[workloads.BrokerController] == vocab.FaultBrokerRestart
		}},
		{"kafka-kill-probe", func(s *workloads.Spec) bool {
			kills := 0
			for _, f := range s.Faults {
				if f.Kind == vocab.FaultBrokerKill && f.At == 3*time.Second && f.Params["delay"] == "0s" {
					kills++
				}
			}
			return kills == 1 && s.ReplicationFactor == 0 && s.TransactionTimeout == 2*time.Second &&
				s.TestDuration() == 8*time.Second && s.DrainTimeout == 45*time.Second
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, ok := workloads.Lookup(tt.name)
			if !ok {
				t.Fatalf("Lookup(%q) found nothing", tt.name)
			}
			if !tt.want(s) {
				t.Errorf("%s does not hold its promised settings: %+v", tt.name, s)
			}
		})
	}
}

// TestChaosFaultsBite checks that the chaos faults can do what they are
// for: the slow batch outlives its lock and the stall its transaction.
func TestChaosFaultsBite(t *testing.T) {
	t.Parallel()
	s, _ := workloads.Lookup("chaos")
	for _, f := range s.Faults {
		switch f.Kind {
		case vocab.FaultSlowProcessing:
			if got := f.Duration("delay"); got <= s.LockDuration {
				t.Errorf("slow-processing delay %v does not exceed lockDuration %v", got, s.LockDuration)
			}
		case vocab.FaultStallWorker:
			if got := f.Duration("for"); got <= s.TransactionTimeout {
				t.Errorf("stall-worker for %v does not exceed transactionTimeout %v", got, s.TransactionTimeout)
			}
		}
	}
}

func TestNamesAndAll(t *testing.T) {
	t.Parallel()
	names := workloads.Names()
	if !slices.IsSorted(names) {
		t.Errorf("Names() = %v, not sorted", names)
	}
	for _, n := range builtinNames(t) {
		if !slices.Contains(names, n) {
			t.Errorf("Names() = %v, missing built-in %q", names, n)
		}
	}
	if !slices.Contains(names, workloads.DefaultName) {
		t.Errorf("Names() = %v, missing the default %q", names, workloads.DefaultName)
	}
	var allNames []string
	for _, s := range workloads.All() {
		allNames = append(allNames, s.Name)
	}
	if !slices.Equal(allNames, names) {
		t.Errorf("All() names = %v, want Names() = %v", allNames, names)
	}
}

func TestLookupReturnsCopy(t *testing.T) {
	t.Parallel()
	s, _ := workloads.Lookup("chaos")
	s.Consumers = 99
	s.ModeNames[0] = "changed"
	s.Faults[0].Params["phase"] = "changed"
	again, _ := workloads.Lookup("chaos")
	if again.Consumers == 99 || again.ModeNames[0] == "changed" || again.Faults[0].Params["phase"] == "changed" {
		t.Errorf("changing a looked-up spec changed the registry: %+v", again)
	}
	if _, ok := workloads.Lookup("no-such-workload"); ok {
		t.Error("Lookup of an unknown name found something")
	}
}

func TestRegisterPanics(t *testing.T) {
	t.Parallel()
	bad := workloads.New("register-invalid")
	bad.LockDuration = time.Millisecond
	tests := []struct {
		name string
		spec *workloads.Spec
	}{
		{"duplicate", workloads.New(workloads.DefaultName)},
		{"nil", nil},
		{"invalid", bad},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			defer func() {
				if recover() == nil {
					t.Errorf("Register(%s) did not panic", tt.name)
				}
			}()
			workloads.Register(tt.spec)
		})
	}
	if _, ok := workloads.Lookup("register-invalid"); ok {
		t.Error("an invalid spec was registered")
	}
}

// registered counts the workloads tests register, so names stay unique
// under -count.
var registered atomic.Int64

// TestRegisterThenLookup does not run in parallel: it adds a name to the
// registry, which must not happen while TestNamesAndAll compares Names with
// All. Sequential tests finish before parallel ones resume.
func TestRegisterThenLookup(t *testing.T) {
	name := fmt.Sprintf("test-register-%d", registered.Add(1))
	s := workloads.New(name)
	s.Consumers = 7
	workloads.Register(s)
	s.Consumers = 1 // the registry keeps its own copy
	got, ok := workloads.Lookup(name)
	if !ok || got.Consumers != 7 || got.OutputPartitionsPerTopic != 4 {
		t.Errorf("Lookup = %+v, %v; want the registered spec with defaults filled", got, ok)
	}
}
