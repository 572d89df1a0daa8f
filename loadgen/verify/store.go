// This file holds the verifier's compact state: a 24-byte record per input id
// and a 56-byte record per output, both in fixed-size chunks so that memory
// grows without copying and without a per-entry map overhead for the dense
// ids the load generator assigns. Ids too sparse for chunks fall back to a
// map; correctness never depends on density.

package verify

import (
	"math"
	"slices"

	"github.com/sharebench/sharebench/vocab"
)

const (
	chunkShift = 15
	chunkSize  = 1 << chunkShift
	chunkMask  = chunkSize - 1

	// denseSlackChunks is how many chunks may be allocated beyond what the
	// density rule in (*store).create allows, so small or oddly based id
	// ranges still use chunks.
	denseSlackChunks = 2
)

// Record flags.
const (
	flagExists          = 1 << iota // the slot holds a record (chunks only)
	flagInput                       // AddInput saw this id
	flagRejected                    // the target reports it archived by a reject (v1: Input.Rejected)
	flagBelowSPSO                   // Input.BelowSPSO
	flagAcceptCommitted             // a worker's accept took effect
	flagRejectCommitted             // a worker's reject took effect
	flagAckUnknown                  // an accept or reject was sent and its fate never learned
	flagAcceptSent                  // a worker sent an accept (whatever its fate)
	flagAcceptRefused               // the target refused a worker's accept (AckRefused)
	flagRejectRefused               // the target refused a worker's reject (AckRefused)
	flagRejectUnknown               // a reject was sent and its fate never learned
)

// State codes, packed into rec.state.
const (
	codeUnknown uint8 = iota
	codeAvailable
	codeAcquired
	codeAcknowledged
	codeArchived
	codeTxPending
	codeInvalid // a final state the verifier does not know
)

func stateCode(s vocab.RecordState) uint8 {
	switch s {
	case vocab.StateUnknown, "":
		return codeUnknown
	case vocab.StateAvailable:
		return codeAvailable
	case vocab.StateAcquired:
		return codeAcquired
	case vocab.StateAcknowledged:
		return codeAcknowledged
	case vocab.StateArchived:
		return codeArchived
	case vocab.StateTxPending:
		return codeTxPending
	}
	return codeInvalid
}

func stateName(c uint8) vocab.RecordState {
	switch c {
	case codeAvailable:
		return vocab.StateAvailable
	case codeAcquired:
		return vocab.StateAcquired
	case codeAcknowledged:
		return vocab.StateAcknowledged
	case codeArchived:
		return vocab.StateArchived
	case codeTxPending:
		return vocab.StateTxPending
	}
	return "" // unknown: witnesses leave the state out
}

// rec is what the verifier keeps per input id.
type rec struct {
	offset    int64
	partition int32
	// deliveries is the highest delivery count the target reported, at a
	// delivery or as the final state; observed counts the deliveries
	// workers saw (saturating).
	deliveries uint16
	// head is the index in store.outs of the latest output for this id;
	// 0 means none (slot 0 of outs is never used).
	head     uint32
	observed uint16
	flags    uint16
	state    uint8
	// counted is how many deliveries certainly counted toward the limit
	// (saturating): the one whose accept or reject took effect, those
	// whose release took effect, and those whose acknowledgement was
	// staged in a transaction that aborted. A delivery that
	// ended with no acknowledgement may have been undone (a session close
	// gives it back; a restart forgets an acquisition), so it is not.
	counted uint8
	// acceptAt and rejectAt are the highest delivery counts reported with
	// a delivery whose accept (reject) the target answered as taking
	// effect; 0 when none, or the target reports no counts. A delivery
	// with a higher count shows that the record was acquired again, so
	// that answer was a no-op (see superseded).
	acceptAt, rejectAt uint16
}

// superseded reports whether an accept or reject answered as taking effect
// at delivery count at was followed by a later delivery: had it taken
// effect the record would have been terminal and never delivered again
// (Kafka answers an acknowledgement of a record already below the
// share-partition start offset with success, as a no-op).
func (r *rec) superseded(at uint16) bool { return at > 0 && r.deliveries > at }

// deliveryCount is the record's delivery count for the delivery limit: the
// highest count the target reported, or the deliveries that certainly
// counted if more.
func (r *rec) deliveryCount() uint16 {
	return max(r.deliveries, uint16(r.counted))
}

// Output flags.
const (
	outCommitted       = 1 << iota // a read_committed reader saw it
	outAborted                     // the target flags it aborted (Output.Aborted)
	outUncommitted                 // the read_uncommitted pass saw it
	outMarkerCommit                // a commit marker of its producer followed it
	outMarkerAbort                 // an abort marker of its producer followed it
	outMarkerOpen                  // no marker followed it
	outClientCommitted             // the client was told its transaction committed
	outClientAborted               // the client was told its transaction aborted
	outClientUnknown               // the client never learned the outcome
	outCommitSent                  // the client asked to commit
)

// out is what the verifier keeps per output.
type out struct {
	offset      int64
	visibleNs   int64
	txnSeq      int64
	pid         int64
	partition   int32
	txn         uint32 // interned transactional id; 0 = not transactional
	next        uint32 // index of the previous output of the same id; 0 = end
	txnSize     uint32
	epoch       int16
	markerEpoch int16
	flags       uint16
}

