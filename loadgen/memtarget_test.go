// This file holds memTarget, an in-memory targets.Target for the load
// generator's own tests and benchmarks: producers append to a queue,
// workers take from it, readers see committed outputs. It does as little
// as a target can while keeping the pipeline honest (every input reaches
// one worker once, transactional outputs become visible only at commit),
// so a run against it measures the load generator, not a system under
// test. It knows no faults: Crash drops nothing and redelivers nothing.

package loadgen

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sharebench/sharebench/loadgen/targets"
	"github.com/sharebench/sharebench/vocab"
)

// memQueueCap bounds the records waiting for a worker. The closed loop
// keeps its backlog well below it; Produce fails when it is full.
const memQueueCap = 1 << 16

type memTarget struct {
	// produceDelay is slept inside every input Produce call, before the
	// records are enqueued: a target that cannot keep up with the schedule.
	produceDelay time.Duration
	// checkPolls tags every polled record with its poll and counts, in
	// stale, records acked, staged or renewed after a later poll of the
	// same worker: targets.Worker lets a target reuse them by then.
	checkPolls bool
	stale      atomic.Int64
	// joinDelay keeps a new worker's polls empty this long, as a share
	// group on a real cluster takes about a second to form.
	joinDelay time.Duration
	// endsAhead is added to every end offset EndOffsets reports: readers
	// can never reach them.
	endsAhead int64
	// wedgeFirst makes every Begin of worker 0's first incarnation fail,
	// as a producer wedged after a broker's loss; made counts the
	// incarnations of each worker.
	wedgeFirst bool

	mu     sync.Mutex
	topics map[string]*memTopic
	made   map[int]int
}

var _ targets.Target = (*memTarget)(nil)

func newMemTarget() *memTarget { return &memTarget{topics: map[string]*memTopic{}} }

// The no-op target keeps records as small pointer-free entries: their
// header and where they are. loadgen reads nothing of a value past its
// header (a worker copies an input's tail into its output unread, and the
// producer leaves it zero), so the target hands out values of the
// produced length rebuilt from the header. A target that kept millions of
// *targets.Record, or copied every kilobyte twice, cost more than the load
// generator it is here to measure.

// memIn is an input record waiting for a worker.
type memIn struct {
	partition int32
	size      int32
	delivery  int32
	offset    int64
	hdr       [HeaderBytes]byte
}

// memOut is an output record in the log.
type memOut struct {
	partition int32
	offset    int64
	hdr       [HeaderBytes]byte
}

func toMemOut(r *targets.Record) memOut {
	o := memOut{partition: r.Partition}
	copy(o.hdr[:], r.Value)
	return o
}

// memTopic is an input topic (records wait in queue for a worker) or an
// output topic (records go to log, which readers tail).
type memTopic struct {
	mu    sync.Mutex
	next  []int64 // next offset per partition
	queue []memIn // input topics: records no worker holds, from head on
	head  int
	log   memLog // output topics: every record, in append order
	// signal is closed and replaced when log grows: it wakes every reader.
	signal chan struct{}
	// ready holds a token while queue may be non-empty. It wakes one
	// waiting worker, not all: a broadcast per produced batch woke every
	// worker to find at most one batch, and on two cores that herd, not
	// the load generator, set the benchmark's pace.
	ready chan struct{}
	// limit is an input topic's delivery limit: a record released that
	// many times is archived instead of requeued (0: none).
	limit int32
}

// memLog is an output topic's log in fixed-size chunks: appending never
// copies what is already there, so the log costs the benchmarks that run
// against this target no copies.
type memLog struct {
	c [][]memOut
	n int
}

// memLogChunk is the number of records in one chunk of a memLog.
const memLogChunk = 1 << 14

func (l *memLog) len() int { return l.n }

func (l *memLog) append(o memOut) {
	if l.n%memLogChunk == 0 {
		l.c = append(l.c, make([]memOut, 0, memLogChunk))
	}
	last := &l.c[len(l.c)-1]
	*last = append(*last, o)
	l.n++
}

func (l *memLog) at(i int) *memOut { return &l.c[i/memLogChunk][i%memLogChunk] }

func newMemTopic(parts int32) *memTopic {
	return &memTopic{next: make([]int64, parts), signal: make(chan struct{}), ready: make(chan struct{}, 1)}
}

// markReady leaves a token for one waiting worker.
func (t *memTopic) markReady() {
	select {
	case t.ready <- struct{}{}:
	default:
	}
}

// number gives a record of partition p its offset. t.mu must be held.
func (t *memTopic) number(p *int32) int64 {
	if *p < 0 || int(*p) >= len(t.next) {
		*p = 0
	}
	off := t.next[*p]
	t.next[*p]++
	return off
}

