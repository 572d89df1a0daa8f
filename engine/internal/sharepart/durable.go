// This file holds the durable view of a share partition, as the share-state
// log keeps it (KIP-932's __share_group_state): full snapshots and deltas
// between them, and restoring a partition from them.
//
// What is durable, as in Kafka: SPSO and, per record in the window, its
// state, delivery count and (TX_PENDING) staging producer, epoch and
// outcome. Acquisitions, owners and locks are not. A record ACQUIRED with
// delivery count c is durably AVAILABLE at c-1 (the state it was acquired
// from), so acquiring never changes the durable view and polls write
// nothing; a restored partition has every acquired record AVAILABLE again
// at its last durable count. Trailing AVAILABLE records at count 0 are the
// same as records never brought into the window, so the view drops them.
//
// The partition tracks the offsets whose durable state changed since the
// last TakeDelta; the engine calls TakeDelta after each operation, under
// the same lock, and appends the delta to the share-state log.

package sharepart

import (
	"fmt"
	"math"

	"github.com/sharebench/sharebench/engine/internal/invariants"
)

// DurableRun is a run of records in one durable state.
type DurableRun struct {
	First, Last int64
	State       State // never Acquired
	Count       int
	Producer    ProducerID // TX_PENDING only
	Epoch       int16      // TX_PENDING only
	Staged      AckType    // TX_PENDING only
	Reason      Reason     // ARCHIVED only
}

// Snapshot is a share partition's full durable state.
type Snapshot struct {
	// HistoryBase is the offset the partition started at (history, when
	// kept, is indexed from it).
	HistoryBase int64
	SPSO        int64
	Runs        []DurableRun // contiguous from SPSO
}

// Delta is the change of one operation (or several): the new SPSO and the
// durable state of [First, Last], which replaces what was there. History
// holds the final states of the records that left the window since the
// last delta, when the partition keeps history.
type Delta struct {
	SPSO        int64
	First, Last int64 // Last < First: no window change
	Runs        []DurableRun
	History     []DurableRun
}

// maxOffset bounds restored offsets so range arithmetic cannot overflow.
const maxOffset = 1 << 62

// maxHistoryRun bounds one history run put at restore time, so a corrupt
// log cannot make restoring allocate without limit.
const maxHistoryRun = 1 << 24

func (sp *SharePartition) touch(first, last int64) {
	if first > last {
		return
	}
	if !sp.dirty {
		sp.dirty, sp.dlo, sp.dhi = true, first, last
		return
	}
	sp.dlo = min(sp.dlo, first)
	sp.dhi = max(sp.dhi, last)
}

// Dirty reports whether the durable state changed since the last TakeDelta.
func (sp *SharePartition) Dirty() bool { return sp.dirty || sp.spso != sp.jspso }

// project is a run's durable form.
func project(r *run) DurableRun {
	d := DurableRun{First: r.first, Last: r.last, State: r.state, Count: int(r.count)}
	switch r.state {
	case Acquired:
		d.State = Available
		if d.Count > 0 {
			d.Count--
		}
	case TxPending:
		d.Producer, d.Epoch, d.Staged = r.pid, r.epoch, r.staged
	case Archived:
		d.Reason = r.reason
	}
	return d
}

func sameDurable(a, b *DurableRun) bool {
	return a.State == b.State && a.Count == b.Count && a.Producer == b.Producer &&
		a.Epoch == b.Epoch && a.Staged == b.Staged && a.Reason == b.Reason
}

// appendDurable appends d to dst, merging it into the last run when alike.
func appendDurable(dst []DurableRun, d DurableRun) []DurableRun {
	if n := len(dst); n > 0 && dst[n-1].Last+1 == d.First && sameDurable(&dst[n-1], &d) {
		dst[n-1].Last = d.Last
		return dst
	}
	return append(dst, d)
}

// appendWindow appends the durable runs of [first, last] ∩ window.
func (sp *SharePartition) appendWindow(dst []DurableRun, first, last int64) []DurableRun {
	first = max(first, sp.spso)
	last = min(last, sp.end-1)
	if first > last {
		return dst
	}
	for i := sp.find(first); i < len(sp.runs) && sp.runs[i].first <= last; i++ {
		d := project(&sp.runs[i])
		d.First = max(d.First, first)
		d.Last = min(d.Last, last)
		dst = appendDurable(dst, d)
	}
	return dst
}

func trimTrailing(runs []DurableRun) []DurableRun {
	for n := len(runs); n > 0 && runs[n-1].State == Available && runs[n-1].Count == 0; n = len(runs) {
		runs = runs[:n-1]
	}
	return runs
}

// Snapshot fills s with the partition's durable state (canonical: equal
// durable states give equal snapshots).
func (sp *SharePartition) Snapshot(s *Snapshot) {
	s.HistoryBase, s.SPSO = sp.hist.base, sp.spso
	s.Runs = trimTrailing(sp.appendWindow(s.Runs[:0], sp.spso, sp.end-1))
}

