package engine_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/sharebench/sharebench/engine"
)

func TestParseKnobs(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want engine.Knobs
	}{
		{"", engine.Knobs{}},
		{"safe", engine.Knobs{}},
		{"draft", engine.DraftKnobs()},
		{"exact-epoch-match", engine.Knobs{ExactEpochMatch: true}},
		{"reject-identical-retry, failed-stage-no-lock", engine.Knobs{RejectIdenticalRetry: true, FailedStageNoLock: true}},
		{"abort-to-available-at-limit,stage-stop-at-first-failure",
			engine.Knobs{AbortToAvailableAtLimit: true, StageStopAtFirstFailure: true}},
	} {
		got, err := engine.ParseKnobs(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseKnobs(%q) = %+v, %v; want %+v, nil", tc.in, got, err, tc.want)
		}
	}
	// Every name KnobNames lists parses, and the list of names switches
	// on every draft choice: the names and DraftKnobs agree.
	names := engine.KnobNames()
	names = names[2 : len(names)-1] // the boolean knobs: after "safe" and "draft", before tx-pending-limit=N
	for _, n := range names {
		if k, err := engine.ParseKnobs(n); err != nil || k == (engine.Knobs{}) {
			t.Errorf("ParseKnobs(%q) = %+v, %v; want one knob on", n, k, err)
		}
	}
	// The draft's set is every boolean knob but dlq-after-marker, the
	// what-if of a dead-letter copy written after the marker.
	want := engine.DraftKnobs()
	want.DLQAfterMarker = true
	if all, err := engine.ParseKnobs(strings.Join(names, ",")); err != nil || all != want {
		t.Errorf("ParseKnobs(every name) = %+v, %v; want %+v", all, err, want)
	}
	if k, err := engine.ParseKnobs("exact-epoch-match, tx-pending-limit=2000"); err != nil || k != (engine.Knobs{ExactEpochMatch: true, TxPendingLimit: 2000}) {
		t.Errorf("ParseKnobs with tx-pending-limit=2000 = %+v, %v", k, err)
	}
	for _, bad := range []string{"tx-pending-limit=0", "tx-pending-limit=x", "tx-pending-limit="} {
		if _, err := engine.ParseKnobs(bad); err == nil || !strings.Contains(err.Error(), "tx-pending-limit") {
			t.Errorf("ParseKnobs(%q) err = %v, want one naming tx-pending-limit", bad, err)
		}
	}
	_, err := engine.ParseKnobs("exact-epoch-match,no-such-knob")
	var unknown *engine.UnknownKnobError
	if !errors.As(err, &unknown) || unknown.Name != "no-such-knob" {
		t.Errorf("ParseKnobs with an unknown name: err = %v, want an UnknownKnobError naming no-such-knob", err)
	}
}
