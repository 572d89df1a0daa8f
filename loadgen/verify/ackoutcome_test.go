// This file checks how acknowledgement outcomes count: an accept or reject
// counts only where it took effect (answered without error, and not
// followed by a later delivery of the record), and an outcome the final
// share state contradicts is an ack-contradiction, which no mode allows.

package verify_test

import (
	"maps"
	"testing"

	"github.com/sharebench/sharebench/loadgen/verify"
	"github.com/sharebench/sharebench/vocab"
)

func TestAckOutcomes(t *testing.T) {
	t.Parallel()
	const limit = 5
	out := func(id uint64) verify.Output {
		return verify.Output{InputID: id, Offset: int64(id), Committed: true, Uncommitted: true, VisibleNs: 1}
	}
	archived := func(id uint64, count int, rejected bool) verify.Input {
		return verify.Input{ID: id, Offset: int64(id), FinalState: vocab.StateArchived, DeliveryCount: count, Rejected: rejected}
	}
	state := func(id uint64, st vocab.RecordState) verify.Input {
		return verify.Input{ID: id, Offset: int64(id), FinalState: st, DeliveryCount: 1}
	}
	below := func(id uint64) verify.Input {
		return verify.Input{ID: id, Offset: int64(id), FinalState: vocab.StateUnknown, BelowSPSO: true}
	}
	for _, tc := range []struct {
		name string
		mode string
		ins  []verify.Input
		outs []verify.Output
		dels []verify.Delivery
		want map[vocab.Finding]int64
	}{
		// The slow worker's reject answered with no error, then another
		// worker got the record again and accepted it: the reject did not
		// take effect (Kafka answers a stale ack below SPSO with success),
		// so nothing is rejected and nothing contradicts.
		{name: "a reject followed by a later delivery did not take effect", mode: "explicit",
			ins:  []verify.Input{acked(1)},
			outs: []verify.Output{out(1), out(1)},
			dels: []verify.Delivery{delivery(1, 1, verify.AckReject, verify.AckCommitted), delivery(1, 2, verify.AckAccept, verify.AckCommitted)},
			want: map[vocab.Finding]int64{vocab.KindDuplicate: 1}},
		// The same on a target that reports no state (Kafka): the rejected
		// count does not believe the superseded answer either.
		{name: "a superseded reject is not counted where no state is reported", mode: "explicit",
			ins:  []verify.Input{below(1)},
			outs: []verify.Output{out(1)},
			dels: []verify.Delivery{delivery(1, 1, verify.AckReject, verify.AckCommitted), delivery(1, 2, verify.AckAccept, verify.AckCommitted)},
			want: map[vocab.Finding]int64{}},
		// The engine target reports the slow worker's ack refused.
		{name: "a refused reject is not counted", mode: "explicit",
			ins:  []verify.Input{acked(1)},
			outs: []verify.Output{out(1), out(1)},
			dels: []verify.Delivery{delivery(1, 1, verify.AckReject, verify.AckRefused), delivery(1, 2, verify.AckAccept, verify.AckCommitted)},
			want: map[vocab.Finding]int64{vocab.KindDuplicate: 1}},
		{name: "a refused reject of a record archived at the limit", mode: "explicit",
			ins:  []verify.Input{archived(1, limit, false)},
			dels: []verify.Delivery{delivery(1, limit, verify.AckReject, verify.AckRefused)},
			want: map[vocab.Finding]int64{vocab.KindArchivedAtLimit: 1}},
		{name: "an accept answered as taken on a record that ended archived", mode: "explicit",
			ins:  []verify.Input{archived(1, limit, false)},
			outs: []verify.Output{out(1)},
			dels: []verify.Delivery{delivery(1, limit, verify.AckAccept, verify.AckCommitted)},
			want: map[vocab.Finding]int64{vocab.KindAckContradiction: 1, vocab.KindArchivedAtLimit: 1}},
		{name: "an accept answered as taken on a record left available", mode: "transactional",
			ins:  []verify.Input{state(1, vocab.StateAvailable)},
			outs: []verify.Output{out(1)},
			dels: []verify.Delivery{delivery(1, 1, verify.AckAccept, verify.AckCommitted)},
			want: map[vocab.Finding]int64{vocab.KindAckContradiction: 1, vocab.KindUnresolved: 1}},
		{name: "a reject answered as taken on a record archived by no reject", mode: "explicit",
			ins:  []verify.Input{archived(1, 2, false)},
			dels: []verify.Delivery{delivery(1, 2, verify.AckReject, verify.AckCommitted)},
			want: map[vocab.Finding]int64{vocab.KindAckContradiction: 1, vocab.KindRejected: 1}},
		{name: "a record acknowledged although its only accept was refused", mode: "explicit",
			ins:  []verify.Input{acked(1)},
			outs: []verify.Output{out(1)},
			dels: []verify.Delivery{delivery(1, 1, verify.AckAccept, verify.AckRefused)},
			want: map[vocab.Finding]int64{vocab.KindAckContradiction: 1}},
		{name: "a record archived by a reject although its only reject was refused", mode: "explicit",
			ins:  []verify.Input{archived(1, 1, true)},
			dels: []verify.Delivery{delivery(1, 1, verify.AckReject, verify.AckRefused)},
			want: map[vocab.Finding]int64{vocab.KindAckContradiction: 1, vocab.KindRejected: 1}},
		// A call that failed as a whole (a crash, a lost connection) may
		// have landed: not held against the state.
		{name: "a record acknowledged although its only accept call failed", mode: "explicit",
			ins:  []verify.Input{acked(1)},
			outs: []verify.Output{out(1)},
			dels: []verify.Delivery{delivery(1, 1, verify.AckAccept, verify.AckFailed)},
			want: map[vocab.Finding]int64{}},
		// An accept whose fate is unknown may have landed: no contradiction.
		{name: "a refused accept beside one of unknown fate", mode: "explicit",
			ins:  []verify.Input{acked(1)},
			outs: []verify.Output{out(1)},
			dels: []verify.Delivery{delivery(1, 1, verify.AckAccept, verify.AckRefused), delivery(1, 1, verify.AckAccept, verify.AckUnknown)},
			want: map[vocab.Finding]int64{}},
		// Implicit accepts ride on the next poll, which answers nothing per
		// record: the ledger's word there is not the target's.
		{name: "implicit mode is not cross-checked", mode: "implicit",
			ins:  []verify.Input{archived(1, limit, false)},
			outs: []verify.Output{out(1)},
			dels: []verify.Delivery{delivery(1, limit, verify.AckAccept, verify.AckCommitted)},
			want: map[vocab.Finding]int64{vocab.KindArchivedAtLimit: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			v := verify.New(vocab.Mode(tc.mode), verify.Options{DeliveryLimit: limit})
			for _, d := range tc.dels {
				v.AddDelivery(d)
			}
			for _, in := range tc.ins {
				v.AddInput(in)
			}
			for _, o := range tc.outs {
				v.AddOutput(o)
			}
			got := v.Finish()
			if !maps.Equal(got.Counts, tc.want) {
				t.Fatalf("counts %v, want %v\nwitnesses %+v\nnotes %q", got.Counts, tc.want, got.Witnesses, got.Notes)
			}
			if n := tc.want[vocab.KindAckContradiction]; n > 0 && got.Pass {
				t.Fatalf("verdict %s with an ack-contradiction, want it to fail", got.Verdict)
			}
		})
	}
	for _, m := range verify.Modes() {
		allowed, err := verify.Allowed(vocab.Mode(m))
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range allowed {
			if k == vocab.KindAckContradiction {
				t.Errorf("mode %s allows %s; no mode may", m, k)
			}
		}
	}
}
