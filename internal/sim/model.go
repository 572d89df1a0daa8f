// This file holds what the simulator knows independently of the engine:
// every input and output record it wrote, every transaction it opened, and
// the last observed state of every share-group record, which the checks
// compare each step's observation with.

package sim

import (
	"fmt"
	"time"

	"github.com/sharebench/sharebench/engine"
)

// inPart is one input partition as the simulator wrote it.
type inPart struct {
	tp   engine.TopicPartition
	recs []inRec // by offset; id 0: a control marker
}

type inRec struct {
	id  uint64
	txn *txnTrack // nil: written outside a transaction
}

func (ip *inPart) add(base int64, ids []uint64, t *txnTrack) {
	for int64(len(ip.recs)) < base+int64(len(ids)) {
		ip.recs = append(ip.recs, inRec{})
	}
	for i, id := range ids {
		ip.recs[base+int64(i)] = inRec{id: id, txn: t}
	}
}

func (ip *inPart) at(off int64) inRec {
	if off < 0 || off >= int64(len(ip.recs)) {
		return inRec{}
	}
	return ip.recs[off]
}

// committed reports whether off holds an input record a read_committed
// reader may see.
func (ip *inPart) committed(off int64) bool {
	r := ip.at(off)
	return r.id != 0 && (r.txn == nil || r.txn.state == txnCommitted)
}

// gap reports whether off holds nothing a read_committed share group
// delivers: a control marker or a record of an aborted transaction.
func (ip *inPart) gap(off int64) bool {
	r := ip.at(off)
	return r.id == 0 || r.txn != nil && r.txn.state == txnAborted
}

// outPart is one output partition as the workers wrote it.
type outPart struct {
	tp     engine.TopicPartition
	recs   []outRec // by offset; ok false: a control marker
	rcNext int64    // next offset the read_committed scan reads
}

type outRec struct {
	inputID uint64
	txn     *txnTrack
	ok      bool
}

func (op *outPart) add(base int64, ids []uint64, t *txnTrack) {
	for int64(len(op.recs)) < base+int64(len(ids)) {
		op.recs = append(op.recs, outRec{})
	}
	for i, id := range ids {
		op.recs[base+int64(i)] = outRec{inputID: id, txn: t, ok: true}
	}
}

func (op *outPart) at(off int64) outRec {
	if off < 0 || off >= int64(len(op.recs)) {
		return outRec{}
	}
	return op.recs[off]
}

// txnTrack is one transaction as its client saw it.
type txnTrack struct {
	tid   string
	pid   int64
	epoch int16
	slot  int // -1: the input producer
	state txnState
	// first offset the transaction wrote, per partition (for the LSO).
	first map[engine.TopicPartition]int64
	// outputs: where every record it wrote went.
	outputs []outRef
	staged  int             // records staged
	offsets map[int32]int64 // classic-eos: offsets sent, per input partition

	clientEnded  bool
	clientCommit bool
	clientErr    error
	// completing: the transaction is decided (PREPARE_*, state says the
	// outcome) and its markers are on their way; its staged records may
	// still be TX_PENDING and its outputs visible (docs/design.md §4, invariant 8).
	completing bool
	decided    int // order of the decision among the run's transactions
	// forgotten: a restart or coordinator crash forgot the Begin (no
	// participant had joined); the producer's next call reopens it.
	forgotten bool
}

// empty reports whether no participant joined the transaction.
func (t *txnTrack) empty() bool { return len(t.first) == 0 && t.staged == 0 && len(t.offsets) == 0 }

type txnState uint8

const (
	txnOpen txnState = iota
	txnCommitted
	txnAborted
)

type outRef struct {
	tp  engine.TopicPartition
	off int64
}

// newTrack starts tracking the transaction tid just began.
func (s *sim) newTrack(tid string, slot int) *txnTrack {
	info, _ := s.e.Transaction(tid)
	t := &txnTrack{tid: tid, pid: info.ProducerID, epoch: info.Epoch, slot: slot,
		first: map[engine.TopicPartition]int64{}, offsets: map[int32]int64{}}
	if old := s.tracks[tid]; old != nil && (old.completing || old.state == txnOpen && old.clientEnded) {
		// The previous transaction ended in this step and its markers
		// landed before this Begin: checkEndedTxns still judges it.
		s.retired = append(s.retired, old)
	}
	s.tracks[tid] = t
	return t
}

