// This file tests the ledger files: the JSON-lines encoding (byte-for-byte
// equal to encoding/json), the round trip through a directory, and the
// errors for missing files and corrupt lines.

package verify_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/sharebench/sharebench/loadgen/verify"
	"github.com/sharebench/sharebench/vocab"
)

func TestAppendMatchesJSON(t *testing.T) {
	t.Parallel()
	strs := []string{"", "w-1", `quo"te`, `back\slash`, "<html>&", "tab\there", "ünï", "\x00\x7f", "bad\xffutf8", "\u2028"}
	r := rand.New(rand.NewPCG(1, 2))
	ints := []int64{0, 1, -1, math.MaxInt64, math.MinInt64, 42}
	pick := func() int64 { return ints[r.IntN(len(ints))] }
	for i := 0; i < 500; i++ {
		in := verify.Input{ID: r.Uint64(), Partition: int32(pick()), Offset: pick(), IntendedNs: pick(),
			FinalState: vocab.RecordState(strs[r.IntN(len(strs))]), DeliveryCount: int(pick()), Rejected: r.IntN(2) == 0, BelowSPSO: r.IntN(2) == 0}
		o := verify.Output{InputID: r.Uint64(), Partition: int32(pick()), Offset: pick(), TransactionalID: strs[r.IntN(len(strs))],
			Epoch: int16(pick()), TxnSeq: pick(), TxnSize: int(pick()), Committed: r.IntN(2) == 0, Aborted: r.IntN(2) == 0, VisibleNs: pick()}
		want, _ := json.Marshal(in)
		if got := verify.AppendInput(nil, in); !bytes.Equal(got, want) {
			t.Fatalf("AppendInput(%+v)\n got %s\nwant %s", in, got, want)
		}
		want, _ = json.Marshal(o)
		if got := verify.AppendOutput(nil, o); !bytes.Equal(got, want) {
			t.Fatalf("AppendOutput(%+v)\n got %s\nwant %s", o, got, want)
		}
	}
}

