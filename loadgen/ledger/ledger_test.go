// This file tests the ledger: its counters, and how each joins inputs with
// the target's final share state, outputs with the readers' passes and the
// client's transactions, and deliveries with the fate of their acks.

package ledger

import (
	"reflect"
	"testing"

	"github.com/sharebench/sharebench/loadgen/targets"
	"github.com/sharebench/sharebench/loadgen/verify"
	"github.com/sharebench/sharebench/vocab"
)

func outputRecord(p int32, off int64, h OutputHeader, aborted bool) *targets.Record {
	v := make([]byte, HeaderBytes)
	PutOutputHeader(v, h.InputID, h.IntendedNs, h.TxnSeq, h.Epoch, h.Worker)
	return &targets.Record{Partition: p, Offset: off, Value: v, Aborted: aborted}
}

func inputRecord(id uint64, count int) *targets.Record {
	v := make([]byte, HeaderBytes)
	PutInputHeader(v, id, 0)
	return &targets.Record{Value: v, DeliveryCount: count}
}

type collected struct {
	ins  []verify.Input
	outs []verify.Output
	dels []verify.Delivery
}

// collect streams l as mode's ledger, its transactional ids starting with
// prefix, joined with st.
func collect(l *Ledger, mode vocab.Mode, prefix string, st *targets.ShareState) collected {
	var c collected
	l.each(mode, prefix, st, func(in verify.Input) { c.ins = append(c.ins, in) },
		func(o verify.Output) { c.outs = append(c.outs, o) },
		func(d verify.Delivery) { c.dels = append(c.dels, d) })
	return c
}

// testLedger holds five input ids; id 3 was never written (its produce
// failed), ids 1 and 2 have committed outputs (1 twice), id 4 one seen only
// read_uncommitted.
func testLedger() *Ledger {
	l := New(nil)
	l.AddInputs([]uint64{1}, []Input{{Partition: 0, Offset: 0, IntendedNs: 100}})
	l.AddInputs([]uint64{2}, []Input{{Partition: 0, Offset: 1, IntendedNs: 200}})
	l.AddInputs([]uint64{5}, []Input{{Partition: 2, Offset: 3, IntendedNs: 500}}) // id 3 never added: a gap
	l.AddInputs([]uint64{4}, []Input{{Partition: 1, Offset: 0, IntendedNs: 400}})
	l.addCommitted(outputRec{id: 1, partition: 0, offset: 0, visible: 1000, txnSeq: 1<<32 | 7, epoch: 3, worker: 2})
	l.addCommitted(outputRec{id: 1, partition: 1, offset: 0, visible: 3000, txnSeq: 2<<32 | 1, epoch: 4, worker: 2})
	return l
}

func TestLedgerCounters(t *testing.T) {
	t.Parallel()
	l := testLedger()
	reject := func(id uint64) { l.mu.Lock(); l.rejectLocked(id); l.mu.Unlock() }
	reject(2)
	reject(2) // counted once
	// Settled: id 1 (has an output) and id 2 (rejected).
	if got := l.Settled(); got != 2 {
		t.Errorf("settled() = %d, want 2", got)
	}
	if got := l.CommittedOutputs(); got != 2 {
		t.Errorf("committedOutputs() = %d, want 2", got)
	}
	// The same position seen again by a read_committed pass is one output.
	l.addCommitted(outputRec{id: 1, partition: 0, offset: 0, visible: 9000})
	if got := l.CommittedOutputs(); got != 2 {
		t.Errorf("committedOutputs() after a second pass = %d, want 2", got)
	}
	for _, tc := range []struct{ from, to, want int64 }{
		{0, 1000, 0}, {0, 1001, 1}, {1000, 3001, 2}, {1001, 3000, 0}, {0, 1 << 62, 2},
	} {
		if got := l.VisibleBetween(tc.from, tc.to); got != tc.want {
			t.Errorf("visibleBetween(%d, %d) = %d, want %d", tc.from, tc.to, got, tc.want)
		}
	}
	// An ack-only output (no topic position) counts like any other.
	l.addCommitted(outputRec{id: 4, partition: -1, offset: -1, visible: 5})
	if l.Settled() != 3 || l.CommittedOutputs() != 3 {
		t.Errorf("after an ack-only output: settled %d outputs %d, want 3 and 3", l.Settled(), l.CommittedOutputs())
	}
}