func (o *out) committed() bool { return o.flags&outCommitted != 0 }

// aborted reports whether o is known to belong to a transaction that
// aborted: the target or an abort marker says so, the client was told so,
// or the client never asked to commit it (a transaction nobody commits can
// only abort).
func (o *out) aborted() bool {
	return o.flags&(outAborted|outMarkerAbort|outClientAborted) != 0 ||
		o.flags&outClientUnknown != 0 && o.flags&outCommitSent == 0
}

// valid reports whether o counts as a committed output: seen by a
// read_committed reader and not known to be aborted.
func (o *out) valid() bool { return o.committed() && !o.aborted() }

// pending reports whether o was not seen by a read_committed reader and is
// not known to be aborted.
func (o *out) pending() bool { return !o.committed() && !o.aborted() }

type recChunk [chunkSize]rec
type outChunk [chunkSize]out

// store holds the records. It is not safe for concurrent use; the Verifier
// guards it.
type store struct {
	// chunks maps a chunk number (id >> chunkShift) to its records.
	chunks map[uint64]*recChunk
	// lastN and last cache the most recently used chunk: ids mostly arrive
	// in order, so this saves most map lookups.
	lastN uint64
	last  *recChunk
	// sparse holds the records of ids whose chunk the density rule refused.
	sparse  map[uint64]*rec
	records int // distinct ids

	outs  []*outChunk
	nOuts uint32 // slots used in outs, slot 0 included
	// maxOuts bounds nOuts; 0 means math.MaxUint32. Tests lower it.
	maxOuts uint32
}

func (s *store) chunk(n uint64) *recChunk {
	if s.last != nil && s.lastN == n {
		return s.last
	}
	c := s.chunks[n]
	if c != nil {
		s.lastN, s.last = n, c
	}
	return c
}

// lookup returns id's record, or nil.
func (s *store) lookup(id uint64) *rec {
	if len(s.sparse) > 0 {
		if r, ok := s.sparse[id]; ok {
			return r
		}
	}
	c := s.chunk(id >> chunkShift)
	if c == nil {
		return nil
	}
	r := &c[id&chunkMask]
	if r.flags&flagExists == 0 {
		return nil
	}
	return r
}

// get returns id's record, creating it if needed.
func (s *store) get(id uint64) *rec {
	if r := s.lookup(id); r != nil {
		return r
	}
	return s.create(id)
}

// create makes a record for id, which has none. A record goes into a chunk
// when its chunk exists, or when the allocated chunks would stay at least
// about half full (plus some slack); otherwise into the sparse map. lookup
// checks the map first, so an id never lives in both.
func (s *store) create(id uint64) *rec {
	s.records++
	n := id >> chunkShift
	c := s.chunk(n)
	if c == nil && len(s.chunks) < 2*s.records/chunkSize+denseSlackChunks {
		if s.chunks == nil {
			s.chunks = make(map[uint64]*recChunk)
		}
		c = new(recChunk)
		s.chunks[n] = c
		s.lastN, s.last = n, c
	}
	if c != nil {
		r := &c[id&chunkMask]
		r.flags = flagExists
		return r
	}
	if s.sparse == nil {
		s.sparse = make(map[uint64]*rec)
	}
	r := &rec{}
	s.sparse[id] = r
	return r
}

// newOut returns the index of a fresh output slot, or 0 when the store is
// full.
func (s *store) newOut() uint32 {
	if s.nOuts == 0 {
		s.nOuts = 1 // slot 0 means "none"
	}
	if s.nOuts >= s.limit() {
		return 0
	}
	i := s.nOuts
	if int(i>>chunkShift) == len(s.outs) {
		s.outs = append(s.outs, new(outChunk))
	}
	s.nOuts++
	return i
}

// limit is the most output slots the store holds, slot 0 included.
func (s *store) limit() uint32 {
	if s.maxOuts == 0 {
		return math.MaxUint32
	}
	return s.maxOuts
}

func (s *store) out(i uint32) *out {
	return &s.outs[i>>chunkShift][i&chunkMask]
}

// each calls fn for every record in ascending id order.
func (s *store) each(fn func(id uint64, r *rec)) {
	sparse := make([]uint64, 0, len(s.sparse))
	for id := range s.sparse {
		sparse = append(sparse, id)
	}
	slices.Sort(sparse)
	ns := make([]uint64, 0, len(s.chunks))
	for n := range s.chunks {
		ns = append(ns, n)
	}
	slices.Sort(ns)
	i := 0
	for _, n := range ns {
		c := s.chunks[n]
		base := n << chunkShift
		for j := range c {
			id := base + uint64(j)
			for i < len(sparse) && sparse[i] < id {
				fn(sparse[i], s.sparse[sparse[i]])
				i++
			}
			if c[j].flags&flagExists != 0 {
				fn(id, &c[j])
			}
		}
	}
	for ; i < len(sparse); i++ {
		fn(sparse[i], s.sparse[sparse[i]])
	}
}
