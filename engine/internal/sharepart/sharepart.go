// Package sharepart is the pure state machine of one share partition
// (KIP-932, extended with KIP-1289's TX_PENDING state): per-record delivery
// state, delivery counts, acquisition locks, the share-partition start offset
// (SPSO) and the in-flight window.
//
// It does no I/O, starts no goroutines and reads no clock: every method that
// depends on time takes `now`. The engine wraps each SharePartition in a
// shard lock; tests and the simulator drive it directly.
//
// Representation: the in-flight window [SPSO, End) is a sorted, contiguous
// list of runs, each a range of offsets that share one state, owner, lock
// deadline, delivery count and staged transaction. Acquiring a batch of 500
// new records adds one run, so the cost per in-flight record is a fraction of
// a byte; runs split only where records of a batch diverge (as Kafka's
// InFlightBatch splits into per-offset state).
package sharepart

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/sharebench/sharebench/engine/internal/invariants"
	"github.com/sharebench/sharebench/engine/internal/mutant"
)

// State is a record's delivery state.
type State uint8

// Record states (docs/design.md §3.2, §3.3).
const (
	Available State = iota
	Acquired
	Acknowledged
	Archived
	TxPending
)

func (s State) String() string {
	switch s {
	case Available:
		return "AVAILABLE"
	case Acquired:
		return "ACQUIRED"
	case Acknowledged:
		return "ACKNOWLEDGED"
	case Archived:
		return "ARCHIVED"
	case TxPending:
		return "TX_PENDING"
	}
	return fmt.Sprintf("State(%d)", uint8(s))
}

// Terminal reports whether nothing can move a record out of s.
func (s State) Terminal() bool { return s == Acknowledged || s == Archived }

// AckType is an acknowledgement type, numbered as Kafka's ShareAcknowledge
// API numbers them.
type AckType uint8

// Ack types.
const (
	Gap AckType = iota
	Accept
	Release
	Reject
	Renew
)

func (a AckType) String() string {
	switch a {
	case Gap:
		return "GAP"
	case Accept:
		return "ACCEPT"
	case Release:
		return "RELEASE"
	case Reject:
		return "REJECT"
	case Renew:
		return "RENEW"
	}
	return fmt.Sprintf("AckType(%d)", uint8(a))
}

// Reason says why a record is ARCHIVED (kept for introspection and the
// verifier: an archive at the delivery limit is a rule, an archive before it
// is an anomaly).
type Reason uint8

// Archive reasons.
const (
	ReasonNone     Reason = iota
	ReasonRejected        // the owner rejected it
	ReasonGap             // no record at the offset (marker, aborted transaction record, gap ack)
	ReasonLimit           // delivery count reached the limit
	ReasonLogStart        // the log start offset passed it
)

func (r Reason) String() string {
	switch r {
	case ReasonNone:
		return ""
	case ReasonRejected:
		return "rejected"
	case ReasonGap:
		return "gap"
	case ReasonLimit:
		return "delivery-limit"
	case ReasonLogStart:
		return "log-start"
	}
	return fmt.Sprintf("Reason(%d)", uint8(r))
}

// Errors. Each fails the whole request for the partition (all-or-nothing).
// The engine binds them to its own exported sentinels when it is loaded
// (engine/errors.go), so errors.Is matches the names its callers import;
// the values here stand for this package alone (its own tests).
// ErrNotOwner matches ErrInvalidRecordState too: Kafka answers
// INVALID_RECORD_STATE for a record another member holds, as for one
// nobody holds, so one check covers every record the member does not hold.
var (
	ErrInvalidRecordState = errors.New("engine: invalid record state")
	ErrNotOwner           = fmt.Errorf("%w: the record is acquired by another member", ErrInvalidRecordState)
	ErrOutOfRange         = errors.New("engine: offset out of range")
	ErrInvalidAckType     = errors.New("engine: invalid acknowledgement type")
	ErrInvalidRequest     = errors.New("engine: invalid request")
)

// batchScan bounds how far BatchEnd looks for the end of a produced batch.
const batchScan = 1 << 16

// NoDeadline is the lock deadline of a record held without a lock.
const NoDeadline = time.Duration(math.MaxInt64)

// Knobs are the decisions KIP-1289's draft leaves open (docs/design.md §3.4). The
// zero value is the safe choice for every knob.
type Knobs struct {
	// ExactEpochMatch applies a marker only when its epoch equals the staged
	// epoch (draft). Safe: marker epoch >= staged epoch, since the epoch is
	// bumped when a transaction ends.
	ExactEpochMatch bool
	// AbortToAvailableAtLimit makes an abort return a record that has
	// reached the delivery limit to AVAILABLE (draft: one delivery beyond
	// the limit). Safe: ARCHIVED.
	AbortToAvailableAtLimit bool
	// StageStopAtFirstFailure stages a multi-batch request batch by batch
	// and stops at the first failure, leaving earlier batches staged
	// (draft). Safe: validate all, then stage all.
	StageStopAtFirstFailure bool
	// RejectIdenticalRetry fails a staging request that repeats one already
	// applied (draft). Safe: success, as an idempotent retry.
	RejectIdenticalRetry bool
	// FailedStageNoLock returns the records of a staging write that failed
	// to ACQUIRED without a lock (draft). Safe: ACQUIRED with a live lock.
	FailedStageNoLock bool
	// DLQAfterMarker writes the dead-letter copy of a record archived by
	// a transactional REJECT after the commit marker archives it (at
	// least once). Safe (the default): in the transaction that staged the
	// reject, committed or aborted with it (exactly once).
	DLQAfterMarker bool
	// TxPendingLimit 0 counts TX_PENDING records toward
	// share.partition.max.record.locks, as the draft does (the default).
	// n > 0 is the what-if a KIP reviewer asks about: the first n
	// TX_PENDING records of a share partition do not count, so long
	// transactions no longer cap how many records can be acquired.
	//
	// At the limit, staging is never refused: the TX_PENDING records past
	// the first n count toward share.partition.max.record.locks as the
	// ACQUIRED records they were. A record slot is held by every ACQUIRED
	// record and every TX_PENDING record past the first n, and a poll
	// acquires only into free slots (never past SPSO + locks + n either).
	// Staging then never takes a slot, and an abort, a commit, a lock
	// expiry or a session close only frees slots, so the bound holds
	// whatever the transaction's outcome. Refusing the staging instead
	// would make the transaction abortable and throw away the outputs it
	// already produced.
	TxPendingLimit int
}

