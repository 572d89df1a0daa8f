// This file tests that sharebench verify refuses what it cannot trust: it
// dumps the ledgers of one real run (explicit and transactional, with a
// dead-letter queue), checks that they pass, then breaks them one way per
// case (a required field removed, a blank line, an unknown value, a
// delivery of an id that is not an input, counts result.json contradicts,
// a mode directory of the wrong shape) and requires exit 2 with a message
// naming the file (and line), while the other mode is still judged.

package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sharebench/sharebench/loadgen/result"
	"github.com/sharebench/sharebench/loadgen/verify"
	"github.com/sharebench/sharebench/reports"
)

// dumpedRun runs testdata/dlq.yaml in explicit and transactional mode with
// a dead-letter queue and its ledgers dumped, and returns the run
// directory.
func dumpedRun(t *testing.T) string {
	t.Helper()
	out := t.TempDir()
	o := sharebench(t, "run", "--workload", "testdata/dlq.yaml", "--modes", "explicit,transactional", "--seed", "3", "--quiet", "--no-report",
		"--out", out, "--dlq-topic", "dlq.cli", "--dump-ledgers")
	if o.code != reports.ExitOK {
		t.Fatalf("run: %v", o)
	}
	return out
}

// copyTree copies the run directory src into a new directory.
func copyTree(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	return dst
}

// editLine rewrites line n (1-based) of a JSON-lines file through edit,
// which changes the decoded object in place.
func editLine(t *testing.T, path string, n int, edit func(m map[string]json.RawMessage)) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ls := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(ls) < n || ls[n-1] == "" {
		t.Fatalf("%s has no line %d to edit", path, n)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(ls[n-1]), &m); err != nil {
		t.Fatal(err)
	}
	edit(m)
	nb, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	ls[n-1] = string(nb)
	writeFile(t, path, strings.Join(ls, "\n")+"\n")
}

// editMeta rewrites a ledger.json through edit.
func editMeta(t *testing.T, path string, edit func(m map[string]json.RawMessage)) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	edit(m)
	nb, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, path, string(nb)+"\n")
}

func writeFile(t *testing.T, path, body string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// lineWith returns the 1-based number of the first line of path that
// contains sub.
func lineWith(t *testing.T, path, sub string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, sub) {
			return i + 1
		}
	}
	t.Fatalf("%s has no line with %s", path, sub)
	return 0
}

// anOpenTransaction is a well-formed open transaction for ledger.json.
const anOpenTransaction = `{"partition":0,"producer_id":1,"epoch":0,"first_offset":0,"transactional_id":"w-0","source":"target"}`

// ledgerMutation is one way to break a run's ledgers.
type ledgerMutation struct {
	name   string
	mode   string // the mode whose ledgers it breaks; the other must still be judged
	mutate func(t *testing.T, runDir, modeDir string)
	want   string // in the "not judged" line; "DIR" is the mode's ledger directory
}

