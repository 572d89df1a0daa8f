// This file holds the judging pass that Finish runs: it sorts the
// transactional outputs into transactions to find torn ones, walks every id
// in ascending order to classify it, and builds the verdict. Walking in id
// order (and sorting transactions by name) makes the witnesses independent
// of the order the records were added in.

package verify

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/sharebench/sharebench/loadgen/result"
	"github.com/sharebench/sharebench/vocab"
)

// judge holds one Finish pass. It runs with v.mu held.
type judge struct {
	v      *Verifier
	s      *store
	names  []string
	limit  int
	counts map[vocab.Finding]int64
	wit    map[vocab.Finding][]result.Witness

	torn []tornFinding
	// wanted maps the output index standing for each torn transaction to
	// its input id, filled by the id walk (outputs do not keep their id).
	wanted map[uint32]uint64
	buf    []uint32

	// unjudged counts the inputs left unjudged, by reason, and the first
	// id of each reason.
	unjudged      map[string]int64
	unjudgedFirst map[string]uint64
	// observedCounts: with no count from the target, the deliveries
	// workers observed stand for the delivery count (share groups only:
	// a classic group refetches after every rebalance).
	observedCounts bool
	// withDeliveries: the ledger recorded the deliveries workers observed
	// (v2); without them (v1) a worker's reject is taken at its word and a
	// terminal record with no output is taken to have been accepted.
	withDeliveries bool
}

// tornFinding is a torn transaction waiting for its input id.
type tornFinding struct {
	rep                         uint32   // output whose input the witness names
	refs                        []uint32 // outputs the witness lists
	outputs, committed, pending int64
	aborted, size               int64
	// markers: how many outputs a commit or an abort marker followed;
	// clientCommitted: the client was told the transaction committed.
	commitMarkers, abortMarkers int64
	clientCommitted             bool
}

func newJudge(v *Verifier) *judge {
	return &judge{
		v:      v,
		s:      &v.mu.s,
		names:  v.mu.txnNames,
		limit:  v.opts.DeliveryLimit,
		counts: make(map[vocab.Finding]int64),
		wit:    make(map[vocab.Finding][]result.Witness),
		wanted: make(map[uint32]uint64),

		unjudged:      make(map[string]int64),
		unjudgedFirst: make(map[string]uint64),

		observedCounts: deliveryLimited(v.mode),
		withDeliveries: v.mu.deliveries > 0,
	}
}

// leave records that id could not be judged, for reason.
func (j *judge) leave(reason string, id uint64) {
	if j.unjudged[reason] == 0 {
		j.unjudgedFirst[reason] = id
	}
	j.unjudged[reason]++
}

// leaveWith is leave with a witness (kind unjudged) saying why.
func (j *judge) leaveWith(reason string, id uint64, w result.Witness) {
	j.leave(reason, id)
	if len(j.wit[vocab.KindUnjudged]) < j.v.opts.MaxWitnesses {
		j.add(w)
	}
}

func (j *judge) run() {
	j.findTorn()
	j.s.each(j.visit)
	if j.dlqJudged() {
		j.dlqFinish()
	}
	j.finishTorn()
	j.hanging()
	j.targetDown()
}

// targetDown reports a target that crashed during the run and did not come
// back, with its error as the witness.
func (j *judge) targetDown() {
	if j.v.opts.TargetDown == "" {
		return
	}
	if j.find(vocab.KindTargetDown) {
		j.add(result.Witness{Kind: vocab.KindTargetDown, Detail: "the target crashed during the run and did not come back, so the run could not finish: " + j.v.opts.TargetDown})
	}
}