// AcquireMode is share.acquire.mode (KIP-1206).
type AcquireMode uint8

// Acquire modes.
const (
	// RecordLimit acquires exactly: at most the poll's max records, never
	// past SPSO + share.partition.max.record.locks - 1.
	RecordLimit AcquireMode = iota
	// BatchOptimized is Kafka's default: the window is checked before the
	// fetch (released records to redeliver, or a window not yet full),
	// and the fetch then acquires up to the poll's max records rounded up
	// to whole produced batches, past the window end if need be, so the
	// window can overshoot by up to one fetch.
	BatchOptimized
)

func (m AcquireMode) String() string {
	switch m {
	case RecordLimit:
		return "record_limit"
	case BatchOptimized:
		return "batch_optimized"
	}
	return fmt.Sprintf("AcquireMode(%d)", uint8(m))
}

// Config is one share partition's group configuration (docs/design.md §3.7).
type Config struct {
	LockDuration   time.Duration // share.record.lock.duration.ms
	DeliveryLimit  int           // share.delivery.count.limit
	MaxRecordLocks int           // share.partition.max.record.locks
	AcquireMode    AcquireMode   // share.acquire.mode
	Knobs          Knobs
	// KeepHistory keeps the final state of every record that leaves the
	// window (2 bytes a record), so State can answer below SPSO. The load
	// generator turns it on for the verifier; benchmarks leave it off.
	KeepHistory bool
	// DeadLetterTopic, when set, makes the partition report every record
	// archived by a reject or at the delivery limit (TakeDeadLetters) for
	// that dead-letter topic (KIP-1191); CopyRecord says whether the copy
	// carries the record's value. The engine writes the copies.
	DeadLetterTopic string
	CopyRecord      bool
}

// DeadLetter is a range of records archived by a reject or at the
// delivery limit, in one step.
type DeadLetter struct {
	First, Last int64
	Count       int    // delivery count
	Reason      Reason // ReasonRejected or ReasonLimit
	// Staged: archived by the commit marker of a transaction that staged
	// the reject (its dead-letter copy may have been written in the
	// transaction).
	Staged bool
}

// Validate checks a configuration.
func (c Config) Validate() error {
	switch {
	case c.LockDuration <= 0:
		return fmt.Errorf("engine: lock duration %v must be positive", c.LockDuration)
	case c.DeliveryLimit < 1 || c.DeliveryLimit > math.MaxUint16-1:
		return fmt.Errorf("engine: delivery limit %d out of range", c.DeliveryLimit)
	case c.MaxRecordLocks < 1:
		return fmt.Errorf("engine: max record locks %d must be positive", c.MaxRecordLocks)
	case c.AcquireMode > BatchOptimized:
		return fmt.Errorf("engine: share.acquire.mode %d", c.AcquireMode)
	case c.Knobs.TxPendingLimit < 0:
		return fmt.Errorf("engine: TX_PENDING limit %d is negative", c.Knobs.TxPendingLimit)
	}
	return nil
}

// Owner identifies a member within one share group; 0 means none.
type Owner uint32

// ProducerID identifies a transactional producer.
type ProducerID int64

// run is a range of offsets in one state. Field order keeps it at 48 bytes.
type run struct {
	first, last int64
	deadline    time.Duration // lock deadline while Acquired
	pid         ProducerID    // staging producer while TxPending
	owner       Owner         // while Acquired
	epoch       int16         // staged producer epoch while TxPending
	count       uint16        // delivery count
	state       State
	staged      AckType // staged outcome while TxPending: Accept, Reject or Gap
	reason      Reason  // while Archived
}

func (r *run) n() int64 { return r.last - r.first + 1 }

// sameAs reports whether r and o could be one run (ignoring offsets).
func (r *run) sameAs(o *run) bool {
	return r.state == o.state && r.owner == o.owner && r.deadline == o.deadline &&
		r.pid == o.pid && r.epoch == o.epoch && r.count == o.count && r.staged == o.staged &&
		r.reason == o.reason
}

// Counters are cumulative event counts of one share partition.
type Counters struct {
	Acquired     int64 // records acquired (each delivery counts)
	Redelivered  int64 // acquisitions with delivery count > 1
	Accepted     int64 // records ACKNOWLEDGED
	Released     int64 // records released by the owner
	Rejected     int64 // records archived by a reject
	Archived     int64 // records archived for any reason
	LockExpiries int64 // records whose lock expired
	Staged       int64 // records moved to TX_PENDING
	TxCommitted  int64 // TX_PENDING records resolved by a commit marker
	TxAborted    int64 // TX_PENDING records returned by an abort marker
	SessionRel   int64 // records released by a session close
}

// SharePartition is one share partition's delivery state. Not safe for
// concurrent use: the engine guards it with its shard lock.
type SharePartition struct {
	cfg   Config
	spso  int64 // share-partition start offset
	end   int64 // first offset never brought into the window
	runs  []run // runs[head:] cover [spso, end) contiguously
	head  int
	ctr   Counters
	hist  history
	nextD time.Duration // earliest lock deadline of any Acquired run (a lower bound)
	// logStart is the newest log start offset AdvanceLogStart was told of.
	// A record that becomes AVAILABLE below it (release, lock expiry,
	// session close, abort) has no log entry left to deliver, so it is
	// archived at once (as Kafka's SharePartition archives records below
	// its start offset on release); before this field existed such records
	// were acquired again and the engine's Poll failed reading them.
	logStart int64
	// dead holds the dead letters not yet taken (Config.DeadLetters).
	dead []DeadLetter
	// Records acquired under a larger window than the current one (the
	// group config lowered share.partition.max.record.locks, or a recovery
	// runs under a config lowered since) stay in flight until they are
	// terminal, as Kafka keeps them; only new acquisitions obey the
	// smaller window. keptEnd is the first offset past them and keptN how
	// many records were in flight when the window shrank (admitInFlight);
	// both are zero once SPSO passes keptEnd.
	keptEnd, keptN int64
	// Durable tracking (durable.go): the offsets whose durable state
	// changed since the last TakeDelta, and the SPSO it last reported.
	dirty    bool
	dlo, dhi int64
	jspso    int64
}

// New returns a share partition whose window starts at startOffset (the
// offset share.auto.offset.reset resolved to).
func New(cfg Config, startOffset int64) (*SharePartition, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	sp := &SharePartition{cfg: cfg, spso: startOffset, end: startOffset, nextD: NoDeadline, jspso: startOffset}
	sp.hist.base = startOffset
	return sp, nil
}