func TestLedgerEachFinalStates(t *testing.T) {
	t.Parallel()
	const mode, prefix = vocab.Explicit, "run-worker-"
	st := &targets.ShareState{
		Records: []targets.RecordState{
			{Partition: 0, Offset: 0, State: vocab.StateAcknowledged, DeliveryCount: 1},
			{Partition: 0, Offset: 1, State: vocab.StateArchived, DeliveryCount: 2, Rejected: true},
			{Partition: 9, Offset: 9, State: vocab.StateAvailable}, // not an input: ignored
		},
		SPSO: map[int32]int64{0: 2, 1: 5, 2: 3},
	}
	got := collect(testLedger(), mode, prefix, st).ins
	want := []verify.Input{
		{ID: 1, Partition: 0, Offset: 0, IntendedNs: 100, FinalState: vocab.StateAcknowledged, DeliveryCount: 1},
		{ID: 2, Partition: 0, Offset: 1, IntendedNs: 200, FinalState: vocab.StateArchived, DeliveryCount: 2, Rejected: true},
		// id 3 was never written.
		{ID: 4, Partition: 1, Offset: 0, IntendedNs: 400, FinalState: vocab.StateUnknown, BelowSPSO: true}, // below SPSO 5
		{ID: 5, Partition: 2, Offset: 3, IntendedNs: 500, FinalState: vocab.StateUnknown},                  // at SPSO 3: unknown
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("inputs with share state:\n got %+v\nwant %+v", got, want)
	}
	// Without share state every state is unknown.
	got = collect(testLedger(), mode, prefix, nil).ins
	for i := range want {
		want[i].FinalState, want[i].DeliveryCount, want[i].BelowSPSO, want[i].Rejected = vocab.StateUnknown, 0, false, false
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("inputs without share state:\n got %+v\nwant %+v", got, want)
	}
}

// TestLedgerMarkers: the read_uncommitted pass joins the outputs the tail
// reader saw, adds the ones it did not, and the markers that follow a
// producer's records decide their fate; records no marker followed are an
// open transaction.
func TestLedgerMarkers(t *testing.T) {
	t.Parallel()
	mode, prefix := vocab.Transactional, "w-"
	l := New(nil)
	l.AddInputs([]uint64{1, 2, 3, 4}, []Input{{0, 0, 0}, {0, 1, 0}, {0, 2, 0}, {0, 3, 0}})
	committed := l.beginTxn(1, 1<<32|1, 77, 0)
	l.txnOutputs(committed, 2)
	l.commitSent(committed)
	l.endTxn(committed, outcomeCommitted)
	aborted := l.beginTxn(2, 1<<32|1, 88, 0)
	l.txnOutputs(aborted, 1)
	l.endTxn(aborted, outcomeAborted)
	// The tail reader saw output 1 only.
	l.addCommitted(outputRec{id: 1, partition: 0, offset: 0, visible: 10, txnSeq: 1<<32 | 1, worker: 1})
	txnRec := func(id uint64, off int64, worker uint16, pid int64) *targets.Record {
		r := outputRecord(0, off, OutputHeader{InputID: id, TxnSeq: 1<<32 | 1, Worker: worker}, false)
		r.ProducerID, r.Transactional = pid, true
		return r
	}
	l.addUncommitted(txnRec(1, 0, 1, 77))
	l.addUncommitted(txnRec(2, 1, 1, 77))
	l.addUncommitted(txnRec(3, 2, 2, 88))
	l.addUncommitted(&targets.Record{Partition: 0, Offset: 3, ProducerID: 88, ProducerEpoch: 1, Control: targets.ControlAbort})
	l.addUncommitted(&targets.Record{Partition: 0, Offset: 4, ProducerID: 77, ProducerEpoch: 1, Control: targets.ControlCommit})
	l.addUncommitted(txnRec(4, 5, 3, 99))                                              // a producer that never ends its transaction
	l.addUncommitted(&targets.Record{Partition: 0, Offset: 6, Value: []byte("short")}) // not an output: ignored
	open := l.finishMarkers()
	wantOpen := []verify.OpenTransaction{{Partition: 0, ProducerID: 99, FirstOffset: 5, Source: "markers"}}
	if !reflect.DeepEqual(open, wantOpen) {
		t.Errorf("open transactions = %+v, want %+v", open, wantOpen)
	}
	got := collect(l, mode, prefix, nil).outs
	want := []verify.Output{
		{InputID: 1, Partition: 0, Offset: 0, TransactionalID: "w-1", ProducerID: 77, TxnSeq: 1<<32 | 1, TxnSize: 2, TxnOutcome: verify.OutcomeCommitted, CommitSent: true,
			Committed: true, Uncommitted: true, Marker: verify.MarkerCommit, MarkerEpoch: 1, VisibleNs: 10},
		{InputID: 2, Partition: 0, Offset: 1, TransactionalID: "w-1", ProducerID: 77, TxnSeq: 1<<32 | 1, TxnSize: 2, TxnOutcome: verify.OutcomeCommitted, CommitSent: true,
			Uncommitted: true, Marker: verify.MarkerCommit, MarkerEpoch: 1},
		{InputID: 3, Partition: 0, Offset: 2, TransactionalID: "w-2", ProducerID: 88, TxnSeq: 1<<32 | 1, TxnSize: 1, TxnOutcome: verify.OutcomeAborted,
			Uncommitted: true, Marker: verify.MarkerAbort, MarkerEpoch: 1, Aborted: true},
		{InputID: 4, Partition: 0, Offset: 5, TransactionalID: "w-3", ProducerID: 99, TxnSeq: 1<<32 | 1,
			Uncommitted: true, Marker: verify.MarkerOpen},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("outputs:\n got %+v\nwant %+v", got, want)
	}
	// Non-transactional modes carry no producer identity.
	mode = vocab.Explicit
	for _, o := range collect(l, mode, prefix, nil).outs {
		if o.TransactionalID != "" || o.Epoch != -1 || o.TxnOutcome != "" {
			t.Errorf("explicit output %+v carries a transaction", o)
		}
	}
}

