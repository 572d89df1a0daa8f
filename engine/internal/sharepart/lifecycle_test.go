// This file tests the KIP-932 record lifecycle of docs/design.md §3.2 on the pure
// state machine: every transition of the table, every rule under it, and
// every error case, one table entry each.

package sharepart_test

import (
	"testing"

	"github.com/sharebench/sharebench/engine/internal/sharepart"
)

func TestAcquire(t *testing.T) {
	t.Parallel()
	runCases(t, []spCase{
		{
			name: "new records: count 1, lock deadline now+lock",
			steps: []step{
				acquire(1*sec, 1, 3, 5, "[0,2]c1"),
				window(0, 3, 3),
			},
			want: map[int64]string{0: "ACQUIRED c1 o1 d11s", 2: "ACQUIRED c1 o1 d11s", 3: "AVAILABLE c0"},
		},
		{
			name: "AVAILABLE record: count +1, new owner, new deadline",
			steps: []step{
				acquire(0, 1, 3, 3, "[0,2]c1"),
				ack(1*sec, 1, nil, b(1, 1, Release)),
				is(1, "AVAILABLE c1"),
				acquire(2*sec, 2, 5, 3, "[1,1]c2"),
			},
			want: map[int64]string{0: "ACQUIRED c1 o1 d10s", 1: "ACQUIRED c2 o2 d12s", 2: "ACQUIRED c1 o1 d10s"},
		},
		{
			name: "released records inside the window come before new ones",
			steps: []step{
				acquire(0, 1, 3, 10, "[0,2]c1"),
				ack(0, 1, nil, b(0, 0, Release), b(2, 2, Release)),
				acquire(1*sec, 2, 3, 10, "[0,0]c2 [2,2]c2 [3,3]c1"),
			},
			want: map[int64]string{0: "ACQUIRED c2 o2 d11s", 1: "ACQUIRED c1 o1 d10s", 3: "ACQUIRED c1 o2 d11s"},
		},
		{
			name: "bounded by max and by the fetch end (high watermark or LSO)",
			steps: []step{
				acquire(0, 1, 2, 5, "[0,1]c1"),
				acquire(0, 1, 10, 3, "[2,2]c1"),
				acquire(0, 1, 10, 3, ""),
				window(0, 3, 3),
			},
		},
		{
			name: "owner 0 or max 0 acquires nothing",
			steps: []step{
				acquire(0, 0, 5, 5, ""),
				acquire(0, 1, 0, 5, ""),
				window(0, 0, 0),
			},
		},
		{
			name:  "window starts at the reset offset",
			start: 40,
			steps: []step{acquire(0, 1, 2, 45, "[40,41]c1"), window(40, 42, 2)},
			want:  map[int64]string{40: "ACQUIRED c1 o1 d10s"},
		},
		{
			name: "gaps are archived on acquisition and do not count toward max",
			gaps: []int64{1, 2, 5},
			steps: []step{
				acquire(0, 1, 10, 7, "[0,0]c1 [3,4]c1 [6,6]c1"),
				window(0, 7, 4),
			},
			want: map[int64]string{1: "ARCHIVED c0 gap", 2: "ARCHIVED c0 gap", 5: "ARCHIVED c0 gap", 6: "ACQUIRED c1 o1 d10s"},
		},
		{
			name: "a gap prefix moves SPSO",
			gaps: []int64{0, 1},
			steps: []step{
				acquire(0, 1, 5, 4, "[2,3]c1"),
				window(2, 4, 2),
			},
			want: map[int64]string{0: "ARCHIVED c0 gap", 1: "ARCHIVED c0 gap"},
		},
		{
			name: "max counts records, not gaps",
			gaps: []int64{1},
			steps: []step{
				acquire(0, 1, 2, 5, "[0,0]c1 [2,2]c1"),
				window(0, 3, 2),
			},
		},
	})
}

