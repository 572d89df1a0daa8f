// This file tests the verifier's findings: one case per kind with its
// witness, each mode's policy on it, and the edge cases of the streaming
// API.

package verify_test

import (
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/sharebench/sharebench/loadgen/result"
	"github.com/sharebench/sharebench/loadgen/verify"
	"github.com/sharebench/sharebench/vocab"
)

const limit = 5

// in returns an input of partition 0 at offset 10*id.
func in(id uint64, state vocab.RecordState, deliveries int) verify.Input {
	return verify.Input{ID: id, Offset: int64(10 * id), FinalState: state, DeliveryCount: deliveries}
}

// plain returns a committed non-transactional output at partition 1,
// offset 100*id.
func plain(id uint64) verify.Output {
	return verify.Output{InputID: id, Partition: 1, Offset: int64(100 * id), Epoch: -1, Committed: true, VisibleNs: int64(1000 * id)}
}

// txo returns an output of transaction (tid, epoch 3, seq) at partition 2.
func txo(id uint64, tid string, seq int64, size int, offset int64, committed, aborted bool) verify.Output {
	return verify.Output{InputID: id, Partition: 2, Offset: offset, TransactionalID: tid, Epoch: 3,
		TxnSeq: seq, TxnSize: size, Committed: committed, Aborted: aborted, VisibleNs: 7}
}

func ref(o verify.Output) result.OutputRef {
	return result.OutputRef{Partition: o.Partition, Offset: o.Offset, TransactionalID: o.TransactionalID,
		ProducerID: o.ProducerID, Epoch: o.Epoch, TxnSeq: o.TxnSeq, Committed: o.Committed,
		Marker: o.Marker, MarkerEpoch: o.MarkerEpoch, TxnOutcome: o.TxnOutcome, VisibleNs: o.VisibleNs}
}

func run(mode string, opts verify.Options, ins []verify.Input, outs []verify.Output) *result.Verification {
	v := verify.New(vocab.Mode(mode), opts)
	for _, x := range ins {
		v.AddInput(x)
	}
	for _, o := range outs {
		v.AddOutput(o)
	}
	return v.Finish()
}

// wantPass reports whether a verdict with counts passes mode.
func wantPass(t *testing.T, mode string, counts map[vocab.Finding]int64) bool {
	t.Helper()
	allowed, err := verify.Allowed(vocab.Mode(mode))
	if err != nil {
		t.Fatal(err)
	}
	for k := range counts {
		if vocab.IsAnomaly(k) && !slices.Contains(allowed, k) {
			return false
		}
	}
	return true
}

