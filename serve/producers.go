// This file holds the wire producers: what InitProducerId handed out, the
// epoch the client holds, and the sequence numbers of idempotent batches.

package serve

import (
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/sharebench/sharebench/engine"
)

// producer is one producer id. mu serialises the producer's requests (an
// engine Producer is driven by one goroutine at a time).
type producer struct {
	mu      sync.Mutex
	p       *engine.Producer
	wirePID int64 // the producer id the client holds (the engine's until an epoch overflow)
	txnID   string
	epoch   int16 // the epoch the client holds
	timeout int32 // transaction.timeout.ms
	seqs    map[engine.TopicPartition]*seqState
	lastEnd int8 // outcome of the last EndTxn: 0 none, 1 commit, 2 abort
	// entries are what the partitions keep of this producer, by wire
	// producer id; unlike seqs they survive epoch bumps.
	entries   map[entryKey]*producerEntry
	inTxn     bool
	addedTPs  map[engine.TopicPartition]bool
	addedGrps map[string]bool
}

// recentBatches is how many batches per partition a producer may have in
// flight and retry (Kafka's max.in.flight.requests.per.connection bound).
const recentBatches = 5

// seqState is one partition's sequence numbers of one producer.
type seqState struct {
	next   int32
	recent [recentBatches]struct {
		seq, count int32
		base       int64
	}
	n      int
	lastMs int64 // Unix milliseconds of the last append
}

// check classifies a batch: dup is the first offset of an identical batch
// already appended; ok is false for an out-of-order sequence.
func (st *seqState) check(seq, count int32) (dup int64, isDup, ok bool) {
	for i := 0; i < min(st.n, recentBatches); i++ {
		r := st.recent[i]
		if r.seq == seq && r.count == count {
			return r.base, true, true
		}
	}
	return 0, false, st.n == 0 || seq == st.next
}

func (st *seqState) appended(seq, count int32, base int64) {
	st.recent[st.n%recentBatches] = struct {
		seq, count int32
		base       int64
	}{seq, count, base}
	st.n++
	st.next = seq + count
	st.lastMs = time.Now().UnixMilli()
}

// producerEntry is what a partition keeps of one producer id, as Kafka's
// producer state does, and what DescribeProducers answers: the epoch of the
// producer's last write or transaction marker there, the sequence number
// of its last batch (-1 once a marker at a new epoch ended its
// transaction, as Kafka clears the batches of an older epoch), the Unix
// milliseconds of the last of them, and the epoch of the coordinator whose
// marker last reached the partition: -1 until a marker does, as Kafka's
// entry starts with none.
type producerEntry struct {
	epoch      int16
	lastSeq    int32
	lastMs     int64
	coordEpoch int32
}

// coordinatorEpoch is the epoch of the server's one transaction
// coordinator, which every marker it writes carries: it never moves to
// another broker, so it stays at the epoch a fresh Kafka coordinator
// starts at.
const coordinatorEpoch = 0

type entryKey struct {
	tp  engine.TopicPartition
	pid int64 // the wire producer id
}

// wroteLocked records a batch ending at sequence lastSeq appended to tp.
// p.mu is held.
func (p *producer) wroteLocked(tp engine.TopicPartition, lastSeq int32, ms int64) {
	e := p.entryLocked(entryKey{tp, p.wirePID})
	e.epoch, e.lastSeq, e.lastMs = p.epoch, lastSeq, ms
}

// endedLocked records the marker that ended p's transaction, as producer
// id pid, on every partition of it, once p holds the epoch that follows
// the end (bumped by EndTxn v5). p.mu is held.
func (p *producer) endedLocked(pid int64, ms int64) {
	for tp := range p.addedTPs {
		e := p.entryLocked(entryKey{tp, pid})
		if pid == p.wirePID && e.epoch != p.epoch {
			e.epoch, e.lastSeq = p.epoch, -1
		}
		e.lastMs, e.coordEpoch = ms, coordinatorEpoch
	}
}

func (p *producer) entryLocked(k entryKey) *producerEntry {
	e := p.entries[k]
	if e == nil {
		e = &producerEntry{epoch: p.epoch, lastSeq: -1, lastMs: -1, coordEpoch: -1}
		if p.entries == nil {
			p.entries = map[entryKey]*producerEntry{}
		}
		p.entries[k] = e
	}
	return e
}

// retiredProducer is a producer another InitProducerId of its
// transactional id replaced, kept so its entries are still described.
type retiredProducer struct {
	p  *producer
	at time.Time
}

// producerRetention is how long a replaced producer's entries stay
// described: Kafka's default producer.id.expiration.ms (one day).
const producerRetention = 24 * time.Hour

// maxRetiredProducers bounds the replaced producers kept; past it the
// oldest go first.
const maxRetiredProducers = 4096

// retireLocked keeps p, replaced at now, and forgets those past their
// retention or the bound. state.mu is held.
func (s *Server) retireLocked(p *producer, now time.Time) {
	r := s.state.mu.retired
	drop := 0
	for drop < len(r) && (now.Sub(r[drop].at) > producerRetention || len(r)-drop >= maxRetiredProducers) {
		drop++
	}
	s.state.mu.retired = append(r[drop:], retiredProducer{p, now})
}

// lookupProducer returns the producer with id pid, checking the epoch the
// client sent: an older epoch is fenced.
func (s *Server) lookupProducer(pid int64, epoch int16) (*producer, int16) {
	s.state.mu.Lock()
	p := s.state.mu.producers[pid]
	s.state.mu.Unlock()
	if p == nil {
		return nil, kerr.UnknownProducerID.Code
	}
	p.mu.Lock()
	cur := p.epoch
	p.mu.Unlock()
	if epoch != cur {
		if p.txnID != "" {
			return nil, kerr.ProducerFenced.Code
		}
		return nil, kerr.InvalidProducerEpoch.Code
	}
	return p, 0
}

// beginLocked opens the engine transaction if none is open. p.mu is held.
func (p *producer) beginLocked() error {
	if p.inTxn {
		return nil
	}
	if err := p.p.Begin(); err != nil {
		return err
	}
	p.inTxn = true
	p.lastEnd = 0
	clear(p.addedTPs)
	clear(p.addedGrps)
	return nil
}

// wireID is the producer id and epoch a client holds.
type wireID struct {
	pid   int64
	epoch int16
}

// wireIDs maps the engine's producer ids to what their clients hold: the
// two differ once an epoch bump at a transaction's end (KIP-890 part 2)
// has moved the wire epoch past the engine's, or an epoch overflow has
// given the client a new producer id. Every answer that names a producer
// (DescribeProducers, DescribeTransactions, ListTransactions) names it as
// its client does.
func (s *Server) wireIDs() map[int64]wireID {
	s.state.mu.Lock()
	ps := make([]*producer, 0, len(s.state.mu.producers))
	for _, p := range s.state.mu.producers {
		ps = append(ps, p)
	}
	s.state.mu.Unlock()
	out := make(map[int64]wireID, len(ps))
	for _, p := range ps {
		ep := p.p.ProducerID()
		p.mu.Lock()
		out[ep] = wireID{p.wirePID, p.epoch}
		p.mu.Unlock()
	}
	return out
}
