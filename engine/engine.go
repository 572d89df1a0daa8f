// This file holds the Engine: construction, the lock shards, topics and the
// timer loop. Share groups, classic groups and transactions live in files
// of their own; lockorder.go says which locks may be held together.

package engine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/sharebench/sharebench/engine/internal/plog"
	"github.com/sharebench/sharebench/engine/internal/sharepart"
	"github.com/sharebench/sharebench/engine/internal/wal"
)

// TopicPartition names one partition.
type TopicPartition struct {
	Topic     string
	Partition int32
}

func (tp TopicPartition) String() string { return fmt.Sprintf("%s-%d", tp.Topic, tp.Partition) }

// Engine is the in-process reference engine. All methods are safe for
// concurrent use.
type Engine struct {
	cfg   config
	clock Clock

	// adminMu serialises CreateTopic, DeleteTopic, CreatePartitions and
	// AlterTopicConfigs, so a deletion never meets the partitions of a new
	// incarnation of the name; it is taken before any other engine lock
	// (lockorder.go).
	adminMu sync.Mutex
	// topicsMu guards topics, topicIDs and reading cfg.topicIDs; it is a
	// leaf lock (lockorder.go).
	topicsMu sync.RWMutex
	topics   map[string]*topic
	topicIDs map[TopicID]*topic

	data   []dataShard
	groups []groupShard
	txns   []txnShard

	nextPID    atomic.Int64
	nextMember atomic.Int64
	markers    markerQueue // decided transactions' markers (markers.go)
	stats      engineStats
	sweep      sweepClock
	// dur is the durability state (durability.go); nil without a data
	// directory.
	dur *durable

	closed      atomic.Bool
	stopOnce    sync.Once
	stop        chan struct{}
	done        chan struct{} // closed when the timer goroutine exits
	markersDone chan struct{} // closed when the marker goroutine exits
}

type topic struct {
	name string
	// partitions only grows (CreatePartitions); a partition is in its data
	// shard before the count covers it.
	partitions atomic.Int32
	id         uint64  // names its partitions' directories in the data directory
	uuid       TopicID // this incarnation's id, as Kafka's topic UUID
	// configs are the topic configs set on this incarnation (topicconfig.go),
	// guarded by Engine.topicsMu; never nil, never changed in place.
	configs map[string]string
	// notify is closed and replaced when the topic changes (records
	// appended, records released) after someone took it (waited): pollers
	// and readers wait on it.
	notifyMu sync.Mutex
	notify   chan struct{}
	waited   bool
}

func (t *topic) changed() {
	t.notifyMu.Lock()
	// Only a channel that was handed out needs closing: nobody can be
	// waiting on the others, and the next waiter re-checks the topic
	// after taking its channel. Closing and replacing on every change
	// allocated a channel per produce and acknowledgement (the engine's
	// top allocation in BenchmarkCTP).
	if t.waited {
		close(t.notify)
		t.notify = make(chan struct{})
		t.waited = false
	}
	t.notifyMu.Unlock()
}

func (t *topic) wait() <-chan struct{} {
	t.notifyMu.Lock()
	defer t.notifyMu.Unlock()
	t.waited = true
	return t.notify
}

// dataShard owns partition logs and the share partitions of those
// partitions, so a poll takes one lock per partition.
type dataShard struct {
	mu struct {
		sync.Mutex
		parts map[TopicPartition]*partition
	}
	// Pad to a full cache line (64 bytes: a 16-byte mutex and map header
	// plus 48), so neighbouring shards' mutexes never share one; a test
	// pins the stride (unsafe.Sizeof) to a multiple of 64.
	_ [48]byte
}

type partition struct {
	tp     TopicPartition
	log    *plog.Log
	shares map[string]*sharepart.SharePartition // by share group id
	groups []string                             // sorted keys of shares

	// With a data directory: the partition's log in it, the journaling
	// state of each share partition, and the sync point of the operation
	// that holds the shard lock (journal.go).
	wal *wal.Log
	sj  map[string]*shareJournal
	op  *syncPoint
	// hw is the high watermark readers see: the end of the durable
	// records (Kafka's HW follows replication; here, the flush policy's
	// durability point). pend lists appends not yet durable, with the log
	// end each reaches. Guarded by the shard lock.
	hw   int64
	pend []pendingEnd
	// dlq: a share group of this partition has a dead-letter topic.
	// Guarded by the shard lock.
	dlq bool
}