func TestFindings(t *testing.T) {
	t.Parallel()
	dup1, dup2 := plain(1), plain(1)
	dup2.Offset, dup2.Partition = 5, 0
	aborted := txo(1, "w-1", 4, 1, 50, true, true)
	tornC, tornP := txo(1, "w-1", 9, 2, 60, true, false), txo(2, "w-1", 9, 2, 61, false, false)
	sizeA, sizeB := txo(1, "w-2", 1, 3, 70, true, false), txo(2, "w-2", 1, 3, 71, true, false)
	pendingOut := plain(1)
	pendingOut.Committed = false
	phantom := plain(99)

	tests := []struct {
		name string
		ins  []verify.Input
		outs []verify.Output
		opts verify.Options // DeliveryLimit defaults to limit
		want map[vocab.Finding]int64
		kind vocab.Finding  // the kind whose first witness is checked
		wit  result.Witness // want witness (Kind filled from kind)
		note string         // a note the verdict must carry
		// inconclusive: evidence is missing, so a verdict that would pass
		// is INCONCLUSIVE instead.
		inconclusive bool
	}{
		{
			name: "clean",
			ins:  []verify.Input{in(1, vocab.StateAcknowledged, 1), in(2, vocab.StateAcknowledged, 2), {ID: 3, BelowSPSO: true}},
			outs: []verify.Output{plain(1), txo(2, "w-1", 1, 2, 1, true, false), txo(3, "w-1", 1, 2, 2, true, false)},
			want: map[vocab.Finding]int64{},
		},
		{
			name: "aborted then retried is clean",
			ins:  []verify.Input{in(1, vocab.StateAcknowledged, 2), in(2, vocab.StateAcknowledged, 2)},
			outs: []verify.Output{
				txo(1, "w-1", 1, 2, 1, false, true), txo(2, "w-1", 1, 2, 2, false, true),
				txo(1, "w-1", 2, 2, 3, true, false), txo(2, "w-1", 2, 2, 4, true, false),
			},
			want: map[vocab.Finding]int64{},
		},
		{
			name: "lost",
			ins:  []verify.Input{in(1, vocab.StateAcknowledged, 1), in(2, vocab.StateAcknowledged, 1)},
			outs: []verify.Output{plain(2)},
			want: map[vocab.Finding]int64{vocab.KindLost: 1},
			kind: vocab.KindLost,
			wit: result.Witness{InputID: 1, Offset: 10, State: vocab.StateAcknowledged, DeliveryCount: 1,
				Detail: "acknowledged but no committed output"},
		},
		{
			// The checkpoint model: an output still pre-committed in a sink
			// transaction can yet commit; the input is unresolved, not lost.
			name: "pre-committed in a sink, unresolved",
			ins:  []verify.Input{in(1, vocab.StateAcknowledged, 1), in(2, vocab.StateAcknowledged, 1)},
			outs: []verify.Output{plain(2)},
			opts: verify.Options{SinkPending: map[uint64]string{1: "run-w0-i1-c3", 2: "run-w0-i1-c4"}},
			want: map[vocab.Finding]int64{vocab.KindUnresolved: 1},
			kind: vocab.KindUnresolved,
			wit: result.Witness{InputID: 1, Offset: 10, State: vocab.StateAcknowledged, DeliveryCount: 1,
				Detail: "its output is pre-committed in sink transaction run-w0-i1-c3, which was neither committed nor rolled back after the drain"},
		},
		{
			name: "lost below SPSO with an uncommitted output",
			ins:  []verify.Input{{ID: 1, Partition: 3, Offset: 9, BelowSPSO: true, DeliveryCount: 1}},
			outs: []verify.Output{pendingOut},
			want: map[vocab.Finding]int64{vocab.KindLost: 1},
			kind: vocab.KindLost,
			wit: result.Witness{InputID: 1, Partition: 3, Offset: 9, DeliveryCount: 1,
				Outputs: []result.OutputRef{ref(pendingOut)},
				Detail:  "below SPSO (terminal, state unknown) but no committed output; 1 seen only uncommitted"},
		},
		{
			name: "rejected below SPSO is not lost",
			ins:  []verify.Input{{ID: 1, BelowSPSO: true, Rejected: true, DeliveryCount: 1}},
			want: map[vocab.Finding]int64{vocab.KindRejected: 1},
			kind: vocab.KindRejected,
			wit:  result.Witness{InputID: 1, DeliveryCount: 1, Detail: "rejected by the worker"},
		},
		{
			name: "duplicate",
			ins:  []verify.Input{in(1, vocab.StateAcknowledged, 2)},
			outs: []verify.Output{dup1, dup2},
			want: map[vocab.Finding]int64{vocab.KindDuplicate: 1},
			kind: vocab.KindDuplicate,
			wit: result.Witness{InputID: 1, Offset: 10, State: vocab.StateAcknowledged, DeliveryCount: 2,
				Outputs: []result.OutputRef{ref(dup2), ref(dup1)}, Detail: "2 committed outputs for one input"},
		},
		{
			name: "aborted-read",
			ins:  []verify.Input{in(1, vocab.StateAcknowledged, 2)},
			outs: []verify.Output{aborted, plain(1)},
			want: map[vocab.Finding]int64{vocab.KindAbortedRead: 1},
			kind: vocab.KindAbortedRead,
			wit: result.Witness{InputID: 1, Offset: 10, State: vocab.StateAcknowledged, DeliveryCount: 2,
				Outputs: []result.OutputRef{ref(aborted)},
				Detail:  `output of an aborted transaction visible to read_committed (transaction "w-1" epoch 3 seq 4)`},
		},
		{
			name: "aborted-read is not a committed output",
			ins:  []verify.Input{in(1, vocab.StateAcknowledged, 1)},
			outs: []verify.Output{aborted},
			want: map[vocab.Finding]int64{vocab.KindAbortedRead: 1, vocab.KindLost: 1},
			kind: vocab.KindLost,
			wit: result.Witness{InputID: 1, Offset: 10, State: vocab.StateAcknowledged, DeliveryCount: 1,
				Outputs: []result.OutputRef{ref(aborted)}, Detail: "acknowledged but no committed output; 1 aborted"},
		},
		{
			name: "torn: part committed, part seen only uncommitted",
			ins:  []verify.Input{in(1, vocab.StateAcknowledged, 1), in(2, vocab.StateAcknowledged, 1)},
			outs: []verify.Output{tornC, tornP},
			want: map[vocab.Finding]int64{vocab.KindTornTransaction: 1, vocab.KindLost: 1},
			kind: vocab.KindTornTransaction,
			wit: result.Witness{InputID: 2, Offset: 20, State: vocab.StateAcknowledged, DeliveryCount: 1,
				Outputs: []result.OutputRef{ref(tornC), ref(tornP)},
				Detail:  `transaction "w-1" epoch 3 seq 9: 1 of 2 outputs committed, 1 seen only uncommitted, 0 aborted; it wrote 2`},
		},
		{
			name: "torn: fewer committed than written",
			ins:  []verify.Input{in(1, vocab.StateAcknowledged, 1), in(2, vocab.StateAcknowledged, 1)},
			outs: []verify.Output{sizeB, sizeA},
			want: map[vocab.Finding]int64{vocab.KindTornTransaction: 1},
			kind: vocab.KindTornTransaction,
			wit: result.Witness{InputID: 1, Offset: 10, State: vocab.StateAcknowledged, DeliveryCount: 1,
				Outputs: []result.OutputRef{ref(sizeA), ref(sizeB)},
				Detail:  `transaction "w-2" epoch 3 seq 1: 2 of 2 outputs committed, 0 seen only uncommitted, 0 aborted; it wrote 3`},
		},
		{
			name: "unresolved",
			ins:  []verify.Input{in(1, vocab.StateAvailable, 1), in(2, vocab.StateAcquired, 1), in(3, vocab.StateTxPending, 1)},
			want: map[vocab.Finding]int64{vocab.KindUnresolved: 3},
			kind: vocab.KindUnresolved,
			wit:  result.Witness{InputID: 1, Offset: 10, State: vocab.StateAvailable, DeliveryCount: 1, Detail: "state AVAILABLE after the drain"},
		},
		{
			name: "no state and not below SPSO is not judged",
			ins:  []verify.Input{{ID: 4, Offset: 3}, {ID: 5}, {ID: 6}},
			outs: []verify.Output{plain(4), plain(6), plain(6)},
			want: map[vocab.Finding]int64{vocab.KindDuplicate: 1},
			kind: vocab.KindDuplicate,
			wit: result.Witness{InputID: 6, Outputs: []result.OutputRef{ref(plain(6)), ref(plain(6))},
				Detail: "2 committed outputs for one input"},
			note:         "verify: 3 left unjudged: no final state and not below the share-partition start offset (first: id 4)",
			inconclusive: true,
		},
		{
			name: "unresolved: unrecognized state",
			ins:  []verify.Input{in(1, "DONE", 1)},
			want: map[vocab.Finding]int64{vocab.KindUnresolved: 1},
			kind: vocab.KindUnresolved,
			wit:  result.Witness{InputID: 1, Offset: 10, DeliveryCount: 1, Detail: "final state not recognized (see notes)"},
			note: `verify: 1 input records have a field the verifier cannot use (first: id 1 has final state "DONE")`,
		},
		{
			name: "over-delivered",
			ins:  []verify.Input{in(1, vocab.StateAcknowledged, limit+1)},
			outs: []verify.Output{plain(1)},
			want: map[vocab.Finding]int64{vocab.KindOverDelivered: 1},
			kind: vocab.KindOverDelivered,
			wit: result.Witness{InputID: 1, Offset: 10, State: vocab.StateAcknowledged, DeliveryCount: limit + 1,
				Outputs: []result.OutputRef{ref(plain(1))}, Detail: "delivered 6 times, limit 5"},
		},
		{
			name: "archived-unprocessed",
			ins:  []verify.Input{in(1, vocab.StateArchived, 2)},
			want: map[vocab.Finding]int64{vocab.KindArchivedUnprocessed: 1},
			kind: vocab.KindArchivedUnprocessed,
			wit: result.Witness{InputID: 1, Offset: 10, State: vocab.StateArchived, DeliveryCount: 2,
				Detail: "archived after 2 of 5 deliveries without a reject"},
		},
		{
			name: "archived-at-limit",
			ins:  []verify.Input{in(1, vocab.StateArchived, limit)},
			want: map[vocab.Finding]int64{vocab.KindArchivedAtLimit: 1},
			kind: vocab.KindArchivedAtLimit,
			wit: result.Witness{InputID: 1, Offset: 10, State: vocab.StateArchived, DeliveryCount: limit,
				Detail: "archived after 5 deliveries, limit 5"},
		},
		{
			name: "archived without a known limit",
			ins:  []verify.Input{in(1, vocab.StateArchived, 2)},
			opts: verify.Options{DeliveryLimit: -1},
			want: map[vocab.Finding]int64{vocab.KindArchivedAtLimit: 1},
			kind: vocab.KindArchivedAtLimit,
			wit: result.Witness{InputID: 1, Offset: 10, State: vocab.StateArchived, DeliveryCount: 2,
				Detail: "archived after 2 deliveries without a reject; delivery limit unknown"},
			note: "verify: no delivery limit given: over-delivered is not checked and every archived, unrejected record counts as archived-at-limit",
		},
		{
			name: "rejected",
			ins:  []verify.Input{{ID: 1, Offset: 10, FinalState: vocab.StateArchived, DeliveryCount: 1, Rejected: true}},
			want: map[vocab.Finding]int64{vocab.KindRejected: 1},
			kind: vocab.KindRejected,
			wit:  result.Witness{InputID: 1, Offset: 10, State: vocab.StateArchived, DeliveryCount: 1, Detail: "rejected by the worker"},
		},
		{
			name: "phantom",
			ins:  []verify.Input{in(1, vocab.StateAcknowledged, 1)},
			outs: []verify.Output{plain(1), phantom},
			want: map[vocab.Finding]int64{vocab.KindPhantom: 1},
			kind: vocab.KindPhantom,
			wit: result.Witness{InputID: 99, Outputs: []result.OutputRef{ref(phantom)},
				Detail: "committed output for an id that is not in the input ledger"},
		},
		{
			name:         "repeated input id keeps the first",
			ins:          []verify.Input{in(1, vocab.StateAcknowledged, 1), in(1, vocab.StateAvailable, 1)},
			outs:         []verify.Output{plain(1)},
			want:         map[vocab.Finding]int64{},
			note:         "verify: 1 input records repeat an id already in the input ledger (first: id 1); the first record of each id was kept",
			inconclusive: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			opts := tt.opts
			if opts.DeliveryLimit == 0 {
				opts.DeliveryLimit = limit
			}
			for _, mode := range verify.Modes() {
				got := run(mode, opts, tt.ins, tt.outs)
				if !maps.Equal(got.Counts, tt.want) {
					t.Fatalf("%s: counts = %v, want %v", mode, got.Counts, tt.want)
				}
				pass := wantPass(t, mode, tt.want)
				verdict := verify.VerdictFail
				switch {
				case pass && tt.inconclusive:
					pass, verdict = false, verify.VerdictInconclusive
				case pass:
					verdict = verify.VerdictPass
				}
				if got.Pass != pass || got.Verdict != verdict {
					t.Errorf("%s: Pass, Verdict = %v, %s, want %v, %s (counts %v, allowed %v)", mode, got.Pass, got.Verdict, pass, verdict, got.Counts, got.Allowed)
				}
				if got.Inputs != int64(len(tt.ins)) || got.Outputs != int64(len(tt.outs)) {
					t.Errorf("%s: inputs, outputs = %d, %d, want %d, %d", mode, got.Inputs, got.Outputs, len(tt.ins), len(tt.outs))
				}
				if tt.note != "" && !slices.Contains(got.Notes, tt.note) {
					t.Errorf("%s: notes = %q, want %q among them", mode, got.Notes, tt.note)
				}
				if tt.kind == "" {
					continue
				}
				want := tt.wit
				want.Kind = tt.kind
				ws := got.Witnesses[tt.kind]
				if len(ws) == 0 {
					t.Fatalf("%s: no %s witness", mode, tt.kind)
				}
				if !reflect.DeepEqual(ws[0], want) {
					t.Errorf("%s: witness\n got %+v\nwant %+v", mode, ws[0], want)
				}
			}
		})
	}
}

