// This file tests KIP-1289's transactional acknowledgements on the pure
// state machine (docs/design.md §3.3): staging into TX_PENDING, the markers that
// resolve it, what leaves TX_PENDING alone, and each decision knob of §3.4
// under both its settings.

package sharepart_test

import (
	"testing"

	"github.com/sharebench/sharebench/engine/internal/sharepart"
)

func TestStage(t *testing.T) {
	t.Parallel()
	runCases(t, []spCase{
		{
			name: "staged ACCEPT: ACQUIRED(M) -> TX_PENDING, lock cancelled, owner cleared",
			steps: []step{
				acquire(1*sec, 1, 3, 3, "[0,2]c1"),
				stage(2*sec, 1, 7, 0, nil, b(0, 1, Accept)),
				window(0, 3, 3),
			},
			want: map[int64]string{0: "TX_PENDING c1 p7 e0 ACCEPT", 1: "TX_PENDING c1 p7 e0 ACCEPT", 2: "ACQUIRED c1 o1 d11s"},
		},
		{
			name: "staged REJECT and gap",
			steps: []step{
				acquire(0, 1, 3, 3, "[0,2]c1"),
				stage(0, 1, 7, 3, nil, b(0, 0, Reject), b(1, 1, Gap)),
				stage(0, 1, 7, 3, nil, bt(2, 2, Accept)),
			},
			want: map[int64]string{0: "TX_PENDING c1 p7 e3 REJECT", 1: "TX_PENDING c1 p7 e3 GAP", 2: "TX_PENDING c1 p7 e3 ACCEPT"},
		},
		{
			name: "TX_PENDING: lock expiry, session close, member leave and polls leave it alone",
			steps: []step{
				acquire(0, 1, 3, 3, "[0,2]c1"),
				stage(0, 1, 7, 0, nil, b(0, 1, Accept)),
				expire(3600*sec, 1), // offset 2 only
				releaseOwner(3600*sec, 1, 0),
				acquire(3600*sec, 2, 10, 3, "[2,2]c2"),
				releaseOwner(3600*sec, 2, 1),
				window(0, 3, 3), // TX_PENDING holds SPSO back and counts as in flight
			},
			want: map[int64]string{0: "TX_PENDING c1 p7 e0 ACCEPT", 1: "TX_PENDING c1 p7 e0 ACCEPT", 2: "AVAILABLE c1"},
		},
		{
			name: "TX_PENDING counts toward the in-flight window",
			cfg:  func(c *sharepart.Config) { c.MaxRecordLocks = 2 },
			steps: []step{
				acquire(0, 1, 2, 5, "[0,1]c1"),
				stage(0, 1, 7, 0, nil, b(0, 1, Accept)),
				acquire(0, 1, 2, 5, ""),
				marker(0, 7, 1, true, 2),
				acquire(0, 1, 2, 5, "[2,3]c1"),
			},
		},
		{
			name: "staging RELEASE or RENEW is an invalid request",
			steps: []step{
				acquire(0, 1, 2, 2, "[0,1]c1"),
				stage(0, 1, 7, 0, sharepart.ErrInvalidRequest, b(0, 0, Release)),
				stage(0, 1, 7, 0, sharepart.ErrInvalidRequest, b(0, 0, Renew)),
				stage(0, 1, 7, 0, sharepart.ErrInvalidRequest, bt(0, 1, Accept, Release)),
			},
			want: map[int64]string{0: "ACQUIRED c1 o1 d10s", 1: "ACQUIRED c1 o1 d10s"},
		},
		{
			name: "staging records that are not ACQUIRED(M)",
			steps: []step{
				acquire(0, 1, 5, 6, "[0,4]c1"),
				ack(0, 1, nil, b(0, 0, Release), b(1, 1, Accept)),
				stage(0, 1, 8, 0, nil, b(2, 2, Accept)),
				stage(0, 1, 7, 0, sharepart.ErrInvalidRecordState, b(0, 0, Accept)), // AVAILABLE
				stage(0, 1, 7, 0, sharepart.ErrInvalidRecordState, b(1, 1, Accept)), // terminal
				stage(0, 1, 7, 0, sharepart.ErrInvalidRecordState, b(2, 2, Accept)), // another txn
				stage(0, 1, 8, 0, sharepart.ErrInvalidRecordState, b(2, 2, Reject)), // same txn, another outcome
				stage(0, 1, 8, 1, sharepart.ErrInvalidRecordState, b(2, 2, Accept)), // same pid, next epoch
				stage(0, 2, 7, 0, sharepart.ErrNotOwner, b(3, 3, Accept)),
				stage(0, 1, 7, 0, sharepart.ErrOutOfRange, b(4, 5, Accept)),
				stage(0, 1, 7, 0, sharepart.ErrInvalidAckType, b(3, 3, badType)),
				stage(0, 1, 7, 0, sharepart.ErrInvalidRequest, b(4, 3, Accept)),
			},
			want: map[int64]string{0: "AVAILABLE c1", 1: "ACKNOWLEDGED c1", 2: "TX_PENDING c1 p8 e0 ACCEPT", 3: "ACQUIRED c1 o1 d10s", 4: "ACQUIRED c1 o1 d10s"},
		},
		{
			// Unlike an ack (a no-op success below SPSO), staging a record
			// below SPSO stages a terminal record: rejected, or a member
			// whose lock expired could commit a duplicate output.
			name: "staging below SPSO is rejected: those records are terminal",
			steps: []step{
				acquire(0, 1, 2, 2, "[0,1]c1"),
				ack(0, 1, nil, b(0, 0, Accept)),
				stage(0, 2, 7, 0, sharepart.ErrInvalidRecordState, b(0, 0, Reject)),
				stage(0, 1, 7, 0, sharepart.ErrInvalidRecordState, b(0, 1, Accept)),
				stage(0, 1, 7, 0, nil, b(1, 1, Accept)),
				marker(0, 7, 1, true, 1),
				stage(0, 1, 7, 1, sharepart.ErrInvalidRecordState, b(1, 1, Accept)), // a retry after the commit
			},
			want: map[int64]string{0: "ACKNOWLEDGED c1", 1: "ACKNOWLEDGED c1"},
		},
		{
			name: "a lock that passed is released before staging is checked",
			steps: []step{
				acquire(0, 1, 1, 1, "[0,0]c1"),
				stage(10*sec, 1, 7, 0, sharepart.ErrInvalidRecordState, b(0, 0, Accept)),
			},
			want: map[int64]string{0: "AVAILABLE c1"},
		},
		{
			name: "overlapping batches in one staging request are rejected",
			steps: []step{
				acquire(0, 1, 2, 2, "[0,1]c1"),
				stage(0, 1, 7, 0, sharepart.ErrInvalidRequest, b(0, 1, Accept), b(1, 1, Reject)),
			},
			want: map[int64]string{0: "ACQUIRED c1 o1 d10s", 1: "ACQUIRED c1 o1 d10s"},
		},
		{
			name: "acks of a TX_PENDING record fail",
			steps: []step{
				acquire(0, 1, 1, 1, "[0,0]c1"),
				stage(0, 1, 7, 0, nil, b(0, 0, Accept)),
				ack(0, 1, sharepart.ErrInvalidRecordState, b(0, 0, Release)),
				ack(0, 1, sharepart.ErrInvalidRecordState, b(0, 0, Renew)),
			},
			want: map[int64]string{0: "TX_PENDING c1 p7 e0 ACCEPT"},
		},
	})
}