// hanging reports each transaction left open on an output partition,
// once per (partition, producer id).
func (j *judge) hanging() {
	type key struct {
		p   int32
		pid int64
	}
	seen := map[key]bool{}
	txns := slices.Clone(j.v.mu.openTxns)
	slices.SortFunc(txns, func(a, b OpenTransaction) int {
		return cmp.Or(cmp.Compare(a.Partition, b.Partition), cmp.Compare(a.FirstOffset, b.FirstOffset), cmp.Compare(a.ProducerID, b.ProducerID))
	})
	for _, t := range txns {
		k := key{t.Partition, t.ProducerID}
		if seen[k] {
			continue
		}
		seen[k] = true
		if !j.find(vocab.KindHangingTransaction) {
			continue
		}
		w := result.Witness{Kind: vocab.KindHangingTransaction, Partition: t.Partition, Offset: t.FirstOffset,
			TransactionalID: t.TransactionalID, ProducerID: t.ProducerID, Epoch: t.Epoch}
		w.Detail = fmt.Sprintf("after the drain a transaction of producer id %d epoch %d (transactional id %q) is open on output partition %d from offset %d (found by %s): it holds the last stable offset, so nothing after it becomes visible to read_committed; on Kafka, abort it with kafka-transactions.sh --bootstrap-server BROKER abort --topic TOPIC --partition %d --start-offset %d",
			t.ProducerID, t.Epoch, t.TransactionalID, t.Partition, t.FirstOffset, t.Source, t.Partition, t.FirstOffset)
		j.add(w)
	}
}

// find counts one finding of kind and reports whether its witness is still
// wanted.
func (j *judge) find(kind vocab.Finding) bool {
	j.counts[kind]++
	return len(j.wit[kind]) < j.v.opts.MaxWitnesses
}

func (j *judge) add(w result.Witness) { j.wit[w.Kind] = append(j.wit[w.Kind], w) }

// findTorn groups the transactional outputs by (transactional id, epoch,
// txn seq) and counts the torn transactions. It buckets the outputs by
// transactional id (a counting sort: one index of 4 bytes per output, no
// keys copied) and sorts each bucket by (epoch, seq, arrival): a producer's
// transactions mostly arrive in order, so the sort finds long sorted runs.
// Which outputs a witness names does not depend on the arrival order (see
// txn).
func (j *judge) findTorn() {
	s := j.s
	// Rank transactional ids by name so that the order of transactions
	// does not depend on the order their ids were first seen in.
	byName := make([]uint32, len(j.names))
	for i := range byName {
		byName[i] = uint32(i)
	}
	slices.SortFunc(byName, func(a, b uint32) int { return strings.Compare(j.names[a], j.names[b]) })
	rank := make([]uint32, len(j.names))
	for r, i := range byName {
		rank[i] = uint32(r)
	}
	start := make([]int, len(j.names)+1) // bucket r is idx[start[r]:start[r+1]]
	for i := uint32(1); i < s.nOuts; i++ {
		if t := s.out(i).txn; t != 0 {
			start[rank[t]+1]++
		}
	}
	for r := 1; r < len(start); r++ {
		start[r] += start[r-1]
	}
	n := start[len(start)-1]
	if n == 0 {
		return
	}
	idx := make([]uint32, n)
	next := slices.Clone(start[:len(start)-1])
	for i := uint32(1); i < s.nOuts; i++ {
		if t := s.out(i).txn; t != 0 {
			idx[next[rank[t]]] = i
			next[rank[t]]++
		}
	}
	for r := range len(start) - 1 {
		bucket := idx[start[r]:start[r+1]]
		slices.SortFunc(bucket, func(a, b uint32) int {
			oa, ob := s.out(a), s.out(b)
			switch {
			case oa.epoch != ob.epoch:
				return cmp.Compare(oa.epoch, ob.epoch)
			case oa.txnSeq != ob.txnSeq:
				return cmp.Compare(oa.txnSeq, ob.txnSeq)
			}
			return cmp.Compare(a, b)
		})
		for lo := 0; lo < len(bucket); {
			first := s.out(bucket[lo])
			hi := lo + 1
			for hi < len(bucket) {
				o := s.out(bucket[hi])
				if o.epoch != first.epoch || o.txnSeq != first.txnSeq {
					break
				}
				hi++
			}
			j.txn(bucket[lo:hi])
			lo = hi
		}
	}
}