// Config returns the partition's configuration.
func (sp *SharePartition) Config() Config { return sp.cfg }

// SetConfig changes the configuration for future transitions (a group
// config update).
func (sp *SharePartition) SetConfig(cfg Config) error {
	if invariants.Enabled {
		defer sp.checked()
	}
	if err := cfg.Validate(); err != nil {
		return err
	}
	cfg.KeepHistory = sp.cfg.KeepHistory
	sp.cfg = cfg
	sp.admitInFlight()
	return nil
}

// admitInFlight keeps the records in flight beyond the current window (see
// keptEnd) for Check, which otherwise bounds every in-flight record by it.
func (sp *SharePartition) admitInFlight() {
	limit := sp.windowLimit()
	var end, n int64
	for i := sp.head; i < len(sp.runs); i++ {
		r := &sp.runs[i]
		if r.state.Terminal() || r.state == Available {
			continue
		}
		n += r.n()
		if r.last >= limit {
			end = r.last + 1
		}
	}
	if end > 0 {
		sp.keptEnd, sp.keptN = max(sp.keptEnd, end), max(sp.keptN, n)
	}
}

// SPSO returns the share-partition start offset.
func (sp *SharePartition) SPSO() int64 { return sp.spso }

// End returns the first offset never brought into the in-flight window.
func (sp *SharePartition) End() int64 { return sp.end }

// Counters returns cumulative event counts.
func (sp *SharePartition) Counters() Counters { return sp.ctr }

// InFlight returns how many records of the window are not terminal.
func (sp *SharePartition) InFlight() int {
	n := int64(0)
	for i := sp.head; i < len(sp.runs); i++ {
		if !sp.runs[i].state.Terminal() {
			n += sp.runs[i].n()
		}
	}
	return int(n)
}

// Runs returns how many runs the window holds (for memory accounting).
func (sp *SharePartition) Runs() int { return len(sp.runs) - sp.head }

// RecordInfo is the state of one record.
type RecordInfo struct {
	Offset        int64
	State         State
	DeliveryCount int
	Owner         Owner
	Deadline      time.Duration
	Producer      ProducerID // staging producer when TxPending
	Epoch         int16
	Staged        AckType
	Reason        Reason
	// Known is false for an offset below SPSO whose history is not kept:
	// it is terminal, but whether ACKNOWLEDGED or ARCHIVED is not known.
	Known bool
}

// Record returns the state of the record at offset.
func (sp *SharePartition) Record(offset int64) RecordInfo {
	switch {
	case offset >= sp.end:
		return RecordInfo{Offset: offset, State: Available, Known: true}
	case offset < sp.spso:
		if st, reason, count, ok := sp.hist.get(offset); ok {
			return RecordInfo{Offset: offset, State: st, Reason: reason, DeliveryCount: count, Known: true}
		}
		return RecordInfo{Offset: offset, State: Acknowledged}
	}
	r := &sp.runs[sp.find(offset)]
	return RecordInfo{
		Offset: offset, State: r.state, DeliveryCount: int(r.count), Owner: r.owner,
		Deadline: r.deadline, Producer: r.pid, Epoch: r.epoch, Staged: r.staged, Reason: r.reason,
		Known: true,
	}
}

// find returns the index in runs of the run holding offset, which must lie
// in [spso, end).
func (sp *SharePartition) find(offset int64) int {
	w := sp.runs[sp.head:]
	i := sort.Search(len(w), func(i int) bool { return w[i].last >= offset })
	return sp.head + i
}

// splitAt makes offset the first offset of a run, if it lies inside the
// window, and returns that run's index; offset == end returns len(runs).
func (sp *SharePartition) splitAt(offset int64) int {
	if offset >= sp.end {
		return len(sp.runs)
	}
	i := sp.find(offset)
	r := sp.runs[i]
	if r.first == offset {
		return i
	}
	left, right := r, r
	left.last = offset - 1
	right.first = offset
	sp.runs = append(sp.runs, run{})
	copy(sp.runs[i+2:], sp.runs[i+1:])
	sp.runs[i] = left
	sp.runs[i+1] = right
	return i + 1
}

// span returns run indexes [i, j) exactly covering [first, last], which must
// lie within the window, splitting runs at both ends.
func (sp *SharePartition) span(first, last int64) (int, int) {
	sp.touch(first, last) // every caller changes state over the span
	i := sp.splitAt(first)
	j := sp.splitAt(last + 1)
	return i, j
}

// Range is a range of records acquired by one poll.
type Range struct {
	First, Last   int64
	DeliveryCount int
}

// Log is what acquisition needs to know about the partition's log.
type Log interface {
	// IsGap reports whether offset holds no deliverable record (a control
	// marker, or a record of an aborted transaction for a read_committed
	// share group).
	IsGap(offset int64) bool
	// BatchEnd returns the last offset of the produced batch holding
	// offset, looking at most limit records ahead (batch_optimized).
	BatchEnd(offset int64, limit int) int64
}

// windowLimit returns the first offset past the in-flight window for new
// acquisitions: SPSO + share.partition.max.record.locks, moved on by the
// TX_PENDING records in it when the TxPendingLimit knob keeps them out of
// the count (up to that limit).
func (sp *SharePartition) windowLimit() int64 {
	limit := sp.spso + int64(sp.cfg.MaxRecordLocks)
	if n := sp.cfg.Knobs.TxPendingLimit; n > 0 {
		limit += min(sp.pending(), int64(n))
	}
	return limit
}

// pending counts the TX_PENDING records of the window.
func (sp *SharePartition) pending() int64 {
	var n int64
	for i := sp.head; i < len(sp.runs); i++ {
		if sp.runs[i].state == TxPending {
			n += sp.runs[i].n()
		}
	}
	return n
}

// locked counts the in-flight records that hold a slot of
// share.partition.max.record.locks: every ACQUIRED record, and every
// TX_PENDING record past the first TxPendingLimit of them (all of them when
// the knob is 0, the draft's rule).
//
// The rule at the limit: staging is never refused for it. A record staged
// beyond the limit keeps the slot it held while ACQUIRED, so staging never
// adds to the count and an abort, a commit, a lock expiry or a session
// close only ever lowers it. That makes the bound hold whatever the
// transaction's outcome; refusing the staging instead would make the
// transaction abortable and throw away the outputs it already produced.
// windowLimit alone cannot keep the bound: an abort shrinks it while the
// records acquired under the larger window are still held, and the records
// the abort made AVAILABLE lie inside the smaller one, so Acquire also
// checks the count (acquireRoom).
func (sp *SharePartition) locked() int64 {
	var acquired, pending int64
	for i := sp.head; i < len(sp.runs); i++ {
		switch r := &sp.runs[i]; r.state {
		case Acquired:
			acquired += r.n()
		case TxPending:
			pending += r.n()
		}
	}
	return acquired + max(0, pending-int64(sp.cfg.Knobs.TxPendingLimit))
}