func TestMarker(t *testing.T) {
	t.Parallel()
	runCases(t, []spCase{
		{
			name: "COMMIT: TX_PENDING -> the staged outcome",
			steps: []step{
				acquire(0, 1, 3, 3, "[0,2]c1"),
				stage(0, 1, 7, 0, nil, b(0, 0, Accept), b(1, 1, Reject), b(2, 2, Gap)),
				marker(1*sec, 7, 1, true, 3),
				window(3, 3, 0),
			},
			want: map[int64]string{0: "ACKNOWLEDGED c1", 1: "ARCHIVED c1 rejected", 2: "ARCHIVED c1 gap"},
		},
		{
			name: "ABORT: TX_PENDING -> AVAILABLE, count kept, owner cleared",
			steps: []step{
				acquire(0, 1, 2, 2, "[0,1]c1"),
				stage(0, 1, 7, 0, nil, b(0, 0, Accept), b(1, 1, Reject)),
				marker(1*sec, 7, 1, false, 2),
				window(0, 2, 2),
				is(0, "AVAILABLE c1"),
				ack(1*sec, 1, sharepart.ErrInvalidRecordState, b(0, 0, Accept)),
				acquire(2*sec, 2, 5, 2, "[0,1]c2"),
			},
			want: map[int64]string{0: "ACQUIRED c2 o2 d12s"},
		},
		{
			name: "ABORT at the delivery limit archives (safe)",
			cfg:  func(c *sharepart.Config) { c.DeliveryLimit = 1 },
			steps: []step{
				acquire(0, 1, 1, 1, "[0,0]c1"),
				stage(0, 1, 7, 0, nil, b(0, 0, Accept)),
				marker(0, 7, 1, false, 1),
				window(1, 1, 0),
			},
			want: map[int64]string{0: "ARCHIVED c1 delivery-limit"},
		},
		{
			name: "markers resolve only their own producer's records",
			steps: []step{
				acquire(0, 1, 2, 2, "[0,1]c1"),
				stage(0, 1, 7, 0, nil, b(0, 0, Accept)),
				stage(0, 1, 8, 0, nil, b(1, 1, Accept)),
				marker(0, 9, 5, true, 0),
				marker(0, 8, 1, false, 1),
				marker(0, 7, 1, true, 1),
			},
			want: map[int64]string{0: "ACKNOWLEDGED c1", 1: "AVAILABLE c1"},
		},
		{
			name: "a replayed marker is a no-op",
			steps: []step{
				acquire(0, 1, 2, 2, "[0,1]c1"),
				stage(0, 1, 7, 0, nil, b(0, 0, Accept)),
				marker(0, 7, 1, true, 1),
				marker(0, 7, 1, true, 0),
				marker(0, 7, 1, false, 0),
				stage(0, 1, 7, 1, nil, b(1, 1, Accept)),
				marker(0, 7, 2, false, 1),
				marker(0, 7, 2, false, 0),
				marker(0, 7, 2, true, 0),
			},
			want: map[int64]string{0: "ACKNOWLEDGED c1", 1: "AVAILABLE c1"},
		},
		{
			name: "a marker older than the staged epoch is ignored",
			steps: []step{
				acquire(0, 1, 1, 1, "[0,0]c1"),
				stage(0, 1, 7, 3, nil, b(0, 0, Accept)),
				marker(0, 7, 2, true, 0),
				marker(0, 7, 2, false, 0),
				is(0, "TX_PENDING c1 p7 e3 ACCEPT"),
				marker(0, 7, 3, true, 1),
			},
			want: map[int64]string{0: "ACKNOWLEDGED c1"},
		},
		{
			name: "a marker expires due locks first",
			cfg:  func(c *sharepart.Config) { c.DeliveryLimit = 1 },
			steps: []step{
				acquire(0, 1, 2, 2, "[0,1]c1"),
				stage(0, 1, 7, 0, nil, b(1, 1, Accept)),
				marker(10*sec, 7, 1, true, 1),
				window(2, 2, 0),
			},
			want: map[int64]string{0: "ARCHIVED c1 delivery-limit", 1: "ACKNOWLEDGED c1"},
		},
		{
			name: "UnstageFailed (safe): back to ACQUIRED(M) with a live lock",
			steps: []step{
				acquire(0, 1, 2, 2, "[0,1]c1"),
				stage(1*sec, 1, 7, 0, nil, b(0, 1, Accept)),
				unstage(2*sec, 1, 7, 0, b(0, 1, Accept)),
				is(0, "ACQUIRED c1 o1 d12s"),
				expire(12*sec, 2),
			},
			want: map[int64]string{0: "AVAILABLE c1", 1: "AVAILABLE c1"},
		},
		{
			// Found by TestRandomOperations: the renewed lock never
			// expired because NextDeadline stayed at NoDeadline.
			name: "RENEW gives a record held without a lock (draft) a lock that expires",
			cfg:  func(c *sharepart.Config) { c.Knobs.FailedStageNoLock = true },
			steps: []step{
				acquire(0, 1, 1, 1, "[0,0]c1"),
				stage(0, 1, 7, 0, nil, b(0, 0, Accept)),
				unstage(1*sec, 1, 7, 0, b(0, 0, Accept)),
				expire(20*sec, 0),
				ack(20*sec, 1, nil, b(0, 0, Renew)),
				is(0, "ACQUIRED c1 o1 d30s"),
				expire(30*sec, 1),
			},
			want: map[int64]string{0: "AVAILABLE c1"},
		},
		{
			name: "UnstageFailed leaves other transactions' records alone",
			steps: []step{
				acquire(0, 1, 2, 2, "[0,1]c1"),
				stage(0, 1, 8, 0, nil, b(1, 1, Accept)),
				stage(0, 1, 7, 0, nil, b(0, 0, Accept)),
				unstage(0, 1, 7, 0, b(0, 1, Accept)),
			},
			want: map[int64]string{0: "ACQUIRED c1 o1 d10s", 1: "TX_PENDING c1 p8 e0 ACCEPT"},
		},
	})
}