// txn judges one transaction's outputs.
func (j *judge) txn(g []uint32) {
	var f tornFinding
	f.outputs = int64(len(g))
	for _, i := range g {
		o := j.s.out(i)
		switch {
		case o.valid():
			f.committed++
		case o.pending():
			f.pending++
		default:
			f.aborted++
		}
		if o.flags&outMarkerCommit != 0 {
			f.commitMarkers++
		}
		if o.flags&outMarkerAbort != 0 {
			f.abortMarkers++
		}
		if o.flags&outClientCommitted != 0 {
			f.clientCommitted = true
		}
		f.size = max(f.size, int64(o.txnSize))
	}
	// A transaction is torn when it committed (a reader saw some of it, or
	// the client was told so) and not all of it is visible: some outputs
	// not visible, fewer visible than it wrote, or commit markers on some
	// partitions and abort markers on others. A transaction nobody saw
	// and the client did not commit is not torn (its inputs show up as
	// lost or unresolved).
	committedTxn := f.committed > 0 || f.clientCommitted || f.commitMarkers > 0
	mixed := f.commitMarkers > 0 && f.abortMarkers > 0
	incomplete := f.committed < f.outputs || (f.size > 0 && f.committed != f.size)
	if !committedTxn || (!incomplete && !mixed) {
		return
	}
	// The witnesses wait in j.torn until the id walk, so count them there.
	j.counts[vocab.KindTornTransaction]++
	if len(j.torn) >= j.v.opts.MaxWitnesses {
		return
	}
	// Name the outputs that were not committed first (they show the tear),
	// then committed ones, up to maxRefs, each lowest (partition, offset)
	// first so the choice does not depend on arrival order.
	notValid := make([]uint32, 0, f.outputs-f.committed)
	valid := make([]uint32, 0, f.committed)
	for _, i := range g {
		if j.s.out(i).valid() {
			valid = append(valid, i)
		} else {
			notValid = append(notValid, i)
		}
	}
	j.byPosition(notValid)
	j.byPosition(valid)
	f.refs = append(f.refs, notValid[:min(len(notValid), maxRefs/2)]...)
	f.refs = append(f.refs, valid[:min(len(valid), maxRefs-len(f.refs))]...)
	f.rep = f.refs[0]
	j.wanted[f.rep] = 0
	j.torn = append(j.torn, f)
}

// byPosition sorts output indices by (partition, offset, arrival).
func (j *judge) byPosition(idx []uint32) {
	slices.SortFunc(idx, func(a, b uint32) int {
		oa, ob := j.s.out(a), j.s.out(b)
		switch {
		case oa.partition != ob.partition:
			return cmp.Compare(oa.partition, ob.partition)
		case oa.offset != ob.offset:
			return cmp.Compare(oa.offset, ob.offset)
		}
		return cmp.Compare(a, b)
	})
}

// finishTorn turns the torn transactions into witnesses, now that the id
// walk has found their input ids.
func (j *judge) finishTorn() {
	for _, f := range j.torn {
		id := j.wanted[f.rep]
		w := j.inputWitness(vocab.KindTornTransaction, id, j.s.lookup(id))
		w.Outputs = j.refs(f.refs, nil)
		o := j.s.out(f.rep)
		w.Detail = fmt.Sprintf("transaction %q epoch %d seq %d: %d of %d outputs committed, %d seen only uncommitted, %d aborted",
			j.names[o.txn], o.epoch, o.txnSeq, f.committed, f.outputs, f.pending, f.aborted)
		if f.size > 0 {
			w.Detail += fmt.Sprintf("; it wrote %d", f.size)
		}
		if f.clientCommitted {
			w.Detail += "; the client was told it committed"
		}
		if f.commitMarkers > 0 && f.abortMarkers > 0 {
			w.Detail += fmt.Sprintf("; commit markers followed %d outputs and abort markers %d", f.commitMarkers, f.abortMarkers)
		}
		j.add(w)
	}
}