// TakeDelta fills d with the durable change since the last TakeDelta (or
// since New / Restore) and forgets it. It returns false, leaving d alone,
// when nothing durable changed.
func (sp *SharePartition) TakeDelta(d *Delta) bool {
	if !sp.Dirty() {
		return false
	}
	d.SPSO = sp.spso
	d.Runs, d.History = d.Runs[:0], d.History[:0]
	d.First, d.Last = sp.spso, sp.spso-1
	if sp.dirty {
		d.First, d.Last = max(sp.dlo, sp.spso), min(sp.dhi, sp.end-1)
		if d.First <= d.Last {
			d.Runs = sp.appendWindow(d.Runs, d.First, d.Last)
		} else {
			d.First, d.Last = sp.spso, sp.spso-1
		}
	}
	if sp.cfg.KeepHistory {
		for o := sp.jspso; o < sp.spso; o++ {
			st, reason, count, ok := sp.hist.get(o)
			if !ok {
				continue
			}
			d.History = appendDurable(d.History, DurableRun{First: o, Last: o, State: st, Reason: reason, Count: count})
		}
	}
	sp.dirty, sp.jspso = false, sp.spso
	return true
}

func (r *DurableRun) validate() error {
	switch {
	case r.First < 0 || r.Last < r.First || r.Last >= maxOffset:
		return fmt.Errorf("engine: durable run [%d,%d] out of range", r.First, r.Last)
	case r.Count < 0 || r.Count > math.MaxUint16:
		return fmt.Errorf("engine: durable run [%d,%d] delivery count %d", r.First, r.Last, r.Count)
	}
	switch r.State {
	case Available, Acknowledged:
	case Archived:
		if r.Reason > ReasonLogStart {
			return fmt.Errorf("engine: durable run [%d,%d] archive reason %d", r.First, r.Last, r.Reason)
		}
	case TxPending:
		if r.Producer == 0 || (r.Staged != Accept && r.Staged != Reject && r.Staged != Gap) {
			return fmt.Errorf("engine: durable run [%d,%d] TX_PENDING producer %d outcome %v", r.First, r.Last, r.Producer, r.Staged)
		}
	default:
		return fmt.Errorf("engine: durable run [%d,%d] state %v", r.First, r.Last, r.State)
	}
	return nil
}

func (r *DurableRun) toRun() run {
	out := run{first: r.First, last: r.Last, state: r.State, count: uint16(r.Count), deadline: NoDeadline}
	switch r.State {
	case TxPending:
		out.pid, out.epoch, out.staged = r.Producer, r.Epoch, r.Staged
	case Archived:
		out.reason = r.Reason
	}
	return out
}

// checkRuns validates runs contiguous over [first, ...].
func checkRuns(runs []DurableRun, first int64) error {
	next := first
	for i := range runs {
		r := &runs[i]
		if err := r.validate(); err != nil {
			return err
		}
		if r.First != next {
			return fmt.Errorf("engine: durable run [%d,%d] does not continue at %d", r.First, r.Last, next)
		}
		next = r.Last + 1
	}
	return nil
}

// Restore returns a share partition in the durable state s: every record
// AVAILABLE, ACKNOWLEDGED, ARCHIVED or TX_PENDING as s says, none acquired,
// no locks, zero counters.
func Restore(cfg Config, s *Snapshot) (*SharePartition, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if s.SPSO < 0 || s.SPSO >= maxOffset || s.HistoryBase < 0 || s.HistoryBase > s.SPSO {
		return nil, fmt.Errorf("engine: snapshot SPSO %d, history base %d out of range", s.SPSO, s.HistoryBase)
	}
	if err := checkRuns(s.Runs, s.SPSO); err != nil {
		return nil, err
	}
	sp := &SharePartition{cfg: cfg, spso: s.SPSO, end: s.SPSO, nextD: NoDeadline}
	sp.hist.base = s.HistoryBase
	for i := range s.Runs {
		sp.runs = append(sp.runs, s.Runs[i].toRun())
		sp.end = s.Runs[i].Last + 1
	}
	if err := sp.normalize(); err != nil {
		return nil, err
	}
	return sp, nil
}

// normalize brings a restored window to canonical form and forgets the
// changes made on the way. A terminal record at SPSO is an error: the
// partition the state came from had moved SPSO past it.
func (sp *SharePartition) normalize() error {
	if sp.head < len(sp.runs) && sp.runs[sp.head].state.Terminal() {
		return fmt.Errorf("engine: %v record at SPSO %d", sp.runs[sp.head].state, sp.spso)
	}
	for n := len(sp.runs); n > sp.head && sp.runs[n-1].state == Available && sp.runs[n-1].count == 0; n = len(sp.runs) {
		sp.end = sp.runs[n-1].first
		sp.runs = sp.runs[:n-1]
	}
	sp.merge()
	sp.admitInFlight()
	sp.dirty, sp.jspso = false, sp.spso
	return nil
}