// knobCase runs steps under the safe setting and the draft setting of one
// knob; steps may depend on the setting (expected errors differ).
type knobCase struct {
	name      string
	cfg       func(*sharepart.Config)
	set       func(*sharepart.Knobs)
	steps     func(draft bool) []step
	wantSafe  map[int64]string
	wantDraft map[int64]string
}

func TestKnobs(t *testing.T) {
	t.Parallel()
	cases := []knobCase{
		{
			// The engine stages at the transaction's epoch E and writes
			// its markers at E+1 (the epoch is bumped as the transaction
			// ends): the draft's exact match never resolves the records.
			name: "ExactEpochMatch",
			set:  func(k *sharepart.Knobs) { k.ExactEpochMatch = true },
			steps: func(draft bool) []step {
				n := int64(2)
				if draft {
					n = 0
				}
				return []step{
					acquire(0, 1, 3, 3, "[0,2]c1"),
					stage(0, 1, 7, 4, nil, b(0, 1, Accept)),
					stage(0, 1, 9, 4, nil, b(2, 2, Accept)),
					marker(0, 7, 5, true, n),
					marker(0, 9, 4, true, 1), // the exact epoch applies under both
				}
			},
			wantSafe:  map[int64]string{0: "ACKNOWLEDGED c1", 1: "ACKNOWLEDGED c1", 2: "ACKNOWLEDGED c1"},
			wantDraft: map[int64]string{0: "TX_PENDING c1 p7 e4 ACCEPT", 1: "TX_PENDING c1 p7 e4 ACCEPT", 2: "ACKNOWLEDGED c1"},
		},
		{
			name: "AbortToAvailableAtLimit",
			cfg:  func(c *sharepart.Config) { c.DeliveryLimit = 2 },
			set:  func(k *sharepart.Knobs) { k.AbortToAvailableAtLimit = true },
			steps: func(draft bool) []step {
				redelivery := "[1,1]c2" // offset 0 is archived
				if draft {
					redelivery = "[0,0]c3" // one delivery beyond the limit
				}
				return []step{
					acquire(0, 1, 2, 2, "[0,1]c1"),
					ack(0, 1, nil, b(0, 0, Release)),
					acquire(0, 1, 1, 2, "[0,0]c2"),
					stage(0, 1, 7, 0, nil, b(0, 1, Accept)),
					marker(0, 7, 1, false, 2),
					acquire(0, 2, 1, 2, redelivery),
				}
			},
			wantSafe:  map[int64]string{0: "ARCHIVED c2 delivery-limit", 1: "ACQUIRED c2 o2 d10s"},
			wantDraft: map[int64]string{0: "ACQUIRED c3 o2 d10s", 1: "AVAILABLE c1"},
		},
		{
			name: "StageStopAtFirstFailure",
			set:  func(k *sharepart.Knobs) { k.StageStopAtFirstFailure = true },
			steps: func(bool) []step {
				return []step{
					acquire(0, 1, 3, 3, "[0,2]c1"),
					stage(0, 1, 7, 0, sharepart.ErrInvalidRequest, b(0, 0, Accept), b(1, 1, Release), b(2, 2, Accept)),
				}
			},
			wantSafe:  map[int64]string{0: "ACQUIRED c1 o1 d10s", 1: "ACQUIRED c1 o1 d10s", 2: "ACQUIRED c1 o1 d10s"},
			wantDraft: map[int64]string{0: "TX_PENDING c1 p7 e0 ACCEPT", 1: "ACQUIRED c1 o1 d10s", 2: "ACQUIRED c1 o1 d10s"},
		},
		{
			name: "RejectIdenticalRetry",
			set:  func(k *sharepart.Knobs) { k.RejectIdenticalRetry = true },
			steps: func(draft bool) []step {
				var retryErr error
				if draft {
					retryErr = sharepart.ErrInvalidRecordState
				}
				return []step{
					acquire(0, 1, 2, 2, "[0,1]c1"),
					stage(0, 1, 7, 0, nil, b(0, 1, Accept)),
					stage(1*sec, 1, 7, 0, retryErr, b(0, 1, Accept)),
					stage(1*sec, 1, 7, 0, retryErr, b(0, 0, Accept), b(1, 1, Accept)),
				}
			},
			wantSafe:  map[int64]string{0: "TX_PENDING c1 p7 e0 ACCEPT", 1: "TX_PENDING c1 p7 e0 ACCEPT"},
			wantDraft: map[int64]string{0: "TX_PENDING c1 p7 e0 ACCEPT", 1: "TX_PENDING c1 p7 e0 ACCEPT"},
		},
		{
			name: "FailedStageNoLock",
			set:  func(k *sharepart.Knobs) { k.FailedStageNoLock = true },
			steps: func(draft bool) []step {
				n := int64(2)
				if draft {
					n = 0 // no lock: held until the member leaves
				}
				return []step{
					acquire(0, 1, 2, 2, "[0,1]c1"),
					stage(1*sec, 1, 7, 0, nil, b(0, 1, Accept)),
					unstage(1*sec, 1, 7, 0, b(0, 1, Accept)),
					expire(3600*sec, n),
				}
			},
			wantSafe:  map[int64]string{0: "AVAILABLE c1", 1: "AVAILABLE c1"},
			wantDraft: map[int64]string{0: "ACQUIRED c1 o1 nolock", 1: "ACQUIRED c1 o1 nolock"},
		},
	}
	for _, c := range cases {
		for _, draft := range []bool{false, true} {
			name := c.name + "/safe"
			want := c.wantSafe
			if draft {
				name, want = c.name+"/draft", c.wantDraft
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				runCase(t, spCase{
					name: name,
					cfg: func(cfg *sharepart.Config) {
						if c.cfg != nil {
							c.cfg(cfg)
						}
						if draft {
							c.set(&cfg.Knobs)
						}
					},
					steps: c.steps(draft),
					want:  want,
				})
			})
		}
	}
}

// TestKnobsZeroValueIsSafe pins that the zero Knobs is the safe choice.
func TestKnobsZeroValueIsSafe(t *testing.T) {
	t.Parallel()
	if (sharepart.Knobs{}) != testConfig().Knobs {
		t.Fatal("test config must use safe knobs")
	}
}