// visit classifies one id.
func (j *judge) visit(id uint64, r *rec) {
	s := j.s
	j.buf = j.buf[:0]
	for i := r.head; i != 0; i = s.out(i).next {
		j.buf = append(j.buf, i)
		if len(j.wanted) > 0 {
			if _, ok := j.wanted[i]; ok {
				j.wanted[i] = id
			}
		}
	}
	var committed, pending, aborted int64
	for _, i := range j.buf {
		o := s.out(i)
		switch {
		case o.valid():
			committed++
			if r.flags&flagInput == 0 && j.find(vocab.KindPhantom) {
				w := j.inputWitness(vocab.KindPhantom, id, nil)
				w.Outputs = j.refs([]uint32{i}, nil)
				w.Detail = "committed output for an id that is not in the input ledger"
				j.add(w)
			}
		case o.pending():
			pending++
		default:
			aborted++
			if o.committed() && j.find(vocab.KindAbortedRead) {
				w := j.inputWitness(vocab.KindAbortedRead, id, r)
				w.Outputs = j.refs([]uint32{i}, nil)
				w.Detail = "output of an aborted transaction visible to read_committed"
				if o.txn != 0 {
					w.Detail += fmt.Sprintf(" (transaction %q epoch %d seq %d)", j.names[o.txn], o.epoch, o.txnSeq)
				}
				if o.flags&^(outCommitted|outAborted|outUncommitted) != 0 {
					w.Detail += ": " + abortedWhy(o)
				}
				j.add(w)
			}
		}
	}
	if r.flags&flagInput == 0 {
		if r.observed > 0 && id > j.v.mu.maxInput {
			// No producer assigned the id: the target delivered a
			// record that was never an input.
			if j.find(vocab.KindPhantom) {
				w := j.inputWitness(vocab.KindPhantom, id, r)
				w.Detail = fmt.Sprintf("%d deliveries of id %d, which no producer assigned (the highest input id is %d): the target delivered a record that was never produced to the input", r.observed, id, j.v.mu.maxInput)
				j.add(w)
			}
			return
		}
		if r.observed > 0 {
			w := j.inputWitness(vocab.KindUnjudged, id, r)
			w.Detail = fmt.Sprintf("%d deliveries of an id that is not in the input ledger", r.observed)
			j.leaveWith(UnjudgedNotAnInput, id, w)
		}
		return
	}
	// An accept or reject answered as taking effect and followed by a
	// later delivery did not take effect.
	if r.superseded(r.acceptAt) {
		r.flags &^= flagAcceptCommitted
	}
	if r.superseded(r.rejectAt) {
		r.flags &^= flagRejectCommitted
	}
	j.crossCheck(id, r)
	if txn, ok := j.v.opts.SinkPending[id]; ok && committed == 0 {
		if j.find(vocab.KindUnresolved) {
			w := j.inputWitness(vocab.KindUnresolved, id, r)
			w.Detail = fmt.Sprintf("its output is pre-committed in sink transaction %s, which was neither committed nor rolled back after the drain", txn)
			j.add(w)
		}
		return
	}
	// A reject counts only when it took effect: the target archived the
	// record by a reject, or the worker's reject was acknowledged or its
	// transaction committed. A staged reject whose transaction aborted is
	// nothing.
	rejected := r.flags&(flagRejected|flagRejectCommitted) != 0
	if rejected && j.find(vocab.KindRejected) {
		w := j.inputWitness(vocab.KindRejected, id, r)
		w.Detail = "rejected by the worker"
		j.add(w)
	}
	if committed > 1 && j.find(vocab.KindDuplicate) {
		w := j.inputWitness(vocab.KindDuplicate, id, r)
		w.Outputs = j.refs(j.buf, (*out).valid)
		w.Detail = fmt.Sprintf("%d committed outputs for one input", committed)
		j.add(w)
	}
	deliveries := int(r.deliveries)
	if j.observedCounts {
		deliveries = int(r.deliveryCount())
	}
	if j.limit > 0 && deliveries > j.limit && j.find(vocab.KindOverDelivered) {
		w := j.inputWitness(vocab.KindOverDelivered, id, r)
		w.Outputs = j.refs(j.buf, nil)
		w.Detail = fmt.Sprintf("delivered %d times, limit %d", deliveries, j.limit)
		if r.observed > 0 {
			w.Detail += fmt.Sprintf(" (%d deliveries observed by workers)", r.observed)
		}
		j.add(w)
	}
	accepted := r.flags&flagAcceptCommitted != 0
	unknownAck := r.flags&flagAckUnknown != 0
	if !j.withDeliveries {
		accepted = true
	}
	archived, known := j.dlqFate(r, rejected, committed, deliveries, accepted, unknownAck)
	j.dlqVisit(id, r, archived, known)
	switch r.state {
	case codeAcknowledged:
		if committed > 0 || !j.withDeliveries && rejected {
			// With deliveries, a reject that committed on a record the
			// target acknowledged is the broker's error, and lost.
			return
		}
		if !j.find(vocab.KindLost) {
			return
		}
		w := j.inputWitness(vocab.KindLost, id, r)
		w.Outputs = j.refs(j.buf, nil)
		w.Detail = "acknowledged but no committed output"
		if r.flags&flagRejectCommitted != 0 {
			w.Detail += "; the worker's reject committed, yet the record was acknowledged"
		}
		j.lostDetail(&w, pending, aborted)
		j.add(w)
	case codeUnknown:
		// A record the broker acknowledged a worker's accept or reject for
		// is terminal whatever the start offset says (Kafka's reported
		// start offset trails its acknowledgements).
		ackedTerminal := j.withDeliveries && r.flags&(flagAcceptCommitted|flagRejectCommitted) != 0
		if r.flags&flagBelowSPSO == 0 && !ackedTerminal {
			// Nothing says whether it is terminal: it cannot be judged
			// lost or unresolved.
			w := j.inputWitness(vocab.KindUnjudged, id, r)
			w.Outputs = j.refs(j.buf, nil)
			w.Detail = fmt.Sprintf("no final state and not below the share-partition start offset: terminal or not, nothing says (%d committed outputs)", committed)
			j.leaveWith(UnjudgedNoState, id, w)
			return
		}
		// Terminal (below SPSO, or acknowledged), exact state not reported.
		if committed > 0 || rejected {
			return
		}
		switch {
		case accepted:
			if j.find(vocab.KindLost) {
				w := j.inputWitness(vocab.KindLost, id, r)
				w.Outputs = j.refs(j.buf, nil)
				w.Detail = "below SPSO (terminal, state unknown) but no committed output"
				if j.withDeliveries {
					w.Detail = "below SPSO (terminal, state unknown), a worker's accept took effect, but no committed output"
				}
				j.lostDetail(&w, pending, aborted)
				j.add(w)
			}
		case j.limit > 0 && deliveries >= j.limit && !unknownAck:
			if j.find(vocab.KindArchivedAtLimit) {
				w := j.inputWitness(vocab.KindArchivedAtLimit, id, r)
				w.Outputs = j.refs(j.buf, nil)
				w.Detail = fmt.Sprintf("below SPSO (terminal) after %d deliveries, limit %d, and no acknowledgement took effect: archived at the limit (the target does not report the state)", deliveries, j.limit)
				j.add(w)
			}
		case unknownAck:
			// The worker's accept may have landed (lost) or not (the broker
			// archived it: at the limit, or not).
			w := j.inputWitness(vocab.KindUnjudged, id, r)
			w.Outputs = j.refs(j.buf, nil)
			w.Candidates = []vocab.Finding{vocab.KindLost, vocab.KindArchivedAtLimit}
			if j.limit > 0 && deliveries < j.limit {
				w.Candidates = []vocab.Finding{vocab.KindLost, vocab.KindArchivedUnprocessed}
			}
			w.Detail = fmt.Sprintf("below SPSO (terminal), no committed output, and an acknowledgement was sent whose fate is unknown: %s or %s, which cannot be told apart without the record's state", w.Candidates[0], w.Candidates[1])
			j.leaveWith(UnjudgedLostOrLimit, id, w)
		case j.limit > 0:
			if j.find(vocab.KindArchivedUnprocessed) {
				w := j.inputWitness(vocab.KindArchivedUnprocessed, id, r)
				w.Outputs = j.refs(j.buf, nil)
				w.Detail = fmt.Sprintf("below SPSO (terminal) after %d of %d deliveries with no accept or reject taking effect: archived without being processed (the target does not report the state)", deliveries, j.limit)
				j.add(w)
			}
		default:
			if j.find(vocab.KindArchivedAtLimit) {
				w := j.inputWitness(vocab.KindArchivedAtLimit, id, r)
				w.Outputs = j.refs(j.buf, nil)
				w.Detail = fmt.Sprintf("below SPSO (terminal) after %d deliveries with no acknowledgement taking effect; delivery limit unknown", deliveries)
				j.add(w)
			}
		}
	case codeArchived:
		if rejected {
			return
		}
		if j.limit > 0 && deliveries < j.limit {
			if j.find(vocab.KindArchivedUnprocessed) {
				w := j.inputWitness(vocab.KindArchivedUnprocessed, id, r)
				w.Outputs = j.refs(j.buf, nil)
				w.Detail = fmt.Sprintf("archived after %d of %d deliveries without a reject", deliveries, j.limit)
				j.add(w)
			}
			return
		}
		if j.find(vocab.KindArchivedAtLimit) {
			w := j.inputWitness(vocab.KindArchivedAtLimit, id, r)
			w.Outputs = j.refs(j.buf, nil)
			if j.limit > 0 {
				w.Detail = fmt.Sprintf("archived after %d deliveries, limit %d", deliveries, j.limit)
			} else {
				w.Detail = fmt.Sprintf("archived after %d deliveries without a reject; delivery limit unknown", deliveries)
			}
			j.add(w)
		}
	default: // AVAILABLE, ACQUIRED, TX_PENDING, or a state the verifier does not know
		if j.v.opts.DrainTimedOut && r.state != codeInvalid {
			// The run stopped waiting before the record could finish: not
			// an anomaly of the system, but nothing is proved about it.
			w := j.inputWitness(vocab.KindUnjudged, id, r)
			w.Outputs = j.refs(j.buf, nil)
			w.Detail = fmt.Sprintf("state %s when the drain timed out: it may yet finish", stateName(r.state))
			j.leaveWith(UnjudgedNotFinished, id, w)
			return
		}
		if j.find(vocab.KindUnresolved) {
			w := j.inputWitness(vocab.KindUnresolved, id, r)
			w.Outputs = j.refs(j.buf, nil)
			if r.state == codeInvalid {
				w.Detail = "final state not recognized (see notes)"
			} else {
				w.Detail = fmt.Sprintf("state %s after the drain", stateName(r.state))
			}
			j.add(w)
		}
	}
}

