// This file holds memTarget, an in-memory target.Target for the load
// generator's own tests and benchmarks: producers append to a queue,
// workers take from it, readers see committed outputs. It does as little
// as a target can while keeping the pipeline honest (every input reaches
// one worker once, transactional outputs become visible only at commit),
// so a run against it measures the load generator, not a system under
// test. It knows no faults: Crash drops nothing and redelivers nothing.

package loadgen

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/sharebench/sharebench/loadgen/target"
)

// memQueueCap bounds the records waiting for a worker. The closed loop
// keeps its backlog well below it; Produce fails when it is full.
const memQueueCap = 1 << 16

type memTarget struct {
	// produceDelay is slept inside every input Produce call, before the
	// records are enqueued: a target that cannot keep up with the schedule.
	produceDelay time.Duration

	mu     sync.Mutex
	topics map[string]*memTopic
}

var _ target.Target = (*memTarget)(nil)

func newMemTarget() *memTarget { return &memTarget{topics: map[string]*memTopic{}} }

// memTopic is an input topic (records wait in queue for a worker) or an
// output topic (records go to log, which readers tail).
type memTopic struct {
	mu     sync.Mutex
	next   []int64          // next offset per partition
	queue  []*target.Record // input topics: records no worker holds
	log    []*target.Record // output topics: every record, in append order
	signal chan struct{}    // closed and replaced when queue or log grows
}

func newMemTopic(parts int32) *memTopic {
	return &memTopic{next: make([]int64, parts), signal: make(chan struct{})}
}

// notifyLocked wakes every waiting worker or reader. t.mu must be held.
func (t *memTopic) notifyLocked() {
	close(t.signal)
	t.signal = make(chan struct{})
}

// enqueue hands records to the workers; number says whether they are new
// (and need offsets) or redelivered.
func (t *memTopic) enqueue(recs []*target.Record, number bool) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.queue)+len(recs) > memQueueCap {
		return fmt.Errorf("memtarget: more than %d records wait for a worker", memQueueCap)
	}
	for _, r := range recs {
		if number {
			t.assignLocked(r)
			r.DeliveryCount = 1
		} else {
			r.DeliveryCount++
		}
	}
	t.queue = append(t.queue, recs...)
	t.notifyLocked()
	return nil
}

// take waits until records wait in the queue (or ctx is done) and takes up
// to max of them.
func (t *memTopic) take(ctx context.Context, max int) []*target.Record {
	for {
		t.mu.Lock()
		if n := min(len(t.queue), max); n > 0 {
			out := t.queue[:n:n]
			t.queue = t.queue[n:]
			t.mu.Unlock()
			return out
		}
		sig := t.signal
		t.mu.Unlock()
		select {
		case <-sig:
		case <-ctx.Done():
			return nil
		}
	}
}

// assignLocked numbers r in its partition. t.mu must be held.
func (t *memTopic) assignLocked(r *target.Record) {
	if r.Partition < 0 || int(r.Partition) >= len(t.next) {
		r.Partition = 0
	}
	r.Offset = t.next[r.Partition]
	t.next[r.Partition]++
}

// appendLog numbers recs and makes them visible to readers at once.
func (t *memTopic) appendLog(recs []*target.Record) {
	if len(recs) == 0 {
		return
	}
	t.mu.Lock()
	for _, r := range recs {
		t.assignLocked(r)
		t.log = append(t.log, r)
	}
	t.notifyLocked()
	t.mu.Unlock()
}

func (m *memTarget) topic(name string) (*memTopic, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t, ok := m.topics[name]
	if !ok {
		return nil, fmt.Errorf("memtarget: unknown topic %q", name)
	}
	return t, nil
}

func (m *memTarget) Info() target.Info {
	return target.Info{Target: "mem", Embedded: true, Notes: []string{"in-memory no-op target (tests)"}}
}

func (m *memTarget) Supports(context.Context, target.Mode) error { return nil }

func (m *memTarget) Setup(_ context.Context, cfg target.Config) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.topics[cfg.InputTopic] = newMemTopic(cfg.InputPartitions)
	m.topics[cfg.OutputTopic] = newMemTopic(cfg.OutputPartitions)
	return nil
}

func (m *memTarget) NewProducer(_ context.Context, _ target.Config, _ int) (target.Producer, error) {
	return &memProducer{m: m}, nil
}

func (m *memTarget) NewWorker(_ context.Context, cfg target.Config, mode target.Mode, id int) (target.Worker, error) {
	in, err := m.topic(cfg.InputTopic)
	if err != nil {
		return nil, err
	}
	out, err := m.topic(cfg.OutputTopic)
	if err != nil {
		return nil, err
	}
	return &memWorker{in: in, out: out, mode: mode, tid: cfg.TransactionalIDPrefix + strconv.Itoa(id)}, nil
}

func (m *memTarget) NewReader(_ context.Context, _ target.Config, topic string, _ bool) (target.Reader, error) {
	t, err := m.topic(topic)
	if err != nil {
		return nil, err
	}
	return &memReader{t: t}, nil
}