// TestPolicy checks each mode's verdict on each anomaly alone.
func TestPolicy(t *testing.T) {
	t.Parallel()
	dupOuts := []verify.Output{plain(1), plain(1)}
	tests := []struct {
		mode      string
		duplicate bool // a duplicate passes
	}{
		{"implicit", true},
		{"explicit", true},
		{"deferred", true},
		{"transactional", false},
		{"classic-eos", false},
	}
	for _, tt := range tests {
		got := run(tt.mode, verify.Options{DeliveryLimit: limit}, []verify.Input{in(1, vocab.StateAcknowledged, 2)}, dupOuts)
		if got.Pass != tt.duplicate {
			t.Errorf("%s with a duplicate: Pass = %v, want %v", tt.mode, got.Pass, tt.duplicate)
		}
		wantForbidden := []vocab.Finding(nil)
		if !tt.duplicate {
			wantForbidden = []vocab.Finding{vocab.KindDuplicate}
		}
		if !slices.Equal(got.Forbidden, wantForbidden) {
			t.Errorf("%s with a duplicate: Forbidden = %v, want %v", tt.mode, got.Forbidden, wantForbidden)
		}
		lost := run(tt.mode, verify.Options{DeliveryLimit: limit}, []verify.Input{in(1, vocab.StateAcknowledged, 1)}, nil)
		if lost.Pass || !slices.Equal(lost.Forbidden, []vocab.Finding{vocab.KindLost}) {
			t.Errorf("%s with a lost record: Pass = %v, Forbidden = %v, want false, [lost]", tt.mode, lost.Pass, lost.Forbidden)
		}
	}
}