func TestAcknowledge(t *testing.T) {
	t.Parallel()
	runCases(t, []spCase{
		{
			name: "ACCEPT: ACQUIRED(M) -> ACKNOWLEDGED, count kept",
			steps: []step{
				acquire(0, 1, 3, 3, "[0,2]c1"),
				ack(1*sec, 1, nil, b(0, 2, Accept)),
				window(3, 3, 0),
			},
			want: map[int64]string{0: "ACKNOWLEDGED c1", 2: "ACKNOWLEDGED c1"},
		},
		{
			name: "REJECT: ACQUIRED(M) -> ARCHIVED",
			steps: []step{
				acquire(0, 1, 3, 3, "[0,2]c1"),
				ack(1*sec, 1, nil, b(1, 1, Reject)),
				window(0, 3, 2),
			},
			want: map[int64]string{0: "ACQUIRED c1 o1 d10s", 1: "ARCHIVED c1 rejected"},
		},
		{
			name: "gap ack: ACQUIRED(M) -> ARCHIVED",
			steps: []step{
				acquire(0, 1, 3, 3, "[0,2]c1"),
				ack(1*sec, 1, nil, b(0, 0, Gap)),
				window(1, 3, 2),
			},
			want: map[int64]string{0: "ARCHIVED c1 gap"},
		},
		{
			name: "RELEASE below the limit: ACQUIRED(M) -> AVAILABLE, count kept",
			steps: []step{
				acquire(0, 1, 3, 3, "[0,2]c1"),
				ack(1*sec, 1, nil, b(1, 2, Release)),
				window(0, 3, 3),
			},
			want: map[int64]string{1: "AVAILABLE c1", 2: "AVAILABLE c1"},
		},
		{
			name: "RELEASE at the limit: ACQUIRED(M) -> ARCHIVED",
			cfg:  func(c *sharepart.Config) { c.DeliveryLimit = 2 },
			steps: []step{
				acquire(0, 1, 1, 1, "[0,0]c1"),
				ack(0, 1, nil, b(0, 0, Release)),
				acquire(0, 2, 1, 1, "[0,0]c2"),
				ack(0, 2, nil, b(0, 0, Release)),
				window(1, 1, 0),
				acquire(0, 1, 1, 1, ""),
			},
			want: map[int64]string{0: "ARCHIVED c2 delivery-limit"},
		},
		{
			name: "RENEW restarts the deadline",
			steps: []step{
				acquire(1*sec, 1, 2, 2, "[0,1]c1"),
				ack(5*sec, 1, nil, b(0, 0, Renew)),
				is(0, "ACQUIRED c1 o1 d15s"),
				expire(11*sec, 1), // only offset 1 keeps the old deadline
				is(0, "ACQUIRED c1 o1 d15s"),
				is(1, "AVAILABLE c1"),
				expire(14*sec, 0),
				expire(15*sec, 1),
			},
			want: map[int64]string{0: "AVAILABLE c1", 1: "AVAILABLE c1"},
		},
		{
			name: "one type per offset",
			steps: []step{
				acquire(0, 1, 4, 4, "[0,3]c1"),
				ack(2*sec, 1, nil, bt(0, 3, Accept, Release, Reject, Renew)),
			},
			want: map[int64]string{0: "ACKNOWLEDGED c1", 1: "AVAILABLE c1", 2: "ARCHIVED c1 rejected", 3: "ACQUIRED c1 o1 d12s"},
		},
		{
			name: "acks below SPSO are no-op successes, whoever sends them",
			steps: []step{
				acquire(0, 1, 3, 5, "[0,2]c1"),
				ack(0, 1, nil, b(0, 2, Accept)),
				ack(0, 1, nil, b(0, 2, Release)),
				ack(0, 2, nil, b(1, 1, Reject)),
				ack(0, 2, nil, bt(0, 1, badType, badType)),
				acquire(0, 1, 2, 5, "[3,4]c1"),
				ack(0, 1, nil, b(1, 3, Accept)), // straddles SPSO: only 3 applies
				window(4, 5, 1),
			},
			want: map[int64]string{0: "ACKNOWLEDGED c1", 1: "ACKNOWLEDGED c1", 3: "ACKNOWLEDGED c1", 4: "ACQUIRED c1 o1 d10s"},
		},
	})
}

