package cli_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/sharebench/sharebench/loadgen/result"
	"github.com/sharebench/sharebench/reports"
	"github.com/sharebench/sharebench/vocab"
)

// TestShareFlagsBadInput: a bad acquire mode, dead-letter setting or knob
// gets one line naming the flag and exit 2, before anything runs.
func TestShareFlagsBadInput(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"acquire-mode", []string{"run", "--acquire-mode", "greedy"}, []string{`--acquire-mode "greedy"`, "batch_optimized", "record_limit"}},
		{"dlq-topic-internal", []string{"run", "--dlq-topic", "__dlq"}, []string{`--dlq-topic "__dlq"`, "starts with __"}},
		{"dlq-topic-chars", []string{"run", "--dlq-topic", "dlq/x"}, []string{`--dlq-topic "dlq/x"`, "characters"}},
		{"dlq-copy-without-topic", []string{"run", "--dlq-copy-record"}, []string{"--dlq-copy-record needs a dead-letter topic", "--dlq-topic"}},
		{"tx-pending-limit", []string{"run", "--knobs", "tx-pending-limit=none"}, []string{"--knobs", "tx-pending-limit=none", "whole number"}},
		{"tx-pending-limit-zero", []string{"run", "--knobs", "tx-pending-limit=0"}, []string{"--knobs", "tx-pending-limit=0"}},
		{"unknown-knob-lists-new", []string{"run", "--knobs", "dlq"}, []string{`unknown knob "dlq"`, "dlq-after-marker", "tx-pending-limit=N"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			o := sharebench(t, tc.args...)
			if o.code != reports.ExitUsage {
				t.Fatalf("exit %d, want %d: %v", o.code, reports.ExitUsage, o)
			}
			ls := lines(o.stderr)
			if len(ls) != 1 {
				t.Fatalf("want one line on stderr: %v", o)
			}
			for _, w := range tc.want {
				if !strings.Contains(ls[0], w) {
					t.Errorf("error line %q does not contain %q", ls[0], w)
				}
			}
		})
	}
}

// TestShareFlagsRun: the flags reach the run: a DLQ named by flag is read
// back and judged (the rejects of the workload each have one dead-letter
// record), with the knobs and the acquire mode given.
func TestShareFlagsRun(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	o := sharebench(t, "run", "--workload", "testdata/dlq.yaml", "--modes", "explicit,transactional", "--seed", "3", "--quiet", "--no-report",
		"--out", out, "--dlq-topic", "dlq.cli", "--dlq-copy-record", "--acquire-mode", "record_limit", "--knobs", "dlq-after-marker,tx-pending-limit=500")
	if o.code != 0 {
		t.Fatalf("exit %d: %v", o.code, o)
	}
	r, err := result.Read(filepath.Join(out, result.FileName))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range r.Modes {
		rej := m.Verify.Counts["rejected"]
		if rej == 0 || m.DLQRecords < rej || m.Verify.Verdict != "PASS" {
			t.Fatalf("%s: %d rejected, %d dead-letter records, verdict %s (counts %v); want every reject dead-lettered and PASS", m.Mode, rej, m.DLQRecords, m.Verify.Verdict, m.Verify.Counts)
		}
		if !strings.Contains(strings.Join(vocab.Names(m.Verify.Allowed), ","), "dlq-duplicate") {
			t.Fatalf("%s: allowed %v; with dlq-after-marker dead letters are at least once, so dlq-duplicate is allowed", m.Mode, m.Verify.Allowed)
		}
	}
	if r.Flags["acquire-mode"] != "record_limit" || r.Flags["dlq-topic"] != "dlq.cli" {
		t.Fatalf("flags recorded %v", r.Flags)
	}
}
