// This file checks the judgements the v2 ledger makes possible: client
// outcomes, transaction markers, observed deliveries and open transactions,
// and the INCONCLUSIVE verdict.

package verify_test

import (
	"maps"
	"slices"
	"testing"

	"github.com/sharebench/sharebench/loadgen/verify"
	"github.com/sharebench/sharebench/vocab"
)

func txnOut(id uint64, off int64, seq int64, size int, outcome string, committed bool, marker string) verify.Output {
	return verify.Output{InputID: id, Partition: 0, Offset: off, TransactionalID: "w-0", ProducerID: 9, Epoch: 2, TxnSeq: seq, TxnSize: size,
		TxnOutcome: outcome, CommitSent: outcome == verify.OutcomeCommitted, Committed: committed, Uncommitted: true, Marker: marker, MarkerEpoch: 3, VisibleNs: 1}
}

func acked(id uint64) verify.Input {
	return verify.Input{ID: id, Offset: int64(id), FinalState: vocab.StateAcknowledged, DeliveryCount: 1}
}

func delivery(id uint64, count int, ack, outcome string) verify.Delivery {
	return verify.Delivery{InputID: id, DeliveryCount: count, Ack: ack, AckOutcome: outcome}
}

func TestV2Judgements(t *testing.T) {
	t.Parallel()
	const limit = 5
	unknown := func(id uint64) verify.Input {
		return verify.Input{ID: id, Offset: int64(id), FinalState: vocab.StateUnknown}
	}
	for _, tc := range []struct {
		name    string
		mode    string
		ins     []verify.Input
		outs    []verify.Output
		dels    []verify.Delivery
		opens   []verify.OpenTransaction
		opts    verify.Options
		want    map[vocab.Finding]int64
		verdict string
		reason  string // an unjudged reason that must be counted
	}{
		{name: "clean transaction", mode: "transactional",
			ins:  []verify.Input{acked(1), acked(2)},
			outs: []verify.Output{txnOut(1, 0, 1, 2, verify.OutcomeCommitted, true, verify.MarkerCommit), txnOut(2, 1, 1, 2, verify.OutcomeCommitted, true, verify.MarkerCommit)},
			dels: []verify.Delivery{delivery(1, 1, verify.AckAccept, verify.AckCommitted), delivery(2, 1, verify.AckAccept, verify.AckCommitted)},
			want: map[vocab.Finding]int64{}, verdict: verify.VerdictPass},
		// The client was told committed and the broker aborted: the
		// output is an aborted read, its transaction torn.
		{name: "aborted-read: an abort marker followed a visible output", mode: "deferred",
			ins:  []verify.Input{acked(1)},
			outs: []verify.Output{txnOut(1, 0, 1, 1, verify.OutcomeCommitted, true, verify.MarkerAbort), txnOut(1, 1, 2, 1, verify.OutcomeCommitted, true, verify.MarkerCommit)},
			want: map[vocab.Finding]int64{vocab.KindAbortedRead: 1, vocab.KindTornTransaction: 1}, verdict: verify.VerdictFail},
		{name: "aborted-read: the client was told it aborted", mode: "transactional",
			ins:  []verify.Input{acked(1)},
			outs: []verify.Output{txnOut(1, 0, 1, 1, verify.OutcomeAborted, true, ""), txnOut(1, 1, 2, 1, verify.OutcomeCommitted, true, "")},
			want: map[vocab.Finding]int64{vocab.KindAbortedRead: 1}, verdict: verify.VerdictFail},
		{name: "aborted-read: the client crashed before asking to commit", mode: "classic-eos",
			ins:  []verify.Input{acked(1)},
			outs: []verify.Output{txnOut(1, 0, 1, 1, verify.OutcomeUnknown, true, ""), txnOut(1, 1, 2, 1, verify.OutcomeCommitted, true, "")},
			want: map[vocab.Finding]int64{vocab.KindAbortedRead: 1}, verdict: verify.VerdictFail},
		{name: "a commit whose answer was lost may be visible", mode: "transactional",
			ins: []verify.Input{acked(1)},
			outs: []verify.Output{func() verify.Output {
				o := txnOut(1, 0, 1, 1, verify.OutcomeUnknown, true, verify.MarkerCommit)
				o.CommitSent = true
				return o
			}()},
			want: map[vocab.Finding]int64{}, verdict: verify.VerdictPass},
		{name: "torn: commit markers on one partition, abort on another", mode: "transactional",
			ins: []verify.Input{acked(1), acked(2)},
			outs: []verify.Output{txnOut(1, 0, 1, 2, verify.OutcomeCommitted, true, verify.MarkerCommit), func() verify.Output {
				o := txnOut(2, 0, 1, 2, verify.OutcomeCommitted, false, verify.MarkerAbort)
				o.Partition = 1
				return o
			}(), txnOut(2, 5, 2, 1, verify.OutcomeCommitted, true, verify.MarkerCommit)},
			want: map[vocab.Finding]int64{vocab.KindTornTransaction: 1}, verdict: verify.VerdictFail},
		{name: "torn: the client was told committed, nothing is visible", mode: "deferred",
			ins:  []verify.Input{acked(1)},
			outs: []verify.Output{txnOut(1, 0, 1, 1, verify.OutcomeCommitted, false, verify.MarkerOpen), txnOut(1, 1, 2, 1, verify.OutcomeCommitted, true, verify.MarkerCommit)},
			want: map[vocab.Finding]int64{vocab.KindTornTransaction: 1}, verdict: verify.VerdictFail},
		{name: "a staged reject that aborted is not rejected", mode: "transactional",
			ins:  []verify.Input{{ID: 1, FinalState: vocab.StateArchived, DeliveryCount: 1}},
			dels: []verify.Delivery{delivery(1, 1, verify.AckReject, verify.AckAborted)},
			want: map[vocab.Finding]int64{vocab.KindArchivedUnprocessed: 1}, verdict: verify.VerdictFail},
		{name: "a reject that committed is rejected", mode: "transactional",
			ins:  []verify.Input{{ID: 1, FinalState: vocab.StateUnknown, BelowSPSO: true}},
			dels: []verify.Delivery{delivery(1, 1, verify.AckReject, verify.AckCommitted)},
			want: map[vocab.Finding]int64{vocab.KindRejected: 1}, verdict: verify.VerdictPass},
		// The target's word (the reject took effect) and its state
		// (ACKNOWLEDGED) disagree: lost, and a contradiction of its own.
		{name: "a committed reject on an acknowledged record is lost", mode: "transactional",
			ins:  []verify.Input{acked(1)},
			dels: []verify.Delivery{delivery(1, 1, verify.AckReject, verify.AckCommitted)},
			want: map[vocab.Finding]int64{vocab.KindLost: 1, vocab.KindRejected: 1, vocab.KindAckContradiction: 1}, verdict: verify.VerdictFail},
		{name: "over-delivered: deliveries that certainly counted", mode: "transactional",
			ins:  []verify.Input{{ID: 1, FinalState: vocab.StateArchived, DeliveryCount: 1}},
			dels: slices.Repeat([]verify.Delivery{delivery(1, 1, verify.AckAccept, verify.AckAborted)}, limit+1),
			want: map[vocab.Finding]int64{vocab.KindOverDelivered: 1, vocab.KindArchivedAtLimit: 1}, verdict: verify.VerdictFail},
		{name: "deliveries with no ack do not count toward the limit", mode: "explicit",
			ins:  []verify.Input{acked(1)},
			outs: []verify.Output{{InputID: 1, Epoch: -1, Committed: true}},
			dels: append(slices.Repeat([]verify.Delivery{delivery(1, 1, verify.AckNone, verify.AckNotSent)}, limit+1), delivery(1, 2, verify.AckAccept, verify.AckCommitted)),
			want: map[vocab.Finding]int64{}, verdict: verify.VerdictPass},
		{name: "archived at the limit told from lost by the deliveries", mode: "deferred",
			ins:  []verify.Input{{ID: 1, FinalState: vocab.StateUnknown, BelowSPSO: true}},
			dels: slices.Repeat([]verify.Delivery{delivery(1, 5, verify.AckRelease, verify.AckCommitted)}, limit),
			want: map[vocab.Finding]int64{vocab.KindArchivedAtLimit: 1}, verdict: verify.VerdictPass},
		{name: "an accept that took effect, no output, state unknown: lost", mode: "deferred",
			ins:  []verify.Input{unknown(1)},
			dels: []verify.Delivery{delivery(1, 1, verify.AckAccept, verify.AckCommitted)},
			want: map[vocab.Finding]int64{vocab.KindLost: 1}, verdict: verify.VerdictFail},
		{name: "an accept whose fate is unknown: lost or archived, unjudged", mode: "deferred",
			ins:  []verify.Input{{ID: 1, FinalState: vocab.StateUnknown, BelowSPSO: true}},
			dels: []verify.Delivery{delivery(1, 5, verify.AckAccept, verify.AckUnknown)},
			want: map[vocab.Finding]int64{}, verdict: verify.VerdictInconclusive, reason: verify.UnjudgedLostOrLimit},
		{name: "no state, no ack: unjudged", mode: "explicit",
			ins:  []verify.Input{unknown(1)},
			outs: []verify.Output{{InputID: 1, Epoch: -1, Committed: true}},
			dels: []verify.Delivery{delivery(1, 1, verify.AckNone, verify.AckNotSent)},
			want: map[vocab.Finding]int64{}, verdict: verify.VerdictInconclusive, reason: verify.UnjudgedNoState},
		{name: "a delivery of an assigned id the input ledger lacks: unjudged", mode: "explicit",
			ins:  []verify.Input{acked(1), acked(9)},
			outs: []verify.Output{{InputID: 1, Epoch: -1, Committed: true}, {InputID: 9, Epoch: -1, Committed: true}},
			dels: []verify.Delivery{delivery(1, 1, verify.AckAccept, verify.AckCommitted), delivery(7, 1, verify.AckAccept, verify.AckCommitted), delivery(9, 1, verify.AckAccept, verify.AckCommitted)},
			want: map[vocab.Finding]int64{}, verdict: verify.VerdictInconclusive, reason: verify.UnjudgedNotAnInput},
		{name: "a delivery of an id no producer assigned: phantom", mode: "explicit",
			ins:  []verify.Input{acked(1)},
			outs: []verify.Output{{InputID: 1, Epoch: -1, Committed: true}},
			dels: []verify.Delivery{delivery(1, 1, verify.AckAccept, verify.AckCommitted), delivery(7, 1, verify.AckAccept, verify.AckCommitted)},
			want: map[vocab.Finding]int64{vocab.KindPhantom: 1}, verdict: verify.VerdictFail},
		{name: "hanging transaction", mode: "deferred",
			ins:   []verify.Input{acked(1)},
			outs:  []verify.Output{txnOut(1, 0, 1, 1, verify.OutcomeCommitted, true, verify.MarkerCommit)},
			opens: []verify.OpenTransaction{{Partition: 2, ProducerID: 4, FirstOffset: 7, Source: "target"}, {Partition: 2, ProducerID: 4, FirstOffset: 7, Source: "markers"}},
			want:  map[vocab.Finding]int64{vocab.KindHangingTransaction: 1}, verdict: verify.VerdictFail},
		{name: "a drain that timed out is never PASS", mode: "transactional",
			ins:  []verify.Input{acked(1)},
			outs: []verify.Output{txnOut(1, 0, 1, 1, verify.OutcomeCommitted, true, verify.MarkerCommit)},
			opts: verify.Options{DrainTimedOut: true, DrainNote: "1 of 2 settled"},
			want: map[vocab.Finding]int64{}, verdict: verify.VerdictInconclusive},
		{name: "a drain that timed out with an anomaly is FAIL", mode: "transactional",
			ins:  []verify.Input{acked(1)},
			opts: verify.Options{DrainTimedOut: true},
			want: map[vocab.Finding]int64{vocab.KindLost: 1}, verdict: verify.VerdictFail},
		{name: "a read that stopped short of its end offsets is never PASS", mode: "transactional",
			ins:  []verify.Input{acked(1)},
			outs: []verify.Output{txnOut(1, 0, 1, 1, verify.OutcomeCommitted, true, verify.MarkerCommit)},
			opts: verify.Options{Incomplete: []string{"the read_committed read of out stopped short of the end offsets"}},
			want: map[vocab.Finding]int64{}, verdict: verify.VerdictInconclusive},
		{name: "a short read with an anomaly is FAIL", mode: "transactional",
			ins:  []verify.Input{acked(1)},
			opts: verify.Options{Incomplete: []string{"the read_committed read of out stopped short of the end offsets"}},
			want: map[vocab.Finding]int64{vocab.KindLost: 1}, verdict: verify.VerdictFail},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := tc.opts
			opts.DeliveryLimit = limit
			v := verify.New(vocab.Mode(tc.mode), opts)
			for _, d := range tc.dels {
				v.AddDelivery(d)
			}
			for _, in := range tc.ins {
				v.AddInput(in)
			}
			for _, o := range tc.outs {
				v.AddOutput(o)
			}
			for _, o := range tc.opens {
				v.AddOpenTransaction(o)
			}
			got := v.Finish()
			if !maps.Equal(got.Counts, tc.want) || got.Verdict != tc.verdict || got.Pass != (tc.verdict == verify.VerdictPass) {
				t.Fatalf("counts %v verdict %s pass %v, want %v %s\nwitnesses %+v\nnotes %q", got.Counts, got.Verdict, got.Pass, tc.want, tc.verdict, got.Witnesses, got.Notes)
			}
			if tc.reason != "" && got.UnjudgedReasons[tc.reason] == 0 {
				t.Errorf("unjudged %v, want some for %q", got.UnjudgedReasons, tc.reason)
			}
			for kind, n := range tc.want {
				if len(got.Witnesses[kind]) == 0 && n > 0 {
					t.Errorf("no %s witness", kind)
				}
			}
		})
	}
}