func TestAcknowledgeErrors(t *testing.T) {
	t.Parallel()
	runCases(t, []spCase{
		{
			name: "only the owner may ack or renew",
			steps: []step{
				acquire(0, 1, 2, 2, "[0,1]c1"),
				ack(1*sec, 2, sharepart.ErrNotOwner, b(0, 0, Accept)),
				ack(1*sec, 2, sharepart.ErrNotOwner, b(1, 1, Renew)),
				ack(1*sec, 2, sharepart.ErrNotOwner, b(0, 1, Release)),
			},
			want: map[int64]string{0: "ACQUIRED c1 o1 d10s", 1: "ACQUIRED c1 o1 d10s"},
		},
		{
			name: "not acquired: AVAILABLE, ACKNOWLEDGED or ARCHIVED inside the window",
			steps: []step{
				acquire(0, 1, 4, 4, "[0,3]c1"),
				ack(0, 1, nil, b(1, 1, Accept), b(2, 2, Reject), b(3, 3, Release)),
				ack(0, 1, sharepart.ErrInvalidRecordState, b(1, 1, Accept)),
				ack(0, 1, sharepart.ErrInvalidRecordState, b(2, 2, Release)),
				ack(0, 1, sharepart.ErrInvalidRecordState, b(3, 3, Accept)),
				ack(0, 2, sharepart.ErrInvalidRecordState, b(3, 3, Accept)),
			},
			want: map[int64]string{0: "ACQUIRED c1 o1 d10s", 1: "ACKNOWLEDGED c1", 2: "ARCHIVED c1 rejected", 3: "AVAILABLE c1"},
		},
		{
			name: "a lock that passed is released before the ack is checked",
			steps: []step{
				acquire(0, 1, 1, 1, "[0,0]c1"),
				ack(10*sec, 1, sharepart.ErrInvalidRecordState, b(0, 0, Accept)),
			},
			want: map[int64]string{0: "AVAILABLE c1"},
		},
		{
			name: "beyond the window end",
			steps: []step{
				ack(0, 1, sharepart.ErrOutOfRange, b(0, 0, Accept)),
				acquire(0, 1, 3, 3, "[0,2]c1"),
				ack(0, 1, sharepart.ErrOutOfRange, b(2, 3, Accept)),
				ack(0, 1, sharepart.ErrOutOfRange, b(7, 9, Accept)),
			},
			want: map[int64]string{2: "ACQUIRED c1 o1 d10s"},
		},
		{
			name: "invalid ack type",
			steps: []step{
				acquire(0, 1, 3, 3, "[0,2]c1"),
				ack(0, 1, sharepart.ErrInvalidAckType, b(0, 0, badType)),
				ack(0, 1, sharepart.ErrInvalidAckType, bt(0, 2, Accept, Accept, badType)),
			},
			want: map[int64]string{0: "ACQUIRED c1 o1 d10s", 1: "ACQUIRED c1 o1 d10s"},
		},
		{
			name: "malformed batches",
			steps: []step{
				acquire(0, 1, 3, 3, "[0,2]c1"),
				ack(0, 1, sharepart.ErrInvalidRequest, b(2, 1, Accept)),
				ack(0, 1, sharepart.ErrInvalidRequest, bt(0, 2, Accept, Accept)),
			},
			want: map[int64]string{0: "ACQUIRED c1 o1 d10s"},
		},
		{
			name: "all-or-nothing: a failing batch leaves earlier batches unapplied",
			steps: []step{
				acquire(0, 1, 3, 4, "[0,2]c1"),
				acquire(0, 2, 1, 4, "[3,3]c1"),
				ack(0, 1, sharepart.ErrOutOfRange, b(0, 0, Accept), b(1, 1, Reject), b(9, 9, Accept)),
				ack(0, 1, sharepart.ErrNotOwner, b(0, 1, Accept), b(2, 3, Accept)),
				ack(0, 1, sharepart.ErrInvalidAckType, b(0, 0, Release), b(1, 1, badType)),
				ack(0, 1, sharepart.ErrInvalidRequest, b(0, 0, Accept), b(2, 1, Accept)),
			},
			want: map[int64]string{0: "ACQUIRED c1 o1 d10s", 1: "ACQUIRED c1 o1 d10s", 2: "ACQUIRED c1 o1 d10s", 3: "ACQUIRED c1 o2 d10s"},
		},
		{
			// Applying ACCEPT then RELEASE to one record would move it out
			// of ACKNOWLEDGED; Kafka rejects overlapping batches.
			name: "overlapping batches in one request are rejected",
			steps: []step{
				acquire(0, 1, 3, 3, "[0,2]c1"),
				ack(0, 1, sharepart.ErrInvalidRequest, b(0, 0, Accept), b(0, 0, Release)),
				ack(0, 1, sharepart.ErrInvalidRequest, b(1, 2, Accept), b(0, 1, Reject)),
				ack(0, 1, nil, b(2, 2, Accept), b(0, 1, Reject)), // disjoint, any order
			},
			want: map[int64]string{0: "ARCHIVED c1 rejected", 1: "ARCHIVED c1 rejected", 2: "ACKNOWLEDGED c1"},
		},
	})
}

