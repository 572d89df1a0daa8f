// This file holds the Verifier: its options, the streaming AddInput and
// AddOutput calls, and Finish, which judges what was added.

package verify

import (
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/sharebench/sharebench/loadgen/result"
	"github.com/sharebench/sharebench/vocab"
)

// DefaultMaxWitnesses is how many witnesses a verdict keeps per kind when
// Options.MaxWitnesses is 0.
const DefaultMaxWitnesses = 10

// maxRefs is how many output refs one witness lists; its Detail gives the
// full count.
const maxRefs = 8

// Options tunes a Verifier. The zero value is valid.
type Options struct {
	// DeliveryLimit is the share group's delivery count limit
	// (share.delivery.count.limit, 5 in Kafka by default). Default 0:
	// unknown, so over-delivered is not checked and every archived record
	// that was not rejected counts as archived-at-limit. A negative limit
	// is treated as 0.
	DeliveryLimit int
	// MaxWitnesses is how many witnesses the verdict keeps per kind.
	// Default (0) DefaultMaxWitnesses; negative keeps none.
	MaxWitnesses int
	// DrainTimedOut says the run stopped waiting before every input was
	// settled (DrainNote says what was left): the verdict is then never
	// PASS. Default false.
	DrainTimedOut bool
	DrainNote     string
	// DLQ says the share group had a dead-letter queue, read back into
	// AddDLQ: every input archived by a reject or at the delivery limit
	// must have one dead-letter record, and no other input any
	// (dlq-missing, dlq-duplicate). DLQAtLeastOnce allows more than one
	// (the target promises at least once). Default false: dead letters are
	// judged only when AddDLQ is called.
	DLQ            bool
	DLQAtLeastOnce bool
	// Incomplete lists reads of the evidence that stopped before they had
	// seen all of it (each says which and how far it got): the verdict is
	// then never PASS. Default none.
	Incomplete []string
	// TargetDown is the error of a target that crashed during the run and
	// did not come back: the verdict is FAIL (target-down), whatever the
	// ledgers show. Default "": it ran to the end.
	TargetDown string
	// Unobserved lists evidence the run could not record (for example
	// "deliveries" for a v1 ledger); each becomes a note. Default none.
	Unobserved []string
	// SinkPending maps the input ids whose output is pre-committed in an
	// external two-phase sink, and neither committed nor rolled back after
	// the drain, to that sink transaction (the checkpoint model). Such an
	// input with no committed output is unresolved, not lost: its output
	// can still be committed. Default none.
	SinkPending map[uint64]string
}

// Verifier checks one mode's ledgers. Feed it with AddInput and AddOutput
// in any order and interleaving, then call Finish. It keeps a compact
// record per input id and per output, never the Input and Output values
// (see "Memory" in the package documentation). It is safe for concurrent
// use.
type Verifier struct {
	mode    vocab.Mode
	allowed []vocab.Finding
	modeErr error
	opts    Options
	notes   []string // from New

	mu struct {
		sync.Mutex
		s        store
		txnIndex map[string]uint32
		txnNames []string // index -> transactional id; [0] is ""

		inputs, outputs int64
		// maxInput is the highest input id added: the producers number
		// their inputs from 1, so an id above it was never assigned.
		maxInput uint64

		dupInputs  int64 // AddInput calls for an id already added
		dupFirst   uint64
		deliveries int64
		openTxns   []OpenTransaction
		invalid    int64 // inputs with a field the verifier cannot use
		invalidMsg string
		dropped    int64 // outputs beyond maxOuts
		late       int64 // Add calls after Finish

		dlq         map[dlqKey]*dlqEntry // dead-letter records by source position
		dlqRecords  int64
		dlqBad      int64 // dead-letter records without provenance
		dlqBadFirst DLQRecord

		done *result.Verification
	}
}

