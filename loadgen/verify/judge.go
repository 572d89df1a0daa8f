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
)

// judge holds one Finish pass. It runs with v.mu held.
type judge struct {
	v      *Verifier
	s      *store
	names  []string
	limit  int
	counts map[string]int64
	wit    map[string][]result.Witness

	torn []tornFinding
	// wanted maps the output index standing for each torn transaction to
	// its input id, filled by the id walk (outputs do not keep their id).
	wanted map[uint32]uint64
	buf    []uint32

	// unjudged counts inputs with no final state that are not below SPSO.
	unjudged      int64
	unjudgedFirst uint64
}

// tornFinding is a torn transaction waiting for its input id.
type tornFinding struct {
	rep                         uint32   // output whose input the witness names
	refs                        []uint32 // outputs the witness lists
	outputs, committed, pending int64
	aborted, size               int64
}

func newJudge(v *Verifier) *judge {
	return &judge{
		v:      v,
		s:      &v.mu.s,
		names:  v.mu.txnNames,
		limit:  v.opts.DeliveryLimit,
		counts: make(map[string]int64),
		wit:    make(map[string][]result.Witness),
		wanted: make(map[uint32]uint64),
	}
}

func (j *judge) run() {
	j.findTorn()
	j.s.each(j.visit)
	j.finishTorn()
}

// find counts one finding of kind and reports whether its witness is still
// wanted.
func (j *judge) find(kind string) bool {
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
		f.size = max(f.size, int64(o.txnSize))
	}
	if f.committed == 0 || (f.pending == 0 && (f.size == 0 || f.committed == f.size)) {
		return
	}
	// The witnesses wait in j.torn until the id walk, so count them there.
	j.counts[KindTornTransaction]++
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
		w := j.inputWitness(KindTornTransaction, id, j.s.lookup(id))
		w.Outputs = j.refs(f.refs, nil)
		o := j.s.out(f.rep)
		w.Detail = fmt.Sprintf("transaction %q epoch %d seq %d: %d of %d outputs committed, %d seen only uncommitted, %d aborted",
			j.names[o.txn], o.epoch, o.txnSeq, f.committed, f.outputs, f.pending, f.aborted)
		if f.size > 0 {
			w.Detail += fmt.Sprintf("; it wrote %d", f.size)
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
			if r.flags&flagInput == 0 && j.find(KindPhantom) {
				w := j.inputWitness(KindPhantom, id, nil)
				w.Outputs = j.refs([]uint32{i}, nil)
				w.Detail = "committed output for an id that is not in the input ledger"
				j.add(w)
			}
		case o.pending():
			pending++
		default:
			aborted++
			if o.committed() && j.find(KindAbortedRead) {
				w := j.inputWitness(KindAbortedRead, id, r)
				w.Outputs = j.refs([]uint32{i}, nil)
				w.Detail = "output of an aborted transaction visible to read_committed"
				if o.txn != 0 {
					w.Detail += fmt.Sprintf(" (transaction %q epoch %d seq %d)", j.names[o.txn], o.epoch, o.txnSeq)
				}
				j.add(w)
			}
		}
	}
	if r.flags&flagInput == 0 {
		return
	}
	rejected := r.flags&flagRejected != 0
	if rejected && j.find(KindRejected) {
		w := j.inputWitness(KindRejected, id, r)
		w.Detail = "rejected by the worker"
		j.add(w)
	}
	if committed > 1 && j.find(KindDuplicate) {
		w := j.inputWitness(KindDuplicate, id, r)
		w.Outputs = j.refs(j.buf, (*out).valid)
		w.Detail = fmt.Sprintf("%d committed outputs for one input", committed)
		j.add(w)
	}
	if j.limit > 0 && int(r.deliveries) > j.limit && j.find(KindOverDelivered) {
		w := j.inputWitness(KindOverDelivered, id, r)
		w.Outputs = j.refs(j.buf, nil)
		w.Detail = fmt.Sprintf("delivered %d times, limit %d", r.deliveries, j.limit)
		j.add(w)
	}
	switch r.state {
	case codeAcknowledged, codeUnknown:
		if r.state == codeUnknown && r.flags&flagBelowSPSO == 0 {
			// Nothing says whether it is terminal: judge neither lost nor
			// unresolved, and say so in a note.
			if j.unjudged == 0 {
				j.unjudgedFirst = id
			}
			j.unjudged++
			return
		}
		if rejected || committed > 0 || !j.find(KindLost) {
			return
		}
		w := j.inputWitness(KindLost, id, r)
		w.Outputs = j.refs(j.buf, nil)
		if r.state == codeAcknowledged {
			w.Detail = "acknowledged but no committed output"
		} else {
			w.Detail = "below SPSO (terminal, state unknown) but no committed output"
		}
		if pending > 0 {
			w.Detail += fmt.Sprintf("; %d seen only uncommitted", pending)
		}
		if aborted > 0 {
			w.Detail += fmt.Sprintf("; %d aborted", aborted)
		}
		j.add(w)
	case codeArchived:
		if rejected {
			return
		}
		if j.limit > 0 && int(r.deliveries) < j.limit {
			if j.find(KindArchivedUnprocessed) {
				w := j.inputWitness(KindArchivedUnprocessed, id, r)
				w.Outputs = j.refs(j.buf, nil)
				w.Detail = fmt.Sprintf("archived after %d of %d deliveries without a reject", r.deliveries, j.limit)
				j.add(w)
			}
			return
		}
		if j.find(KindArchivedAtLimit) {
			w := j.inputWitness(KindArchivedAtLimit, id, r)
			w.Outputs = j.refs(j.buf, nil)
			if j.limit > 0 {
				w.Detail = fmt.Sprintf("archived after %d deliveries, limit %d", r.deliveries, j.limit)
			} else {
				w.Detail = fmt.Sprintf("archived after %d deliveries without a reject; delivery limit unknown", r.deliveries)
			}
			j.add(w)
		}
	default: // AVAILABLE, ACQUIRED, TX_PENDING, or a state the verifier does not know
		if j.find(KindUnresolved) {
			w := j.inputWitness(KindUnresolved, id, r)
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

// inputWitness starts a witness for id; r may be nil or have no input.
func (j *judge) inputWitness(kind string, id uint64, r *rec) result.Witness {
	w := result.Witness{Kind: kind, InputID: id}
	if r != nil && r.flags&flagInput != 0 {
		w.Partition = r.partition
		w.Offset = r.offset
		w.State = stateName(r.state)
		w.DeliveryCount = int(r.deliveries)
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
			Epoch:           o.epoch,
			Committed:       o.committed(),
			VisibleNs:       o.visibleNs,
		})
	}
	return refs
}