// deliveryIncrement is what one acquisition adds to a record's delivery
// count: one, so the delivery limit bounds redeliveries.
func deliveryIncrement() uint16 {
	if mutant.On("no-delivery-increment") {
		return 0
	}
	return 1
}

// acquireRoom returns how many more records a poll may acquire under the
// TxPendingLimit knob (see locked); without the knob the window's offsets
// bound acquisition exactly and it returns math.MaxInt64.
func (sp *SharePartition) acquireRoom() int64 {
	if mutant.On("window-unbounded") {
		return math.MaxInt64
	}
	if sp.cfg.Knobs.TxPendingLimit == 0 {
		return math.MaxInt64
	}
	return max(0, int64(sp.cfg.MaxRecordLocks)-sp.locked())
}

// Acquire acquires up to max AVAILABLE records for owner, lowest offsets
// first, never beyond fetchEnd (the high watermark, or the LSO for
// read_committed) nor beyond SPSO + MaxRecordLocks - 1 (moved on by the
// TX_PENDING records the TxPendingLimit knob keeps out of the count, and
// then also never past MaxRecordLocks records holding a lock slot; see
// locked). It appends the acquired ranges to dst. Gap offsets met on the
// way are archived.
func (sp *SharePartition) Acquire(now time.Duration, owner Owner, max int, fetchEnd int64, log Log, dst []Range) []Range {
	if invariants.Enabled {
		defer sp.checked()
	}
	if owner == 0 || max <= 0 {
		return dst
	}
	sp.expireDue(now)
	room := sp.acquireRoom()
	if room == 0 {
		return dst // every lock slot is held: the window is full
	}
	limit := sp.windowLimit() // first offset beyond the window
	if mutant.On("window-unbounded") {
		limit = math.MaxInt64
	}
	// newLimit bounds new records: the window in record_limit; in
	// batch_optimized only the check before the fetch (is there room at
	// all?), after which the fetch may run past the window end.
	newLimit := limit
	batches := sp.cfg.AcquireMode == BatchOptimized && log != nil
	if batches && sp.end < limit {
		newLimit = math.MaxInt64
	}
	if fetchEnd < limit {
		limit = fetchEnd
	}
	newLimit = min(newLimit, fetchEnd)
	deadline := now + sp.cfg.LockDuration
	left := int64(max)
	if !batches {
		left = min(left, room) // record_limit acquires exactly
	}
	want := left
	// Released records inside the window come first.
	for i := sp.head; i < len(sp.runs) && left > 0; i++ {
		r := &sp.runs[i]
		if r.state != Available || r.first >= limit {
			if r.first >= limit {
				break
			}
			continue
		}
		last := r.last
		if last >= limit {
			last = limit - 1
		}
		if last-r.first+1 > left {
			last = r.first + left - 1
		}
		if last < r.last {
			sp.splitAt(last + 1)
			r = &sp.runs[i]
		}
		n := r.n()
		r.state, r.owner, r.deadline = Acquired, owner, deadline
		if r.count < math.MaxUint16 {
			r.count += deliveryIncrement()
		}
		sp.ctr.Acquired += n
		if r.count > 1 {
			sp.ctr.Redelivered += n
		}
		left -= n
		dst = append(dst, Range{First: r.first, Last: r.last, DeliveryCount: int(r.count)})
	}
	// Then new records at the end of the window, skipping gaps.
	for left > 0 && sp.end < newLimit {
		first := sp.end
		if log != nil && log.IsGap(first) {
			gapLast := first
			for gapLast+1 < newLimit && log.IsGap(gapLast+1) {
				gapLast++
			}
			sp.appendRun(run{first: first, last: gapLast, state: Archived, reason: ReasonGap, deadline: NoDeadline})
			sp.ctr.Archived += gapLast - first + 1
			continue
		}
		last := first + left - 1
		if batches {
			// The whole produced batch the fetch ends in.
			if end := log.BatchEnd(last, batchScan); end > last {
				last = end
			}
		}
		if last >= newLimit {
			last = newLimit - 1
		}
		if log != nil {
			for o := first + 1; o <= last; o++ {
				if log.IsGap(o) {
					last = o - 1
					break
				}
			}
		}
		sp.appendRun(run{first: first, last: last, state: Acquired, owner: owner, deadline: deadline, count: 1})
		n := last - first + 1
		sp.ctr.Acquired += n
		left -= min(n, left)
		dst = append(dst, Range{First: first, Last: last, DeliveryCount: 1})
	}
	if deadline < sp.nextD && left < want {
		sp.nextD = deadline
	}
	sp.advance()
	return dst
}

// appendRun adds a run at the end of the window, merging with the last run
// when the two are alike.
func (sp *SharePartition) appendRun(r run) {
	if r.state != Acquired {
		sp.touch(r.first, r.last) // new acquisitions are not durable
	}
	if n := len(sp.runs); n > sp.head {
		p := &sp.runs[n-1]
		if p.last+1 == r.first && p.sameAs(&r) {
			p.last = r.last
			sp.end = r.last + 1
			return
		}
	}
	sp.runs = append(sp.runs, r)
	sp.end = r.last + 1
}

// Batch is one acknowledgement batch: offsets [First, Last] with one type
// for all of them, or one type per offset when Types has Last-First+1
// entries.
type Batch struct {
	First, Last int64
	Type        AckType
	Types       []AckType
}

func (b *Batch) typeAt(offset int64) AckType {
	if len(b.Types) > 0 {
		return b.Types[offset-b.First]
	}
	return b.Type
}

func (b *Batch) validShape() error {
	if b.Last < b.First {
		return fmt.Errorf("%w: batch last offset %d before first %d", ErrInvalidRequest, b.Last, b.First)
	}
	if len(b.Types) > 0 && int64(len(b.Types)) != b.Last-b.First+1 {
		return fmt.Errorf("%w: batch [%d,%d] has %d types", ErrInvalidRequest, b.First, b.Last, len(b.Types))
	}
	return nil
}