// crossCheck compares the acknowledgement outcomes the workers recorded
// with the final share state, where the target reports one: an
// ack-contradiction is an answer the state proves false. Implicit mode is
// not checked: its accepts ride on the next poll, which answers nothing
// per record, so the ledger's "committed" there is the load generator's
// assumption, not the target's word. A target that reports final states
// reports whether an archive was a reject's (Input.Rejected) with them. A
// call that failed as a whole (AckFailed: a crash, a lost connection) may
// have landed, so only per-record refusals (AckRefused) are held against a
// terminal state.
func (j *judge) crossCheck(id uint64, r *rec) {
	if !j.withDeliveries || j.v.mode == vocab.Implicit || r.state == codeUnknown || r.state == codeInvalid {
		return
	}
	acceptTook := r.flags&flagAcceptCommitted != 0
	rejectTook := r.flags&flagRejectCommitted != 0
	rejectedByState := r.flags&flagRejected != 0
	var why string
	switch {
	case acceptTook && r.state != codeAcknowledged:
		why = fmt.Sprintf("an accept was answered as taking effect, and no later delivery followed, but the record ended %s", stateName(r.state))
	case rejectTook && r.state != codeArchived:
		why = fmt.Sprintf("a reject was answered as taking effect, and no later delivery followed, but the record ended %s", stateName(r.state))
	case rejectTook && !rejectedByState:
		why = "a reject was answered as taking effect, and no later delivery followed, but the target reports the record archived by no reject"
	case r.state == codeAcknowledged && !acceptTook && r.flags&flagAckUnknown == 0 && r.flags&flagAcceptRefused != 0:
		why = "the record ended ACKNOWLEDGED, but the target refused every accept sent for it"
	case rejectedByState && !rejectTook && r.flags&flagRejectUnknown == 0 && r.flags&flagRejectRefused != 0:
		why = "the target reports the record archived by a reject, but it refused every reject sent for it"
	default:
		return
	}
	if j.find(vocab.KindAckContradiction) {
		w := j.inputWitness(vocab.KindAckContradiction, id, r)
		w.Outputs = j.refs(j.buf, nil)
		w.Detail = why
		j.add(w)
	}
}