// verdict builds the Verification from the counts and witnesses.
func (j *judge) verdict() *result.Verification {
	v := j.v
	res := &result.Verification{
		Allowed: append([]string{}, v.allowed...),
		Counts:  j.counts,
		Inputs:  v.mu.inputs,
		Outputs: v.mu.outputs,
	}
	if len(j.wit) > 0 {
		res.Witnesses = j.wit
	}
	for kind := range j.counts {
		if IsAnomaly(kind) && !slices.Contains(v.allowed, kind) {
			res.Forbidden = append(res.Forbidden, kind)
		}
	}
	slices.Sort(res.Forbidden)
	res.Notes = append(res.Notes, v.notes...)
	if v.mu.dupInputs > 0 {
		res.Notes = append(res.Notes, fmt.Sprintf("verify: %d input records repeat an id already in the input ledger (first: id %d); the first record of each id was kept", v.mu.dupInputs, v.mu.dupFirst))
	}
	if j.unjudged > 0 {
		res.Notes = append(res.Notes, fmt.Sprintf("verify: %d inputs have no final state and are not below SPSO (first: id %d); lost and unresolved were not judged for them", j.unjudged, j.unjudgedFirst))
	}
	if v.mu.invalid > 0 {
		res.Notes = append(res.Notes, fmt.Sprintf("verify: %d input records have a field the verifier cannot use (first: %s)", v.mu.invalid, v.mu.invalidMsg))
	}
	if v.mu.dropped > 0 {
		res.Notes = append(res.Notes, fmt.Sprintf("verify: %d outputs beyond the verifier's limit of %d were counted but not checked; the verdict is FAIL because it is incomplete", v.mu.dropped, j.s.limit()-1))
	}
	res.Pass = len(res.Forbidden) == 0 && v.mu.dropped == 0
	return res
}