func TestAllowed(t *testing.T) {
	t.Parallel()
	tests := []struct {
		mode string
		want []vocab.Finding
	}{
		{"implicit", []vocab.Finding{vocab.KindDuplicate}},
		{"explicit", []vocab.Finding{vocab.KindDuplicate}},
		{"deferred", []vocab.Finding{vocab.KindDuplicate}},
		{"transactional", []vocab.Finding{}},
		{"classic-eos", []vocab.Finding{}},
	}
	for _, tt := range tests {
		got, err := verify.Allowed(vocab.Mode(tt.mode))
		if err != nil || got == nil || !slices.Equal(got, tt.want) {
			t.Errorf("Allowed(%q) = %v, %v; want %v, nil", tt.mode, got, err, tt.want)
		}
	}
	if !slices.Equal(verify.Modes(), []string{"implicit", "explicit", "deferred", "transactional", "classic-eos"}) {
		t.Errorf("Modes() = %v", verify.Modes())
	}
	_, err := verify.Allowed("exactly-once")
	want := `verify: unknown mode "exactly-once"; want one of implicit, explicit, deferred, transactional, classic-eos`
	if err == nil || err.Error() != want || !errors.Is(err, verify.ErrUnknownMode) {
		t.Errorf("Allowed(unknown) error = %v, want %q matching ErrUnknownMode", err, want)
	}
}