func (t *txnTrack) wrote(tp engine.TopicPartition, base int64, n int) {
	if _, ok := t.first[tp]; !ok {
		t.first[tp] = base
	}
	for i := 0; i < n; i++ {
		t.outputs = append(t.outputs, outRef{tp, base + int64(i)})
	}
}

func (t *txnTrack) clientEnd(commit bool, err error) {
	t.clientEnded, t.clientCommit, t.clientErr = true, commit, err
}

func (t *txnTrack) String() string {
	return fmt.Sprintf("%s(producer %d epoch %d)", t.tid, t.pid, t.epoch)
}

// rec is one share-group record's observed state.
type rec struct {
	state    engine.RecordState
	count    int
	owner    string
	deadline time.Duration
	pid      int64
	epoch    int16
	staged   engine.AckType
	reason   engine.ArchiveReason
}

func (r rec) String() string {
	switch r.state {
	case engine.StateAcquired:
		dl := "none"
		if r.deadline < time.Duration(1<<62) {
			dl = fmtDur(r.deadline)
		}
		return fmt.Sprintf("ACQUIRED(%s n=%d lock=%s)", r.owner, r.count, dl)
	case engine.StateTxPending:
		return fmt.Sprintf("TX_PENDING(producer %d epoch %d %v n=%d)", r.pid, r.epoch, r.staged, r.count)
	case engine.StateArchived:
		return fmt.Sprintf("ARCHIVED(%v n=%d)", r.reason, r.count)
	}
	return fmt.Sprintf("%v(n=%d)", r.state, r.count)
}

func recOf(ri engine.RecordInfo) rec {
	r := rec{state: ri.State, count: ri.DeliveryCount}
	switch ri.State {
	case engine.StateAcquired:
		r.owner, r.deadline = ri.Owner, ri.LockDeadline
	case engine.StateTxPending:
		r.pid, r.epoch, r.staged = ri.Producer, ri.Epoch, ri.Staged
	case engine.StateArchived:
		r.reason = ri.Reason
	}
	return r
}

// dlqModel counts a share group's dead-letter copies seen under
// read_committed, by source partition and offset.
type dlqModel struct {
	next   int64
	copies map[[2]int64]int
}

// spModel is the last observed state of one share partition.
type spModel struct {
	g          int
	group      string
	tp         engine.TopicPartition
	exists     bool
	spso, end  int64
	recs       []rec // by offset, up to end
	nAck, nArc int64 // ACKNOWLEDGED and ARCHIVED records in recs
	// ackBase and arcBase are what the engine's counters missed: a
	// restored partition counts from zero.
	ackBase, arcBase int64
}

func (m *spModel) get(off int64) rec {
	if off < int64(len(m.recs)) {
		return m.recs[off]
	}
	return rec{state: engine.StateAvailable}
}

func (m *spModel) set(off int64, r rec) {
	for int64(len(m.recs)) <= off {
		m.recs = append(m.recs, rec{state: engine.StateAvailable})
	}
	old := m.recs[off]
	m.nAck -= b2i(old.state == engine.StateAcknowledged)
	m.nArc -= b2i(old.state == engine.StateArchived)
	m.nAck += b2i(r.state == engine.StateAcknowledged)
	m.nArc += b2i(r.state == engine.StateArchived)
	m.recs[off] = r
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// Events: what the simulated clients did to a record during one step, so
// the transition check can tell an allowed change from a broken rule.
type evKind uint8

const (
	evPolled   evKind = iota + 1 // acquired by a poll
	evAccept                     // explicit ACCEPT that the engine applied
	evReject                     // explicit REJECT
	evRelease                    // explicit RELEASE
	evRenew                      // explicit RENEW
	evStaged                     // staged in a transaction
	evUndone                     // staged, then undone by a failed staging write
	evImplicit                   // accepted by an implicit-mode poll
)

var evNames = [...]string{"", "polled", "accept", "reject", "release", "renew", "staged", "stage-undone", "implicit-accept"}

type event struct {
	kind   evKind
	member string
	count  int  // evPolled: the delivery count the poll returned
	must   bool // the event must show in the record's new state
	pid    int64
	epoch  int16
	typ    engine.AckType
}

type evKey struct {
	g   int
	p   int32
	off int64
}
