// This file tests Parse and Load on the files under testdata: good files
// decode to the expected Spec, bad files give their golden error.

package workloads_test

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/sharebench/sharebench/vocab"
	"github.com/sharebench/sharebench/workloads"
)

var update = flag.Bool("update", false, "rewrite the golden .err files under testdata/bad")

func TestParseGood(t *testing.T) {
	t.Parallel()
	tests := []struct {
		file  string
		check func(t *testing.T, s *workloads.Spec)
	}{
		{"minimal.yaml", func(t *testing.T, s *workloads.Spec) {
			want := workloads.New("minimal")
			want.Description = "Every default."
			want.Defaults()
			if !reflect.DeepEqual(s, want) {
				t.Errorf("got %+v, want every default %+v", s, want)
			}
		}},
		{"omb-style.yaml", func(t *testing.T, s *workloads.Spec) {
			if got, want := s.TestDuration(), 30*time.Second; got != want {
				t.Errorf("TestDuration() = %v, want %v", got, want)
			}
			if got, want := s.Warmup(), 15*time.Second; got != want {
				t.Errorf("Warmup() = %v, want %v", got, want)
			}
			if s.TestMinutes != 0 || s.WarmupMinutes != 0 {
				t.Errorf("minutes not folded: TestMinutes %v, WarmupMinutes %v", s.TestMinutes, s.WarmupMinutes)
			}
			if got, want := s.ProducerRate, 50000; got != want {
				t.Errorf("ProducerRate = %d, want %d", got, want)
			}
			if got, want := s.OutputPartitionsPerTopic, 16; got != want {
				t.Errorf("OutputPartitionsPerTopic = %d, want %d (same as the input)", got, want)
			}
		}},
		{"full.yaml", func(t *testing.T, s *workloads.Spec) {
			want := &workloads.Spec{
				Name: "full", Description: "Every field set.",
				Topics: 1, PartitionsPerTopic: 6, OutputPartitionsPerTopic: 3,
				MessageSizeBytes: 512, ProducersPerTopic: 3, ProducerRate: 5000,
				RateDistribution: workloads.RatePoisson,
				TestLength:       90 * time.Second, WarmupLength: 0, DrainTimeout: 45 * time.Second,
				Consumers: 12, MaxPollRecords: 250,
				ProcessingTime: workloads.ProcessingTime{
					Distribution: workloads.DistLognormal, Mean: 2 * time.Millisecond, Stddev: time.Millisecond,
					Min: 100 * time.Microsecond, Max: 20 * time.Millisecond,
				},
				LockDuration: 15 * time.Second, DeliveryLimit: 3, MaxRecordLocks: 1000,
				TransactionTimeout: 30 * time.Second,
				Transaction:        workloads.Transaction{MaxRecords: 0, MaxDuration: 250 * time.Millisecond},
				AbortRatio:         0.05, RejectRatio: 0.01,
				AckOnly: true, CheckpointInterval: 2 * time.Second,
				Checkpoint: workloads.Checkpoint{Order: "sink-first", Staging: "acquisition", Renew: false,
					MaxRecords: 800, Timeout: 5 * time.Second},
				ModeNames: []string{"classic-eos", "transactional"},
				Faults: []workloads.Fault{
					{At: 10 * time.Second, Kind: vocab.FaultCoordinatorCrash, Params: map[string]string{"state": "ongoing"}},
					{Every: 20 * time.Second, Kind: vocab.FaultShareFailover, Params: map[string]string{"partition": "5"}},
				},
			}
			if !reflect.DeepEqual(s, want) {
				t.Errorf("got\n%+v\nwant\n%+v", s, want)
			}
			if got, want := vocab.Names(s.Modes()), []string{"transactional", "classic-eos"}; !reflect.DeepEqual(got, want) {
				t.Errorf("Modes() = %v, want %v (report order)", got, want)
			}
		}},
		{"faults.yaml", func(t *testing.T, s *workloads.Spec) {
			var got []string
			for _, f := range s.Faults {
				got = append(got, f.String())
			}
			want := []string{
				"worker-crash every 2s (phase=after-stage worker=random)",
				"abort-ratio at 1s (for=5s ratio=0.25)",
				"stall-worker at 3s (for=70s worker=0)",
				"slow-processing at 4s (delay=45s for=2s worker=random)",
				"coordinator-crash at 5s (state=prepare-abort)",
				"share-failover at 6s (partition=random)",
				"zombie-producer at 7s (worker=3)",
				"engine-restart at 8s",
				"coordinator-crash at 9s (scope=engine state=marker wait=0s)",
				"coordinator-crash at 10s (state=now)",
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("faults:\ngot  %q\nwant %q", got, want)
			}
			if s.Faults[7].Params != nil {
				t.Errorf("engine-restart params = %v, want nil for an empty map", s.Faults[7].Params)
			}
		}},
		{"omb-field.yaml", func(t *testing.T, s *workloads.Spec) {
			// An OMB-only field makes the file an OMB file: OMB's
			// default warm-up applies.
			if s.PartitionsPerTopic != 4 || s.Warmup() != time.Minute {
				t.Errorf("partitions %d, warm-up %v; want 4 and OMB's 1m", s.PartitionsPerTopic, s.Warmup())
			}
		}},
		{"free-text-name.yaml", func(t *testing.T, s *workloads.Spec) {
			if s.Name != "bad-name" || s.Description != "bad name!" {
				t.Errorf("name %q description %q; want bad-name and the free text", s.Name, s.Description)
			}
		}},
		{"yaml-forms.yaml", func(t *testing.T, s *workloads.Spec) {
			if s.Description != "Two lines\nof text.\n" {
				t.Errorf("Description = %q, want the literal block's two lines", s.Description)
			}
			if s.AbortRatio != 0.05 || s.RejectRatio != 0 || s.MaxPollRecords != 256 {
				t.Errorf("abortRatio %v rejectRatio %v maxPollRecords %d, want 0.05, 0 and 256", s.AbortRatio, s.RejectRatio, s.MaxPollRecords)
			}
			if s.Transaction.MaxRecords != 50 || s.Transaction.MaxDuration != 20*time.Millisecond {
				t.Errorf("transaction %+v, want 50 records and 20ms", s.Transaction)
			}
			if got, want := vocab.Names(s.Modes()), []string{"explicit", "transactional"}; !reflect.DeepEqual(got, want) {
				t.Errorf("Modes() = %v, want %v", got, want)
			}
		}},
		{"anchors.yaml", func(t *testing.T, s *workloads.Spec) {
			if s.CheckpointInterval != 10*time.Second || s.LockDuration != 10*time.Second {
				t.Errorf("aliased durations: lock %v, checkpoint %v, want 10s each", s.LockDuration, s.CheckpointInterval)
			}
			if got, want := vocab.Names(s.Modes()), []string{"explicit", "transactional"}; !reflect.DeepEqual(got, want) {
				t.Errorf("Modes() = %v, want %v", got, want)
			}
		}},
	}
	files, err := filepath.Glob("testdata/good/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != len(tests) {
		t.Errorf("testdata/good holds %d files, the table %d; add a row for each file", len(files), len(tests))
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			t.Parallel()
			s, err := workloads.Load(filepath.Join("testdata", "good", tt.file))
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			tt.check(t, s)
			roundTrip(t, s)
		})
	}
}

