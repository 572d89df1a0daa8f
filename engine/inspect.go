// This file holds introspection for tests, the simulator and the verifier:
// the state of any record, share partition and transaction, and counters.

package engine

import (
	"fmt"
	"sort"
	"time"

	"github.com/sharebench/sharebench/engine/internal/sharepart"
)

// RecordState is a share-group record's delivery state (docs/design.md
// §3.2, §3.3). Its String is the state's name in Kafka's spelling
// (AVAILABLE, ACQUIRED, ACKNOWLEDGED, ARCHIVED, TX_PENDING), the one
// spelling every report, ledger and trace uses.
type RecordState uint8

// Record states.
const (
	StateAvailable RecordState = iota
	StateAcquired
	StateAcknowledged
	StateArchived
	// StateTxPending: staged by a transaction, resolved by its marker.
	StateTxPending
)

func (s RecordState) String() string { return sharepart.State(s).String() }

// Terminal reports whether nothing can move a record out of s
// (ACKNOWLEDGED or ARCHIVED).
func (s RecordState) Terminal() bool { return sharepart.State(s).Terminal() }

// ArchiveReason says why a record was archived. An archive at the delivery
// limit is a rule; one before it is an anomaly the verifier reports.
type ArchiveReason uint8

// Archive reasons.
const (
	ReasonNone     ArchiveReason = iota
	ReasonRejected               // the owner rejected it
	ReasonGap                    // no record at the offset (marker, aborted record, gap ack)
	ReasonLimit                  // delivery count reached the limit
	ReasonLogStart               // the log start offset passed it
)

func (r ArchiveReason) String() string { return sharepart.Reason(r).String() }

// RecordInfo is one record's share state.
type RecordInfo struct {
	Offset        int64
	State         RecordState
	DeliveryCount int
	// Owner is the member holding it ACQUIRED.
	Owner string
	// LockDeadline is when its acquisition lock expires (engine clock).
	LockDeadline time.Duration
	// Producer and Epoch stage it while TX_PENDING, with the outcome the
	// commit marker will apply.
	Producer int64
	Epoch    int16
	Staged   AckType
	Reason   ArchiveReason
	// Known is false for a record below SPSO when the engine keeps no
	// history (WithHistory): it is terminal, outcome unknown; and for an
	// offset at or past the partition's high watermark, which holds no
	// record yet.
	Known bool
}

// ShareRecord returns the share state of one record for group.
func (e *Engine) ShareRecord(group string, tp TopicPartition, offset int64) (RecordInfo, error) {
	if err := e.enter(); err != nil {
		return RecordInfo{}, err
	}
	defer e.exit()
	var ri sharepart.RecordInfo
	err := e.withPartition(tp, func(p *partition) error {
		sp := p.shares[group]
		if sp == nil {
			return fmt.Errorf("%w: group %q has no share partition %s", ErrUnknownGroup, group, tp)
		}
		ri = sp.Record(offset)
		if offset >= sp.End() && offset >= e.hwLocked(p) {
			// Past the log end there is no record to have a state.
			ri = sharepart.RecordInfo{Offset: offset, State: sharepart.Available}
		}
		return nil
	})
	if err != nil {
		return RecordInfo{}, err
	}
	return e.recordInfo(group, ri), nil
}

func (e *Engine) recordInfo(group string, ri sharepart.RecordInfo) RecordInfo {
	out := RecordInfo{
		Offset: ri.Offset, State: RecordState(ri.State), DeliveryCount: ri.DeliveryCount, LockDeadline: ri.Deadline,
		Producer: int64(ri.Producer), Epoch: ri.Epoch, Staged: AckType(ri.Staged), Reason: ArchiveReason(ri.Reason), Known: ri.Known,
	}
	if ri.State != sharepart.Acquired {
		out.LockDeadline = 0
	}
	if ri.Owner != 0 {
		gs := e.groupShard(group)
		gs.mu.Lock()
		if g := gs.mu.share[group]; g != nil {
			out.Owner = g.owners[ri.Owner]
		}
		gs.mu.Unlock()
	}
	return out
}

// RecordRange is a range of records in one state.
type RecordRange struct {
	First, Last int64
	Info        RecordInfo
}

// SharePartitionInfo is one share partition's state.
type SharePartitionInfo struct {
	SPSO     int64 // share-partition start offset
	End      int64 // first offset never brought into the window (acquired, or archived as a gap or by the log start)
	InFlight int   // non-terminal records in the window
	Runs     int   // internal runs (memory accounting)
	Ranges   []RecordRange
	Counters Counters
}

// Counters are a share partition's cumulative event counts.
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