// New returns a Verifier for mode. An unknown mode still gets a Verifier:
// it allows no anomaly and its verdict carries a note (Allowed reports the
// error, VerifyDir fails fast).
func New(mode vocab.Mode, opts Options) *Verifier {
	v := &Verifier{mode: mode, opts: opts}
	v.allowed, v.modeErr = Allowed(mode)
	if v.modeErr != nil {
		v.allowed = []vocab.Finding{}
		v.notes = append(v.notes, v.modeErr.Error()+"; judged as allowing no anomaly")
	}
	if v.opts.DLQAtLeastOnce && !slices.Contains(v.allowed, vocab.KindDLQDuplicate) {
		v.allowed = append(v.allowed, vocab.KindDLQDuplicate)
		slices.Sort(v.allowed)
	}
	if v.opts.DeliveryLimit < 0 {
		v.notes = append(v.notes, fmt.Sprintf("verify: delivery limit %d is negative; treated as unknown", v.opts.DeliveryLimit))
		v.opts.DeliveryLimit = 0
	}
	if v.opts.DeliveryLimit == 0 {
		v.notes = append(v.notes, "verify: no delivery limit given: over-delivered is not checked and every archived, unrejected record counts as archived-at-limit")
	}
	for _, u := range v.opts.Unobserved {
		v.notes = append(v.notes, "verify: not recorded by this run: "+u)
	}
	switch {
	case v.opts.MaxWitnesses == 0:
		v.opts.MaxWitnesses = DefaultMaxWitnesses
	case v.opts.MaxWitnesses < 0:
		v.opts.MaxWitnesses = 0
	}
	v.mu.txnNames = []string{""}
	return v
}

// AddInput adds one input record. An id added twice keeps its first record;
// the verdict notes the duplicate ids and is not PASS.
func (v *Verifier) AddInput(in Input) { v.addInput(in) }

// addInput is AddInput, reporting false for an id already added.
func (v *Verifier) addInput(in Input) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.mu.done != nil {
		v.mu.late++
		return true
	}
	v.mu.inputs++
	r := v.mu.s.get(in.ID)
	if r.flags&flagInput != 0 {
		if v.mu.dupInputs == 0 {
			v.mu.dupFirst = in.ID
		}
		v.mu.dupInputs++
		return false
	}
	r.flags |= flagInput
	v.mu.maxInput = max(v.mu.maxInput, in.ID)
	if in.Rejected {
		r.flags |= flagRejected
	}
	if in.BelowSPSO {
		r.flags |= flagBelowSPSO
	}
	r.partition = in.Partition
	r.offset = in.Offset
	r.state = stateCode(in.FinalState)
	switch {
	case r.state == codeInvalid:
		v.invalidLocked(fmt.Sprintf("id %d has final state %q", in.ID, in.FinalState))
	case in.DeliveryCount < 0:
		v.invalidLocked(fmt.Sprintf("id %d has delivery count %d", in.ID, in.DeliveryCount))
	}
	r.deliveries = max(r.deliveries, uint16(min(max(in.DeliveryCount, 0), math.MaxUint16)))
	return true
}

// hasInput reports whether AddInput has added id.
// assignedID reports whether id is at or below the highest input id: an
// id the producers assigned.
func (v *Verifier) assignedID(id uint64) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	return id <= v.mu.maxInput
}

func (v *Verifier) hasInput(id uint64) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	r := v.mu.s.lookup(id)
	return r != nil && r.flags&flagInput != 0
}

// AddDelivery adds one delivery a worker observed, with the fate of the
// acknowledgement it sent. Deliveries may come before or after their input.
func (v *Verifier) AddDelivery(d Delivery) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.mu.done != nil {
		v.mu.late++
		return
	}
	v.mu.deliveries++
	r := v.mu.s.get(d.InputID)
	if r.observed < math.MaxUint16 {
		r.observed++
	}
	r.deliveries = max(r.deliveries, uint16(min(max(d.DeliveryCount, 0), math.MaxUint16)))
	// An accept or reject that took effect ends the record, so at most one
	// of them counts: a client told "committed" of another (a no-op ack
	// of a record already terminal, an implicit accept whose acquisition
	// a restart or failover had dropped) did not make a delivery.
	ended := (d.Ack == AckAccept || d.Ack == AckReject) && d.AckOutcome == AckCommitted
	if d.Ack != AckNone && (d.AckOutcome == AckCommitted || d.AckOutcome == AckAborted) && r.counted < math.MaxUint8 &&
		(!ended || r.flags&(flagAcceptCommitted|flagRejectCommitted) == 0) {
		r.counted++
	}
	count := uint16(min(max(d.DeliveryCount, 0), math.MaxUint16))
	switch d.Ack {
	case AckAccept:
		r.flags |= flagAcceptSent
		switch d.AckOutcome {
		case AckCommitted:
			r.flags |= flagAcceptCommitted
			r.acceptAt = max(r.acceptAt, count)
		case AckUnknown:
			r.flags |= flagAckUnknown
		case AckRefused:
			r.flags |= flagAcceptRefused
		}
	case AckReject:
		switch d.AckOutcome {
		case AckCommitted:
			r.flags |= flagRejectCommitted
			r.rejectAt = max(r.rejectAt, count)
		case AckUnknown:
			r.flags |= flagAckUnknown | flagRejectUnknown
		case AckRefused:
			r.flags |= flagRejectRefused
		}
	}
}

