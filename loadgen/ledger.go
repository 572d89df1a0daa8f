// This file holds the run's ledger: every input produced (where it landed,
// when it was meant to be sent) and every output seen, from which the
// verifier's inputs and outputs are built.

package loadgen

import (
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/sharebench/sharebench/loadgen/target"
	"github.com/sharebench/sharebench/loadgen/verify"
)

type inputRec struct {
	partition int32
	offset    int64
	intended  int64
}

type outputRec struct {
	id        uint64
	partition int32
	offset    int64
	visible   int64
	txnSeq    int64
	epoch     int16
	worker    uint16
	committed bool
	aborted   bool
}

// The ledger grows by millions of entries a run. Its tables are chunked
// and pointer-free: appending never copies what is already there, and the
// garbage collector never scans them (one slice grown by doubling cost the
// load generator a fifth of its time in copies and clears).
type ledger struct {
	mu      sync.Mutex
	inputs  chunks[inputRec] // by id-1
	outputs chunks[outputRec]
	seen    chunks[uint8] // committed outputs per id (saturating), by id-1
	// committedAt marks, per output partition, the offsets the committed
	// reader saw, so the read_uncommitted pass can skip them.
	committedAt []bitset // by partition
	rejected    map[uint64]bool
	distinct    atomic.Int64 // ids with a committed output
	nRej        atomic.Int64
	nOut        atomic.Int64
}

func newLedger() *ledger {
	return &ledger{rejected: map[uint64]bool{}}
}

// chunkLen is the number of entries in one ledger chunk.
const chunkLen = 1 << 14

// chunks is an append-only table in fixed-size chunks.
type chunks[T any] struct {
	c [][]T
	n int
}

func (c *chunks[T]) len() int { return c.n }

func (c *chunks[T]) append(v T) {
	if c.n%chunkLen == 0 {
		c.c = append(c.c, make([]T, 0, chunkLen))
	}
	last := &c.c[len(c.c)-1]
	*last = append(*last, v)
	c.n++
}

// grow appends fill until the table holds n entries.
func (c *chunks[T]) grow(n int, fill T) {
	for c.n < n {
		c.append(fill)
	}
}

func (c *chunks[T]) at(i int) *T { return &c.c[i/chunkLen][i%chunkLen] }

// each calls fn for every entry, in order.
func (c *chunks[T]) each(fn func(i int, v *T)) {
	i := 0
	for _, ch := range c.c {
		for j := range ch {
			fn(i, &ch[j])
			i++
		}
	}
}

// bitset is a growable set of non-negative offsets.
type bitset []uint64

func (b *bitset) set(off int64) {
	w := int(off / 64)
	for len(*b) <= w {
		*b = append(*b, 0)
	}
	(*b)[w] |= 1 << (off % 64)
}

func (b bitset) has(off int64) bool {
	w := int(off / 64)
	return off >= 0 && w < len(b) && b[w]&(1<<(off%64)) != 0
}

// addInputs records a produced batch under one lock.
func (l *ledger) addInputs(ids []uint64, recs []inputRec) {
	l.mu.Lock()
	for i, id := range ids {
		l.inputs.grow(int(id), inputRec{partition: -1})
		*l.inputs.at(int(id - 1)) = recs[i]
	}
	l.mu.Unlock()
}

// addCommitted records an output a read_committed reader (or a committed
// checkpoint) made visible.
func (l *ledger) addCommitted(o outputRec) { l.addCommittedBatch([]outputRec{o}) }

// addCommittedBatch records outputs made visible together, under one lock.
func (l *ledger) addCommittedBatch(os []outputRec) {
	l.mu.Lock()
	for _, o := range os {
		l.addCommittedLocked(o)
	}
	l.mu.Unlock()
	l.nOut.Add(int64(len(os)))
}

func (l *ledger) addCommittedLocked(o outputRec) {
	o.committed = true
	l.outputs.append(o)
	if o.partition >= 0 && o.offset >= 0 {
		for len(l.committedAt) <= int(o.partition) {
			l.committedAt = append(l.committedAt, nil)
		}
		l.committedAt[o.partition].set(o.offset)
	}
	if o.id >= 1 {
		l.seen.grow(int(o.id), 0)
		seen := l.seen.at(int(o.id - 1))
		if *seen == 0 {
			l.distinct.Add(1)
		}
		if *seen < 255 {
			*seen++
		}
	}
}