// produce numbers new input records and hands them to the workers; their
// partitions and offsets are written back to recs.
func (t *memTopic) produce(recs []*targets.Record) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.roomLocked(len(recs)); err != nil {
		return err
	}
	for _, r := range recs {
		in := memIn{partition: r.Partition, size: int32(len(r.Value)), delivery: 1}
		in.offset = t.number(&in.partition)
		copy(in.hdr[:], r.Value)
		r.Partition, r.Offset = in.partition, in.offset
		t.queue = append(t.queue, in)
	}
	t.markReady()
	return nil
}

// redeliver puts polled records back for another worker.
func (t *memTopic) redeliver(recs []*targets.Record) error {
	ins := make([]memIn, len(recs))
	for i, r := range recs {
		ins[i] = memIn{partition: r.Partition, offset: r.Offset, size: int32(len(r.Value)), delivery: int32(r.DeliveryCount)}
		copy(ins[i].hdr[:], r.Value)
	}
	return t.requeue(ins)
}

// requeue puts taken inputs back for another worker, one delivery later.
func (t *memTopic) requeue(ins []memIn) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.roomLocked(len(ins)); err != nil {
		return err
	}
	for _, in := range ins {
		if t.limit > 0 && in.delivery >= t.limit {
			continue // archived at the delivery limit
		}
		in.delivery++
		t.queue = append(t.queue, in)
	}
	t.markReady()
	return nil
}

// roomLocked makes room for n more records in the queue, moving the
// waiting ones to its front rather than letting append reallocate it
// every time the taken head has used up its capacity. t.mu must be held.
func (t *memTopic) roomLocked(n int) error {
	waiting := len(t.queue) - t.head
	if waiting+n > memQueueCap {
		return fmt.Errorf("memtarget: more than %d records wait for a worker", memQueueCap)
	}
	if t.head > 0 && len(t.queue)+n > cap(t.queue) {
		copy(t.queue, t.queue[t.head:])
		t.queue, t.head = t.queue[:waiting], 0
	}
	return nil
}

// take waits until records wait in the queue (or ctx is done) and appends
// up to max of them to dst.
func (t *memTopic) take(ctx context.Context, max int, dst []memIn) []memIn {
	for {
		t.mu.Lock()
		if n := min(len(t.queue)-t.head, max); n > 0 {
			dst = append(dst, t.queue[t.head:t.head+n]...)
			t.head += n
			if t.head < len(t.queue) {
				t.markReady() // pass the rest on to the next worker
			}
			t.mu.Unlock()
			return dst
		}
		t.mu.Unlock()
		select {
		case <-t.ready:
		case <-ctx.Done():
			return dst
		}
	}
}

// appendLog numbers outs and makes them visible to readers at once.
func (t *memTopic) appendLog(outs []memOut) {
	if len(outs) == 0 {
		return
	}
	t.mu.Lock()
	for _, o := range outs {
		o.offset = t.number(&o.partition)
		t.log.append(o)
	}
	close(t.signal)
	t.signal = make(chan struct{})
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

func (m *memTarget) Info() targets.Info {
	return targets.Info{Target: "mem", Embedded: true, Notes: []string{"in-memory no-op target (tests)"}}
}

func (m *memTarget) Supports(context.Context, vocab.Mode) error { return nil }

func (m *memTarget) Setup(_ context.Context, cfg targets.Config) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.topics[cfg.InputTopic] = newMemTopic(cfg.InputPartitions)
	m.topics[cfg.InputTopic].limit = int32(cfg.DeliveryLimit)
	m.topics[cfg.OutputTopic] = newMemTopic(cfg.OutputPartitions)
	return nil
}

func (m *memTarget) NewProducer(_ context.Context, _ targets.Config, _ int) (targets.Producer, error) {
	return &memProducer{m: m}, nil
}

func (m *memTarget) NewWorker(_ context.Context, cfg targets.Config, mode vocab.Mode, id int) (targets.Worker, error) {
	in, err := m.topic(cfg.InputTopic)
	if err != nil {
		return nil, err
	}
	out, err := m.topic(cfg.OutputTopic)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	if m.made == nil {
		m.made = map[int]int{}
	}
	m.made[id]++
	wedged := m.wedgeFirst && id == 0 && m.made[id] == 1
	m.mu.Unlock()
	return &memWorker{m: m, in: in, out: out, inTopic: cfg.InputTopic, mode: mode, tid: cfg.TransactionalIDPrefix + strconv.Itoa(id), joined: time.Now().Add(m.joinDelay), wedged: wedged}, nil
}

func (m *memTarget) NewReader(_ context.Context, _ targets.Config, topic string, _ bool) (targets.Reader, error) {
	t, err := m.topic(topic)
	if err != nil {
		return nil, err
	}
	return &memReader{t: t, topic: topic}, nil
}