// ApplyDelta applies a delta taken from a partition whose durable state
// this one mirrors: the window part replaces [First, Last] (records beyond
// the window end come in AVAILABLE at count 0), SPSO moves to d.SPSO, and
// history (when kept) records what left the window.
func (sp *SharePartition) ApplyDelta(d *Delta) error {
	if invariants.Enabled {
		defer sp.checked()
	}
	if d.SPSO < sp.spso || d.SPSO >= maxOffset {
		return fmt.Errorf("engine: delta SPSO %d behind SPSO %d", d.SPSO, sp.spso)
	}
	if d.First <= d.Last {
		if d.First < d.SPSO || d.Last >= maxOffset {
			return fmt.Errorf("engine: delta [%d,%d] below its SPSO %d", d.First, d.Last, d.SPSO)
		}
		if err := checkRuns(d.Runs, d.First); err != nil {
			return err
		}
		if n := len(d.Runs); n == 0 || d.Runs[n-1].Last != d.Last {
			return fmt.Errorf("engine: delta runs do not cover [%d,%d]", d.First, d.Last)
		}
	} else if len(d.Runs) > 0 {
		return fmt.Errorf("engine: delta with no range carries %d runs", len(d.Runs))
	}
	if sp.cfg.KeepHistory {
		if err := sp.putHistory(d.History, d.SPSO); err != nil {
			return err
		}
	}
	sp.dropBelow(d.SPSO)
	if d.First <= d.Last {
		if d.Last >= sp.end {
			sp.runs = append(sp.runs, run{first: sp.end, last: d.Last, state: Available, deadline: NoDeadline})
			sp.end = d.Last + 1
		}
		i, j := sp.span(d.First, d.Last)
		repl := make([]run, 0, len(d.Runs))
		for k := range d.Runs {
			repl = append(repl, d.Runs[k].toRun())
		}
		tail := append([]run(nil), sp.runs[j:]...)
		sp.runs = append(append(sp.runs[:i], repl...), tail...)
	}
	return sp.normalize()
}

// dropBelow moves SPSO to offset, dropping the window below it whatever
// its state (a delta says those records are terminal and gone).
func (sp *SharePartition) dropBelow(offset int64) {
	if offset <= sp.spso {
		return
	}
	if offset >= sp.end {
		clear(sp.runs)
		sp.runs, sp.head = sp.runs[:0], 0
		sp.spso, sp.end = offset, offset
		return
	}
	i := sp.splitAt(offset)
	n := copy(sp.runs, sp.runs[i:])
	clear(sp.runs[n:])
	sp.runs, sp.head = sp.runs[:n], 0
	sp.spso = offset
}

// putHistory records the final states of records below spso. A run at or
// past spso is cut off there: the history log is written when records
// leave the window, so after a torn tail of the share-state log (which
// holds the window) the history log can be ahead of the recovered window,
// and the window is the authority for what it holds.
func (sp *SharePartition) putHistory(runs []DurableRun, spso int64) error {
	for i := range runs {
		r := runs[i]
		if err := r.validate(); err != nil {
			return err
		}
		if r.First >= spso {
			continue
		}
		r.Last = min(r.Last, spso-1)
		if !r.State.Terminal() || r.First < sp.hist.base || r.Last >= spso || r.Last-r.First >= maxHistoryRun ||
			r.Last-sp.hist.base >= int64(len(sp.hist.recs))+maxHistoryRun {
			return fmt.Errorf("engine: history run [%d,%d] %v outside [%d, %d)", r.First, r.Last, r.State, sp.hist.base, spso)
		}
		sp.hist.put(r.First, r.Last, r.State, r.Reason, r.Count)
	}
	return nil
}

// PutHistory records final states of records below SPSO (restoring the
// history a partition keeps with KeepHistory; a no-op without it).
func (sp *SharePartition) PutHistory(runs []DurableRun) error {
	if invariants.Enabled {
		defer sp.checked()
	}
	if !sp.cfg.KeepHistory {
		return nil
	}
	return sp.putHistory(runs, sp.spso)
}

// TruncateTo drops what the window holds at or past end, the partition
// log's end: after a torn tail was cut off the partition log, records the
// share-state log still describes are gone. SPSO moves back to end if it
// was past it (those offsets hold no record now; the next records appended
// there are new). The caller makes the result durable with a snapshot,
// since a delta cannot move SPSO back. It reports whether anything changed.
func (sp *SharePartition) TruncateTo(end int64) bool {
	if invariants.Enabled {
		defer sp.checked()
	}
	if end >= sp.end {
		return false
	}
	if end <= sp.spso {
		clear(sp.runs)
		sp.runs, sp.head = sp.runs[:0], 0
		sp.spso, sp.end, sp.jspso = end, end, end
		if sp.hist.base > end {
			sp.hist.base = end
		}
	} else {
		i := sp.splitAt(end)
		clear(sp.runs[i:])
		sp.runs = sp.runs[:i]
		sp.end = end
	}
	sp.dirty = false
	sp.nextD = NoDeadline
	for i := sp.head; i < len(sp.runs); i++ {
		if r := &sp.runs[i]; r.state == Acquired && r.deadline < sp.nextD {
			sp.nextD = r.deadline
		}
	}
	return true
}