// SharePartition returns the state of group's share partition of tp.
func (e *Engine) SharePartition(group string, tp TopicPartition) (SharePartitionInfo, error) {
	if err := e.enter(); err != nil {
		return SharePartitionInfo{}, err
	}
	defer e.exit()
	var out SharePartitionInfo
	var raw []struct {
		first, last int64
		ri          sharepart.RecordInfo
	}
	err := e.withPartition(tp, func(p *partition) error {
		sp := p.shares[group]
		if sp == nil {
			return fmt.Errorf("%w: group %q has no share partition %s", ErrUnknownGroup, group, tp)
		}
		out.SPSO, out.End, out.InFlight, out.Runs, out.Counters = sp.SPSO(), sp.End(), sp.InFlight(), sp.Runs(), Counters(sp.Counters())
		sp.Each(func(first, last int64, ri sharepart.RecordInfo) {
			raw = append(raw, struct {
				first, last int64
				ri          sharepart.RecordInfo
			}{first, last, ri})
		})
		return nil
	})
	for _, r := range raw {
		out.Ranges = append(out.Ranges, RecordRange{First: r.first, Last: r.last, Info: e.recordInfo(group, r.ri)})
	}
	return out, err
}

// TxnInfo is a transactional id's coordinator state.
type TxnInfo struct {
	TransactionalID string
	ProducerID      int64
	Epoch           int16
	State           TxnState
	Timeout         time.Duration
	Started         time.Duration
	Transactions    int64 // begun under this id
	Partitions      []TopicPartition
	SharePartitions []string // "group/topic-partition"
	Groups          []string
	// MarkersPending counts the participants of a decided transaction
	// (PREPARE_*) that have not applied its marker yet; NextProducerID
	// and NextEpoch are the producer id and epoch the transactional id
	// has once they have (its producer already uses them).
	MarkersPending int
	NextProducerID int64
	NextEpoch      int16
}

// Transaction returns the coordinator state of a transactional id.
func (e *Engine) Transaction(id string) (TxnInfo, bool) {
	if e.enter() != nil {
		return TxnInfo{}, false
	}
	defer e.exit()
	ts := e.txnShard(id)
	ts.mu.Lock()
	defer ts.mu.Unlock()
	t := ts.mu.txns[id]
	if t == nil {
		return TxnInfo{}, false
	}
	info := TxnInfo{TransactionalID: id, ProducerID: t.PID, Epoch: t.Epoch, State: t.State, Timeout: t.Timeout,
		Started: t.Started, Transactions: t.Seq, Partitions: append([]TopicPartition(nil), t.Parts...),
		Groups: append([]string(nil), t.Groups...)}
	for _, k := range t.Shares {
		info.SharePartitions = append(info.SharePartitions, k.group+"/"+k.tp.String())
	}
	info.NextProducerID, info.NextEpoch = t.PID, t.Epoch
	if t.job != nil {
		info.MarkersPending, info.NextProducerID, info.NextEpoch = t.job.pending(), t.job.nextPID, t.job.nextEpoch
	}
	return info, true
}

// Stats are engine-wide counters.
type Stats struct {
	Produced      int64 // records appended
	Committed     int64 // transactions completed as committed (COMPLETE_COMMIT: every marker applied)
	Aborted       int64 // transactions completed as aborted, for any cause (COMPLETE_ABORT)
	TimedOut      int64 // transactions the timeout sweep decided to abort (PREPARE_ABORT; their markers may still be on their way)
	Fenced        int64 // producer fencings (re-inits and rejected calls)
	StageFailed   int64 // staging writes that failed
	DLQWritten    int64 // dead-letter copies written (KIP-1191)
	DLQDropped    int64 // dead-letter copies not written: the DLQ topic does not exist
	SessionsEnded int64 // members removed (leave or session timeout)
	// Share sums the share partitions' counters (those of partitions a
	// Restart or failover rebuilt included: the counters themselves are
	// not durable, but the sums never go back).
	Share Counters
	// Journal counts the data directory's appends, writes and fsyncs.
	Journal JournalStats
}

// Stats returns engine-wide counters, summing every share partition's.
func (e *Engine) Stats() Stats {
	s := Stats{
		Produced: e.stats.produced.Load(), Committed: e.stats.committed.Load(), Aborted: e.stats.aborted.Load(),
		TimedOut: e.stats.timedOut.Load(), Fenced: e.stats.fenced.Load(), StageFailed: e.stats.stageFailed.Load(),
		SessionsEnded: e.stats.sessionsEnd.Load(), Journal: e.journalStats(),
		DLQWritten: e.stats.dlqWritten.Load(), DLQDropped: e.stats.dlqDropped.Load(),
	}
	if e.dur != nil {
		e.dur.statsMu.Lock()
		s.Share = e.dur.shareBase
		e.dur.statsMu.Unlock()
	}
	if e.enter() != nil {
		return s
	}
	defer e.exit()
	for i := range e.data {
		ds := &e.data[i]
		ds.mu.Lock()
		for _, p := range ds.mu.parts {
			for _, g := range p.groups {
				c := p.shares[g].Counters()
				s.Share.Acquired += c.Acquired
				s.Share.Redelivered += c.Redelivered
				s.Share.Accepted += c.Accepted
				s.Share.Released += c.Released
				s.Share.Rejected += c.Rejected
				s.Share.Archived += c.Archived
				s.Share.LockExpiries += c.LockExpiries
				s.Share.Staged += c.Staged
				s.Share.TxCommitted += c.TxCommitted
				s.Share.TxAborted += c.TxAborted
				s.Share.SessionRel += c.SessionRel
			}
		}
		ds.mu.Unlock()
	}
	return s
}