func TestLockExpiry(t *testing.T) {
	t.Parallel()
	runCases(t, []spCase{
		{
			name: "ACQUIRED -> AVAILABLE when the deadline passes, count kept",
			steps: []step{
				acquire(0, 1, 2, 2, "[0,1]c1"),
				expire(9*sec, 0),
				expire(10*sec, 2),
				window(0, 2, 2),
			},
			want: map[int64]string{0: "AVAILABLE c1", 1: "AVAILABLE c1"},
		},
		{
			name: "ACQUIRED -> ARCHIVED at the delivery limit",
			cfg:  func(c *sharepart.Config) { c.DeliveryLimit = 1 },
			steps: []step{
				acquire(0, 1, 2, 2, "[0,1]c1"),
				expire(10*sec, 2),
				window(2, 2, 0),
			},
			want: map[int64]string{0: "ARCHIVED c1 delivery-limit", 1: "ARCHIVED c1 delivery-limit"},
		},
		{
			name: "an expired record is redelivered to another member",
			steps: []step{
				acquire(0, 1, 1, 1, "[0,0]c1"),
				acquire(10*sec, 2, 1, 1, "[0,0]c2"),
				ack(11*sec, 1, sharepart.ErrNotOwner, b(0, 0, Accept)),
				acquire(20*sec, 3, 1, 1, "[0,0]c3"),
				expire(30*sec, 1),
			},
			want: map[int64]string{0: "ARCHIVED c3 delivery-limit"},
		},
		{
			name:  "NextDeadline is a lower bound of the earliest lock",
			steps: []step{acquire(3*sec, 1, 1, 1, "[0,0]c1"), acquire(5*sec, 1, 1, 2, "[1,1]c1")},
		},
	})
	sp, _ := sharepart.New(testConfig(), 0)
	if got := sp.NextDeadline(); got != sharepart.NoDeadline {
		t.Errorf("NextDeadline of an empty partition = %v, want NoDeadline", got)
	}
	sp.Acquire(3*sec, 1, 1, 1, nil, nil)
	if got := sp.NextDeadline(); got > 13*sec {
		t.Errorf("NextDeadline = %v, want <= 13s", got)
	}
}

func TestReleaseOwner(t *testing.T) {
	t.Parallel()
	runCases(t, []spCase{
		{
			name: "session close: the owner's records -> AVAILABLE, count -1; others untouched",
			steps: []step{
				acquire(0, 1, 2, 4, "[0,1]c1"),
				acquire(0, 2, 2, 4, "[2,3]c1"),
				releaseOwner(1*sec, 1, 2),
				releaseOwner(1*sec, 1, 0),
			},
			want: map[int64]string{0: "AVAILABLE c0", 1: "AVAILABLE c0", 2: "ACQUIRED c1 o2 d10s", 3: "ACQUIRED c1 o2 d10s"},
		},
		{
			name: "session close never archives, even at the limit",
			cfg:  func(c *sharepart.Config) { c.DeliveryLimit = 1 },
			steps: []step{
				acquire(0, 1, 1, 1, "[0,0]c1"),
				releaseOwner(0, 1, 1),
				is(0, "AVAILABLE c0"),
				acquire(0, 2, 1, 1, "[0,0]c1"),
			},
			want: map[int64]string{0: "ACQUIRED c1 o2 d10s"},
		},
		{
			name: "a redelivered record goes back one delivery",
			steps: []step{
				acquire(0, 1, 1, 1, "[0,0]c1"),
				ack(0, 1, nil, b(0, 0, Release)),
				acquire(0, 2, 1, 1, "[0,0]c2"),
				releaseOwner(0, 2, 1),
			},
			want: map[int64]string{0: "AVAILABLE c1"},
		},
		{
			name: "locks that passed expire first (count kept), then the rest is released",
			steps: []step{
				acquire(0, 1, 1, 2, "[0,0]c1"),
				acquire(5*sec, 1, 1, 2, "[1,1]c1"),
				releaseOwner(10*sec, 1, 1),
			},
			want: map[int64]string{0: "AVAILABLE c1", 1: "AVAILABLE c0"},
		},
	})
}