// lostDetail says what else was seen of a lost record's outputs.
func (j *judge) lostDetail(w *result.Witness, pending, aborted int64) {
	if pending > 0 {
		w.Detail += fmt.Sprintf("; %d seen only uncommitted", pending)
	}
	if aborted > 0 {
		w.Detail += fmt.Sprintf("; %d aborted", aborted)
	}
}

// inputWitness starts a witness for id; r may be nil or have no input.
func (j *judge) inputWitness(kind vocab.Finding, id uint64, r *rec) result.Witness {
	w := result.Witness{Kind: kind, InputID: id}
	if r != nil && r.flags&flagInput != 0 {
		w.Partition = r.partition
		w.Offset = r.offset
		w.State = stateName(r.state)
		w.DeliveryCount = int(r.deliveries)
		if j.observedCounts {
			w.DeliveryCount = int(r.deliveryCount())
		}
	}
	return w
}

// refs describes the outputs in idx that keep accepts (all when keep is
// nil), ordered by partition and offset, at most maxRefs of them.
func (j *judge) refs(idx []uint32, keep func(*out) bool) []result.OutputRef {
	sel := make([]uint32, 0, min(len(idx), maxRefs))
	for _, i := range idx {
		if keep == nil || keep(j.s.out(i)) {
			sel = append(sel, i)
		}
	}
	if len(sel) == 0 {
		return nil
	}
	j.byPosition(sel)
	refs := make([]result.OutputRef, 0, min(len(sel), maxRefs))
	for _, i := range sel[:min(len(sel), maxRefs)] {
		o := j.s.out(i)
		refs = append(refs, result.OutputRef{
			Partition:       o.partition,
			Offset:          o.offset,
			TransactionalID: j.names[o.txn],
			ProducerID:      o.pid,
			Epoch:           o.epoch,
			TxnSeq:          o.txnSeq,
			Committed:       o.committed(),
			Marker:          markerName(o.flags),
			MarkerEpoch:     o.markerEpoch,
			TxnOutcome:      outcomeName(o.flags),
			VisibleNs:       o.visibleNs,
		})
	}
	return refs
}