// ShareGroups returns the share group ids with a share partition, sorted.
func (e *Engine) ShareGroups() []string {
	if e.enter() != nil {
		return nil
	}
	defer e.exit()
	seen := map[string]bool{}
	for i := range e.data {
		ds := &e.data[i]
		ds.mu.Lock()
		for _, p := range ds.mu.parts {
			for _, g := range p.groups {
				seen[g] = true
			}
		}
		ds.mu.Unlock()
	}
	out := make([]string, 0, len(seen))
	for g := range seen {
		out = append(out, g)
	}
	sort.Strings(out)
	return out
}

// CheckInvariants checks the structural invariants of every share
// partition (docs/design.md §4): a contiguous window, SPSO on a
// non-terminal record, owners only on acquired records, and, in
// record_limit, the in-flight window: no ACQUIRED or TX_PENDING record at
// or past SPSO + share.partition.max.record.locks (+ Knobs.TxPendingLimit)
// and, with that knob, at most share.partition.max.record.locks records
// holding a lock slot (records kept from a window that was lowered since
// they were acquired excepted). batch_optimized may overshoot the window
// by design, so it is not bounded there.
//
// It is exported for embedders that drive the engine step by step and
// check it between steps: the simulator (internal/sim) calls it after
// every step, in every build, and names the broken invariant in its
// verdict. The invariants build tag (engine/internal/invariants) runs the
// same share-partition checks after every mutation instead, inside the
// engine; this is the between-steps view that needs no special build.
func (e *Engine) CheckInvariants() error {
	if err := e.enter(); err != nil {
		return err
	}
	defer e.exit()
	for i := range e.data {
		ds := &e.data[i]
		ds.mu.Lock()
		for _, p := range ds.mu.parts {
			for _, g := range p.groups {
				if err := p.shares[g].Check(); err != nil {
					ds.mu.Unlock()
					return invariantError(g, p.tp, err)
				}
			}
		}
		ds.mu.Unlock()
	}
	return nil
}

// ShareMemberInfo describes one member of a share group.
type ShareMemberInfo struct {
	ID string
	// Epoch is the member's current epoch in the group coordinator
	// (docs/design.md §3.9); the member's own handle learns it on its next poll.
	Epoch int32
}

// ShareMembers returns group's current members, sorted by id.
func (e *Engine) ShareMembers(group string) ([]ShareMemberInfo, error) {
	if err := e.enter(); err != nil {
		return nil, err
	}
	defer e.exit()
	gs := e.groupShard(group)
	gs.mu.Lock()
	defer gs.mu.Unlock()
	g := gs.mu.share[group]
	if g == nil {
		return nil, fmt.Errorf("%w: %q", ErrUnknownGroup, group)
	}
	out := make([]ShareMemberInfo, 0, len(g.members))
	for _, st := range g.members {
		out = append(out, ShareMemberInfo{ID: st.id, Epoch: st.epoch})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// InvariantRule names the structural rule of a share partition that an
// InvariantError breaks (docs/design.md §4 numbers the rules they serve).
type InvariantRule uint8

// The structural rules CheckInvariants verifies.
const (
	RuleRunsContiguous    InvariantRule = InvariantRule(sharepart.RuleRuns)              // the records' states cover the window without gap or overlap
	RuleOwnerOnAcquired   InvariantRule = InvariantRule(sharepart.RuleOwner)             // an owner exactly on ACQUIRED records (rule 2)
	RuleTxPendingProducer InvariantRule = InvariantRule(sharepart.RuleTxPendingProducer) // a TX_PENDING record names its producer (rule 7)
	RuleSPSONotTerminal   InvariantRule = InvariantRule(sharepart.RuleSPSO)              // SPSO sits on a record not yet terminal (rule 5)
	RuleWindow            InvariantRule = InvariantRule(sharepart.RuleWindow)            // in-flight records within the window (rule 6)
	RuleLockSlots         InvariantRule = InvariantRule(sharepart.RuleLockSlots)         // no more records hold a lock slot than there are (rule 7's limit)
)

// InvariantError is a CheckInvariants failure: the share partition, the
// rule it breaks, and what broke it. Callers tell rules apart by Rule
// (errors.As), never by the message.
type InvariantError struct {
	Group string
	TP    TopicPartition
	Rule  InvariantRule
	Err   error
}

func (e *InvariantError) Error() string {
	return fmt.Sprintf("engine: group %q %s: %v", e.Group, e.TP, e.Err)
}

func (e *InvariantError) Unwrap() error { return e.Err }

func invariantError(group string, tp TopicPartition, err error) error {
	ie := &InvariantError{Group: group, TP: tp, Err: err}
	if ce, ok := err.(*sharepart.CheckError); ok {
		ie.Rule = InvariantRule(ce.Rule)
	}
	return ie
}
