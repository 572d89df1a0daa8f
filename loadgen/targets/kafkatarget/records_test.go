// Tests of the record conversions: the produce buffer a client reuses from
// call to call, and the per-poll slab of fetched records.

package kafkatarget

import (
	"fmt"
	"testing"

	"github.com/sharebench/sharebench/loadgen/targets"
)

// TestProducerReusesBufferAcrossBatches produces batches of shrinking and
// growing sizes through one producer (its kgo records are reused from call
// to call) and checks that every record was written once, with its own
// value, partition and offset: a record left over from a longer earlier
// batch would show up twice or under another record's offset.
func TestProducerReusesBufferAcrossBatches(t *testing.T) {
	tg := newEmbedded(t)
	cfg := testConfig(t, 3)
	cfg.OutputTopic = cfg.InputTopic // the reader reads the input topic
	setup(t, tg, cfg)
	p, err := tg.NewProducer(ctxT(t), cfg, 0)
	if err != nil {
		t.Fatalf("NewProducer: %v", err)
	}
	defer p.Close()
	want := map[string]string{} // value -> partition@offset
	offsets := map[string]bool{}
	n := 0
	for _, size := range []int{50, 3, 120, 1, 50} {
		recs := make([]*targets.Record, size)
		for i := range recs {
			recs[i] = &targets.Record{Value: fmt.Appendf(nil, "v-%d", n)}
			n++
		}
		if err := p.Produce(ctxT(t), recs); err != nil {
			t.Fatalf("Produce of %d: %v", size, err)
		}
		for _, r := range recs {
			k := offsetKey(r)
			if offsets[k] {
				t.Fatalf("two records written back at %s", k)
			}
			offsets[k] = true
			want[string(r.Value)] = k
		}
	}
	r := newReader(t, tg, cfg, false)
	got := map[string]string{}
	deadline := ctxT(t)
	for len(got) < n {
		recs, err := r.Poll(deadline)
		if err != nil {
			t.Fatalf("reader Poll after %d of %d records: %v", len(got), n, err)
		}
		for _, rec := range recs {
			v := string(rec.Value)
			if _, dup := got[v]; dup {
				t.Fatalf("record %q read twice", v)
			}
			got[v] = offsetKey(rec)
		}
	}
	for v, k := range want {
		if got[v] != k {
			t.Errorf("record %q: written back at %s, read at %q", v, k, got[v])
		}
	}
	if len(got) != len(want) {
		t.Errorf("read %d distinct records, produced %d", len(got), len(want))
	}
}