func TestUnknownMode(t *testing.T) {
	t.Parallel()
	got := run("exactly-once", verify.Options{DeliveryLimit: limit}, []verify.Input{in(1, vocab.StateAcknowledged, 2)}, []verify.Output{plain(1), plain(1)})
	if got.Pass || !slices.Equal(got.Forbidden, []vocab.Finding{vocab.KindDuplicate}) || len(got.Allowed) != 0 {
		t.Errorf("unknown mode: Pass %v Forbidden %v Allowed %v, want false [duplicate] []", got.Pass, got.Forbidden, got.Allowed)
	}
	if len(got.Notes) == 0 || !strings.Contains(got.Notes[0], `unknown mode "exactly-once"`) {
		t.Errorf("unknown mode: notes %q, want one naming the mode", got.Notes)
	}
}

// TestClean checks that a clean ledger passes every mode with nothing to
// report and that the JSON-facing fields are not nil.
func TestClean(t *testing.T) {
	t.Parallel()
	var ins []verify.Input
	var outs []verify.Output
	for id := uint64(1); id <= 1000; id++ {
		ins = append(ins, in(id, vocab.StateAcknowledged, 1))
		outs = append(outs, txo(id, fmt.Sprintf("w-%d", id%3), int64(id/10), 0, int64(id), true, false))
	}
	for _, mode := range verify.Modes() {
		got := run(mode, verify.Options{DeliveryLimit: limit}, ins, outs)
		if !got.Pass || len(got.Counts) != 0 || got.Counts == nil || got.Allowed == nil || got.Witnesses != nil || got.Notes != nil {
			t.Errorf("%s: clean ledger gave %+v, want a bare pass", mode, got)
		}
	}
}

