// This file tests the ledger: its counters, and how each joins inputs with
// the target's final share state and turns outputs into the verifier's
// records in every mode.

package loadgen

import (
	"reflect"
	"testing"

	"github.com/sharebench/sharebench/loadgen/target"
	"github.com/sharebench/sharebench/loadgen/verify"
)

// abortReporter is a target whose readers flag aborted records.
type abortReporter struct{ *memTarget }

func (a abortReporter) Info() target.Info {
	i := a.memTarget.Info()
	i.ReportsAborted = true
	return i
}

func outputRecord(p int32, off int64, h outputHeader, aborted bool) *target.Record {
	v := make([]byte, HeaderBytes)
	putOutput(v, h)
	return &target.Record{Partition: p, Offset: off, Value: v, Aborted: aborted}
}

func collect(l *ledger, mr *modeRun, st *target.ShareState) ([]verify.Input, []verify.Output) {
	var ins []verify.Input
	var outs []verify.Output
	l.each(mr, st, func(in verify.Input) { ins = append(ins, in) }, func(o verify.Output) { outs = append(outs, o) })
	return ins, outs
}

// testLedger holds five input ids; id 3 was never written (its produce
// failed), ids 1 and 2 have committed outputs (1 twice), id 4 one seen only
// read_uncommitted, id 2 was rejected on purpose.
func testLedger() *ledger {
	l := newLedger()
	l.addInputs([]uint64{1}, []inputRec{{partition: 0, offset: 0, intended: 100}})
	l.addInputs([]uint64{2}, []inputRec{{partition: 0, offset: 1, intended: 200}})
	l.addInputs([]uint64{5}, []inputRec{{partition: 2, offset: 3, intended: 500}}) // id 3 never added: a gap
	l.addInputs([]uint64{4}, []inputRec{{partition: 1, offset: 0, intended: 400}})
	l.reject(2)
	l.reject(2) // counted once
	l.addCommitted(outputRec{id: 1, partition: 0, offset: 0, visible: 1000, txnSeq: 1<<32 | 7, epoch: 3, worker: 2})
	l.addCommitted(outputRec{id: 1, partition: 1, offset: 0, visible: 3000, txnSeq: 2<<32 | 1, epoch: 4, worker: 2})
	// The read_uncommitted pass sees the committed output again (skipped)
	// and one the committed reader never saw.
	l.addUncommitted(outputRecord(0, 0, outputHeader{InputID: 1, TxnSeq: 1<<32 | 7, Epoch: 3, Worker: 2}, false))
	l.addUncommitted(outputRecord(0, 1, outputHeader{InputID: 4, TxnSeq: 1<<32 | 8, Epoch: 3, Worker: 1}, true))
	l.addUncommitted(&target.Record{Partition: 0, Offset: 2, Value: []byte("short")}) // not an output: ignored
	return l
}

func TestLedgerCounters(t *testing.T) {
	t.Parallel()
	l := testLedger()
	// Settled: id 1 (has an output) and id 2 (rejected).
	if got := l.settled(); got != 2 {
		t.Errorf("settled() = %d, want 2", got)
	}
	if got := l.committedOutputs(); got != 2 {
		t.Errorf("committedOutputs() = %d, want 2", got)
	}
	for _, tc := range []struct{ from, to, want int64 }{
		{0, 1000, 0}, {0, 1001, 1}, {1000, 3001, 2}, {1001, 3000, 0}, {0, 1 << 62, 2},
	} {
		if got := l.visibleBetween(tc.from, tc.to); got != tc.want {
			t.Errorf("visibleBetween(%d, %d) = %d, want %d (uncommitted outputs never count)", tc.from, tc.to, got, tc.want)
		}
	}
	// An ack-only output (no topic position) counts like any other.
	l.addCommitted(outputRec{id: 4, partition: -1, offset: -1, visible: 5})
	if l.settled() != 3 || l.committedOutputs() != 3 {
		t.Errorf("after an ack-only output: settled %d outputs %d, want 3 and 3", l.settled(), l.committedOutputs())
	}
}