// disjoint rejects a request whose batches overlap. Added because the
// validate-then-apply loops below check every batch against the state before
// the request, so two batches on one record (ACCEPT then RELEASE) both passed
// and moved an ACKNOWLEDGED record back to AVAILABLE. Kafka rejects such a
// request as INVALID_REQUEST. Batches need not be in order.
func disjoint(batches []Batch) error {
	if len(batches) < 2 {
		return nil
	}
	ordered := true
	for i := range batches {
		if batches[i].Last < batches[i].First || i > 0 && batches[i].First <= batches[i-1].Last {
			ordered = false
			break
		}
	}
	if ordered {
		return nil
	}
	s := make([]Batch, 0, len(batches))
	for _, b := range batches {
		if b.Last >= b.First { // a malformed batch fails validShape
			s = append(s, b)
		}
	}
	sort.Slice(s, func(i, j int) bool { return s[i].First < s[j].First })
	for i := 1; i < len(s); i++ {
		if s[i].First <= s[i-1].Last {
			return fmt.Errorf("%w: batches [%d,%d] and [%d,%d] overlap", ErrInvalidRequest, s[i-1].First, s[i-1].Last, s[i].First, s[i].Last)
		}
	}
	return nil
}

// Acknowledge applies the owner's acknowledgements. It is all-or-nothing: if
// any offset fails validation nothing changes. Offsets below SPSO are no-op
// successes (Kafka skips them the same way: they are terminal already).
func (sp *SharePartition) Acknowledge(now time.Duration, owner Owner, batches []Batch) error {
	if invariants.Enabled {
		defer sp.checked()
	}
	_, err := sp.AcknowledgeNoOps(now, owner, batches)
	return err
}

// AcknowledgeNoOps is Acknowledge that also returns the parts of batches
// that lay below SPSO when it applied them: the no-op successes, which
// changed nothing because those records were terminal already (another
// member's acknowledgement, the delivery limit or the log start ended
// them). A record the owner holds is never below SPSO, so every no-op is
// an acknowledgement of a record the owner no longer held. noop is nil
// when err is not.
func (sp *SharePartition) AcknowledgeNoOps(now time.Duration, owner Owner, batches []Batch) (noop []Batch, err error) {
	if invariants.Enabled {
		defer sp.checked()
	}
	sp.expireDue(now)
	if err := disjoint(batches); err != nil {
		return nil, err
	}
	for bi := range batches {
		b := &batches[bi]
		if err := b.validShape(); err != nil {
			return nil, err
		}
		if err := sp.checkOwned(b, owner, func(t AckType) error {
			if t > Renew {
				return fmt.Errorf("%w: %d", ErrInvalidAckType, uint8(t))
			}
			return nil
		}); err != nil {
			return nil, err
		}
	}
	for _, b := range batches {
		if b.First < sp.spso {
			nb := Batch{First: b.First, Last: min(b.Last, sp.spso-1), Type: b.Type}
			if len(b.Types) > 0 {
				nb.Types = b.Types[:nb.Last-b.First+1]
			}
			noop = append(noop, nb)
		}
	}
	for bi := range batches {
		b := &batches[bi]
		sp.applyEach(b, func(r *run, t AckType) {
			switch t {
			case Accept:
				r.state, r.owner, r.deadline = Acknowledged, 0, NoDeadline
				sp.ctr.Accepted += r.n()
			case Reject, Gap:
				r.state, r.owner, r.deadline = Archived, 0, NoDeadline
				r.reason = ReasonRejected
				if t == Gap {
					r.reason = ReasonGap
				} else {
					sp.ctr.Rejected += r.n()
					sp.deadLetter(r, false)
				}
				sp.ctr.Archived += r.n()
			case Release:
				sp.ctr.Released += r.n()
				sp.makeAvailable(r)
			case Renew:
				r.deadline = now + sp.cfg.LockDuration
				// A record held without a lock (FailedStageNoLock) gets
				// one here, possibly earlier than nextD: keep nextD a
				// lower bound or the lock never expires.
				if r.deadline < sp.nextD {
					sp.nextD = r.deadline
				}
			}
		})
	}
	sp.archiveBelowLogStart()
	sp.merge()
	sp.advance()
	return noop, nil
}

// checkOwned validates every in-window offset of b: acquired by owner, with
// a type check accepts.
// ownedByOther reports whether the acquired run r is locked by a member
// other than owner, who then may not acknowledge it.
func ownedByOther(r *run, owner Owner) bool {
	if mutant.On("non-owner-accepted") {
		return false
	}
	return r.owner != owner
}

func (sp *SharePartition) checkOwned(b *Batch, owner Owner, check func(AckType) error) error {
	if b.Last >= sp.end {
		return fmt.Errorf("%w: [%d,%d] reaches beyond the window end %d", ErrOutOfRange, b.First, b.Last, sp.end)
	}
	first := b.First
	if first < sp.spso {
		first = sp.spso
	}
	for o := first; o <= b.Last; {
		r := &sp.runs[sp.find(o)]
		last := r.last
		if last > b.Last {
			last = b.Last
		}
		if r.state != Acquired {
			return fmt.Errorf("%w: offset %d is %v", ErrInvalidRecordState, o, r.state)
		}
		if ownedByOther(r, owner) {
			return fmt.Errorf("%w: offset %d", ErrNotOwner, o)
		}
		for x := o; x <= last; x++ {
			if err := check(b.typeAt(x)); err != nil {
				return err
			}
			if len(b.Types) == 0 {
				break // one type for the whole batch: checked once
			}
		}
		o = last + 1
	}
	return nil
}

// applyEach calls f on runs covering the in-window part of b, split so each
// run has one ack type.
func (sp *SharePartition) applyEach(b *Batch, f func(*run, AckType)) {
	first := b.First
	if first < sp.spso {
		first = sp.spso
	}
	if first > b.Last {
		return
	}
	if len(b.Types) == 0 {
		i, j := sp.span(first, b.Last)
		for k := i; k < j; k++ {
			f(&sp.runs[k], b.Type)
		}
		return
	}
	for o := first; o <= b.Last; {
		t := b.typeAt(o)
		last := o
		for last+1 <= b.Last && b.typeAt(last+1) == t {
			last++
		}
		i, j := sp.span(o, last)
		for k := i; k < j; k++ {
			f(&sp.runs[k], t)
		}
		o = last + 1
	}
}