// roundTrip checks that s survives YAML and Parse unchanged.
func roundTrip(t *testing.T, s *workloads.Spec) {
	t.Helper()
	data, err := s.YAML()
	if err != nil {
		t.Fatalf("YAML: %v", err)
	}
	back, err := workloads.Parse(s.Name+".yaml", data)
	if err != nil {
		t.Fatalf("Parse(YAML()): %v\n%s", err, data)
	}
	if !reflect.DeepEqual(back, s) {
		t.Errorf("round trip through YAML changed the spec:\ngot  %+v\nwant %+v\nYAML:\n%s", back, s, data)
	}
}

// TestYAMLStrings checks that every kind of string survives YAML and
// Parse, and is written in the style chosen for it.
func TestYAMLStrings(t *testing.T) {
	t.Parallel()
	tests := []struct {
		description, line string
	}{
		{"plain text", "description: plain text"},
		{"", `description: ""`},
		{"8", `description: "8"`},
		{"0.5", `description: "0.5"`},
		{"1e3", `description: "1e3"`},
		{"true", `description: "true"`},
		{"null", `description: "null"`},
		{"key: value", `description: 'key: value'`},
		{"it's # not a comment", `description: 'it''s # not a comment'`},
		{" leading space", `description: ' leading space'`},
		{"*not-an-alias", `description: '*not-an-alias'`},
		{`"quoted"`, `description: '"quoted"'`},
		{"tab\there", `description: "tab\there"`},
		{"two\nlines", `description: "two\nlines"`},
		{"bell\a", `description: "bell\a"`},
		{"µs and ü", "description: µs and ü"},
	}
	for _, tt := range tests {
		t.Run(tt.description, func(t *testing.T) {
			t.Parallel()
			s := workloads.New("strings")
			s.Description = tt.description
			s.Defaults()
			data, err := s.YAML()
			if err != nil {
				t.Fatalf("YAML: %v", err)
			}
			if !strings.Contains(string(data), "\n"+tt.line+"\n") {
				t.Errorf("YAML has no line %s:\n%s", tt.line, data)
			}
			roundTrip(t, s)
		})
	}
}