// ledgerMutations lists every mutation: one per required field of every
// ledger file, then blank lines, unknown values, a delivery of a non-input,
// counts that contradict result.json and broken directories.
func ledgerMutations() []ledgerMutation {
	var ms []ledgerMutation
	drop := func(file string, line int, field string) func(t *testing.T, _, dir string) {
		return func(t *testing.T, _, dir string) {
			editLine(t, filepath.Join(dir, file), line, func(m map[string]json.RawMessage) { delete(m, field) })
		}
	}
	set := func(file, field, value string) func(t *testing.T, _, dir string) {
		return func(t *testing.T, _, dir string) {
			path := filepath.Join(dir, file)
			editLine(t, path, lineWith(t, path, `"`+field+`"`), func(m map[string]json.RawMessage) { m[field] = json.RawMessage(value) })
		}
	}
	setMeta := func(field, value string) func(t *testing.T, _, dir string) {
		return func(t *testing.T, _, dir string) {
			editMeta(t, filepath.Join(dir, verify.MetaFile), func(m map[string]json.RawMessage) { m[field] = json.RawMessage(value) })
		}
	}
	for _, f := range []string{"schema", "mode", "target", "delivery_limit", "drain_timed_out", "incomplete", "share_state", "delivery_counts", "markers",
		"dlq_topic", "dlq_at_least_once", "open_transactions"} {
		ms = append(ms, ledgerMutation{name: "ledger.json without " + f, mode: "explicit",
			mutate: func(t *testing.T, _, dir string) {
				editMeta(t, filepath.Join(dir, verify.MetaFile), func(m map[string]json.RawMessage) { delete(m, f) })
			},
			want: `DIR/ledger.json: missing field "` + f + `"`})
	}
	for _, f := range []string{"partition", "producer_id", "epoch", "first_offset", "source"} {
		ms = append(ms, ledgerMutation{name: "open transaction without " + f, mode: "transactional",
			mutate: func(t *testing.T, _, dir string) {
				var ot map[string]json.RawMessage
				if err := json.Unmarshal([]byte(anOpenTransaction), &ot); err != nil {
					t.Fatal(err)
				}
				delete(ot, f)
				b, _ := json.Marshal([]any{ot})
				setMeta("open_transactions", string(b))(t, "", dir)
			},
			want: `DIR/ledger.json: open_transactions[0]: missing field "` + f + `"`})
	}
	files := []struct {
		file, mode string
		fields     []string
	}{
		{verify.InputsFile, "explicit", []string{"id", "partition", "offset", "intended_ns", "final_state", "delivery_count"}},
		{verify.OutputsFile, "explicit", []string{"id", "partition", "offset", "epoch", "committed", "visible_ns"}},
		{verify.DeliveriesFile, "explicit", []string{"id", "worker", "at_ns", "delivery_count", "ack", "ack_outcome"}},
		{verify.DLQFile, "explicit", []string{"source_topic", "partition", "offset", "delivery_count", "message", "dlq_partition", "dlq_offset"}},
	}
	for _, fl := range files {
		for _, f := range fl.fields {
			ms = append(ms, ledgerMutation{name: fl.file + " without " + f, mode: fl.mode, mutate: drop(fl.file, 1, f),
				want: "DIR/" + fl.file + `:1: missing field "` + f + `"`})
		}
		ms = append(ms, ledgerMutation{name: "blank line in " + fl.file, mode: fl.mode,
			mutate: func(t *testing.T, _, dir string) {
				path := filepath.Join(dir, fl.file)
				b, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				first, rest, _ := strings.Cut(string(b), "\n")
				writeFile(t, path, first+"\n\n"+rest)
			},
			want: "DIR/" + fl.file + ":2: blank line"})
	}
	ms = append(ms,
		ledgerMutation{name: "unknown final_state", mode: "explicit", mutate: set(verify.InputsFile, "final_state", `"DONE"`),
			want: `DIR/inputs.jsonl:1: final_state "DONE" is not one of`},
		ledgerMutation{name: "unknown ack", mode: "explicit", mutate: set(verify.DeliveriesFile, "ack", `"nack"`),
			want: `DIR/deliveries.jsonl:1: ack "nack" is not one of`},
		ledgerMutation{name: "unknown ack_outcome", mode: "explicit", mutate: set(verify.DeliveriesFile, "ack_outcome", `"maybe"`),
			want: `DIR/deliveries.jsonl:1: ack_outcome "maybe" is not one of`},
		ledgerMutation{name: "unknown txn_outcome", mode: "transactional", mutate: set(verify.OutputsFile, "txn_outcome", `"probably"`),
			want: `DIR/outputs.jsonl:1: txn_outcome "probably" is not one of`},
		ledgerMutation{name: "empty txn_outcome", mode: "transactional", mutate: set(verify.OutputsFile, "txn_outcome", `""`),
			want: `DIR/outputs.jsonl:1: txn_outcome "" is not one of`},
		ledgerMutation{name: "unknown marker", mode: "transactional", mutate: set(verify.OutputsFile, "marker", `"closed"`),
			want: `DIR/outputs.jsonl:1: marker "closed" is not one of`},
		ledgerMutation{name: "unknown open_transactions.source", mode: "transactional",
			mutate: setMeta("open_transactions", "["+strings.Replace(anOpenTransaction, `"target"`, `"guess"`, 1)+"]"),
			want:   `DIR/ledger.json: open_transactions[0]: source "guess" is not one of ["target" "markers"]`},
		ledgerMutation{name: "unknown schema", mode: "explicit", mutate: setMeta("schema", `"sharebench/ledger/v9"`),
			want: `DIR/ledger.json: schema "sharebench/ledger/v9" is not "sharebench/ledger/v2"`},
		ledgerMutation{name: "unknown mode in ledger.json", mode: "explicit", mutate: setMeta("mode", `"eos"`),
			want: `DIR/ledger.json: mode "eos" is not a mode`},
		ledgerMutation{name: "ledger.json of another mode", mode: "explicit", mutate: setMeta("mode", `"deferred"`),
			want: `DIR/ledger.json: mode "deferred", but the directory holds the ledgers of explicit`},
		ledgerMutation{name: "delivery limit 0", mode: "explicit", mutate: setMeta("delivery_limit", "0"),
			want: `DIR/ledger.json: delivery_limit 0 is not a delivery limit`},
		// An id a producer assigned but the input ledger lacks: the ledger
		// lost records. (An id no producer assigned is a record the
		// target delivered that was never an input: judged, phantom.)
		ledgerMutation{name: "delivery of an assigned id that is not an input", mode: "explicit",
			mutate: func(t *testing.T, _, dir string) {
				path := filepath.Join(dir, verify.InputsFile)
				b, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				lines := strings.SplitAfter(string(b), "\n")
				if len(lines) < 3 || !strings.HasPrefix(lines[0], `{"id":1,`) {
					t.Fatalf("inputs.jsonl does not start with input 1: %.80q", b)
				}
				if err := os.WriteFile(path, []byte(strings.Join(lines[1:], "")), 0o644); err != nil {
					t.Fatal(err)
				}
				editLine(t, filepath.Join(dir, verify.DeliveriesFile), 1, func(m map[string]json.RawMessage) { m["id"] = json.RawMessage("1") })
			},
			want: `deliveries.jsonl:1: delivery of id 1, which is not in inputs.jsonl`},
		ledgerMutation{name: "three empty ledger files", mode: "explicit",
			mutate: func(t *testing.T, _, dir string) {
				for _, f := range []string{verify.InputsFile, verify.OutputsFile, verify.DeliveriesFile, verify.DLQFile} {
					writeFile(t, filepath.Join(dir, f), "")
				}
			},
			want: "DIR: the ledgers hold 0 inputs, but result.json records "},
		ledgerMutation{name: "an output line cut", mode: "explicit",
			mutate: func(t *testing.T, _, dir string) {
				path := filepath.Join(dir, verify.OutputsFile)
				b, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				_, rest, _ := strings.Cut(string(b), "\n")
				writeFile(t, path, rest)
			},
			want: "outputs, but result.json records "},
		ledgerMutation{name: "ledger directory not in result.json", mode: "explicit",
			mutate: func(t *testing.T, run, dir string) {
				if err := os.CopyFS(filepath.Join(run, "ledgers", "explicit-r1"), os.DirFS(dir)); err != nil {
					t.Fatal(err)
				}
			},
			want: "records no run of explicit-r1"},
		ledgerMutation{name: "mode directory is a regular file", mode: "explicit",
			mutate: func(t *testing.T, _, dir string) {
				if err := os.RemoveAll(dir); err != nil {
					t.Fatal(err)
				}
				writeFile(t, dir, "not a directory\n")
			},
			want: "DIR: is a regular file, not a ledger directory"},
		ledgerMutation{name: "mode directory missing", mode: "explicit",
			mutate: func(t *testing.T, _, dir string) {
				if err := os.RemoveAll(dir); err != nil {
					t.Fatal(err)
				}
			},
			want: "records its verdict, but DIR is missing"},
		ledgerMutation{name: "outputs.jsonl missing", mode: "explicit",
			mutate: func(t *testing.T, _, dir string) {
				if err := os.Remove(filepath.Join(dir, verify.OutputsFile)); err != nil {
					t.Fatal(err)
				}
			},
			want: "DIR/outputs.jsonl: missing"},
		ledgerMutation{name: "ledger.json missing beside deliveries.jsonl", mode: "explicit",
			mutate: func(t *testing.T, _, dir string) {
				if err := os.Remove(filepath.Join(dir, verify.MetaFile)); err != nil {
					t.Fatal(err)
				}
			},
			want: "DIR/ledger.json: missing, but deliveries.jsonl is there"},
		ledgerMutation{name: "inputs.jsonl unreadable (a directory)", mode: "explicit",
			mutate: func(t *testing.T, _, dir string) {
				path := filepath.Join(dir, verify.InputsFile)
				if err := os.Remove(path); err != nil {
					t.Fatal(err)
				}
				if err := os.Mkdir(path, 0o755); err != nil {
					t.Fatal(err)
				}
			},
			want: "DIR/inputs.jsonl: is not a regular file (a directory)"},
	)
	return ms
}

