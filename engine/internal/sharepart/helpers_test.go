// This file holds the small step language the table-driven tests of the
// share-partition state machine are written in: each test case is a list of
// steps (acquire, acknowledge, stage, marker, expire, ...) with the result or
// error each must produce, then the state every listed offset must end in.

package sharepart_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sharebench/sharebench/engine/internal/sharepart"
)

const sec = time.Second

// Short names keep the tables readable.
const (
	Available    = sharepart.Available
	Acquired     = sharepart.Acquired
	Acknowledged = sharepart.Acknowledged
	Archived     = sharepart.Archived
	TxPending    = sharepart.TxPending

	Gap     = sharepart.Gap
	Accept  = sharepart.Accept
	Release = sharepart.Release
	Reject  = sharepart.Reject
	Renew   = sharepart.Renew

	badType = sharepart.AckType(9)
)

// gapLog is a Log whose gap offsets are a set.
type gapLog map[int64]bool

func (g gapLog) IsGap(o int64) bool { return g[o] }

// BatchEnd: every record is a batch of its own.
func (g gapLog) BatchEnd(o int64, _ int) int64 { return o }

// testConfig: 10s locks, delivery limit 3, a window of 10 records, history
// kept so records below SPSO can be inspected.
func testConfig() sharepart.Config {
	return sharepart.Config{LockDuration: 10 * sec, DeliveryLimit: 3, MaxRecordLocks: 10, KeepHistory: true}
}

// describe renders the fields of a record that define its state:
//
//	AVAILABLE c1 | ACQUIRED c1 o2 d11s | ACKNOWLEDGED c1 |
//	ARCHIVED c2 delivery-limit | TX_PENDING c1 p7 e0 ACCEPT
func describe(ri sharepart.RecordInfo) string {
	switch ri.State {
	case Available:
		return fmt.Sprintf("AVAILABLE c%d", ri.DeliveryCount)
	case Acquired:
		d := "nolock"
		if ri.Deadline != sharepart.NoDeadline {
			d = "d" + ri.Deadline.String()
		}
		return fmt.Sprintf("ACQUIRED c%d o%d %s", ri.DeliveryCount, ri.Owner, d)
	case Acknowledged:
		return fmt.Sprintf("ACKNOWLEDGED c%d", ri.DeliveryCount)
	case Archived:
		return fmt.Sprintf("ARCHIVED c%d %v", ri.DeliveryCount, ri.Reason)
	case TxPending:
		s := fmt.Sprintf("TX_PENDING c%d p%d e%d %v", ri.DeliveryCount, ri.Producer, ri.Epoch, ri.Staged)
		if ri.Deadline != sharepart.NoDeadline || ri.Owner != 0 {
			s += fmt.Sprintf(" (still locked: o%d d%v)", ri.Owner, ri.Deadline) // the lock must be cancelled
		}
		return s
	}
	return ri.State.String()
}

// step is one call on the share partition. run returns a rendering of the
// call's result (compared with want unless want is "*") and its error
// (compared with err by errors.Is; nil means success).
type step struct {
	desc string
	run  func(sp *sharepart.SharePartition, log sharepart.Log) (string, error)
	want string
	err  error
}

func b(first, last int64, t sharepart.AckType) sharepart.Batch {
	return sharepart.Batch{First: first, Last: last, Type: t}
}

func bt(first, last int64, types ...sharepart.AckType) sharepart.Batch {
	return sharepart.Batch{First: first, Last: last, Types: types}
}

func renderRanges(rs []sharepart.Range) string {
	var s []string
	for _, r := range rs {
		s = append(s, fmt.Sprintf("[%d,%d]c%d", r.First, r.Last, r.DeliveryCount))
	}
	return strings.Join(s, " ")
}

func renderBatches(bs []sharepart.Batch) string {
	var s []string
	for _, x := range bs {
		if len(x.Types) > 0 {
			s = append(s, fmt.Sprintf("[%d,%d]%v", x.First, x.Last, x.Types))
		} else {
			s = append(s, fmt.Sprintf("[%d,%d]%v", x.First, x.Last, x.Type))
		}
	}
	return strings.Join(s, " ")
}

// acquire: owner polls up to max records below fetchEnd; want lists the
// acquired ranges ("[0,2]c1 [4,4]c2", "" for none).
func acquire(now time.Duration, owner sharepart.Owner, max int, fetchEnd int64, want string) step {
	return step{
		desc: fmt.Sprintf("acquire(now=%v owner=%d max=%d fetchEnd=%d)", now, owner, max, fetchEnd),
		run: func(sp *sharepart.SharePartition, log sharepart.Log) (string, error) {
			return renderRanges(sp.Acquire(now, owner, max, fetchEnd, log, nil)), nil
		},
		want: want,
	}
}

func ack(now time.Duration, owner sharepart.Owner, err error, batches ...sharepart.Batch) step {
	return step{
		desc: fmt.Sprintf("acknowledge(now=%v owner=%d %s)", now, owner, renderBatches(batches)),
		run: func(sp *sharepart.SharePartition, _ sharepart.Log) (string, error) {
			return "", sp.Acknowledge(now, owner, batches)
		},
		want: "*",
		err:  err,
	}
}