// EndOffsets returns each partition's next offset: every write is
// visible at once (commits append to the log), so both isolation levels
// end there; plus endsAhead, for a test of reads that cannot reach them.
func (m *memTarget) EndOffsets(_ context.Context, _ targets.Config, topic string, _ bool) (map[int32]int64, error) {
	t, err := m.topic(topic)
	if err != nil {
		return nil, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make(map[int32]int64, len(t.next))
	for p, n := range t.next {
		out[int32(p)] = n + m.endsAhead
	}
	return out, nil
}

// Pending counts the input records waiting for a worker (the drain then
// ends when nothing waits and no output arrives any more: a record
// archived at the delivery limit never gets one).
func (m *memTarget) Pending(_ context.Context, cfg targets.Config) (int64, error) {
	t, err := m.topic(cfg.InputTopic)
	if err != nil {
		return 0, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return int64(len(t.queue) - t.head), nil
}

// Inspect reports a share-partition start offset per input partition: a
// record a worker took is done (this target redelivers nothing), so SPSO
// is the first offset still queued, or the partition's end.
func (m *memTarget) Inspect(_ context.Context, cfg targets.Config) (*targets.ShareState, error) {
	t, err := m.topic(cfg.InputTopic)
	if err != nil {
		return nil, fmt.Errorf("memtarget: %w: no share state", targets.ErrUnsupported)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	st := &targets.ShareState{SPSO: map[int32]int64{}}
	for p, next := range t.next {
		st.SPSO[int32(p)] = next
	}
	for _, in := range t.queue[t.head:] {
		st.SPSO[in.partition] = min(st.SPSO[in.partition], in.offset)
	}
	return st, nil
}

func (m *memTarget) Close() error { return nil }

type memProducer struct{ m *memTarget }

func (p *memProducer) Produce(ctx context.Context, recs []*targets.Record) error {
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
	return t.produce(recs)
}

func (p *memProducer) Close() error { return nil }

// memWorker polls from the input queue. Transactional modes buffer their
// outputs until Commit and put the transaction's records back on Abort.
type memWorker struct {
	m       *memTarget
	joined  time.Time // polls before it return nothing
	polls   int       // Poll calls so far
	in, out *memTopic
	inTopic string
	mode    vocab.Mode
	tid     string
	wedged  bool // every Begin fails (memTarget.wedgeFirst)

	open    bool
	pending []memOut // outputs of the open transaction
	polled  []memIn  // inputs of the open transaction (transactional, classic-eos)

	// The records of the last poll. Reused from poll to poll, as
	// targets.Worker allows: only the headers are rewritten, and the
	// values' tails stay zero, as the producer wrote them.
	taken   []memIn
	vals    []byte
	backing []targets.Record
	recs    []*targets.Record
}

func (w *memWorker) Poll(ctx context.Context, max int) ([]*targets.Record, error) {
	if d := time.Until(w.joined); d > 0 {
		sleepCtx(ctx, d)
		return nil, nil
	}
	w.polls++
	w.taken = w.in.take(ctx, max, w.taken[:0])
	ins := w.taken
	if w.mode == vocab.Transactional || w.mode == vocab.ClassicEOS {
		// Polled before Begin or inside the transaction: either way the
		// next Commit or Abort decides them.
		w.polled = append(w.polled, ins...)
	}
	return w.records(ins), nil
}

// records turns taken inputs into the poll's records.
func (w *memWorker) records(ins []memIn) []*targets.Record {
	total := 0
	for i := range ins {
		total += int(ins[i].size)
	}
	if cap(w.vals) < total {
		w.vals = make([]byte, 2*total)
	}
	if cap(w.backing) < len(ins) {
		w.backing = make([]targets.Record, 2*len(ins))
		w.recs = make([]*targets.Record, 2*len(ins))
	}
	recs := w.recs[:len(ins)]
	at := 0
	for i := range ins {
		in := &ins[i]
		v := w.vals[at : at+int(in.size) : at+int(in.size)]
		at += int(in.size)
		copy(v, in.hdr[:])
		clear(v[min(len(v), HeaderBytes):]) // no-op unless sizes vary
		w.backing[i] = targets.Record{Topic: w.inTopic, Partition: in.partition, Offset: in.offset, Value: v, DeliveryCount: int(in.delivery)}
		if w.m.checkPolls {
			w.backing[i].Handle = w.polls
		}
		recs[i] = &w.backing[i]
	}
	return recs
}

func (w *memWorker) Produce(_ context.Context, recs []*targets.Record) error {
	if w.open {
		for _, r := range recs {
			w.pending = append(w.pending, toMemOut(r))
		}
		return nil
	}
	outs := make([]memOut, len(recs))
	for i, r := range recs {
		outs[i] = toMemOut(r)
	}
	w.out.appendLog(outs)
	return nil
}

// checkCurrent counts recs that came from an earlier poll than the last.
func (w *memWorker) checkCurrent(recs []*targets.Record) {
	if !w.m.checkPolls {
		return
	}
	for _, r := range recs {
		if r.Handle != w.polls {
			w.m.stale.Add(1)
		}
	}
}

func (w *memWorker) Ack(_ context.Context, recs []*targets.Record, t vocab.AckType) error {
	w.checkCurrent(recs)
	if t == vocab.AckRelease {
		return w.in.redeliver(recs)
	}
	return nil
}

func (w *memWorker) Renew(_ context.Context, recs []*targets.Record) error {
	w.checkCurrent(recs)
	return nil
}

func (w *memWorker) Begin(context.Context) error {
	if !w.mode.Transactional() {
		return fmt.Errorf("memtarget: %w: transactions in mode %s", targets.ErrUnsupported, w.mode)
	}
	if w.wedged {
		return errors.New("memtarget: this worker's producer is wedged")
	}
	w.open = true
	return nil
}

func (w *memWorker) StageAcks(_ context.Context, recs []*targets.Record, _ vocab.AckType) error {
	w.checkCurrent(recs)
	return nil
}

func (w *memWorker) Commit(context.Context) error {
	w.out.appendLog(w.pending)
	w.open, w.pending, w.polled = false, w.pending[:0], w.polled[:0]
	return nil
}

func (w *memWorker) Abort(context.Context) error {
	polled := w.polled
	w.open, w.pending, w.polled = false, nil, nil
	return w.in.requeue(polled)
}

func (w *memWorker) TxnInfo() (string, int16) {
	if !w.mode.Transactional() {
		return "", -1
	}
	return w.tid, 0
}

// Crash and Close give a wedged worker's last poll back, as its locks'
// expiry or its group's committed offsets would: it never began a
// transaction for it.
func (w *memWorker) Crash() {
	if w.wedged {
		_ = w.in.requeue(w.taken)
	}
}

func (w *memWorker) Close(context.Context) error {
	w.Crash()
	return nil
}

// memReader tails an output topic's log.
type memReader struct {
	t     *memTopic
	topic string
	pos   int
	next  map[int32]int64 // per partition: past the last record read
	// Reused from poll to poll: loadgen keeps nothing of a polled record.
	backing []targets.Record
	recs    []*targets.Record
}

// memReadMax bounds the records one reader poll returns, as a Kafka
// consumer's max.poll.records does: the buffer the reader reuses then
// stays small and warm (unbounded, it grew with the backlog, and touching
// its new pages was a fifth of BenchmarkLoadgenNoop's CPU).
const memReadMax = 4096

func (r *memReader) Poll(ctx context.Context) ([]*targets.Record, error) {
	for {
		r.t.mu.Lock()
		if end := r.t.log.len(); r.pos < end {
			recs := r.records(min(end, r.pos+memReadMax))
			r.t.mu.Unlock()
			return recs, nil
		}
		sig := r.t.signal
		r.t.mu.Unlock()
		select {
		case <-sig:
		case <-ctx.Done():
			return nil, nil
		}
	}
}

// records turns log entries pos..end into records whose values point into
// the log (an entry never changes once appended). r.t.mu must be held.
func (r *memReader) records(end int) []*targets.Record {
	n := end - r.pos
	if cap(r.backing) < n {
		r.backing = make([]targets.Record, n)
		r.recs = make([]*targets.Record, n)
		for i := range r.backing {
			r.backing[i].Topic = r.topic
			r.recs[i] = &r.backing[i]
		}
	}
	if r.next == nil {
		r.next = map[int32]int64{}
	}
	// Only the fields that differ from record to record are written
	// (loadgen sets nothing but Tag), so that this target's own cost
	// stays out of the figure.
	recs := r.recs[:n]
	last, lastNext := int32(-1), int64(0)
	for i, rec := range recs {
		o := r.t.log.at(r.pos + i)
		rec.Partition, rec.Offset, rec.Value, rec.Tag = o.partition, o.offset, o.hdr[:], 0
		if o.partition != last {
			if last >= 0 {
				r.next[last] = max(r.next[last], lastNext)
			}
			last, lastNext = o.partition, r.next[o.partition]
		}
		lastNext = max(lastNext, o.offset+1)
	}
	if last >= 0 {
		r.next[last] = max(r.next[last], lastNext)
	}
	r.pos = end
	return recs
}

// Positions returns the offset past the last record read per partition.
func (r *memReader) Positions() map[int32]int64 { return maps.Clone(r.next) }

func (r *memReader) Close() error { return nil }