type pendingEnd struct {
	t   wal.Ticket
	end int64
}

// hwLocked returns the partition's high watermark: without a data
// directory the log end; with one, the end of what is durable, so no
// reader (or share-group poll) sees a record a crash could take back.
func (e *Engine) hwLocked(p *partition) int64 {
	if p.wal == nil {
		return p.log.HighWatermark()
	}
	if len(p.pend) > 0 {
		durable := e.jrn().g.Durable()
		n := 0
		for n < len(p.pend) && p.pend[n].t <= durable {
			p.hw = p.pend[n].end
			n++
		}
		if n == len(p.pend) {
			p.pend = p.pend[:0]
		} else if n > 0 {
			p.pend = append(p.pend[:0], p.pend[n:]...)
		}
	}
	return p.hw
}

// lsoLocked is the last stable offset, at most the high watermark.
func (e *Engine) lsoLocked(p *partition) int64 { return min(p.log.LSO(), e.hwLocked(p)) }

func newPartition(tp TopicPartition, log *plog.Log, l *wal.Log) *partition {
	p := &partition{tp: tp, log: log, shares: map[string]*sharepart.SharePartition{}, wal: l}
	if l != nil {
		p.sj = map[string]*shareJournal{}
	}
	return p
}

type engineStats struct {
	produced    atomic.Int64
	committed   atomic.Int64
	aborted     atomic.Int64
	timedOut    atomic.Int64
	fenced      atomic.Int64
	stageFailed atomic.Int64
	sessionsEnd atomic.Int64
	dlqWritten  atomic.Int64
	dlqDropped  atomic.Int64
}

// New returns a running engine.
func New(opts ...Option) (*Engine, error) {
	cfg := defaultConfig()
	for _, o := range opts {
		o(&cfg)
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	e := &Engine{
		cfg:      cfg,
		clock:    cfg.clock,
		topics:   map[string]*topic{},
		topicIDs: map[TopicID]*topic{},
		data:     make([]dataShard, cfg.shards),
		groups:   make([]groupShard, cfg.shards),
		txns:     make([]txnShard, cfg.shards),
		stop:     make(chan struct{}),
		done:     make(chan struct{}),

		markersDone: make(chan struct{}),
	}
	e.markers.init(cfg.manual)
	if e.clock == nil {
		e.clock = realClock{start: time.Now()}
	}
	for i := range e.data {
		e.data[i].mu.parts = map[TopicPartition]*partition{}
		e.groups[i].mu.share = map[string]*shareGroup{}
		e.groups[i].mu.classic = map[string]*classicGroup{}
		e.txns[i].mu.txns = map[string]*txnState{}
	}
	e.nextPID.Store(1000)
	if cfg.dataDir != "" {
		e.dur = &durable{dir: cfg.dataDir}
		e.dur.crashed.Store(true) // the gate stays closed until recovered
		rep, err := e.recover()
		if err != nil {
			return nil, err
		}
		e.dur.last = rep
		e.dur.running()
	}
	if cfg.manual {
		close(e.done)
		close(e.markersDone)
	} else {
		go e.timerLoop()
		go e.markerLoop()
	}
	return e, nil
}

// Close stops the timer goroutine. The engine's state stays readable
// (Fetch, Offsets, introspection); later changes (Produce, Poll,
// Acknowledge, joins, transactions, new topics) fail with ErrClosed. With
// a data directory it also flushes the journal (fsynced) and closes it.
func (e *Engine) Close() error {
	if !e.closed.Load() {
		e.DeliverMarkers() // decided transactions complete where they can
	}
	e.closed.Store(true)
	e.stopOnce.Do(func() { close(e.stop) })
	<-e.done
	<-e.markersDone
	if e.dur == nil {
		return nil
	}
	e.dur.restartMu.Lock()
	defer e.dur.restartMu.Unlock()
	j := e.dur.j.Load()
	if j == nil || e.dur.crashed.Load() {
		return nil
	}
	err := j.g.Close()
	select {
	case <-j.stop:
	default:
		close(j.stop)
	}
	<-j.done
	return err
}

// Now returns the engine clock's time.
func (e *Engine) Now() time.Duration { return e.clock.Now() }

// Shards returns the number of lock shards.
func (e *Engine) Shards() int { return len(e.data) }

// AbortSweepInterval returns how often transactions past their timeout are
// aborted (WithAbortSweepInterval).
func (e *Engine) AbortSweepInterval() time.Duration { return e.cfg.abortSweepInterval }

// hash places a name (and partition) on a lock shard: FNV-1a, so the
// placement, and every order that follows shards (the abort sweep visits
// them in turn), is the same in every process and a simulator seed
// replays exactly. The partition goes in last, and FNV-1a's last steps
// (an xor, then multiplications by an odd prime) are a bijection on the
// low bits, so with a power-of-two shard count the partitions of one topic
// fall on distinct shards until there are more partitions than shards.
func (e *Engine) hash(s string, n int32) uint64 {
	const offset, prime = 14695981039346656037, 1099511628211
	h := uint64(offset)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= prime
	}
	for k := 0; k < 4; k++ {
		h ^= uint64(byte(n >> (8 * k)))
		h *= prime
	}
	return h
}

