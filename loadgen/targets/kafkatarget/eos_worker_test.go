// Tests of the classic-eos worker.

package kafkatarget

import (
	"slices"
	"testing"

	"github.com/sharebench/sharebench/loadgen/targets"
	"github.com/sharebench/sharebench/vocab"
)

func TestClassicEOSCommitAndAbort(t *testing.T) {
	t.Parallel()
	tg := newEmbedded(t)
	cfg := testConfig(t, 1)
	setup(t, tg, cfg)
	produceInputs(t, tg, cfg, "first", 6, 6)
	ctx := ctxT(t)

	w := newWorker(t, tg, cfg, vocab.ClassicEOS, 2)
	committedOffset := func() int64 {
		t.Helper()
		offs, err := tg.adm.FetchOffsets(ctx, cfg.Group)
		if err != nil {
			t.Fatalf("FetchOffsets: %v", err)
		}
		o, ok := offs.Lookup(cfg.InputTopic, 0)
		if !ok {
			return -1
		}
		return o.At
	}

	// process polls n records, writes their outputs, stages them and
	// commits (or aborts).
	process := func(n int, commit bool) []*targets.Record {
		t.Helper()
		var recs []*targets.Record
		pollUntil(t, w, func(got []*targets.Record) { recs = append(recs, got...) }, func() bool { return len(recs) >= n })
		if err := w.Begin(ctx); err != nil {
			t.Fatalf("Begin: %v", err)
		}
		if err := w.Produce(ctx, outputsOf(recs)); err != nil {
			t.Fatalf("Produce: %v", err)
		}
		if err := w.Commit(ctx); err == nil {
			t.Fatal("Commit with unstaged polled records: got nil error")
		}
		if err := w.StageAcks(ctx, recs, vocab.AckAccept); err != nil {
			t.Fatalf("StageAcks: %v", err)
		}
		if commit {
			if err := w.Commit(ctx); err != nil {
				t.Fatalf("Commit: %v", err)
			}
		} else if err := w.Abort(ctx); err != nil {
			t.Fatalf("Abort: %v", err)
		}
		return recs
	}

	first := process(6, true)
	if got := committedOffset(); got != 6 {
		t.Errorf("committed offset after the first commit = %d, want 6", got)
	}

	produceInputs(t, tg, cfg, "second", 4, 4)
	aborted := process(4, false)
	if got := committedOffset(); got != 6 {
		t.Errorf("committed offset after an abort = %d, want 6 (unchanged)", got)
	}
	// The abort rewound the consumer: the same records come again.
	again := process(4, true)
	key := func(rs []*targets.Record) []string {
		var ks []string
		for _, r := range rs {
			ks = append(ks, offsetKey(r))
		}
		slices.Sort(ks)
		return ks
	}
	if !slices.Equal(key(aborted), key(again)) {
		t.Errorf("after abort got offsets %v, want the aborted %v again", key(again), key(aborted))
	}
	if got := committedOffset(); got != 10 {
		t.Errorf("committed offset after the last commit = %d, want 10", got)
	}

	// read_committed: each committed output once, aborted outputs never
	// (the retry's outputs have the same values, so each shows once).
	rc := readUntil(t, newReader(t, tg, cfg, true), func(seen map[string]int) bool { return len(seen) >= 10 })
	for _, r := range append(first, again...) {
		if c := rc["out-"+string(r.Value)]; c != 1 {
			t.Errorf("read_committed saw out-%s %d times, want 1", r.Value, c)
		}
	}
}