// TestOrderIndependent checks that outputs before inputs, interleaved, or
// sparse ids give the same verdict, witnesses included.
func TestOrderIndependent(t *testing.T) {
	t.Parallel()
	ids := []uint64{1, 2, 3, 1 << 40, 1<<40 + 1, 1 << 62, 70000}
	var ins []verify.Input
	var outs []verify.Output
	for i, id := range ids {
		ins = append(ins, in(id, vocab.StateAcknowledged, 1))
		switch i % 3 {
		case 0:
			outs = append(outs, plain(id), plain(id)) // duplicate
		case 1:
			outs = append(outs, txo(id, "w", int64(i), 2, int64(i), true, false)) // torn by size
		}
	}
	opts := verify.Options{DeliveryLimit: limit}
	want := run("transactional", opts, ins, outs)

	v := verify.New("transactional", opts)
	for i := len(outs) - 1; i >= 0; i-- {
		v.AddOutput(outs[i])
		if i < len(ins) {
			v.AddInput(ins[i])
		}
	}
	if got := v.Finish(); !reflect.DeepEqual(got, want) {
		t.Errorf("reversed, interleaved order:\n got %+v\nwant %+v", got, want)
	}
	wantCounts := map[vocab.Finding]int64{vocab.KindDuplicate: 3, vocab.KindTornTransaction: 2, vocab.KindLost: 2}
	if !maps.Equal(want.Counts, wantCounts) {
		t.Errorf("counts = %v, want %v", want.Counts, wantCounts)
	}
}

func TestMaxWitnesses(t *testing.T) {
	t.Parallel()
	var ins []verify.Input
	for id := uint64(1); id <= 30; id++ {
		ins = append(ins, in(id, vocab.StateAcknowledged, 1))
	}
	tests := []struct {
		max, want int
	}{{0, verify.DefaultMaxWitnesses}, {3, 3}, {-1, 0}, {100, 30}}
	for _, tt := range tests {
		got := run("explicit", verify.Options{DeliveryLimit: limit, MaxWitnesses: tt.max}, ins, nil)
		if n := len(got.Witnesses[vocab.KindLost]); n != tt.want || got.Counts[vocab.KindLost] != 30 {
			t.Errorf("MaxWitnesses %d: %d witnesses, count %d; want %d, 30", tt.max, n, got.Counts[vocab.KindLost], tt.want)
		}
		if tt.want > 0 && got.Witnesses[vocab.KindLost][tt.want-1].InputID != uint64(tt.want) {
			t.Errorf("MaxWitnesses %d: witnesses are not the lowest ids: %+v", tt.max, got.Witnesses[vocab.KindLost])
		}
	}
}

func TestFinishTwice(t *testing.T) {
	t.Parallel()
	v := verify.New("explicit", verify.Options{DeliveryLimit: limit})
	v.AddInput(in(1, vocab.StateAcknowledged, 1))
	first := v.Finish()
	v.AddOutput(plain(1))
	second := v.Finish()
	if first != second || second.Pass || second.Counts[vocab.KindLost] != 1 {
		t.Errorf("second Finish = %+v, want the first verdict", second)
	}
	if !slices.Contains(second.Notes, "verify: 1 records were added after Finish and ignored") {
		t.Errorf("notes = %q, want the late add noted", second.Notes)
	}
}

func TestOutputOverflow(t *testing.T) {
	t.Parallel()
	v := verify.New("explicit", verify.Options{DeliveryLimit: limit})
	verify.SetMaxOutputs(v, 2)
	for id := uint64(1); id <= 3; id++ {
		v.AddInput(in(id, vocab.StateAcknowledged, 1))
		v.AddOutput(plain(id))
	}
	got := v.Finish()
	if got.Pass || got.Outputs != 3 || got.Counts[vocab.KindLost] != 1 {
		t.Errorf("overflow: %+v, want FAIL with 3 outputs counted and id 3 lost", got)
	}
	want := "verify: 1 outputs beyond the verifier's limit of 2 were counted but not checked; the verdict is INCONCLUSIVE because it is incomplete"
	if !slices.Contains(got.Notes, want) {
		t.Errorf("notes = %q, want %q", got.Notes, want)
	}
}

// TestConcurrentAdds feeds one verifier from several goroutines (run with
// -race to check the locking).
func TestConcurrentAdds(t *testing.T) {
	t.Parallel()
	v := verify.New("transactional", verify.Options{DeliveryLimit: limit})
	var wg sync.WaitGroup
	for g := uint64(0); g < 4; g++ {
		wg.Go(func() {
			for id := g*1000 + 1; id <= g*1000+1000; id++ {
				v.AddInput(in(id, vocab.StateAcknowledged, 1))
				v.AddOutput(plain(id))
			}
		})
	}
	wg.Wait()
	if got := v.Finish(); !got.Pass || got.Inputs != 4000 || got.Outputs != 4000 || len(got.Counts) != 0 {
		t.Errorf("concurrent adds: %+v, want a clean pass of 4000", got)
	}
}