// atDeliveryLimit reports whether r has been delivered as often as the
// delivery limit allows, so it is archived rather than made available.
func (sp *SharePartition) atDeliveryLimit(r *run) bool {
	if mutant.On("ignore-delivery-limit") {
		return false
	}
	return int(r.count) >= sp.cfg.DeliveryLimit
}

// makeAvailable returns r to AVAILABLE, or archives it at the delivery limit.
func (sp *SharePartition) makeAvailable(r *run) {
	r.owner, r.deadline, r.pid, r.epoch, r.staged = 0, NoDeadline, 0, 0, 0
	if sp.atDeliveryLimit(r) {
		r.state, r.reason = Archived, ReasonLimit
		sp.ctr.Archived += r.n()
		sp.deadLetter(r, false)
		return
	}
	r.state = Available
}

// deadLetter reports r, just archived by a reject or at the delivery
// limit, when the partition keeps dead letters.
func (sp *SharePartition) deadLetter(r *run, staged bool) {
	if sp.cfg.DeadLetterTopic == "" {
		return
	}
	dl := DeadLetter{First: r.first, Last: r.last, Count: int(r.count), Reason: r.reason, Staged: staged}
	sp.dead = append(sp.dead, dl)
	if mutant.On("dlq-written-twice") {
		sp.dead = append(sp.dead, dl)
	}
}

// TakeDeadLetters appends the dead letters reported since the last call to
// dst and forgets them.
func (sp *SharePartition) TakeDeadLetters(dst []DeadLetter) []DeadLetter {
	dst = append(dst, sp.dead...)
	sp.dead = sp.dead[:0]
	return dst
}

// HasDeadLetters reports whether dead letters wait to be taken.
func (sp *SharePartition) HasDeadLetters() bool { return len(sp.dead) > 0 }

// Stage moves the owner's ACQUIRED records to TX_PENDING for producer
// (pid, epoch) with the staged outcome of each batch (KIP-1289). The lock is
// cancelled: the transaction timeout governs the hold. RELEASE and RENEW
// cannot be staged.
func (sp *SharePartition) Stage(now time.Duration, owner Owner, pid ProducerID, epoch int16, batches []Batch) error {
	if invariants.Enabled {
		defer sp.checked()
	}
	sp.expireDue(now)
	checkType := func(t AckType) error {
		switch t {
		case Accept, Reject, Gap:
			return nil
		case Release, Renew:
			return fmt.Errorf("%w: %v cannot be staged in a transaction", ErrInvalidRequest, t)
		}
		return fmt.Errorf("%w: %d", ErrInvalidAckType, uint8(t))
	}
	validate := func(b *Batch) error {
		if err := b.validShape(); err != nil {
			return err
		}
		// Staging is not an ack: every record below SPSO is terminal and
		// staging a terminal record is rejected (docs/design.md §3.3); as a no-op
		// success it let a member whose lock expired commit a second output
		// for records another member had committed. The engine checks the
		// same in txn.go before calling Stage; this keeps the pure core in
		// line with it.
		if b.First < sp.spso {
			return fmt.Errorf("%w: offset %d is below SPSO %d (terminal)", ErrInvalidRecordState, b.First, sp.spso)
		}
		if sp.identicalRetry(b, pid, epoch) {
			if sp.cfg.Knobs.RejectIdenticalRetry {
				return fmt.Errorf("%w: [%d,%d] already staged by this transaction", ErrInvalidRecordState, b.First, b.Last)
			}
			return nil
		}
		return sp.checkOwned(b, owner, checkType)
	}
	apply := func(b *Batch) {
		if sp.identicalRetry(b, pid, epoch) {
			return
		}
		sp.applyEach(b, func(r *run, t AckType) {
			r.state, r.owner, r.deadline = TxPending, 0, NoDeadline
			r.pid, r.epoch, r.staged = pid, epoch, t
			sp.ctr.Staged += r.n()
		})
	}
	if err := disjoint(batches); err != nil {
		return err
	}
	if sp.cfg.Knobs.StageStopAtFirstFailure {
		for bi := range batches {
			if err := validate(&batches[bi]); err != nil {
				sp.merge()
				return err
			}
			apply(&batches[bi])
		}
	} else {
		for bi := range batches {
			if err := validate(&batches[bi]); err != nil {
				return err
			}
		}
		for bi := range batches {
			apply(&batches[bi])
		}
	}
	sp.merge()
	return nil
}

// identicalRetry reports whether every in-window offset of b is already
// TX_PENDING for (pid, epoch) with the staged outcome b asks for.
func (sp *SharePartition) identicalRetry(b *Batch, pid ProducerID, epoch int16) bool {
	first := b.First
	if first < sp.spso {
		first = sp.spso
	}
	if b.Last >= sp.end || first > b.Last {
		return false
	}
	for o := first; o <= b.Last; o++ {
		r := &sp.runs[sp.find(o)]
		if r.state != TxPending || r.pid != pid || r.epoch != epoch || r.staged != b.typeAt(o) {
			return false
		}
	}
	return true
}

// UnstageFailed undoes a staging of (pid, epoch) whose durable write failed:
// the records go back to owner as ACQUIRED, with a fresh lock (safe) or with
// no lock (draft knob). It must follow the Stage it undoes with no other
// call in between (the engine calls both under one lock): with the
// TxPendingLimit knob a staging frees lock slots a poll may then fill, and
// a later undo would hold more records than the window has slots.
func (sp *SharePartition) UnstageFailed(now time.Duration, owner Owner, pid ProducerID, epoch int16, batches []Batch) {
	if invariants.Enabled {
		defer sp.checked()
	}
	deadline := now + sp.cfg.LockDuration
	if sp.cfg.Knobs.FailedStageNoLock {
		deadline = NoDeadline
	}
	for bi := range batches {
		b := &batches[bi]
		first, last := b.First, b.Last
		if first < sp.spso {
			first = sp.spso
		}
		if last >= sp.end {
			last = sp.end - 1
		}
		if first > last {
			continue
		}
		i, j := sp.span(first, last)
		for k := i; k < j; k++ {
			r := &sp.runs[k]
			if r.state == TxPending && r.pid == pid && r.epoch == epoch {
				r.state, r.owner, r.deadline = Acquired, owner, deadline
				r.pid, r.epoch, r.staged = 0, 0, 0
				sp.ctr.Staged -= r.n()
				if deadline < sp.nextD {
					sp.nextD = deadline
				}
			}
		}
	}
	sp.merge()
}

// markerOfOther reports whether a marker of producer pid leaves the
// TX_PENDING run r alone because another producer staged it.
func markerOfOther(r *run, pid ProducerID) bool {
	if mutant.On("marker-any-producer") {
		return false
	}
	return r.pid != pid
}