func TestAdvanceLogStart(t *testing.T) {
	t.Parallel()
	runCases(t, []spCase{
		{
			name: "AVAILABLE records below the log start -> ARCHIVED; ACQUIRED kept",
			steps: []step{
				acquire(0, 1, 4, 4, "[0,3]c1"),
				ack(0, 1, nil, b(0, 1, Release)),
				logStart(3),
				window(2, 4, 2),
				ack(0, 1, nil, b(2, 2, Accept)),
				window(3, 4, 1),
			},
			want: map[int64]string{0: "ARCHIVED c1 log-start", 1: "ARCHIVED c1 log-start", 2: "ACKNOWLEDGED c1", 3: "ACQUIRED c1 o1 d10s"},
		},
		{
			name: "beyond the window end: offsets never delivered are skipped",
			steps: []step{
				acquire(0, 1, 2, 2, "[0,1]c1"),
				ack(0, 1, nil, b(0, 1, Accept)),
				logStart(6),
				window(6, 6, 0),
				acquire(0, 1, 2, 10, "[6,7]c1"),
				logStart(1), // never moves back
				window(6, 8, 2),
			},
			want: map[int64]string{1: "ACKNOWLEDGED c1", 2: "ARCHIVED c0 log-start", 5: "ARCHIVED c0 log-start"},
		},
		{
			// A record released, expired or session-released after the log
			// start passed it has no log entry left: it must be archived,
			// never made acquirable (a poll could not read it).
			name: "records that become AVAILABLE below the log start are archived",
			steps: []step{
				acquire(0, 1, 4, 4, "[0,3]c1"),
				logStart(3),
				window(0, 4, 4),
				ack(1*sec, 1, nil, b(0, 0, Release)),
				is(0, "ARCHIVED c1 log-start"),
				releaseOwner(1*sec, 1, 3),
				window(3, 4, 1),
				acquire(2*sec, 2, 10, 10, "[3,3]c1 [4,9]c1"),
			},
			want: map[int64]string{0: "ARCHIVED c1 log-start", 1: "ARCHIVED c0 log-start", 2: "ARCHIVED c0 log-start", 3: "ACQUIRED c1 o2 d12s"},
		},
		{
			name: "an expired lock below the log start archives",
			steps: []step{
				acquire(0, 1, 2, 2, "[0,1]c1"),
				logStart(1),
				expire(10*sec, 2),
				window(1, 2, 1),
			},
			want: map[int64]string{0: "ARCHIVED c1 log-start", 1: "AVAILABLE c1"},
		},
	})
}

