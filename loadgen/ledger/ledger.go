// This file holds the ledger: every input produced (where it landed, when
// it was meant to be sent), every output seen, every delivery and worker
// transaction, from which the verifier's inputs, outputs and deliveries
// are built.

package ledger

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/sharebench/sharebench/loadgen/targets"
	"github.com/sharebench/sharebench/loadgen/verify"
	"github.com/sharebench/sharebench/vocab"
)

// Input is the ledger's entry for one input written: the partition and
// offset it landed at (partition -1: never written) and its intended send
// time, in ns since the mode's start. The ledger holds one per input id, so
// it stays this small.
type Input struct {
	Partition  int32
	Offset     int64
	IntendedNs int64
}

// Marker codes of outputRec.marker.
const (
	markerNone   uint8 = iota // not transactional, or not seen by a marker reader
	markerCommit              // a commit marker of its producer followed it
	markerAbort               // an abort marker followed it
	markerOpen                // no marker followed it by the end of the run
)

type outputRec struct {
	id          uint64
	partition   int32
	offset      int64
	visible     int64
	txnSeq      int64
	pid         int64
	epoch       int16
	markerEpoch int16
	worker      uint16
	committed   bool // seen by a read_committed reader
	uncommitted bool // seen by the read_uncommitted pass
	aborted     bool // the target flags it aborted
	marker      uint8
}

// Acknowledgement codes of deliveryRec.ack.
const (
	ackNone uint8 = iota
	ackAccept
	ackReject
	ackRelease
)

// Fates of deliveryRec.fate.
const (
	fateNone      uint8 = iota // no acknowledgement sent
	fateCommitted              // took effect
	fateAborted                // its transaction aborted
	fateFailed                 // the call failed
	fateUnknown                // sent, never learned
	fateTxn                    // staged: the fate of transaction txn
	fateRefused                // the call went through, but the target said this record's ack did not take effect
)

// deliveryRec is one delivery a worker observed and what became of the
// acknowledgement it sent.
type deliveryRec struct {
	id     uint64
	at     int64
	txn    int32 // index in txns of the transaction a staged ack joined
	worker uint16
	count  uint16 // the broker's delivery count
	ack    uint8
	fate   uint8
}

// Client outcomes of txnRec.outcome.
const (
	outcomeUnknown uint8 = iota
	outcomeCommitted
	outcomeAborted
)

// txnRec is one worker transaction as its client saw it.
type txnRec struct {
	seq        int64 // incarnation<<32 | the incarnation's transaction number
	pid        int64
	outputs    int32 // outputs produced in it
	worker     uint16
	epoch      int16
	outcome    uint8
	commitSent bool
}

// txnKey finds a transaction from an output's header.
type txnKey struct {
	worker uint16
	seq    int64
}

// Ledger is one mode's books: every input produced, every output seen,
// every delivery a worker observed with the fate of its acknowledgement,
// and every worker transaction as its client saw it, from which the
// verifier's inputs, outputs and deliveries are built. A run keeps one per
// mode, and so does the simulator. It is safe for concurrent use; its
// tables are chunked (chunks.go).
type Ledger struct {
	mu         sync.Mutex
	inputs     chunks[Input] // by id-1
	outputs    chunks[outputRec]
	deliveries chunks[deliveryRec]
	txns       chunks[txnRec]
	txnIndex   map[txnKey]int32
	seen       chunks[uint8] // committed outputs per id (saturating), by id-1
	// at indexes, per output partition, the output at each offset (its
	// index in outputs plus one; 0 for none), so the readers' passes add
	// to one record per position.
	at       []chunks[uint32] // by partition
	rejected map[uint64]bool  // ids whose reject took effect
	// pending holds, per (partition, producer id), the transactional
	// outputs the marker pass has seen no marker for yet.
	pending  map[pidKey][]uint32
	distinct atomic.Int64 // ids with a committed output
	nRej     atomic.Int64
	nOut     atomic.Int64
	// assigned, when set, is the run's id counter: an output naming an id
	// beyond it is a phantom, and is not counted per id (a corrupt id must
	// not grow the per-id table to its value).
	assigned *atomic.Uint64
}

// lastIDLocked is the highest id an output may name: the run's id counter,
// or, for a driver without one (the simulator), the highest input id
// booked. An output naming a higher id is a phantom.
func (l *Ledger) lastIDLocked() uint64 {
	if l.assigned != nil {
		return l.assigned.Load()
	}
	return uint64(l.inputs.len())
}