// TestLedgerDeliveries: each delivery keeps the broker's count and the fate
// of its ack; staged acks take their transaction's fate, and only a reject
// that took effect settles its input.
func TestLedgerDeliveries(t *testing.T) {
	t.Parallel()
	mode, prefix := vocab.Transactional, "w-"
	l := New(nil)
	recs := []*targets.Record{inputRecord(1, 1), inputRecord(2, 1), inputRecord(3, 2), inputRecord(4, 1), inputRecord(5, 3), inputRecord(6, 1)}
	l.addDeliveries(0, recs, 42)
	for i, r := range recs {
		if r.Tag != int64(i+1) {
			t.Fatalf("record %d tagged %d, want %d", i, r.Tag, i+1)
		}
	}
	l.setAck([]int64{recs[0].Tag}, ackAccept, fateCommitted)
	l.setAck([]int64{recs[1].Tag}, ackAccept, fateFailed)
	committed := l.beginTxn(0, 1, 7, 0)
	l.stageAcks([]int64{recs[2].Tag}, ackReject, committed)
	l.commitSent(committed)
	l.endTxn(committed, outcomeCommitted)
	l.rejectStaged([]int64{recs[2].Tag})
	crashed := l.beginTxn(0, 2, 7, 0) // never asked to commit: can only abort
	l.stageAcks([]int64{recs[3].Tag}, ackReject, crashed)
	lost := l.beginTxn(0, 3, 7, 0) // asked to commit, never answered
	l.stageAcks([]int64{recs[4].Tag}, ackAccept, lost)
	l.commitSent(lost)
	got := collect(l, mode, prefix, nil).dels
	d := func(id uint64, count int, ack, fate string) verify.Delivery {
		return verify.Delivery{InputID: id, AtNs: 42, DeliveryCount: count, Ack: ack, AckOutcome: fate}
	}
	want := []verify.Delivery{
		d(1, 1, verify.AckAccept, verify.AckCommitted),
		d(2, 1, verify.AckAccept, verify.AckFailed),
		d(3, 2, verify.AckReject, verify.AckCommitted),
		d(4, 1, verify.AckReject, verify.AckAborted),
		d(5, 3, verify.AckAccept, verify.AckUnknown),
		d(6, 1, verify.AckNone, verify.AckNotSent),
	}
	for i, tx := range []int64{1, 2, 3} {
		want[2+i].TransactionalID, want[2+i].TxnSeq = "w-0", tx
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("deliveries:\n got %+v\nwant %+v", got, want)
	}
	if l.Settled() != 1 || !l.rejected[3] || l.rejected[4] {
		t.Errorf("settled %d, rejected %v: want only input 3 (its reject committed)", l.Settled(), l.rejected)
	}
}