func TestLedgerRoundTrip(t *testing.T) {
	t.Parallel()
	ins := []verify.Input{
		{ID: 1, Partition: 2, Offset: 3, IntendedNs: 4, FinalState: vocab.StateAcknowledged, DeliveryCount: 1},
		{ID: 2, Offset: 5, FinalState: vocab.StateArchived, DeliveryCount: 2, Rejected: true},
		{ID: 3, Offset: 6, BelowSPSO: true},
	}
	outs := []verify.Output{
		{InputID: 1, Partition: 1, Offset: 9, TransactionalID: "w-1", Epoch: 3, TxnSeq: 7, TxnSize: 2, Committed: true, VisibleNs: 11},
		{InputID: 3, Partition: 1, Offset: 10, TransactionalID: "w-1", Epoch: 3, TxnSeq: 7, TxnSize: 2, Committed: true, VisibleNs: 12},
		{InputID: 3, Partition: 0, Offset: 1, Epoch: -1, Aborted: true},
	}
	dir := filepath.Join(t.TempDir(), "ledgers", "explicit")
	if err := verify.WriteLedgers(dir, ins, outs); err != nil {
		t.Fatal(err)
	}
	// Each line decodes back to the record written.
	var gotIns []verify.Input
	for _, line := range lines(t, filepath.Join(dir, verify.InputsFile)) {
		var x verify.Input
		if err := json.Unmarshal([]byte(line), &x); err != nil {
			t.Fatal(err)
		}
		gotIns = append(gotIns, x)
	}
	var gotOuts []verify.Output
	for _, line := range lines(t, filepath.Join(dir, verify.OutputsFile)) {
		var x verify.Output
		if err := json.Unmarshal([]byte(line), &x); err != nil {
			t.Fatal(err)
		}
		gotOuts = append(gotOuts, x)
	}
	if !reflect.DeepEqual(gotIns, ins) || !reflect.DeepEqual(gotOuts, outs) {
		t.Errorf("round trip:\n got %+v\n     %+v\nwant %+v\n     %+v", gotIns, gotOuts, ins, outs)
	}
	// Verifying the directory equals verifying the records.
	opts := verify.Options{DeliveryLimit: limit}
	got, err := verify.VerifyDir("transactional", dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	// A directory without ledger.json is the v1 schema; its verdict says
	// what that schema never recorded.
	want := run("transactional", opts, ins, outs)
	if len(got.Notes) != 1 || !strings.Contains(got.Notes[0], "v1 schema") {
		t.Errorf("VerifyDir notes = %q, want one note naming the v1 schema", got.Notes)
	}
	got.Notes = want.Notes
	if !reflect.DeepEqual(got, want) {
		t.Errorf("VerifyDir:\n got %+v\nwant %+v", got, want)
	}
	if !got.Pass || got.Inputs != 3 || got.Outputs != 3 || got.Counts[vocab.KindRejected] != 1 {
		t.Errorf("VerifyDir = %+v, want a pass over 3 inputs and 3 outputs with one rejected", got)
	}
}

func lines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

func TestLedgerErrors(t *testing.T) {
	t.Parallel()
	good := `{"id":1,"partition":0,"offset":0,"intended_ns":0,"final_state":"ACKNOWLEDGED","delivery_count":1}`
	goodOut := `{"id":1,"partition":0,"offset":0,"epoch":-1,"committed":true,"visible_ns":0}`
	tests := []struct {
		name    string
		inputs  string // "-" for no file
		outputs string
		want    string // error text, with DIR for the directory
		corrupt bool   // matches ErrCorruptLedger
	}{
		{
			name:    "truncated output line",
			inputs:  good + "\n",
			outputs: goodOut + "\n" + `{"id":1,"partition":0,"off` + "\n",
			want:    "verify: DIR/outputs.jsonl:2: invalid JSON (unexpected end of JSON input); run again with the ledgers dumped",
			corrupt: true,
		},
		{
			name:    "blank line",
			inputs:  good + "\n",
			outputs: goodOut + "\n\n" + goodOut + "\n",
			want:    "verify: DIR/outputs.jsonl:2: blank line (a ledger holds one record per line); run again with the ledgers dumped",
			corrupt: true,
		},
		{
			name:    "wrong type",
			inputs:  good + "\n" + `{"id":"two"}` + "\n",
			outputs: "",
			want:    "verify: DIR/inputs.jsonl:2: invalid JSON (json: cannot unmarshal string into Go struct field Input.id of type uint64); run again with the ledgers dumped",
			corrupt: true,
		},
		{
			name:    "trailing garbage",
			inputs:  good + " x\n",
			outputs: "",
			want:    "verify: DIR/inputs.jsonl:1: invalid JSON (invalid character 'x' after top-level value); run again with the ledgers dumped",
			corrupt: true,
		},
		{
			name:    "missing id",
			inputs:  good + "\n",
			outputs: `{"partition":1,"committed":true}` + "\n",
			want:    `verify: DIR/outputs.jsonl:1: missing field "id"; run again with the ledgers dumped`,
			corrupt: true,
		},
		{
			name:    "line too long",
			inputs:  `{"id":1,"final_state":"` + strings.Repeat("A", 2<<20) + `"}` + "\n",
			outputs: "",
			want:    "verify: DIR/inputs.jsonl:1: line longer than 1048576 bytes; run again with the ledgers dumped",
			corrupt: true,
		},
		{
			name:    "no outputs file",
			inputs:  good + "\n",
			outputs: "-",
			want:    "verify: DIR/outputs.jsonl: missing (the run dumped no ledgers); run again with the ledgers dumped",
			corrupt: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			write := func(name, body string) {
				if body == "-" {
					return
				}
				if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			write(verify.InputsFile, tt.inputs)
			write(verify.OutputsFile, tt.outputs)
			res, err := verify.VerifyDir("explicit", dir, verify.Options{})
			want := strings.ReplaceAll(tt.want, "DIR", dir)
			if err == nil || err.Error() != want || res != nil {
				t.Fatalf("VerifyDir = %v, %v\nwant error %s", res, err, want)
			}
			if got := errors.Is(err, verify.ErrCorruptLedger); got != tt.corrupt {
				t.Errorf("errors.Is(err, ErrCorruptLedger) = %v, want %v", got, tt.corrupt)
			}
			var le *verify.LedgerError
			if tt.corrupt && !errors.As(err, &le) {
				t.Errorf("error %v is not a *LedgerError", err)
			}
			if !tt.corrupt && !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("error %v does not match fs.ErrNotExist", err)
			}
		})
	}
}

func TestVerifyDirUnknownMode(t *testing.T) {
	t.Parallel()
	_, err := verify.VerifyDir("eos", t.TempDir(), verify.Options{})
	if !errors.Is(err, verify.ErrUnknownMode) {
		t.Errorf("VerifyDir(unknown mode) error = %v, want ErrUnknownMode", err)
	}
}