// Marker applies a transaction marker of producer pid at epoch: commit moves
// its TX_PENDING records to their staged outcome, abort returns them to
// AVAILABLE (count kept, owner cleared). Records staged by another producer
// are untouched, and a replayed marker finds nothing to do. It returns how
// many records changed.
func (sp *SharePartition) Marker(now time.Duration, pid ProducerID, epoch int16, commit bool) int64 {
	if invariants.Enabled {
		defer sp.checked()
	}
	sp.expireDue(now)
	var n int64
	for i := sp.head; i < len(sp.runs); i++ {
		r := &sp.runs[i]
		if r.state != TxPending || markerOfOther(r, pid) {
			continue
		}
		if sp.cfg.Knobs.ExactEpochMatch {
			if epoch != r.epoch {
				continue
			}
		} else if epoch < r.epoch {
			continue
		}
		n += r.n()
		sp.touch(r.first, r.last)
		switch {
		case commit && r.staged == Accept:
			r.state = Acknowledged
			sp.ctr.Accepted += r.n()
			if mutant.On("marker-double-count") {
				sp.ctr.Accepted += r.n()
			}
			if r.first%50 == 0 && mutant.On("commit-redelivers") {
				r.state, r.owner, r.deadline = Available, 0, NoDeadline
			}
		case commit && r.staged == Reject && mutant.On("reject-commits-as-accept"):
			r.state = Acknowledged
			sp.ctr.Accepted += r.n()
		case commit:
			r.state, r.reason = Archived, ReasonRejected
			if r.staged == Gap {
				r.reason = ReasonGap
			} else {
				sp.ctr.Rejected += r.n()
				sp.deadLetter(r, true)
			}
			sp.ctr.Archived += r.n()
		default:
			if mutant.On("abort-leaves-pending") {
				continue
			}
			sp.ctr.TxAborted += r.n()
			r.pid, r.epoch, r.staged, r.owner, r.deadline = 0, 0, 0, 0, NoDeadline
			if int(r.count) >= sp.cfg.DeliveryLimit && !sp.cfg.Knobs.AbortToAvailableAtLimit {
				r.state, r.reason = Archived, ReasonLimit
				sp.ctr.Archived += r.n()
				sp.deadLetter(r, false)
			} else {
				r.state = Available
			}
			if mutant.On("abort-acknowledges") {
				r.state = Acknowledged
			}
			continue
		}
		sp.ctr.TxCommitted += r.n()
		r.pid, r.epoch, r.staged = 0, 0, 0
	}
	if n > 0 {
		sp.archiveBelowLogStart()
		sp.merge()
		sp.advance()
	}
	return n
}

// NextDeadline returns a lower bound of the earliest lock deadline, or
// NoDeadline when no record is acquired.
func (sp *SharePartition) NextDeadline() time.Duration { return sp.nextD }

// Expire releases every ACQUIRED record whose lock deadline has passed:
// AVAILABLE, or ARCHIVED at the delivery limit. TX_PENDING records have no
// lock and are untouched. It returns how many records expired.
func (sp *SharePartition) Expire(now time.Duration) int64 {
	if invariants.Enabled {
		defer sp.checked()
	}
	if now < sp.nextD {
		return 0
	}
	var n int64
	next := NoDeadline
	for i := sp.head; i < len(sp.runs); i++ {
		r := &sp.runs[i]
		if r.state == TxPending && mutant.On("expiry-releases-pending") {
			sp.makeAvailable(r)
		}
		if r.state != Acquired {
			continue
		}
		if r.deadline <= now {
			n += r.n()
			sp.touch(r.first, r.last)
			sp.makeAvailable(r)
		} else if r.deadline < next {
			next = r.deadline
		}
	}
	sp.nextD = next
	if n > 0 {
		sp.ctr.LockExpiries += n
		sp.archiveBelowLogStart()
		sp.merge()
		sp.advance()
	}
	return n
}

func (sp *SharePartition) expireDue(now time.Duration) {
	if now >= sp.nextD {
		sp.Expire(now)
	}
}

// ReleaseOwner releases every record acquired by owner (its session closed or
// it left): AVAILABLE with the delivery count reduced by one, since the
// delivery never completed; never archived. TX_PENDING records are untouched.
func (sp *SharePartition) ReleaseOwner(now time.Duration, owner Owner) int64 {
	if invariants.Enabled {
		defer sp.checked()
	}
	sp.expireDue(now)
	var n int64
	for i := sp.head; i < len(sp.runs); i++ {
		r := &sp.runs[i]
		if r.state != Acquired || r.owner != owner {
			continue
		}
		n += r.n()
		sp.touch(r.first, r.last)
		r.state, r.owner, r.deadline = Available, 0, NoDeadline
		if mutant.On("session-close-archives") {
			r.state = Archived
		}
		if r.count > 0 {
			r.count--
		}
	}
	if n > 0 {
		sp.ctr.SessionRel += n
		sp.archiveBelowLogStart() // may archive: advance too
		sp.merge()
		sp.advance()
	}
	return n
}

// AdvanceLogStart tells the partition that the log now starts at offset:
// AVAILABLE records below it are archived, records never brought into the
// window below it are skipped.
func (sp *SharePartition) AdvanceLogStart(offset int64) {
	if invariants.Enabled {
		defer sp.checked()
	}
	if offset > sp.logStart {
		sp.logStart = offset
	}
	if offset <= sp.spso {
		return
	}
	if offset > sp.end {
		// Offsets [end, offset) never entered the window: they are gone.
		sp.appendRun(run{first: sp.end, last: offset - 1, state: Archived, reason: ReasonLogStart, deadline: NoDeadline})
	}
	last := offset - 1
	if last >= sp.spso {
		i, j := sp.span(sp.spso, last)
		for k := i; k < j; k++ {
			r := &sp.runs[k]
			if r.state == Available {
				r.state, r.reason = Archived, ReasonLogStart
				sp.ctr.Archived += r.n()
			}
		}
	}
	sp.merge()
	sp.advance()
}

// archiveBelowLogStart archives the AVAILABLE records below the log start
// (see logStart). Nothing to do, and no run split, in the usual case where
// SPSO has passed the log start.
func (sp *SharePartition) archiveBelowLogStart() {
	last := min(sp.logStart, sp.end) - 1
	if last < sp.spso {
		return
	}
	i, j := sp.span(sp.spso, last)
	for k := i; k < j; k++ {
		r := &sp.runs[k]
		if r.state == Available {
			r.state, r.reason = Archived, ReasonLogStart
			sp.ctr.Archived += r.n()
		}
	}
}