func (e *Engine) dataShard(tp TopicPartition) *dataShard {
	return &e.data[e.hash(tp.Topic, tp.Partition)%uint64(len(e.data))]
}

func (e *Engine) groupShard(group string) *groupShard {
	return &e.groups[e.hash(group, -1)%uint64(len(e.groups))]
}

func (e *Engine) txnShard(id string) *txnShard {
	return &e.txns[e.hash(id, -2)%uint64(len(e.txns))]
}

// CreateTopic creates a topic with the given number of partitions.
func (e *Engine) CreateTopic(name string, partitions int32) error {
	return e.CreateTopicWithConfigs(name, partitions, nil)
}

// CreateTopicWithConfigs creates a topic with the given number of
// partitions and topic configs (see TopicConfigs), journaled in one record
// so a recovery sees the topic with its configs or not at all.
func (e *Engine) CreateTopicWithConfigs(name string, partitions int32, configs map[string]string) error {
	if name == "" || partitions < 1 || partitions > 1<<20 {
		return fmt.Errorf("%w: topic %q with %d partitions", ErrInvalidConfig, name, partitions)
	}
	if err := validTopicConfigs(name, configs); err != nil {
		return err
	}
	if err := e.enterWrite(); err != nil {
		return err
	}
	defer e.exit()
	e.adminMu.Lock()
	defer e.adminMu.Unlock()
	var id uint64
	var logs []*wal.Log
	if e.dur != nil {
		var err error
		if id, logs, err = e.openTopicLogs(name, partitions); err != nil {
			return err
		}
	}
	var op syncPoint
	e.topicsMu.Lock()
	if _, ok := e.topics[name]; ok {
		e.topicsMu.Unlock()
		return fmt.Errorf("%w: %s", ErrTopicExists, name)
	}
	uuid, err := e.newTopicIDLocked()
	if err != nil {
		e.topicsMu.Unlock()
		return err
	}
	t := newTopic(name, partitions, id, uuid)
	t.configs = cloneConfigs(configs)
	e.topics[name], e.topicIDs[uuid] = t, t
	e.jTopic(&op, &topicRecord{id: id, name: name, partitions: partitions, uuid: uuid, configs: t.configs})
	e.topicsMu.Unlock()
	for p := int32(0); p < partitions; p++ {
		tp := TopicPartition{name, p}
		var l *wal.Log
		if logs != nil {
			l = logs[p]
		}
		ds := e.dataShard(tp)
		ds.mu.Lock()
		ds.mu.parts[tp] = newPartition(tp, plog.New(e.cfg.retentionBytes), l)
		ds.mu.Unlock()
	}
	return e.finish(&op, nil)
}

// Partitions returns the partition count of topic.
func (e *Engine) Partitions(topicName string) (int32, error) {
	if err := e.enter(); err != nil {
		return 0, err
	}
	defer e.exit()
	t, err := e.topic(topicName)
	if err != nil {
		return 0, err
	}
	return t.partitions.Load(), nil
}