func TestSPSOAndWindow(t *testing.T) {
	t.Parallel()
	runCases(t, []spCase{
		{
			name: "SPSO advances over the terminal prefix only and never moves back",
			steps: []step{
				acquire(0, 1, 4, 4, "[0,3]c1"),
				ack(0, 1, nil, b(1, 2, Accept)),
				window(0, 4, 2),
				ack(0, 1, nil, b(0, 0, Reject)),
				window(3, 4, 1),
				ack(0, 1, nil, b(3, 3, Release)),
				window(3, 4, 1),
				acquire(0, 2, 5, 4, "[3,3]c2"),
			},
			want: map[int64]string{0: "ARCHIVED c1 rejected", 1: "ACKNOWLEDGED c1", 3: "ACQUIRED c2 o2 d10s"},
		},
		{
			name: "no acquisition beyond SPSO + max locks - 1; released records inside stay acquirable",
			cfg:  func(c *sharepart.Config) { c.MaxRecordLocks = 3 },
			steps: []step{
				acquire(0, 1, 10, 20, "[0,2]c1"),
				acquire(0, 2, 10, 20, ""),
				ack(0, 1, nil, b(1, 1, Release)),
				acquire(0, 2, 10, 20, "[1,1]c2"),
				ack(0, 1, nil, b(0, 0, Accept)),
				acquire(0, 2, 10, 20, "[3,3]c1"),
				window(1, 4, 3),
			},
		},
		{
			name: "terminal records inside the window still occupy it",
			cfg:  func(c *sharepart.Config) { c.MaxRecordLocks = 3 },
			steps: []step{
				acquire(0, 1, 3, 20, "[0,2]c1"),
				ack(0, 1, nil, b(1, 2, Accept)),
				acquire(0, 2, 3, 20, ""),
				ack(0, 1, nil, b(0, 0, Accept)),
				acquire(0, 2, 5, 20, "[3,5]c1"),
			},
		},
	})
}

func TestRecordHistory(t *testing.T) {
	t.Parallel()
	for _, keep := range []bool{true, false} {
		cfg := testConfig()
		cfg.KeepHistory = keep
		sp, _ := sharepart.New(cfg, 0)
		sp.Acquire(0, 1, 3, 3, nil, nil)
		if err := sp.Acknowledge(0, 1, []sharepart.Batch{b(0, 0, Accept), b(1, 1, Reject), b(2, 2, Release)}); err != nil {
			t.Fatal(err)
		}
		sp.Acquire(0, 1, 1, 3, nil, nil)
		if err := sp.Acknowledge(0, 1, []sharepart.Batch{b(2, 2, Accept)}); err != nil {
			t.Fatal(err)
		}
		for off, want := range map[int64]string{0: "ACKNOWLEDGED c1", 1: "ARCHIVED c1 rejected", 2: "ACKNOWLEDGED c2"} {
			ri := sp.Record(off)
			if ri.Known != keep {
				t.Errorf("keep=%v record %d: Known = %v", keep, off, ri.Known)
			}
			if !ri.State.Terminal() {
				t.Errorf("keep=%v record %d below SPSO is %v", keep, off, ri.State)
			}
			if got := describe(ri); keep && got != want {
				t.Errorf("record %d: got %q, want %q", off, got, want)
			}
		}
	}
}

func TestConfigValidate(t *testing.T) {
	t.Parallel()
	for _, c := range []sharepart.Config{
		{LockDuration: 0, DeliveryLimit: 5, MaxRecordLocks: 10},
		{LockDuration: sec, DeliveryLimit: 0, MaxRecordLocks: 10},
		{LockDuration: sec, DeliveryLimit: 1 << 16, MaxRecordLocks: 10},
		{LockDuration: sec, DeliveryLimit: 5, MaxRecordLocks: 0},
	} {
		if _, err := sharepart.New(c, 0); err == nil {
			t.Errorf("New(%+v) succeeded, want an error", c)
		}
	}
}

func TestCounters(t *testing.T) {
	t.Parallel()
	sp := runCase(t, spCase{
		name: "counters",
		cfg:  func(c *sharepart.Config) { c.DeliveryLimit = 2 },
		gaps: []int64{5},
		steps: []step{
			acquire(0, 1, 5, 6, "[0,4]c1"),
			ack(0, 1, nil, b(0, 0, Accept), b(1, 1, Reject), b(2, 2, Release)),
			expire(10*sec, 2),
			acquire(10*sec, 2, 5, 6, "[2,4]c2"),
			stage(10*sec, 2, 7, 0, nil, b(2, 2, Accept), b(3, 3, Reject)),
			marker(10*sec, 7, 1, true, 2),
			releaseOwner(10*sec, 2, 1),
		},
	})
	want := sharepart.Counters{
		Acquired: 8, Redelivered: 3, Accepted: 2, Released: 1, Rejected: 2, Archived: 3,
		LockExpiries: 2, Staged: 2, TxCommitted: 2, SessionRel: 1,
	}
	if got := sp.Counters(); got != want {
		t.Errorf("Counters = %+v\nwant       %+v", got, want)
	}
}