// spsoPasses reports whether SPSO may move over a run in state s: only a
// terminal one.
func spsoPasses(s State) bool {
	if mutant.On("spso-over-nonterminal") {
		return s.Terminal() || s == Available
	}
	return s.Terminal()
}

// advance moves SPSO over the longest prefix of terminal records.
func (sp *SharePartition) advance() {
	for sp.head < len(sp.runs) && spsoPasses(sp.runs[sp.head].state) {
		r := &sp.runs[sp.head]
		if sp.cfg.KeepHistory {
			sp.hist.put(r.first, r.last, r.state, r.reason, int(r.count))
		}
		sp.spso = r.last + 1
		sp.runs[sp.head] = run{}
		sp.head++
	}
	if sp.keptEnd > 0 && sp.spso >= sp.keptEnd {
		sp.keptEnd, sp.keptN = 0, 0
	}
	// Compact when the dead prefix dominates, so memory follows the
	// window, not the partition's history.
	if sp.head > 32 && sp.head*2 > len(sp.runs) {
		n := copy(sp.runs, sp.runs[sp.head:])
		clear(sp.runs[n:])
		sp.runs = sp.runs[:n]
		sp.head = 0
	}
}

// merge joins adjacent alike runs, keeping the run count proportional to
// the number of distinct states rather than acknowledgement calls.
func (sp *SharePartition) merge() {
	if len(sp.runs)-sp.head < 2 {
		return
	}
	w := sp.head
	for i := sp.head + 1; i < len(sp.runs); i++ {
		if sp.runs[w].sameAs(&sp.runs[i]) && sp.runs[w].last+1 == sp.runs[i].first {
			sp.runs[w].last = sp.runs[i].last
			continue
		}
		w++
		sp.runs[w] = sp.runs[i]
	}
	clear(sp.runs[w+1:])
	sp.runs = sp.runs[:w+1]
}

// checked is what every mutator defers in an invariants build: Check,
// and a panic naming the broken rule, so a violation stops at the call
// that made it rather than surfacing later as a wrong delivery.
func (sp *SharePartition) checked() {
	if err := sp.Check(); err != nil {
		panic(fmt.Sprintf("sharepart: invariant broken: %v", err))
	}
}

// Rule names the structural rule a Check failure breaks.
type Rule uint8

// The structural rules Check verifies.
const (
	RuleRuns              Rule = iota + 1 // runs contiguous over [SPSO, End)
	RuleOwner                             // an owner exactly on ACQUIRED runs
	RuleTxPendingProducer                 // a TX_PENDING run names its producer
	RuleSPSO                              // the first run is not terminal
	RuleWindow                            // in-flight records within the window
	RuleLockSlots                         // no more records hold a lock slot than there are slots
)

// CheckError is a Check failure: the rule broken and what broke it.
type CheckError struct {
	Rule Rule
	Msg  string
}

func (e *CheckError) Error() string { return e.Msg }

func checkErr(r Rule, format string, args ...any) error {
	return &CheckError{Rule: r, Msg: fmt.Sprintf(format, args...)}
}

// Check verifies the structural invariants: runs contiguous over
// [SPSO, End), the first run non-terminal, in-flight records within the
// window, owners only on ACQUIRED runs. Cheap enough for tests and the
// simulator to call after every step.
func (sp *SharePartition) Check() error {
	next := sp.spso
	for i := sp.head; i < len(sp.runs); i++ {
		r := &sp.runs[i]
		if r.first != next || r.last < r.first {
			return checkErr(RuleRuns, "engine: run %d [%d,%d] does not continue at %d", i, r.first, r.last, next)
		}
		if (r.state == Acquired) != (r.owner != 0) {
			return checkErr(RuleOwner, "engine: run [%d,%d] state %v owner %d", r.first, r.last, r.state, r.owner)
		}
		if r.state == TxPending && r.pid == 0 {
			return checkErr(RuleTxPendingProducer, "engine: run [%d,%d] TX_PENDING without producer", r.first, r.last)
		}
		next = r.last + 1
	}
	if next != sp.end {
		return checkErr(RuleRuns, "engine: runs end at %d, window end %d", next, sp.end)
	}
	if sp.head < len(sp.runs) && sp.runs[sp.head].state.Terminal() {
		return checkErr(RuleSPSO, "engine: SPSO %d sits on a terminal record", sp.spso)
	}
	// In batch_optimized a fetch may run past the window end (the check
	// comes before it), so only record_limit bounds the window exactly.
	// Records kept from a larger window (keptEnd) are in flight lawfully.
	// Under the TxPendingLimit knob an in-flight record may lie anywhere
	// the window ever reached (SPSO + locks + limit: an abort shrinks
	// windowLimit under records acquired before it), and the bound that
	// holds is the count of records holding a lock slot (locked).
	if sp.cfg.AcquireMode == RecordLimit {
		n := int64(sp.cfg.Knobs.TxPendingLimit)
		limit := max(sp.spso+int64(sp.cfg.MaxRecordLocks)+n, sp.keptEnd)
		for i := sp.head; i < len(sp.runs); i++ {
			r := &sp.runs[i]
			if !r.state.Terminal() && r.state != Available && r.last >= limit {
				return checkErr(RuleWindow, "engine: in-flight record %d beyond window SPSO %d + %d", r.last, sp.spso, limit-sp.spso)
			}
		}
		if held, slots := sp.locked(), max(int64(sp.cfg.MaxRecordLocks), sp.keptN); n > 0 && held > slots {
			return checkErr(RuleLockSlots, "engine: %d records hold a lock slot (ACQUIRED, or TX_PENDING past the %d the limit frees), share.partition.max.record.locks %d", held, n, slots)
		}
	}
	return nil
}

// Each calls f for every run in the window, in offset order (for
// introspection and snapshots).
func (sp *SharePartition) Each(f func(first, last int64, info RecordInfo)) {
	for i := sp.head; i < len(sp.runs); i++ {
		r := &sp.runs[i]
		f(r.first, r.last, RecordInfo{
			Offset: r.first, State: r.state, DeliveryCount: int(r.count), Owner: r.owner,
			Deadline: r.deadline, Producer: r.pid, Epoch: r.epoch, Staged: r.staged, Reason: r.reason, Known: true,
		})
	}
}