// addUncommitted records an output seen only by the read_uncommitted pass.
func (l *ledger) addUncommitted(r *target.Record) {
	h, err := readOutput(r.Value)
	if err != nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if r.Partition >= 0 && int(r.Partition) < len(l.committedAt) && l.committedAt[r.Partition].has(r.Offset) {
		return
	}
	l.outputs.append(outputRec{id: h.InputID, partition: r.Partition, offset: r.Offset, txnSeq: h.TxnSeq, epoch: h.Epoch, worker: h.Worker, aborted: r.Aborted})
}

func (l *ledger) reject(id uint64) {
	l.mu.Lock()
	if !l.rejected[id] {
		l.rejected[id] = true
		l.nRej.Add(1)
	}
	l.mu.Unlock()
}

// settled counts inputs that need nothing more: a committed output or a
// deliberate reject.
func (l *ledger) settled() int64 { return l.distinct.Load() + l.nRej.Load() }

func (l *ledger) committedOutputs() int64 { return l.nOut.Load() }

func (l *ledger) visibleBetween(from, to int64) int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	var n int64
	l.outputs.each(func(_ int, o *outputRec) {
		if o.committed && o.visible >= from && o.visible < to {
			n++
		}
	})
	return n
}

// each streams the ledger, joined with the target's final share state, as
// the verifier's inputs and outputs, so a run of millions of records never
// holds them all twice.
func (l *ledger) each(mr *modeRun, state *target.ShareState, input func(verify.Input), output func(verify.Output)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	states := indexStates(state)
	l.inputs.each(func(i int, in *inputRec) {
		if in.partition < 0 {
			return // produce failed: never written
		}
		id := uint64(i + 1)
		v := verify.Input{ID: id, Partition: in.partition, Offset: in.offset, IntendedNs: in.intended, Rejected: l.rejected[id]}
		if state != nil {
			if st := states.get(in.partition, in.offset); st != nil {
				v.FinalState, v.DeliveryCount = st.State, st.DeliveryCount
				v.Rejected = v.Rejected || st.Rejected
			} else if spso, ok := state.SPSO[in.partition]; ok && in.offset < spso {
				v.BelowSPSO = true
			}
		}
		input(v)
	})
	reportsAborted := mr.cfg.Target.Info().ReportsAborted
	tids := map[uint16]string{}
	l.outputs.each(func(_ int, o *outputRec) {
		v := verify.Output{InputID: o.id, Partition: o.partition, Offset: o.offset, Epoch: o.epoch,
			TxnSeq: o.txnSeq, Committed: o.committed, VisibleNs: o.visible}
		if mr.mode.Transactional() {
			tid, ok := tids[o.worker]
			if !ok {
				tid = mr.tcfg.TransactionalIDPrefix + strconv.Itoa(int(o.worker))
				tids[o.worker] = tid
			}
			v.TransactionalID = tid
			// A target that flags aborted records says which uncommitted
			// outputs were aborted, so the rest show torn transactions.
			// Otherwise: after the drain every transaction has ended, and
			// an output a read_committed reader never saw was aborted.
			v.Aborted = o.aborted || (!o.committed && !reportsAborted)
		} else {
			v.Epoch = -1
		}
		output(v)
	})
}

// stateIndex finds a record's final state by partition and offset: targets
// report records per partition in offset order, mostly dense, so a slice
// per partition indexed from its first offset replaces a map of millions.
type stateIndex map[int32]*partStates

type partStates struct {
	base int64
	recs []*target.RecordState // by offset-base; nil where not reported
}

func indexStates(state *target.ShareState) stateIndex {
	idx := stateIndex{}
	if state == nil {
		return idx
	}
	for i := range state.Records {
		r := &state.Records[i]
		ps := idx[r.Partition]
		if ps == nil {
			ps = &partStates{base: r.Offset}
			idx[r.Partition] = ps
		}
		if r.Offset < ps.base {
			grown := make([]*target.RecordState, int(ps.base-r.Offset)+len(ps.recs))
			copy(grown[ps.base-r.Offset:], ps.recs)
			ps.recs, ps.base = grown, r.Offset
		}
		at := int(r.Offset - ps.base)
		for len(ps.recs) <= at {
			ps.recs = append(ps.recs, nil)
		}
		ps.recs[at] = r
	}
	return idx
}

func (idx stateIndex) get(p int32, offset int64) *target.RecordState {
	ps := idx[p]
	if ps == nil || offset < ps.base || offset-ps.base >= int64(len(ps.recs)) {
		return nil
	}
	return ps.recs[offset-ps.base]
}
