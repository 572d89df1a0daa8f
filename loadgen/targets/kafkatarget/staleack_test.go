// This file tests that the kafka target reports, record by record, the
// acknowledgements the broker refused: a worker whose records went to
// another worker after its lock expired gets a *targets.RefusedError naming
// them (INVALID_RECORD_STATE for their partition), not a plain error and
// not success. It runs against sharebench serve, which answers as Kafka
// does (internal/kafkait checks the two alike).

package kafkatarget

import (
	"errors"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/sharebench/sharebench/loadgen/targets"
	"github.com/sharebench/sharebench/vocab"
)

func TestAckOfRecordsNoLongerHeldIsRefused(t *testing.T) {
	t.Parallel()
	for _, m := range []vocab.Mode{vocab.Explicit, vocab.Transactional} {
		t.Run(string(m), func(t *testing.T) {
			t.Parallel()
			tg, _ := newServed(t, 95)
			cfg := testConfig(t, 1)
			setup(t, tg, cfg)
			const n = 4
			produceInputs(t, tg, cfg, "in", n, n)
			a := newWorker(t, tg, cfg, m, 0)
			var held []*targets.Record
			pollUntil(t, a, func(recs []*targets.Record) { held = append(held, recs...) }, func() bool { return len(held) == n })
			// B gets them once A's lock (1 s) expires; polling until it
			// does is the wait, never a timed assertion.
			b := newWorker(t, tg, cfg, m, 1)
			var got []*targets.Record
			pollUntil(t, b, func(recs []*targets.Record) { got = append(got, recs...) }, func() bool { return len(got) == n })
			err := a.Ack(ctxT(t), held, vocab.AckReject)
			var re *targets.RefusedError
			if !errors.As(err, &re) || len(re.Refused) != n {
				t.Fatalf("A's reject of records B holds: %v, want a *targets.RefusedError naming all %d", err, n)
			}
			if !errors.Is(err, targets.ErrAckRefused) || !errors.Is(err, kerr.InvalidRecordState) {
				t.Fatalf("A's reject: %v, want it to match targets.ErrAckRefused and INVALID_RECORD_STATE", err)
			}
			for i, idx := range re.Refused {
				if idx != i {
					t.Fatalf("refused %v, want 0..%d in order", re.Refused, n-1)
				}
			}
		})
	}
}