func stage(now time.Duration, owner sharepart.Owner, pid sharepart.ProducerID, epoch int16, err error, batches ...sharepart.Batch) step {
	return step{
		desc: fmt.Sprintf("stage(now=%v owner=%d pid=%d epoch=%d %s)", now, owner, pid, epoch, renderBatches(batches)),
		run: func(sp *sharepart.SharePartition, _ sharepart.Log) (string, error) {
			return "", sp.Stage(now, owner, pid, epoch, batches)
		},
		want: "*",
		err:  err,
	}
}

func unstage(now time.Duration, owner sharepart.Owner, pid sharepart.ProducerID, epoch int16, batches ...sharepart.Batch) step {
	return step{
		desc: fmt.Sprintf("unstageFailed(now=%v owner=%d pid=%d epoch=%d %s)", now, owner, pid, epoch, renderBatches(batches)),
		run: func(sp *sharepart.SharePartition, _ sharepart.Log) (string, error) {
			sp.UnstageFailed(now, owner, pid, epoch, batches)
			return "", nil
		},
		want: "*",
	}
}

// marker applies a commit or abort marker; want is how many records changed.
func marker(now time.Duration, pid sharepart.ProducerID, epoch int16, commit bool, changed int64) step {
	kind := "abort"
	if commit {
		kind = "commit"
	}
	return step{
		desc: fmt.Sprintf("marker(now=%v pid=%d epoch=%d %s)", now, pid, epoch, kind),
		run: func(sp *sharepart.SharePartition, _ sharepart.Log) (string, error) {
			return fmt.Sprint(sp.Marker(now, pid, epoch, commit)), nil
		},
		want: fmt.Sprint(changed),
	}
}

func expire(now time.Duration, expired int64) step {
	return step{
		desc: fmt.Sprintf("expire(now=%v)", now),
		run: func(sp *sharepart.SharePartition, _ sharepart.Log) (string, error) {
			return fmt.Sprint(sp.Expire(now)), nil
		},
		want: fmt.Sprint(expired),
	}
}

func releaseOwner(now time.Duration, owner sharepart.Owner, released int64) step {
	return step{
		desc: fmt.Sprintf("releaseOwner(now=%v owner=%d)", now, owner),
		run: func(sp *sharepart.SharePartition, _ sharepart.Log) (string, error) {
			return fmt.Sprint(sp.ReleaseOwner(now, owner)), nil
		},
		want: fmt.Sprint(released),
	}
}

func logStart(offset int64) step {
	return step{
		desc: fmt.Sprintf("advanceLogStart(%d)", offset),
		run: func(sp *sharepart.SharePartition, _ sharepart.Log) (string, error) {
			sp.AdvanceLogStart(offset)
			return "", nil
		},
		want: "*",
	}
}

// window checks SPSO, the window end and the in-flight count.
func window(spso, end int64, inFlight int) step {
	return step{
		desc: "window",
		run: func(sp *sharepart.SharePartition, _ sharepart.Log) (string, error) {
			return fmt.Sprintf("spso=%d end=%d inflight=%d", sp.SPSO(), sp.End(), sp.InFlight()), nil
		},
		want: fmt.Sprintf("spso=%d end=%d inflight=%d", spso, end, inFlight),
	}
}

// is checks the state of one record in the middle of a case.
func is(offset int64, want string) step {
	return step{
		desc: fmt.Sprintf("record(%d)", offset),
		run: func(sp *sharepart.SharePartition, _ sharepart.Log) (string, error) {
			return describe(sp.Record(offset)), nil
		},
		want: want,
	}
}

// spCase is one table entry.
type spCase struct {
	name  string
	cfg   func(*sharepart.Config) // nil: testConfig
	start int64                   // SPSO the partition starts at
	gaps  []int64                 // offsets the log reports as gaps
	steps []step
	want  map[int64]string // final state of each listed offset
}

// runCase runs c on a fresh share partition, checking sp.Check after every
// step.
func runCase(t *testing.T, c spCase) *sharepart.SharePartition {
	t.Helper()
	cfg := testConfig()
	if c.cfg != nil {
		c.cfg(&cfg)
	}
	sp, err := sharepart.New(cfg, c.start)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	log := gapLog{}
	for _, g := range c.gaps {
		log[g] = true
	}
	for i, s := range c.steps {
		got, err := s.run(sp, log)
		switch {
		case s.err == nil && err != nil:
			t.Fatalf("step %d %s: unexpected error %v", i, s.desc, err)
		case s.err != nil && !errors.Is(err, s.err):
			t.Fatalf("step %d %s: error %v, want %v", i, s.desc, err, s.err)
		}
		if s.want != "*" && got != s.want {
			t.Fatalf("step %d %s: got %q, want %q", i, s.desc, got, s.want)
		}
		if err := sp.Check(); err != nil {
			t.Fatalf("step %d %s: Check: %v", i, s.desc, err)
		}
	}
	checkRecords(t, sp, c.want)
	return sp
}

func checkRecords(t *testing.T, sp *sharepart.SharePartition, want map[int64]string) {
	t.Helper()
	offs := make([]int64, 0, len(want))
	for off := range want {
		offs = append(offs, off)
	}
	slices.Sort(offs)
	for _, off := range offs {
		w := want[off]
		if got := describe(sp.Record(off)); got != w {
			t.Errorf("record %d: got %q, want %q", off, got, w)
		}
	}
}

func runCases(t *testing.T, cases []spCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			runCase(t, c)
		})
	}
}