// Topics returns the topic names, sorted.
func (e *Engine) Topics() []string {
	if e.enter() != nil {
		return nil
	}
	defer e.exit()
	e.topicsMu.RLock()
	defer e.topicsMu.RUnlock()
	names := make([]string, 0, len(e.topics))
	for n := range e.topics {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func (e *Engine) topic(name string) (*topic, error) {
	e.topicsMu.RLock()
	t := e.topics[name]
	e.topicsMu.RUnlock()
	if t == nil {
		return nil, fmt.Errorf("%w: topic %q", ErrUnknownTopicOrPartition, name)
	}
	return t, nil
}

// Notify returns a channel that is closed the next time topic changes
// (records appended or released). Wait on it, then re-check.
func (e *Engine) Notify(topicName string) (<-chan struct{}, error) {
	if err := e.enter(); err != nil {
		return nil, err
	}
	defer e.exit()
	t, err := e.topic(topicName)
	if err != nil {
		return nil, err
	}
	return t.wait(), nil
}

// withPartition runs f with the partition's shard lock held and, with a
// data directory, waits until what f changed is durable once the lock is
// released.
func (e *Engine) withPartition(tp TopicPartition, f func(*partition) error) error {
	if e.dur == nil {
		return e.withPartitionOp(tp, nil, f)
	}
	var op syncPoint
	return e.finish(&op, e.withPartitionOp(tp, &op, f))
}

// withPartitionOp runs f with the partition's shard lock held and, with a
// data directory, journals what f changed in the partition's share
// partitions before releasing it. The journal tickets go to op, on which
// the caller waits once it holds no lock (finish).
func (e *Engine) withPartitionOp(tp TopicPartition, op *syncPoint, f func(*partition) error) error {
	ds := e.dataShard(tp)
	ds.mu.Lock()
	p := ds.mu.parts[tp]
	if p == nil {
		ds.mu.Unlock()
		return fmt.Errorf("%w: %s", ErrUnknownTopicOrPartition, tp)
	}
	p.op = op
	err := f(p)
	if e.dur != nil {
		e.journalSharesLocked(p)
	}
	p.op = nil
	var dls []deadLetters
	if p.dlq {
		dls = e.takeDeadLettersLocked(p, nil)
	}
	ds.mu.Unlock()
	if len(dls) > 0 {
		// Written once the partition's lock is released: the DLQ
		// partition is another data shard's (lockorder.go).
		e.writeDeadLetters(op, dls)
	}
	return err
}

// appendLocked appends a batch and applies retention, moving every share
// partition of p past records the log dropped. The shard lock is held.
func (e *Engine) appendLocked(p *partition, b *plog.Batch) (int64, error) {
	before := p.log.StartOffset()
	base, dup, err := p.log.Append(b)
	if err != nil || dup {
		return base, err
	}
	e.jBatch(p, b, base)
	e.stats.produced.Add(int64(len(b.Values)))
	if start := p.log.EnforceRetention(); start > 0 {
		if start != before {
			e.jLogStart(p)
		}
		for _, g := range p.groups {
			p.shares[g].AdvanceLogStart(start)
		}
	}
	return base, nil
}

// ProduceRecord is one record to produce.
type ProduceRecord struct {
	Key, Value []byte
	Headers    []Header
}

// Header is a record header.
type Header struct {
	Key   string
	Value []byte
}

// The engine's Header and the log's have identical fields, so a slice of
// one is a view of the other (same memory, no copy on the produce and fetch
// paths). The conversion below fails to compile if the fields ever differ.
var _ = plog.Header(Header{})

func logHeaders(hs []Header) []plog.Header {
	if hs == nil {
		return nil
	}
	return unsafe.Slice((*plog.Header)(unsafe.Pointer(unsafe.SliceData(hs))), len(hs))
}

func engineHeaders(hs []plog.Header) []Header {
	if hs == nil {
		return nil
	}
	return unsafe.Slice((*Header)(unsafe.Pointer(unsafe.SliceData(hs))), len(hs))
}

// Produce appends plain (non-idempotent, non-transactional) records to one
// partition and returns the offset of the first.
func (e *Engine) Produce(topicName string, partitionID int32, recs []ProduceRecord) (int64, error) {
	if err := e.enterWrite(); err != nil {
		return 0, err
	}
	defer e.exit()
	t, err := e.topic(topicName)
	if err != nil {
		return 0, err
	}
	b := batchOf(recs, plog.NoProducer, 0, 0, false, int64(e.clock.Now()))
	var base int64
	err = e.withPartition(TopicPartition{topicName, partitionID}, func(p *partition) error {
		var err error
		base, err = e.appendLocked(p, b)
		return err
	})
	if err == nil {
		t.changed()
	}
	return base, err
}

func batchOf(recs []ProduceRecord, pid int64, epoch int16, seq int32, txn bool, ts int64) *plog.Batch {
	b := &plog.Batch{Values: make([][]byte, len(recs)), ProducerID: pid, Epoch: epoch, BaseSequence: seq, Transactional: txn, Timestamp: ts}
	for i, r := range recs {
		if r.Key != nil {
			if b.Keys == nil {
				b.Keys = make([][]byte, len(recs))
			}
			b.Keys[i] = r.Key
		}
		b.Values[i] = r.Value
		if r.Headers != nil {
			if b.Headers == nil {
				b.Headers = make([][]plog.Header, len(recs))
			}
			b.Headers[i] = logHeaders(r.Headers)
		}
	}
	return b
}

// Record is a record as a reader or a share-group member sees it. Key and
// Value alias the engine's memory and must not be modified.
type Record struct {
	Topic         string
	Partition     int32
	Offset        int64
	Key, Value    []byte
	Timestamp     time.Duration
	ProducerID    int64
	Epoch         int16
	Transactional bool
	// Aborted is true for a record of an aborted transaction (seen only
	// by read_uncommitted fetches).
	Aborted bool
	// DeliveryCount is set on records acquired by a share-group poll.
	DeliveryCount int
	Headers       []Header
	// Control is set on a transaction marker (only FetchWithMarkers
	// returns them); Commit says whether it commits or aborts.
	Control, Commit bool
}

// Fetch reads up to max records of one partition from offset at the given
// isolation level and returns them with the offset to fetch next.
func (e *Engine) Fetch(tp TopicPartition, offset int64, max int, iso IsolationLevel) ([]Record, int64, error) {
	return e.FetchAppend(nil, tp, offset, max, iso)
}

// FetchAppend is Fetch appending the records to dst, so a caller that
// fetches in a loop reuses one buffer (keys and values alias the log).
func (e *Engine) FetchAppend(dst []Record, tp TopicPartition, offset int64, max int, iso IsolationLevel) ([]Record, int64, error) {
	if err := e.enter(); err != nil {
		return dst, offset, err
	}
	defer e.exit()
	out := dst
	next := offset
	scratch := getLogRecords()
	defer putLogRecords(scratch)
	err := e.withPartition(tp, func(p *partition) error {
		recs, n, err := p.log.FetchBelow(offset, max, iso == ReadCommitted, e.hwLocked(p), (*scratch)[:0])
		*scratch = recs
		if err != nil {
			if errors.Is(err, plog.ErrOffsetOutOfRange) {
				// Both sentinels name a fetch outside the log.
				return fmt.Errorf("%w: %w", ErrOffsetOutOfRange, err)
			}
			return err
		}
		next = n
		for i := range recs {
			out = append(out, toRecord(tp, &recs[i]))
		}
		return nil
	})
	return out, next, err
}

// logRecords recycles the log's read buffers between fetches.
var logRecords = sync.Pool{New: func() any { return new([]plog.Record) }}

func getLogRecords() *[]plog.Record { return logRecords.Get().(*[]plog.Record) }

// putLogRecords returns a read buffer, cleared so it keeps no log memory
// alive; very large ones are left to the GC.
func putLogRecords(b *[]plog.Record) {
	clear(*b)
	if cap(*b) <= 4096 {
		*b = (*b)[:0]
		logRecords.Put(b)
	}
}

func toRecord(tp TopicPartition, r *plog.Record) Record {
	return Record{
		Topic: tp.Topic, Partition: tp.Partition, Offset: r.Offset, Key: r.Key, Value: r.Value,
		Timestamp: time.Duration(r.Timestamp), ProducerID: r.ProducerID, Epoch: r.Epoch, Transactional: r.Transactional, Aborted: r.Aborted,
		Headers: engineHeaders(r.Headers),
	}
}

// Offsets reports a partition's log start offset, high watermark and last
// stable offset.
func (e *Engine) Offsets(tp TopicPartition) (start, hw, lso int64, err error) {
	if err = e.enter(); err != nil {
		return
	}
	defer e.exit()
	err = e.withPartition(tp, func(p *partition) error {
		start, hw, lso = p.log.StartOffset(), e.hwLocked(p), e.lsoLocked(p)
		return nil
	})
	return
}

// DeleteRecords moves a partition's log start offset (delete-records);
// share groups archive the AVAILABLE records it passes.
func (e *Engine) DeleteRecords(tp TopicPartition, offset int64) error {
	if err := e.enterWrite(); err != nil {
		return err
	}
	defer e.exit()
	return e.withPartition(tp, func(p *partition) error {
		before := p.log.StartOffset()
		if hw := e.hwLocked(p); offset > hw {
			return fmt.Errorf("%w: delete-records to %d beyond high watermark %d", ErrLogOffsetOutOfRange, offset, hw)
		}
		start, err := p.log.DeleteRecords(offset)
		if err != nil {
			return err
		}
		if start != before {
			e.jLogStart(p)
		}
		for _, g := range p.groups {
			p.shares[g].AdvanceLogStart(start)
		}
		return nil
	})
}

// timerLoop fires due timers until Close. It exits when e.stop closes.
func (e *Engine) timerLoop() {
	defer close(e.done)
	tick := time.NewTicker(e.cfg.timerInterval)
	defer tick.Stop()
	for {
		select {
		case <-e.stop:
			return
		case <-tick.C:
			// Markers are not sent here: the marker goroutine sends each
			// transaction's markerSendDelay after its decision, and
			// sending them early would contend with the producer that
			// is about to send them itself (markers.go).
			e.fireTimers(false)
		}
	}
}

// FireTimers fires every due timer at the clock's current time: expired
// acquisition locks, member sessions that timed out, (once per abort
// sweep interval) transactions that outlived their timeout, and the
// marker channels (DeliverMarkers). With a manual
// clock the caller calls it; otherwise the timer goroutine does.
func (e *Engine) FireTimers() { e.fireTimers(true) }

// fireTimers fires the due timers, and with markers the marker channels.
func (e *Engine) fireTimers(markers bool) {
	if e.enter() != nil {
		return
	}
	defer e.exit()
	now := e.clock.Now()
	e.expireSessions(now)
	e.expireLocks(now)
	e.sweepTransactions(now)
	if markers {
		e.DeliverMarkers()
	}
}

func (e *Engine) expireLocks(now time.Duration) {
	var changed []string
	var op syncPoint
	var dls []deadLetters
	for i := range e.data {
		ds := &e.data[i]
		ds.mu.Lock()
		for _, p := range ds.mu.parts {
			expired := false
			for _, g := range p.groups {
				sp := p.shares[g]
				if sp.NextDeadline() <= now && sp.Expire(now) > 0 {
					changed = append(changed, p.tp.Topic)
					expired = true
				}
			}
			if expired && e.dur != nil {
				p.op = &op
				e.journalSharesLocked(p)
				p.op = nil
			}
			if expired && p.dlq {
				dls = e.takeDeadLettersLocked(p, dls)
			}
		}
		ds.mu.Unlock()
		if len(dls) > 0 {
			e.writeDeadLetters(&op, dls) // records archived at the delivery limit
			dls = dls[:0]
		}
	}
	_ = e.finish(&op, nil)
	e.notifyTopics(changed)
}

func (e *Engine) notifyTopics(names []string) {
	if len(names) == 0 {
		return
	}
	sort.Strings(names)
	for i, n := range names {
		if i > 0 && names[i-1] == n {
			continue
		}
		if t, err := e.topic(n); err == nil {
			t.changed()
		}
	}
}

// WaitTopic blocks until topic changes, ctx is done, or d passes.
func (e *Engine) WaitTopic(ctx context.Context, topicName string, d time.Duration) error {
	ch, err := e.Notify(topicName)
	if err != nil {
		return err
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ch:
	case <-t.C:
	case <-ctx.Done():
		return ctx.Err()
	}
	return nil
}

func tpLess(a, b TopicPartition) bool { return tpCompare(a, b) < 0 }

// tpCompare orders partitions by topic, then partition number.
func tpCompare(a, b TopicPartition) int {
	if c := strings.Compare(a.Topic, b.Topic); c != 0 {
		return c
	}
	return cmp.Compare(a.Partition, b.Partition)
}
