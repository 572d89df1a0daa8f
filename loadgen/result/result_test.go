// This file tests the result schema: Write and Read round-trip every field,
// and a file of another schema, or not JSON at all, is refused with
// ErrSchema.

package result

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/sharebench/sharebench/vocab"
)

func sample() *Result {
	return &Result{
		Env: Env{Commit: "abc123", GoVersion: "go1.26", OS: "linux", Arch: "amd64", CPU: "test cpu", NumCPU: 2, GOMAXPROCS: 2,
			Target: "kafka", Embedded: true, Brokers: "127.0.0.1:9092", BrokerVersion: "kfake", Notes: []string{"a note"}},
		Workload:    "quick",
		Spec:        json.RawMessage(`{"name":"quick","producerRate":2000}`),
		Seed:        -42,
		Args:        []string{"sharebench", "run", "--seed", "-42"},
		Flags:       map[string]string{"seed": "-42", "target": "kafka"},
		TopicPrefix: "sb-1-2a",
		Started:     time.Date(2026, 3, 4, 5, 6, 7, 123456789, time.UTC),
		Finished:    time.Date(2026, 3, 4, 5, 7, 8, 9, time.UTC),
		OpenLoop:    true,
		Rate:        2000,
		Duration:    2 * time.Second,
		Warmup:      500 * time.Millisecond,
		Repeats:     1,
		Modes: []ModeResult{
			{
				Mode: "transactional", MeasuredNs: 2e9, InputsProduced: 4000, OutputsVisible: 3990, Throughput: 1995, InputRate: 2000,
				TotalInputs: 5000, TotalOutputs: 5000, Processed: 5001, Redeliveries: 1, Commits: 100, Aborts: 2, LockExpiries: 3,
				WorkerCrashes: 1, DrainNs: 12345, DrainTimedOut: true, SendLagWarning: "late",
				Histograms: map[string]Histogram{HistEndToEnd: {Unit: "ns", Count: 10, Overflow: 1, Min: 1, Max: 9, Mean: 4.5,
					P50: 5, P90: 8, P99: 9, P999: 9, P9999: 9, EncodedV2: "HISTFAAAA"}},
				Series: []Second{{T: 0, Warmup: true, InputRate: 10, OutputRate: 9, Backlog: 1, SendLagP99: 100, P99: 200, Faults: []string{"worker-crash"}},
					{T: 1, Drain: true, Redeliveries: 1, Aborts: 2, LockExpiries: 3}},
				Faults: []FaultEvent{{AtNs: 99, Kind: "worker-crash", Detail: "worker 0 crashed after-poll"}},
				Verify: &Verification{Pass: false, Allowed: []vocab.Finding{}, Counts: map[vocab.Finding]int64{"lost": 1}, Forbidden: []vocab.Finding{"lost"},
					Witnesses: map[vocab.Finding][]Witness{"lost": {{Kind: "lost", InputID: 7, Partition: 1, Offset: 2, State: "ARCHIVED", DeliveryCount: 5,
						Outputs: []OutputRef{{Partition: 0, Offset: 3, TransactionalID: "t-1", Epoch: 2, Committed: true, VisibleNs: 4}}, Detail: "d"}}},
					Inputs: 5000, Outputs: 5001, Notes: []string{"n"}},
			},
			{Mode: "classic-eos", Repeat: 1, Unsupported: "no transactions"},
			{Mode: "explicit", Error: "boom"},
		},
	}
}

func TestWriteReadRoundTrip(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), FileName)
	want := sample()
	if err := Write(path, want); err != nil {
		t.Fatalf("Write: %v", err)
	}
	if want.Schema != Schema {
		t.Errorf("Write left Schema %q, want %q", want.Schema, Schema)
	}
	got, err := Read(path)
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	// The raw workload spec is re-indented in the file; compare it compact.
	var gs, ws bytes.Buffer
	if err := json.Compact(&gs, got.Spec); err != nil {
		t.Fatalf("spec read back is not JSON: %v", err)
	}
	_ = json.Compact(&ws, want.Spec)
	if gs.String() != ws.String() {
		t.Errorf("spec read back %s, want %s", gs.String(), ws.String())
	}
	got.Spec, want.Spec = nil, nil
	if !reflect.DeepEqual(got, want) {
		gj, _ := json.MarshalIndent(got, "", " ")
		wj, _ := json.MarshalIndent(want, "", " ")
		t.Fatalf("read back a different result:\n got %s\nwant %s", gj, wj)
	}

	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"schema": "sharebench/result/v1"`, `"duration_ns": 2000000000`, `"e2e_p99_ns": 200`, `"encoded_v2": "HISTFAAAA"`} {
		if !bytes.Contains(b, []byte(key)) {
			t.Errorf("result.json lacks %s", key)
		}
	}
	if !bytes.HasSuffix(b, []byte("}\n")) {
		t.Errorf("result.json does not end with a newline")
	}
}

func TestReadRefusesOtherFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, tc := range []struct {
		name, body string
	}{
		{"old-schema", `{"schema": "sharebench/result/v0", "seed": 1}`},
		{"no-schema", `{"seed": 1}`},
		{"other-json", `[1, 2, 3]`},
		{"not-json", "workload: quick\n"},
		{"empty", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, tc.name+".json")
			if err := os.WriteFile(path, []byte(tc.body), 0o644); err != nil {
				t.Fatal(err)
			}
			r, err := Read(path)
			if !errors.Is(err, ErrSchema) {
				t.Fatalf("Read = %v, %v; want an error wrapping ErrSchema", r, err)
			}
			if !strings.Contains(err.Error(), path) {
				t.Errorf("error %q does not name the file", err)
			}
		})
	}
	t.Run("missing", func(t *testing.T) {
		_, err := Read(filepath.Join(dir, "missing.json"))
		if !errors.Is(err, fs.ErrNotExist) || errors.Is(err, ErrSchema) {
			t.Fatalf("Read of a missing file = %v; want fs.ErrNotExist, not ErrSchema", err)
		}
	})
}

func TestWriteFailsInMissingDir(t *testing.T) {
	t.Parallel()
	if err := Write(filepath.Join(t.TempDir(), "no", "such", FileName), sample()); err == nil {
		t.Fatal("Write into a missing directory succeeded")
	}
}
