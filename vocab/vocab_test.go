package vocab_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/sharebench/sharebench/vocab"
)

// Every word parses back from its own name, and an unknown name is refused
// with an error that lists the valid ones.
func TestParseFormatRoundTrips(t *testing.T) {
	for _, tc := range []struct {
		what    string
		names   []string
		parse   func(string) (string, error)
		aValid  string // a name the refusal must list
		unknown string
	}{
		{"mode", vocab.ModeNames(), func(s string) (string, error) { m, err := vocab.ParseMode(s); return m.String(), err }, "classic-eos", "eos"},
		{"phase", vocab.CrashPhaseNames(), func(s string) (string, error) { p, err := vocab.ParsePhase(s); return p.String(), err }, "after-stage", "idle"},
		{"ack type", names(vocab.AckTypes()), func(s string) (string, error) { a, err := vocab.ParseAckType(s); return a.String(), err }, "reject", "nack"},
		{"target", names(vocab.Targets()), func(s string) (string, error) { x, err := vocab.ParseTarget(s); return x.String(), err }, "kafka", "redpanda"},
		{"fault kind", names(vocab.FaultKinds()), func(s string) (string, error) { k, err := vocab.ParseFaultKind(s); return k.String(), err }, "broker-pause", "broker-crash"},
		{"finding", vocab.Names(vocab.KindOrder()), func(s string) (string, error) { f, err := vocab.ParseFinding(s); return f.String(), err }, "torn-transaction", "torn"},
		{"compression", names(vocab.Compressions()), func(s string) (string, error) { c, err := vocab.ParseCompression(s); return c.String(), err }, "zstd", "brotli"},
		{"record state", names(vocab.RecordStates()), func(s string) (string, error) { x, err := vocab.ParseRecordState(s); return x.String(), err }, "TX_PENDING", "PENDING"},
	} {
		t.Run(tc.what, func(t *testing.T) {
			if len(tc.names) == 0 {
				t.Fatal("no names listed")
			}
			seen := map[string]bool{}
			for _, n := range tc.names {
				if seen[n] {
					t.Errorf("%q listed twice", n)
				}
				seen[n] = true
				got, err := tc.parse(n)
				if err != nil || got != n {
					t.Errorf("parse(%q) = %q, %v; want it back", n, got, err)
				}
			}
			_, err := tc.parse(tc.unknown)
			if err == nil || !strings.Contains(err.Error(), tc.unknown) || !strings.Contains(err.Error(), tc.aValid) {
				t.Errorf("parse(%q) error = %v; want a refusal naming it and listing %q", tc.unknown, err, tc.aValid)
			}
		})
	}
}

func names[T interface{ String() string }](xs []T) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = x.String()
	}
	return out
}

// The anomaly list, IsAnomaly and the report order agree: every anomaly is
// one, no informational kind is, and the report order lists each kind once.
func TestFindingKindsAgree(t *testing.T) {
	for _, k := range vocab.Anomalies() {
		if !vocab.IsAnomaly(k) {
			t.Errorf("%s is listed as an anomaly but IsAnomaly says no", k)
		}
	}
	if !vocab.IsAnomaly(vocab.KindTargetDown) {
		t.Error("target-down fails a run, so it is an anomaly")
	}
	for _, k := range append(vocab.Informational(), vocab.KindUnjudged) {
		if vocab.IsAnomaly(k) {
			t.Errorf("%s is informational but IsAnomaly says yes", k)
		}
	}
	order := vocab.KindOrder()
	for _, k := range append(append(vocab.Anomalies(), vocab.Informational()...), vocab.KindTargetDown, vocab.KindUnjudged) {
		if n := countOf(order, k); n != 1 {
			t.Errorf("%s appears %d times in the report order, want once", k, n)
		}
	}
}

func countOf[T comparable](xs []T, x T) int {
	n := 0
	for _, y := range xs {
		if y == x {
			n++
		}
	}
	return n
}

// Which phases each mode crosses: the table docs/design.md §5 draws.
func TestPhaseIn(t *testing.T) {
	want := map[vocab.Phase][]vocab.Mode{
		vocab.AfterPoll:            vocab.AllModes(),
		vocab.AfterProduce:         vocab.AllModes(),
		vocab.AfterStage:           {vocab.Transactional, vocab.ClassicEOS},
		vocab.AfterCommitBeforeAck: {vocab.Deferred},
	}
	for _, p := range vocab.CheckpointPhases() {
		want[p] = []vocab.Mode{vocab.Explicit, vocab.Transactional}
	}
	for _, p := range vocab.CrashPhases() {
		for _, m := range vocab.AllModes() {
			if got, w := p.In(m), slices.Contains(want[p], m); got != w {
				t.Errorf("%s.In(%s) = %v, want %v", p, m, got, w)
			}
		}
	}
	if vocab.Idle.In(vocab.Explicit) {
		t.Error("idle is not a crash phase a mode crosses")
	}
}

// A mode's traits follow from what it promises.
func TestModeTraits(t *testing.T) {
	for _, tc := range []struct {
		m                                   vocab.Mode
		share, txn, stages, reject, limited bool
	}{
		{vocab.Implicit, true, false, false, false, true},
		{vocab.Explicit, true, false, false, true, true},
		{vocab.Deferred, true, true, false, true, true},
		{vocab.Transactional, true, true, true, true, true},
		{vocab.ClassicEOS, false, true, true, false, false},
	} {
		got := [5]bool{tc.m.UsesShareGroup(), tc.m.Transactional(), tc.m.StagesAcks(), tc.m.CanReject(), tc.m.DeliveryLimited()}
		if w := [5]bool{tc.share, tc.txn, tc.stages, tc.reject, tc.limited}; got != w {
			t.Errorf("%s: share/txn/stages/reject/limited = %v, want %v", tc.m, got, w)
		}
	}
}

// Order is report order, and an unknown mode sorts last.
func TestModeOrder(t *testing.T) {
	for i, m := range vocab.AllModes() {
		if got := m.Order(); got != i {
			t.Errorf("%s.Order() = %d, want %d", m, got, i)
		}
	}
	if got := vocab.Mode("x").Order(); got != len(vocab.AllModes()) {
		t.Errorf(`Mode("x").Order() = %d, want %d (unknown modes last)`, got, len(vocab.AllModes()))
	}
}