type pidKey struct {
	partition int32
	pid       int64
}

// New returns an empty ledger. ids, when not nil, is the driver's id
// counter (the last input id assigned): an output naming an id beyond it
// is a phantom. Without one (the simulator) the highest input id booked
// is the bound.
func New(ids *atomic.Uint64) *Ledger {
	return &Ledger{rejected: map[uint64]bool{}, txnIndex: map[txnKey]int32{}, pending: map[pidKey][]uint32{}, assigned: ids}
}

// outputAtLocked returns the output recorded at (p, off), or nil. l.mu
// must be held.
func (l *Ledger) outputAtLocked(p int32, off int64) *outputRec {
	if p < 0 || off < 0 || int(p) >= len(l.at) || int(off) >= l.at[p].len() {
		return nil
	}
	i := *l.at[p].at(int(off))
	if i == 0 {
		return nil
	}
	return l.outputs.at(int(i - 1))
}

// appendOutputLocked appends o and indexes its position. l.mu must be held.
func (l *Ledger) appendOutputLocked(o outputRec) (*outputRec, uint32) {
	l.outputs.append(o)
	i := uint32(l.outputs.len())
	if o.partition >= 0 && o.offset >= 0 {
		for len(l.at) <= int(o.partition) {
			l.at = append(l.at, chunks[uint32]{})
		}
		l.at[o.partition].grow(int(o.offset)+1, 0)
		*l.at[o.partition].at(int(o.offset)) = i
	}
	return l.outputs.at(int(i - 1)), i
}

// AddInputs records a produced batch under one lock: the input with id
// ids[i] is ins[i].
func (l *Ledger) AddInputs(ids []uint64, ins []Input) {
	l.mu.Lock()
	for i, id := range ids {
		l.inputs.grow(int(id), Input{Partition: -1})
		*l.inputs.at(int(id - 1)) = ins[i]
	}
	l.mu.Unlock()
}

// AddVisible records the outputs among recs (records whose payload holds
// an output header) that a read_committed reader returned at visibleNs (ns
// since the mode's start), under one lock, and returns how many it found.
func (l *Ledger) AddVisible(recs []*targets.Record, visibleNs int64) int {
	found, added := 0, int64(0)
	l.mu.Lock()
	for _, r := range recs {
		oh, err := ReadOutput(r.Value)
		if err != nil {
			continue
		}
		found++
		if l.addCommittedLocked(outputRec{id: oh.InputID, partition: r.Partition, offset: r.Offset, visible: visibleNs, txnSeq: oh.TxnSeq, epoch: oh.Epoch, worker: oh.Worker}) {
			added++
		}
	}
	l.mu.Unlock()
	l.nOut.Add(added)
	return found
}

// addCommitted records an output a read_committed reader (or a committed
// checkpoint) made visible.
func (l *Ledger) addCommitted(o outputRec) { l.addCommittedBatch([]outputRec{o}) }

// addCommittedBatch records outputs made visible together, under one lock.
// An output already recorded at its position (by an earlier pass) is
// marked visible, keeping its first visible time.
func (l *Ledger) addCommittedBatch(os []outputRec) {
	l.mu.Lock()
	n := int64(0)
	for _, o := range os {
		if l.addCommittedLocked(o) {
			n++
		}
	}
	l.mu.Unlock()
	l.nOut.Add(n)
}

// addCommittedLocked records one visible output; it reports whether the
// output is new to the read_committed view.
func (l *Ledger) addCommittedLocked(o outputRec) bool {
	if prev := l.outputAtLocked(o.partition, o.offset); prev != nil {
		if prev.committed {
			return false
		}
		prev.committed, prev.visible = true, o.visible
	} else {
		o.committed = true
		l.appendOutputLocked(o)
	}
	if o.id >= 1 && o.id <= l.lastIDLocked() {
		l.seen.grow(int(o.id), 0)
		seen := l.seen.at(int(o.id - 1))
		if *seen == 0 {
			l.distinct.Add(1)
		}
		if *seen < 255 {
			*seen++
		}
	}
	return true
}

