// This file mutates the ledgers of a real run, one kind of damage at a
// time, and requires the verifier reading them back to name exactly what
// was done: each anomaly kind from a plausible edit, and a refusal (naming
// the file and line) for a ledger it cannot trust.

package loadgen

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sharebench/sharebench/loadgen/targets/enginetarget"
	"github.com/sharebench/sharebench/loadgen/verify"
	"github.com/sharebench/sharebench/vocab"
)

// cleanLedgers runs transactional against the engine once and returns its
// dumped ledger directory, which must verify PASS.
func cleanLedgers(t *testing.T) string {
	t.Helper()
	tgt, err := enginetarget.New(enginetarget.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tgt.Close() })
	out := t.TempDir()
	spec := quickSpec(t, "transactional")
	res, err := Run(runCtx(t), Config{Workload: spec, Target: tgt, Seed: testSeed, OutDir: out, DumpLedgers: true})
	if err != nil || res.Modes[0].Verify == nil || !res.Modes[0].Verify.Pass {
		t.Fatalf("clean run: %v %+v", err, res.Modes[0].Verify)
	}
	return filepath.Join(out, "ledgers", "transactional")
}

// copyLedgers copies dir into a fresh directory, editing file with edit.
func copyLedgers(t *testing.T, dir, file string, edit func([][]byte) [][]byte) string {
	t.Helper()
	to := t.TempDir()
	for _, name := range []string{verify.InputsFile, verify.OutputsFile, verify.DeliveriesFile, verify.MetaFile} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if name == file {
			lines := bytes.Split(bytes.TrimSuffix(b, []byte("\n")), []byte("\n"))
			b = append(bytes.Join(edit(lines), []byte("\n")), '\n')
		}
		if err := os.WriteFile(filepath.Join(to, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return to
}

// firstWith returns the index of the first line containing s.
func firstWith(t *testing.T, lines [][]byte, s string) int {
	t.Helper()
	for i, l := range lines {
		if bytes.Contains(l, []byte(s)) {
			return i
		}
	}
	t.Fatalf("no line contains %q", s)
	return -1
}

func replaceIn(l []byte, old, new string) []byte {
	return bytes.Replace(l, []byte(old), []byte(new), 1)
}

func TestLedgerMutations(t *testing.T) {
	t.Parallel()
	dir := cleanLedgers(t)
	for _, tc := range []struct {
		name    string
		file    string
		edit    func(t *testing.T, lines [][]byte) [][]byte
		kind    vocab.Finding // the anomaly the verifier must find; "" with refuse
		refuse  string        // a refusal the reader must give instead
		verdict string
	}{
		{name: "output deleted", file: verify.OutputsFile, kind: vocab.KindLost,
			edit: func(t *testing.T, l [][]byte) [][]byte { return l[1:] }},
		{name: "output copied to a new offset", file: verify.OutputsFile, kind: vocab.KindDuplicate,
			edit: func(t *testing.T, l [][]byte) [][]byte {
				return append(l, replaceIn(replaceIn(l[0], `"offset":`, `"offset":9999`), `"txn_seq":`, `"txn_seq":7`))
			}},
		{name: "abort marker on a visible output", file: verify.OutputsFile, kind: vocab.KindAbortedRead,
			edit: func(t *testing.T, l [][]byte) [][]byte {
				l[0] = replaceIn(l[0], `"marker":"commit"`, `"marker":"abort"`)
				return l
			}},
		{name: "client aborted a visible transaction", file: verify.OutputsFile, kind: vocab.KindAbortedRead,
			edit: func(t *testing.T, l [][]byte) [][]byte {
				l[0] = replaceIn(l[0], `"txn_outcome":"committed"`, `"txn_outcome":"aborted"`)
				return l
			}},
		{name: "one output of a committed transaction invisible", file: verify.OutputsFile, kind: vocab.KindTornTransaction,
			edit: func(t *testing.T, l [][]byte) [][]byte {
				l[0] = replaceIn(l[0], `"committed":true`, `"committed":false`)
				return l
			}},
		{name: "input left available", file: verify.InputsFile, kind: vocab.KindUnresolved,
			edit: func(t *testing.T, l [][]byte) [][]byte {
				l[0] = replaceIn(l[0], `"ACKNOWLEDGED"`, `"AVAILABLE"`)
				return l
			}},
		{name: "input archived unprocessed", file: verify.InputsFile, kind: vocab.KindArchivedUnprocessed,
			edit: func(t *testing.T, l [][]byte) [][]byte {
				l[0] = replaceIn(l[0], `"ACKNOWLEDGED"`, `"ARCHIVED"`)
				return l
			}},
		{name: "input delivered past the limit", file: verify.InputsFile, kind: vocab.KindOverDelivered,
			edit: func(t *testing.T, l [][]byte) [][]byte {
				l[0] = replaceIn(l[0], `"delivery_count":1`, `"delivery_count":6`)
				return l
			}},
		{name: "output of no input", file: verify.OutputsFile, kind: vocab.KindPhantom,
			edit: func(t *testing.T, l [][]byte) [][]byte {
				return append(l, replaceIn(replaceIn(l[0], `"id":`, `"id":98765`), `"offset":`, `"offset":9999`))
			}},
		{name: "delivery of no input", file: verify.InputsFile, refuse: `: delivery of id 1, which is not in inputs.jsonl`,
			edit: func(t *testing.T, l [][]byte) [][]byte { return l[1:] }},
		{name: "transaction left open", file: verify.MetaFile, kind: vocab.KindHangingTransaction,
			edit: func(t *testing.T, l [][]byte) [][]byte {
				i := firstWith(t, l, `"open_transactions": []`)
				l[i] = replaceIn(l[i], `[]`, `[{"partition": 1, "producer_id": 1002, "epoch": 3, "first_offset": 40, "source": "target"}]`)
				return l
			}},
		{name: "drain timed out", file: verify.MetaFile, verdict: verify.VerdictInconclusive,
			edit: func(t *testing.T, l [][]byte) [][]byte {
				i := firstWith(t, l, `"drain_timed_out"`)
				l[i] = replaceIn(l[i], "false", "true")
				return l
			}},
		{name: "final state removed", file: verify.InputsFile, refuse: `inputs.jsonl:1: missing field "final_state"`,
			edit: func(t *testing.T, l [][]byte) [][]byte {
				l[0] = replaceIn(l[0], `"final_state":"ACKNOWLEDGED",`, ``)
				return l
			}},
		{name: "unknown state", file: verify.InputsFile, refuse: `inputs.jsonl:2: final_state "BOGUS" is not one of`,
			edit: func(t *testing.T, l [][]byte) [][]byte {
				l[1] = replaceIn(l[1], `"ACKNOWLEDGED"`, `"BOGUS"`)
				return l
			}},
		{name: "misspelled field", file: verify.OutputsFile, refuse: `outputs.jsonl:1: unknown field "comitted"`,
			edit: func(t *testing.T, l [][]byte) [][]byte {
				l[0] = replaceIn(l[0], `"committed":true`, `"comitted":true`)
				return l
			}},
		{name: "repeated input id", file: verify.InputsFile, refuse: `inputs.jsonl:3: input id 1 appears twice`,
			edit: func(t *testing.T, l [][]byte) [][]byte { return append(l[:2], append([][]byte{l[0]}, l[2:]...)...) }},
		{name: "truncated delivery", file: verify.DeliveriesFile, refuse: `deliveries.jsonl:1: invalid JSON`,
			edit: func(t *testing.T, l [][]byte) [][]byte {
				l[0] = l[0][:len(l[0])/2]
				return l
			}},
		{name: "unknown ack outcome", file: verify.DeliveriesFile, refuse: `ack_outcome "maybe" is not one of`,
			edit: func(t *testing.T, l [][]byte) [][]byte {
				l[0] = replaceIn(l[0], `"ack_outcome":"committed"`, `"ack_outcome":"maybe"`)
				return l
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := copyLedgers(t, dir, tc.file, func(l [][]byte) [][]byte { return tc.edit(t, l) })
			v, err := verify.VerifyDir("transactional", d, verify.Options{})
			if tc.refuse != "" {
				if err == nil || !errors.Is(err, verify.ErrCorruptLedger) || !strings.Contains(err.Error(), tc.refuse) {
					t.Fatalf("VerifyDir = %v, %v; want a refusal containing %q", v, err, tc.refuse)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.kind != "" && (v.Counts[tc.kind] == 0 || v.Verdict != verify.VerdictFail) {
				t.Fatalf("verdict %s counts %v, want FAIL with %s", v.Verdict, v.Counts, tc.kind)
			}
			if tc.verdict != "" && v.Verdict != tc.verdict {
				t.Fatalf("verdict %s, want %s", v.Verdict, tc.verdict)
			}
		})
	}
}