func markerName(flags uint16) string {
	switch {
	case flags&outMarkerCommit != 0:
		return MarkerCommit
	case flags&outMarkerAbort != 0:
		return MarkerAbort
	case flags&outMarkerOpen != 0:
		return MarkerOpen
	}
	return ""
}

func outcomeName(flags uint16) string {
	switch {
	case flags&outClientCommitted != 0:
		return OutcomeCommitted
	case flags&outClientAborted != 0:
		return OutcomeAborted
	case flags&outClientUnknown != 0:
		return OutcomeUnknown
	}
	return ""
}

// abortedWhy says how an output is known to be aborted, naming the stale
// epoch pattern: records of an old epoch that a later epoch's commit
// marker made visible although their own transaction never committed.
func abortedWhy(o *out) string {
	var why []string
	if o.flags&outMarkerAbort != 0 {
		why = append(why, "an abort marker followed it")
	}
	if o.flags&outAborted != 0 {
		why = append(why, "the target flags it aborted")
	}
	if o.flags&outClientAborted != 0 {
		why = append(why, "the client was told its transaction aborted")
	}
	if o.flags&outClientUnknown != 0 && o.flags&outCommitSent == 0 {
		why = append(why, "the client never asked to commit its transaction")
	}
	s := strings.Join(why, ", ")
	if o.flags&outMarkerCommit != 0 && o.markerEpoch > o.epoch+1 {
		s += fmt.Sprintf("; stale epoch: a record written at epoch %d was committed by a commit marker of epoch %d, a later transaction of the same producer", o.epoch, o.markerEpoch)
	}
	return s
}