func TestParseBad(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("testdata/bad/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no files under testdata/bad")
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			t.Parallel()
			s, err := workloads.Load(file)
			if err == nil {
				t.Fatalf("Load(%s) = %+v, want an error", file, s)
			}
			var e *workloads.Error
			if !errors.As(err, &e) {
				t.Fatalf("Load(%s) error %T (%v), want a *workloads.Error", file, err, err)
			}
			if e.File != file {
				t.Errorf("Error.File = %q, want %q", e.File, file)
			}
			if got := err.Error(); strings.Contains(got, "\n") {
				t.Errorf("error spans lines, want one: %q", got)
			}
			golden := strings.TrimSuffix(file, ".yaml") + ".err"
			got := err.Error() + "\n"
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("read golden (run go test -update to write it): %v", err)
			}
			if got != string(want) {
				t.Errorf("error:\ngot  %s\nwant %s", got, want)
			}
		})
	}
}

func TestLoadUnknownName(t *testing.T) {
	t.Parallel()
	_, err := workloads.Load("no-such-workload")
	var e *workloads.Error
	if !errors.As(err, &e) {
		t.Fatalf("Load error %T (%v), want a *workloads.Error", err, err)
	}
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Load error %v does not wrap os.ErrNotExist", err)
	}
	for _, name := range workloads.Names() {
		if !strings.Contains(err.Error(), name) {
			t.Errorf("error %q does not list built-in %q", err, name)
		}
	}
	if !strings.HasPrefix(err.Error(), `workloads: no-such-workload: `) {
		t.Errorf("error %q does not start with the package and the name", err)
	}
}

func TestLoadBuiltinByName(t *testing.T) {
	t.Parallel()
	s, err := workloads.Load(workloads.DefaultName)
	if err != nil {
		t.Fatalf("Load(%q): %v", workloads.DefaultName, err)
	}
	if s.Name != workloads.DefaultName {
		t.Errorf("Name = %q, want %q", s.Name, workloads.DefaultName)
	}
}

func TestParseErrorsWithoutLine(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, data, want string
	}{
		{"huge", "name: x\n" + strings.Repeat("#", 1<<20), "workloads: huge: is larger than 1048576 bytes; a workload file is a few dozen lines"},
		{"blank.yaml", "", `workloads: blank.yaml: is empty; write the workload's fields, like "name: my-workload"`},
		{"defaulted.yaml", "rateDistribution: poisson\nproducerRate: 0\n",
			"workloads: defaulted.yaml:1: field \"rateDistribution\": poisson needs an open loop but producerRate is 0 (closed loop); set producerRate above 0 or use constant"},
		// The error is on a default the file does not give: the line comes
		// from the other field it names.
		{"cross.yaml", "name: cross\nackOnly: true\ntransactionTimeout: 1s\n",
			"workloads: cross.yaml:3: field \"checkpointInterval\": 1s is not below transactionTimeout 1s, so with ackOnly each checkpoint's transaction would time out; use a checkpointInterval below 1s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := workloads.Parse(tt.name, []byte(tt.data))
			if err == nil || err.Error() != tt.want {
				t.Errorf("Parse error:\ngot  %v\nwant %s", err, tt.want)
			}
		})
	}
}