// addUncommitted records a record the read_uncommitted pass saw: an output
// (new, or one the committed reader saw already), or a transaction marker,
// which resolves its producer's outputs on that partition seen so far.
func (l *Ledger) addUncommitted(r *targets.Record) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if r.Control != targets.ControlNone {
		k := pidKey{r.Partition, r.ProducerID}
		m := markerCommit
		if r.Control == targets.ControlAbort {
			m = markerAbort
		}
		for _, i := range l.pending[k] {
			o := l.outputs.at(int(i - 1))
			o.marker, o.markerEpoch = m, r.ProducerEpoch
		}
		delete(l.pending, k)
		return
	}
	h, err := ReadOutput(r.Value)
	if err != nil {
		return
	}
	o := l.outputAtLocked(r.Partition, r.Offset)
	var i uint32
	if o == nil {
		o, i = l.appendOutputLocked(outputRec{id: h.InputID, partition: r.Partition, offset: r.Offset, txnSeq: h.TxnSeq, epoch: h.Epoch, worker: h.Worker})
	} else {
		i = *l.at[r.Partition].at(int(r.Offset))
	}
	o.uncommitted = true
	o.aborted = o.aborted || r.Aborted
	if r.Transactional {
		o.pid = r.ProducerID
	}
	if r.Transactional {
		k := pidKey{r.Partition, r.ProducerID}
		l.pending[k] = append(l.pending[k], i)
	}
}

// finishMarkers ends the marker pass: outputs no marker followed are open,
// and each producer's open outputs that no read_committed reader saw are
// an open transaction on that partition.
func (l *Ledger) finishMarkers() []verify.OpenTransaction {
	l.mu.Lock()
	defer l.mu.Unlock()
	var open []verify.OpenTransaction
	for k, idx := range l.pending {
		first := int64(-1)
		var epoch int16
		for _, i := range idx {
			o := l.outputs.at(int(i - 1))
			o.marker = markerOpen
			if !o.committed && (first < 0 || o.offset < first) {
				first, epoch = o.offset, o.epoch
			}
		}
		if first >= 0 {
			open = append(open, verify.OpenTransaction{Partition: k.partition, ProducerID: k.pid, Epoch: epoch, FirstOffset: first, Source: verify.OpenSourceMarkers})
		}
	}
	l.pending = map[pidKey][]uint32{}
	return open
}

func (l *Ledger) rejectLocked(id uint64) {
	if !l.rejected[id] {
		l.rejected[id] = true
		l.nRej.Add(1)
	}
}

// addDeliveries records a poll's records as deliveries to worker, tagging
// each record with its delivery's index (plus one) for its later ack.
func (l *Ledger) addDeliveries(worker int, recs []*targets.Record, at int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, r := range recs {
		h, err := ReadInput(r.Value)
		if err != nil {
			continue
		}
		l.deliveries.append(deliveryRec{id: h.ID, at: at, worker: uint16(worker), count: uint16(min(max(r.DeliveryCount, 0), 65535)), txn: -1})
		r.Tag = int64(l.deliveries.len())
	}
}

// setAck records the acknowledgement sent for the deliveries tagged tags
// and its fate; a reject that took effect settles its input.
func (l *Ledger) setAck(tags []int64, ack, fate uint8) {
	l.eachTagged(tags, func(d *deliveryRec) {
		d.ack, d.fate = ack, fate
		if ack == ackReject && fate == fateCommitted {
			l.rejectLocked(d.id)
		}
	})
}

// setAckResult records the acknowledgement sent for the deliveries tagged
// tags (one per record of the call, in its order) and the fate its answer
// err gives each: a *targets.RefusedError names the records whose
// acknowledgement did not take effect, and the others' did; any other
// error is the whole call's (ackFate). It reports the tags whose
// acknowledgement took effect (tags itself unless some were refused).
func (l *Ledger) setAckResult(tags []int64, ack uint8, err error) []int64 {
	var re *targets.RefusedError
	if !errors.As(err, &re) {
		l.setAck(tags, ack, ackFate(err))
		if err != nil {
			return nil
		}
		return tags
	}
	refused := make(map[int]bool, len(re.Refused))
	for _, i := range re.Refused {
		refused[i] = true
	}
	var took []int64
	for i, tag := range tags {
		fate := uint8(fateCommitted)
		if refused[i] {
			fate = fateRefused
		} else {
			took = append(took, tag)
		}
		l.setAck(tags[i:i+1], ack, fate)
	}
	return took
}