// AddOpenTransaction adds a transaction found open on an output partition
// after the drain (a hanging-transaction finding).
func (v *Verifier) AddOpenTransaction(t OpenTransaction) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.mu.done != nil {
		v.mu.late++
		return
	}
	v.mu.openTxns = append(v.mu.openTxns, t)
}

// invalidLocked records an input field the verifier cannot use. v.mu must
// be held.
func (v *Verifier) invalidLocked(msg string) {
	if v.mu.invalid == 0 {
		v.mu.invalidMsg = msg
	}
	v.mu.invalid++
}

// AddOutput adds one output record.
func (v *Verifier) AddOutput(o Output) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.mu.done != nil {
		v.mu.late++
		return
	}
	v.mu.outputs++
	s := &v.mu.s
	i := s.newOut()
	if i == 0 {
		v.mu.dropped++
		return
	}
	r := s.get(o.InputID)
	p := s.out(i)
	*p = out{
		offset:      o.Offset,
		visibleNs:   o.VisibleNs,
		partition:   o.Partition,
		epoch:       o.Epoch,
		markerEpoch: o.MarkerEpoch,
		pid:         o.ProducerID,
		next:        r.head,
	}
	r.head = i
	if o.Committed {
		p.flags |= outCommitted
	}
	if o.Aborted {
		p.flags |= outAborted
	}
	if o.Uncommitted {
		p.flags |= outUncommitted
	}
	switch o.Marker {
	case MarkerCommit:
		p.flags |= outMarkerCommit
	case MarkerAbort:
		p.flags |= outMarkerAbort
	case MarkerOpen:
		p.flags |= outMarkerOpen
	}
	switch o.TxnOutcome {
	case OutcomeCommitted:
		p.flags |= outClientCommitted
	case OutcomeAborted:
		p.flags |= outClientAborted
	case OutcomeUnknown:
		p.flags |= outClientUnknown
	}
	if o.CommitSent {
		p.flags |= outCommitSent
	}
	if o.TransactionalID != "" {
		p.txn = v.txnLocked(o.TransactionalID)
		p.txnSeq = o.TxnSeq
		p.txnSize = uint32(min(max(o.TxnSize, 0), math.MaxUint32))
	}
}

// txnLocked interns a transactional id. v.mu must be held.
func (v *Verifier) txnLocked(tid string) uint32 {
	if i, ok := v.mu.txnIndex[tid]; ok {
		return i
	}
	if v.mu.txnIndex == nil {
		v.mu.txnIndex = make(map[string]uint32)
	}
	i := uint32(len(v.mu.txnNames))
	v.mu.txnIndex[tid] = i
	v.mu.txnNames = append(v.mu.txnNames, tid)
	return i
}

// Finish judges everything added and returns the verdict. Call it once,
// after the last Add: later calls return the same verdict, and Adds after
// it are ignored. Finish releases the verifier's memory.
func (v *Verifier) Finish() *result.Verification {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.mu.done != nil {
		if v.mu.late > 0 {
			v.mu.done.Notes = append(v.mu.done.Notes, fmt.Sprintf("verify: %d records were added after Finish and ignored", v.mu.late))
			v.mu.late = 0
		}
		return v.mu.done
	}
	j := newJudge(v)
	j.run()
	res := j.verdict()
	v.mu.done = res
	v.mu.s = store{}
	v.mu.txnIndex = nil
	v.mu.dlq = nil
	return res
}