func (m *memTarget) Inspect(context.Context, target.Config) (*target.ShareState, error) {
	return nil, fmt.Errorf("memtarget: %w: no share state", target.ErrUnsupported)
}

func (m *memTarget) Close() error { return nil }

type memProducer struct{ m *memTarget }

func (p *memProducer) Produce(ctx context.Context, recs []*target.Record) error {
	if len(recs) == 0 {
		return nil
	}
	if p.m.produceDelay > 0 {
		sleepCtx(ctx, p.m.produceDelay)
	}
	t, err := p.m.topic(recs[0].Topic)
	if err != nil {
		return err
	}
	clones := cloneRecords(recs)
	if err := t.enqueue(clones, true); err != nil {
		return err
	}
	for i, c := range clones {
		recs[i].Partition, recs[i].Offset = c.Partition, c.Offset
	}
	return nil
}

// cloneHeaders copies records and the first HeaderBytes of their values.
func cloneHeaders(recs []*target.Record) []*target.Record {
	out := make([]*target.Record, len(recs))
	backing := make([]target.Record, len(recs))
	buf := make([]byte, 0, HeaderBytes*len(recs))
	for i, r := range recs {
		backing[i] = *r
		start := len(buf)
		buf = append(buf, r.Value[:min(len(r.Value), HeaderBytes)]...)
		backing[i].Value = buf[start:len(buf):len(buf)]
		out[i] = &backing[i]
	}
	return out
}

// cloneRecords copies records and their values, as a broker does: callers
// reuse their buffers once Produce returns (target.Producer).
func cloneRecords(recs []*target.Record) []*target.Record {
	out := make([]*target.Record, len(recs))
	backing := make([]target.Record, len(recs))
	n := 0
	for _, r := range recs {
		n += len(r.Value)
	}
	buf := make([]byte, 0, n)
	for i, r := range recs {
		backing[i] = *r
		start := len(buf)
		buf = append(buf, r.Value...)
		backing[i].Value = buf[start:len(buf):len(buf)]
		out[i] = &backing[i]
	}
	return out
}

func (p *memProducer) Close() error { return nil }

// memWorker polls from the input queue. Transactional modes buffer their
// outputs until Commit and put the transaction's records back on Abort.
type memWorker struct {
	in, out *memTopic
	mode    target.Mode
	tid     string

	open    bool
	pending []*target.Record // outputs of the open transaction
	polled  []*target.Record // inputs of the open transaction (transactional, classic-eos)
}

func (w *memWorker) Poll(ctx context.Context, max int) ([]*target.Record, error) {
	out := w.in.take(ctx, max)
	if w.mode == target.Transactional || w.mode == target.ClassicEOS {
		// Polled before Begin or inside the transaction: either way the
		// next Commit or Abort decides them.
		w.polled = append(w.polled, out...)
	}
	return out, nil
}

func (w *memWorker) Produce(_ context.Context, recs []*target.Record) error {
	// Outputs are only ever read for their header (the tail reader), so
	// the no-op target keeps just that: its own cost stays out of the
	// load generator's figure.
	recs = cloneHeaders(recs)
	if w.open {
		w.pending = append(w.pending, recs...)
		return nil
	}
	w.out.appendLog(recs)
	return nil
}

func (w *memWorker) Ack(_ context.Context, recs []*target.Record, t target.AckType) error {
	if t == target.AckRelease {
		return w.in.enqueue(recs, false)
	}
	return nil
}

func (w *memWorker) Renew(context.Context, []*target.Record) error { return nil }

func (w *memWorker) Begin(context.Context) error {
	if !w.mode.Transactional() {
		return fmt.Errorf("memtarget: %w: transactions in mode %s", target.ErrUnsupported, w.mode)
	}
	w.open = true
	return nil
}

func (w *memWorker) StageAcks(context.Context, []*target.Record, target.AckType) error { return nil }

func (w *memWorker) Commit(context.Context) error {
	w.out.appendLog(w.pending)
	w.open, w.pending, w.polled = false, nil, nil
	return nil
}

func (w *memWorker) Abort(context.Context) error {
	polled := w.polled
	w.open, w.pending, w.polled = false, nil, nil
	return w.in.enqueue(polled, false)
}

func (w *memWorker) TxnInfo() (string, int16) {
	if !w.mode.Transactional() {
		return "", -1
	}
	return w.tid, 0
}

func (w *memWorker) Crash() {}

func (w *memWorker) Close(context.Context) error { return nil }

// memReader tails an output topic's log.
type memReader struct {
	t   *memTopic
	pos int
}

func (r *memReader) Poll(ctx context.Context) ([]*target.Record, error) {
	for {
		r.t.mu.Lock()
		end, sig := len(r.t.log), r.t.signal
		var out []*target.Record
		if r.pos < end {
			out = r.t.log[r.pos:end:end]
			r.pos = end
		}
		r.t.mu.Unlock()
		if out != nil {
			return out, nil
		}
		select {
		case <-sig:
		case <-ctx.Done():
			return nil, nil
		}
	}
}

func (r *memReader) Close() error { return nil }