func TestVerifyRefusesBrokenLedgers(t *testing.T) {
	t.Parallel()
	pristine := dumpedRun(t)
	if v := sharebench(t, "verify", "--in", pristine); v.code != reports.ExitOK {
		t.Fatalf("the ledgers the run wrote do not pass verify: %v", v)
	}
	r, err := result.Read(result.ResultPath(pristine))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range r.Modes {
		if m.DLQRecords == 0 {
			t.Fatalf("%s wrote no dead letters: the dead-letter mutations would have no line to break", m.Mode)
		}
	}
	for _, tc := range ledgerMutations() {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			run := copyTree(t, pristine)
			dir := result.LedgerDir(run, tc.mode)
			tc.mutate(t, run, dir)
			v := sharebench(t, "verify", "--in", run)
			want := strings.ReplaceAll(tc.want, "DIR", dir)
			var line string
			for _, l := range lines(v.stdout) {
				if strings.Contains(l, ": not judged: ") {
					line = l
				}
			}
			t.Logf("%s | exit %d | %s", tc.name, v.code, strings.TrimPrefix(strings.ReplaceAll(line, run+"/", ""), "verify "))
			if v.code != reports.ExitUsage || !strings.Contains(line, want) {
				t.Fatalf("exit %d, want %d with a line naming %q\n%v", v.code, reports.ExitUsage, want, v)
			}
			other := "transactional"
			if tc.mode == other {
				other = "explicit"
			}
			if !strings.Contains(v.stdout, "verify "+other+": PASS") {
				t.Errorf("the intact mode %s was not judged:\n%v", other, v)
			}
		})
	}
}
