// This file holds the helpers the tests share: an embedded target per test,
// configs with unique names, producing inputs and draining workers and
// readers.

package kafkatarget

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sharebench/sharebench/loadgen/targets"
	"github.com/sharebench/sharebench/vocab"
)

// testTimeout bounds every wait in a test; it is a safety net for a hung
// test, never an assertion about speed.
const testTimeout = 30 * time.Second

// newEmbedded starts a target on its own embedded kfake cluster.
func newEmbedded(t *testing.T) *Target {
	t.Helper()
	var log strings.Builder
	tg, err := New(context.Background(), Options{Logger: &log})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() {
		if err := tg.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		if testing.Verbose() && log.Len() > 0 {
			t.Logf("target log:\n%s", log.String())
		}
	})
	return tg
}

// testConfig returns a config with names unique to the test.
func testConfig(t *testing.T, partitions int32) targets.Config {
	name := strings.NewReplacer("/", "-", " ", "-").Replace(t.Name())
	return targets.Config{
		InputTopic:            name + "-in",
		OutputTopic:           name + "-out",
		InputPartitions:       partitions,
		OutputPartitions:      1,
		Group:                 name + "-group",
		TransactionalIDPrefix: name + "-txn-",
		LockDuration:          time.Second,
		DeliveryLimit:         10,
		TransactionTimeout:    20 * time.Second,
		MaxPollRecords:        100,
	}
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	t.Cleanup(cancel)
	return ctx
}

// setup runs Setup or fails the test.
func setup(t *testing.T, tg *Target, cfg targets.Config) {
	t.Helper()
	if err := tg.Setup(ctxT(t), cfg); err != nil {
		t.Fatalf("Setup: %v", err)
	}
}

// produceInputs produces n records valued "<prefix>-<i>" in batches of
// batch and returns them.
func produceInputs(t *testing.T, tg *Target, cfg targets.Config, prefix string, n, batch int) []*targets.Record {
	t.Helper()
	p, err := tg.NewProducer(ctxT(t), cfg, 0)
	if err != nil {
		t.Fatalf("NewProducer: %v", err)
	}
	defer p.Close()
	var all []*targets.Record
	for i := 0; i < n; i += batch {
		var recs []*targets.Record
		for j := i; j < min(n, i+batch); j++ {
			recs = append(recs, &targets.Record{Value: fmt.Appendf(nil, "%s-%d", prefix, j)})
		}
		if err := p.Produce(ctxT(t), recs); err != nil {
			t.Fatalf("Produce: %v", err)
		}
		all = append(all, recs...)
	}
	return all
}

// newWorker creates a worker or fails the test; Cleanup closes it.
func newWorker(t *testing.T, tg *Target, cfg targets.Config, m vocab.Mode, id int) targets.Worker {
	t.Helper()
	w, err := tg.NewWorker(ctxT(t), cfg, m, id)
	if err != nil {
		t.Fatalf("NewWorker(%s, %d): %v", m, id, err)
	}
	t.Cleanup(func() { w.Close(context.Background()) })
	return w
}

// pollShort polls once, waiting at most d for records.
func pollShort(t *testing.T, w targets.Worker, d time.Duration) []*targets.Record {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	recs, err := w.Poll(ctx, 0)
	if err != nil {
		t.Fatalf("Poll: %v", err)
	}
	return recs
}

// pollUntil polls w, calling each with every batch, until done reports
// true or testTimeout passes.
func pollUntil(t *testing.T, w targets.Worker, each func([]*targets.Record), done func() bool) {
	t.Helper()
	deadline := time.Now().Add(testTimeout)
	for !done() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up polling after %v", testTimeout)
		}
		if recs := pollShort(t, w, 500*time.Millisecond); len(recs) > 0 {
			each(recs)
		}
	}
}

// readUntil reads r until done reports true for the values read so far.
func readUntil(t *testing.T, r targets.Reader, done func(seen map[string]int) bool) map[string]int {
	t.Helper()
	seen := make(map[string]int)
	deadline := time.Now().Add(testTimeout)
	for !done(seen) {
		if time.Now().After(deadline) {
			t.Fatalf("gave up reading after %v; read %v", testTimeout, seen)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		recs, err := r.Poll(ctx)
		cancel()
		if err != nil {
			t.Fatalf("reader Poll: %v", err)
		}
		for _, rec := range recs {
			seen[string(rec.Value)]++
		}
	}
	return seen
}

func newReader(t *testing.T, tg *Target, cfg targets.Config, readCommitted bool) targets.Reader {
	t.Helper()
	r, err := tg.NewReader(ctxT(t), cfg, cfg.OutputTopic, readCommitted)
	if err != nil {
		t.Fatalf("NewReader: %v", err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// outputsOf returns one output record per input, valued "out-<input>".
func outputsOf(recs []*targets.Record) []*targets.Record {
	out := make([]*targets.Record, len(recs))
	for i, r := range recs {
		out[i] = &targets.Record{Value: append([]byte("out-"), r.Value...)}
	}
	return out
}

// offsetKey names a record by partition and offset.
func offsetKey(r *targets.Record) string { return fmt.Sprintf("%d@%d", r.Partition, r.Offset) }