// stageAcks records acknowledgements staged in transaction txn: their
// fate is the transaction's (resolved when the ledger is read).
func (l *Ledger) stageAcks(tags []int64, ack uint8, txn int32) {
	l.eachTagged(tags, func(d *deliveryRec) { d.ack, d.fate, d.txn = ack, fateTxn, txn })
}

// eachTagged calls fn, under the ledger's lock, for the delivery of each
// tag (tags that name none are skipped).
func (l *Ledger) eachTagged(tags []int64, fn func(*deliveryRec)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, t := range tags {
		if t > 0 && int(t) <= l.deliveries.len() {
			fn(l.deliveries.at(int(t - 1)))
		}
	}
}

// beginTxn records a transaction a worker opened and returns its index.
func (l *Ledger) beginTxn(worker int, seq, pid int64, epoch int16) int32 {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.txns.append(txnRec{seq: seq, pid: pid, worker: uint16(worker), epoch: epoch})
	i := int32(l.txns.len() - 1)
	l.txnIndex[txnKey{uint16(worker), seq}] = i
	return i
}

// txnOutputs adds n outputs produced in transaction i.
func (l *Ledger) txnOutputs(i int32, n int) {
	l.mu.Lock()
	l.txns.at(int(i)).outputs += int32(n)
	l.mu.Unlock()
}

// commitSent records that the client asked to commit transaction i.
func (l *Ledger) commitSent(i int32) {
	l.mu.Lock()
	l.txns.at(int(i)).commitSent = true
	l.mu.Unlock()
}

// endTxn records what the client was told of transaction i.
func (l *Ledger) endTxn(i int32, outcome uint8) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.txns.at(int(i)).outcome = outcome
}

// inputEnds returns, per input partition, the offset after the last input
// produced there.
func (l *Ledger) inputEnds() map[int32]int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	ends := map[int32]int64{}
	l.inputs.each(func(_ int, in *Input) {
		if in.Partition >= 0 && in.Offset+1 > ends[in.Partition] {
			ends[in.Partition] = in.Offset + 1
		}
	})
	return ends
}

// nameOpen fills in the transactional id (and the worker's last
// transaction's outcome) of open transactions whose producer id a worker
// used.
func (l *Ledger) nameOpen(prefix string, open []verify.OpenTransaction) {
	l.mu.Lock()
	defer l.mu.Unlock()
	byPID := map[int64]*txnRec{}
	l.txns.each(func(_ int, t *txnRec) {
		if t.pid != 0 {
			byPID[t.pid] = t
		}
	})
	for i := range open {
		if t := byPID[open[i].ProducerID]; t != nil && open[i].TransactionalID == "" {
			open[i].TransactionalID = prefix + strconv.Itoa(int(t.worker))
		}
	}
}

// rejectStaged settles the inputs of rejects staged with tags (their
// transaction committed).
func (l *Ledger) rejectStaged(tags []int64) {
	l.eachTagged(tags, func(d *deliveryRec) { l.rejectLocked(d.id) })
}

// Settled counts inputs that need nothing more: a committed output or a
// deliberate reject.
func (l *Ledger) Settled() int64 { return l.distinct.Load() + l.nRej.Load() }

// CommittedOutputs counts the outputs a read_committed reader (or a sink
// commit) made visible, one per position.
func (l *Ledger) CommittedOutputs() int64 { return l.nOut.Load() }