// verdict builds the Verification from the counts and witnesses.
func (j *judge) verdict() *result.Verification {
	v := j.v
	res := &result.Verification{
		Allowed: append([]vocab.Finding{}, v.allowed...),
		Counts:  j.counts,
		Inputs:  v.mu.inputs,
		Outputs: v.mu.outputs,
	}
	if len(j.wit) > 0 {
		res.Witnesses = j.wit
	}
	for kind := range j.counts {
		if vocab.IsAnomaly(kind) && !slices.Contains(v.allowed, kind) {
			res.Forbidden = append(res.Forbidden, kind)
		}
	}
	slices.Sort(res.Forbidden)
	res.Notes = append(res.Notes, v.notes...)
	if v.mu.dupInputs > 0 {
		res.Notes = append(res.Notes, fmt.Sprintf("verify: %d input records repeat an id already in the input ledger (first: id %d); the first record of each id was kept", v.mu.dupInputs, v.mu.dupFirst))
	}
	if v.mu.dupInputs > 0 {
		j.unjudged[UnjudgedDuplicateID] += v.mu.dupInputs
	}
	if v.mu.invalid > 0 {
		res.Notes = append(res.Notes, fmt.Sprintf("verify: %d input records have a field the verifier cannot use (first: %s)", v.mu.invalid, v.mu.invalidMsg))
	}
	if v.mu.dropped > 0 {
		j.unjudged[UnjudgedOverflow] += v.mu.dropped
		res.Notes = append(res.Notes, fmt.Sprintf("verify: %d outputs beyond the verifier's limit of %d were counted but not checked; the verdict is INCONCLUSIVE because it is incomplete", v.mu.dropped, j.s.limit()-1))
	}
	reasons := make([]string, 0, len(j.unjudged))
	for reason := range j.unjudged {
		reasons = append(reasons, reason)
	}
	slices.Sort(reasons)
	for _, reason := range reasons {
		n := j.unjudged[reason]
		res.Unjudged += n
		if res.UnjudgedReasons == nil {
			res.UnjudgedReasons = map[string]int64{}
		}
		res.UnjudgedReasons[reason] = n
		msg := fmt.Sprintf("verify: %d left unjudged: %s", n, reason)
		if id, ok := j.unjudgedFirst[reason]; ok {
			msg += fmt.Sprintf(" (first: id %d)", id)
		}
		res.Notes = append(res.Notes, msg)
	}
	if v.opts.DrainTimedOut {
		msg := "verify: the drain timed out: the run did not finish, so the evidence is incomplete"
		if v.opts.DrainNote != "" {
			msg += " (" + v.opts.DrainNote + ")"
		}
		res.Notes = append(res.Notes, msg)
	}
	for _, r := range v.opts.Incomplete {
		res.Notes = append(res.Notes, "verify: the evidence is incomplete: "+r)
	}
	res.Deliveries = v.mu.deliveries
	switch {
	case len(res.Forbidden) > 0:
		res.Verdict = VerdictFail
	case res.Unjudged > 0 || v.opts.DrainTimedOut || len(v.opts.Incomplete) > 0:
		// Incomplete evidence proves nothing either way.
		res.Verdict = VerdictInconclusive
	default:
		res.Verdict = VerdictPass
	}
	res.Pass = res.Verdict == VerdictPass
	return res
}