func TestLedgerEachFinalStates(t *testing.T) {
	t.Parallel()
	mr := &modeRun{cfg: &Config{Target: newMemTarget()}, mode: target.Explicit,
		tcfg: target.Config{TransactionalIDPrefix: "run-worker-"}}
	st := &target.ShareState{
		Records: []target.RecordState{
			{Partition: 0, Offset: 0, State: verify.StateAcknowledged, DeliveryCount: 1},
			{Partition: 0, Offset: 1, State: verify.StateArchived, DeliveryCount: 2, Rejected: true},
			{Partition: 9, Offset: 9, State: verify.StateAvailable}, // not an input: ignored
		},
		SPSO: map[int32]int64{0: 2, 1: 5},
	}
	ins, _ := collect(testLedger(), mr, st)
	want := []verify.Input{
		{ID: 1, Partition: 0, Offset: 0, IntendedNs: 100, FinalState: verify.StateAcknowledged, DeliveryCount: 1},
		{ID: 2, Partition: 0, Offset: 1, IntendedNs: 200, FinalState: verify.StateArchived, DeliveryCount: 2, Rejected: true},
		// id 3 was never written.
		{ID: 4, Partition: 1, Offset: 0, IntendedNs: 400, BelowSPSO: true}, // no record, below SPSO 5
		{ID: 5, Partition: 2, Offset: 3, IntendedNs: 500},                  // no record, no SPSO: unknown
	}
	if !reflect.DeepEqual(ins, want) {
		t.Fatalf("inputs with share state:\n got %+v\nwant %+v", ins, want)
	}

	// Without share state every state is unknown; a reject the worker
	// noted still shows.
	ins, _ = collect(testLedger(), mr, nil)
	for i := range want {
		want[i].FinalState, want[i].DeliveryCount, want[i].BelowSPSO = "", 0, false
	}
	if !reflect.DeepEqual(ins, want) {
		t.Fatalf("inputs without share state:\n got %+v\nwant %+v", ins, want)
	}

	// The target's reject flag counts even when the worker did not note it.
	l := newLedger()
	l.addInputs([]uint64{1}, []inputRec{{partition: 0, offset: 0, intended: 0}})
	ins, _ = collect(l, mr, &target.ShareState{Records: []target.RecordState{{Partition: 0, Offset: 0, State: verify.StateArchived, Rejected: true}}})
	if len(ins) != 1 || !ins[0].Rejected {
		t.Fatalf("input archived by a reject: %+v, want Rejected", ins)
	}
}

func TestLedgerEachOutputs(t *testing.T) {
	t.Parallel()
	committed := []verify.Output{
		{InputID: 1, Partition: 0, Offset: 0, TransactionalID: "run-worker-2", Epoch: 3, TxnSeq: 1<<32 | 7, Committed: true, VisibleNs: 1000},
		{InputID: 1, Partition: 1, Offset: 0, TransactionalID: "run-worker-2", Epoch: 4, TxnSeq: 2<<32 | 1, Committed: true, VisibleNs: 3000},
	}
	uncommitted := verify.Output{InputID: 4, Partition: 0, Offset: 1, TransactionalID: "run-worker-1", Epoch: 3, TxnSeq: 1<<32 | 8}
	for _, tc := range []struct {
		name    string
		mode    target.Mode
		tgt     target.Target
		aborted bool // what the uncommitted output is judged
	}{
		// Transactional modes: the target flags aborted records, so the
		// flag is taken as given.
		{"transactional/reports-aborted", target.Transactional, abortReporter{newMemTarget()}, true},
		{"deferred/reports-aborted", target.Deferred, abortReporter{newMemTarget()}, true},
		// A target that cannot flag them: after the drain, an output no
		// read_committed reader saw was aborted.
		{"classic-eos/no-flags", target.ClassicEOS, newMemTarget(), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mr := &modeRun{cfg: &Config{Target: tc.tgt}, mode: tc.mode, tcfg: target.Config{TransactionalIDPrefix: "run-worker-"}}
			_, outs := collect(testLedger(), mr, nil)
			u := uncommitted
			u.Aborted = tc.aborted
			want := append(append([]verify.Output(nil), committed...), u)
			if !reflect.DeepEqual(outs, want) {
				t.Fatalf("outputs:\n got %+v\nwant %+v", outs, want)
			}
		})
	}

	t.Run("transactional/torn", func(t *testing.T) {
		// A target that flags aborted records and did not flag this one:
		// uncommitted and not aborted, the verifier's torn transaction.
		mr := &modeRun{cfg: &Config{Target: abortReporter{newMemTarget()}}, mode: target.Transactional, tcfg: target.Config{TransactionalIDPrefix: "p-"}}
		l := newLedger()
		l.addInputs([]uint64{1}, []inputRec{{partition: 0, offset: 0, intended: 0}})
		l.addUncommitted(outputRecord(0, 0, outputHeader{InputID: 1, TxnSeq: 1, Epoch: 0, Worker: 5}, false))
		_, outs := collect(l, mr, nil)
		want := []verify.Output{{InputID: 1, Partition: 0, Offset: 0, TransactionalID: "p-5", Epoch: 0, TxnSeq: 1}}
		if !reflect.DeepEqual(outs, want) {
			t.Fatalf("outputs:\n got %+v\nwant %+v", outs, want)
		}
	})

	for _, mode := range []target.Mode{target.Implicit, target.Explicit} {
		t.Run(string(mode), func(t *testing.T) {
			// Non-transactional outputs carry no producer identity.
			mr := &modeRun{cfg: &Config{Target: newMemTarget()}, mode: mode, tcfg: target.Config{TransactionalIDPrefix: "run-worker-"}}
			_, outs := collect(testLedger(), mr, nil)
			var want []verify.Output
			for _, o := range append(append([]verify.Output(nil), committed...), uncommitted) {
				o.TransactionalID, o.Epoch = "", -1
				want = append(want, o)
			}
			if !reflect.DeepEqual(outs, want) {
				t.Fatalf("outputs:\n got %+v\nwant %+v", outs, want)
			}
		})
	}
}