// VisibleBetween counts the committed outputs first made visible in
// [from, to), in ns since the mode's start.
func (l *Ledger) VisibleBetween(from, to int64) int64 {
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
// the verifier's inputs, outputs and deliveries, so a run of millions of
// records never holds them all twice.
func (l *Ledger) each(mode vocab.Mode, prefix string, state *targets.ShareState, input func(verify.Input), output func(verify.Output), delivery func(verify.Delivery)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	states := indexStates(state)
	l.inputs.each(func(i int, in *Input) {
		if in.Partition < 0 {
			return // produce failed: never written
		}
		id := uint64(i + 1)
		v := verify.Input{ID: id, Partition: in.Partition, Offset: in.Offset, IntendedNs: in.IntendedNs, FinalState: vocab.StateUnknown}
		if state != nil {
			if st := states.get(in.Partition, in.Offset); st != nil {
				v.FinalState, v.DeliveryCount = st.State, st.DeliveryCount
				v.Rejected = st.Rejected
			} else if spso, ok := state.SPSO[in.Partition]; ok && in.Offset < spso {
				v.BelowSPSO = true
			}
		}
		input(v)
	})
	tids := map[uint16]string{}
	tid := func(w uint16) string {
		t, ok := tids[w]
		if !ok {
			t = prefix + strconv.Itoa(int(w))
			tids[w] = t
		}
		return t
	}
	l.outputs.each(func(_ int, o *outputRec) {
		v := verify.Output{InputID: o.id, Partition: o.partition, Offset: o.offset, Epoch: o.epoch,
			TxnSeq: o.txnSeq, Committed: o.committed, Uncommitted: o.uncommitted, Aborted: o.aborted || o.marker == markerAbort,
			VisibleNs: o.visible}
		if !mode.Transactional() {
			v.Epoch = -1
			output(v)
			return
		}
		v.TransactionalID = tid(o.worker)
		v.ProducerID = o.pid
		v.MarkerEpoch = o.markerEpoch
		switch o.marker {
		case markerCommit:
			v.Marker = verify.MarkerCommit
		case markerAbort:
			v.Marker = verify.MarkerAbort
		case markerOpen:
			v.Marker = verify.MarkerOpen
		}
		if i, ok := l.txnIndex[txnKey{o.worker, o.txnSeq}]; ok {
			t := l.txns.at(int(i))
			v.TxnSize, v.CommitSent = int(t.outputs), t.commitSent
			v.TxnOutcome = outcomeName(t.outcome)
			if v.ProducerID == 0 {
				v.ProducerID = t.pid
			}
		}
		output(v)
	})
	if delivery == nil {
		return
	}
	l.deliveries.each(func(_ int, d *deliveryRec) {
		v := verify.Delivery{InputID: d.id, Worker: int(d.worker), AtNs: d.at, DeliveryCount: int(d.count),
			Ack: ackName(d.ack), AckOutcome: verify.AckNotSent}
		fate := d.fate
		if fate == fateTxn {
			t := l.txns.at(int(d.txn))
			v.TransactionalID, v.TxnSeq = tid(t.worker), t.seq
			switch {
			case t.outcome == outcomeCommitted:
				fate = fateCommitted
			case t.outcome == outcomeAborted, !t.commitSent:
				fate = fateAborted // a transaction nobody commits can only abort
			default:
				fate = fateUnknown
			}
		}
		switch fate {
		case fateCommitted:
			v.AckOutcome = verify.AckCommitted
		case fateAborted:
			v.AckOutcome = verify.AckAborted
		case fateFailed:
			v.AckOutcome = verify.AckFailed
		case fateUnknown:
			v.AckOutcome = verify.AckUnknown
		case fateRefused:
			v.AckOutcome = verify.AckRefused
		}
		delivery(v)
	})
}

// ackFate is the fate of an acknowledgement whose call returned err: a
// call cut short by the context may or may not have landed.
func ackFate(err error) uint8 {
	switch {
	case err == nil:
		return fateCommitted
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return fateUnknown
	}
	return fateFailed
}

func outcomeName(o uint8) string {
	switch o {
	case outcomeCommitted:
		return verify.OutcomeCommitted
	case outcomeAborted:
		return verify.OutcomeAborted
	}
	return verify.OutcomeUnknown
}

func ackName(a uint8) string {
	switch a {
	case ackAccept:
		return verify.AckAccept
	case ackReject:
		return verify.AckReject
	case ackRelease:
		return verify.AckRelease
	}
	return verify.AckNone
}

// stateIndex finds a record's final state by partition and offset: targets
// report records per partition in offset order, mostly dense, so a slice
// per partition indexed from its first offset replaces a map of millions.
type stateIndex map[int32]*partStates

type partStates struct {
	base int64
	recs []*targets.RecordState // by offset-base; nil where not reported
}

func indexStates(state *targets.ShareState) stateIndex {
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
			grown := make([]*targets.RecordState, int(ps.base-r.Offset)+len(ps.recs))
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

func (idx stateIndex) get(p int32, offset int64) *targets.RecordState {
	ps := idx[p]
	if ps == nil || offset < ps.base || offset-ps.base >= int64(len(ps.recs)) {
		return nil
	}
	return ps.recs[offset-ps.base]
}
