// This file holds the calls that stage consumer progress in the open
// transaction: KIP-1289's SendShareAcksToTransaction (share
// acknowledgements, fenced by member epoch, with their dead-letter copies)
// and SendOffsetsToTransaction (a classic group's offsets).

package engine

import (
	"errors"
	"fmt"
	"time"

	"github.com/sharebench/sharebench/engine/internal/mutant"
	"github.com/sharebench/sharebench/engine/internal/sharepart"
)

// SendShareAcksToTransaction stages share-group acknowledgements in the open
// transaction (KIP-1289's sendShareAcknowledgementsToTransaction): each
// acknowledged record goes from ACQUIRED to TX_PENDING and resolves with the
// transaction's marker. meta fences a member that is no longer in its group
// or has a stale epoch. Only ACCEPT, REJECT and gap can be staged. Each
// partition stages all or nothing (unless Knobs.StageStopAtFirstFailure
// leaves a failed partition's earlier batches staged); failures come back
// in an *AckError, and any failure leaves the transaction abortable: every
// later Produce, staging and Commit fails with ErrAbortableTransaction and
// only Abort succeeds, so the outputs of a transaction whose acks did not
// all stage never become visible.
func (p *Producer) SendShareAcksToTransaction(acks []Acknowledgement, meta GroupMetadata) error {
	e := p.e
	var op syncPoint
	return p.failStaging(coordinatorReloaded(p.withTxn(&op, func(t *txnState, now time.Duration) error {
		if err := p.abortableLocked(); err != nil {
			return err
		}
		if !t.Ongoing() {
			return fmt.Errorf("%w: staging acknowledgements outside a transaction (state %v)", ErrInvalidTxnState, t.State)
		}
		owner, err := e.checkShareMember(meta, now)
		if err != nil {
			return err
		}
		order, batches := byPartition(acks)
		var failed map[TopicPartition]error
		var copies []deadLetters // dead-letter copies of staged REJECTs, written in the transaction
		for _, tp := range order {
			if t.AddShare(shareKey{meta.GroupID, tp}) {
				e.jTxnLocked(&op, t, -1, 0)
			}
			err := e.withPartitionOp(tp, &op, func(part *partition) error {
				sp := part.shares[meta.GroupID]
				if sp == nil {
					return fmt.Errorf("%w: group %q never acquired from %s", ErrInvalidRecordState, meta.GroupID, tp)
				}
				bs := batches[tp]
				// Staging a terminal record is rejected (docs/design.md §3.3), and
				// every offset below SPSO is terminal. sharepart.Stage, like
				// Acknowledge, skips offsets below SPSO as no-op successes:
				// a member whose lock expired while another member committed
				// the same records would then commit a second output for
				// them (an exactly-once duplicate, found by race_test.go).
				// Expire first so SPSO is current.
				sp.Expire(now)
				for _, b := range bs {
					if b.First < sp.SPSO() {
						return fmt.Errorf("%w: offset %d is below SPSO %d (terminal)", ErrInvalidRecordState, b.First, sp.SPSO())
					}
				}
				if err := sp.Stage(now, owner, sharepart.ProducerID(t.PID), t.Epoch, bs); err != nil {
					return err
				}
				if e.cfg.hook != nil {
					if err := e.cfg.hook(HookStageWrite, HookInfo{TransactionalID: t.ID, ProducerID: t.PID, Epoch: t.Epoch, Group: meta.GroupID, Topic: tp.Topic, Partition: tp.Partition}); err != nil {
						if e.injectedCrash(err) {
							return ErrCrashed
						}
						sp.UnstageFailed(now, owner, sharepart.ProducerID(t.PID), t.Epoch, bs)
						e.stats.stageFailed.Add(1)
						return fmt.Errorf("engine: staging write failed: %w", err)
					}
				}
				copies = e.stagedRejectCopiesLocked(part, meta.GroupID, sp, bs, copies)
				return nil
			})
			if errors.Is(err, ErrCrashed) {
				return err
			}
			if err != nil {
				if failed == nil {
					failed = map[TopicPartition]error{}
				}
				failed[tp] = err
			}
		}
		for _, dl := range copies {
			if err := p.produceCopiesLocked(&op, t, dl, now); err != nil {
				return err
			}
		}
		if failed != nil {
			return &AckError{Partitions: failed}
		}
		return e.callHook(HookTxnOngoing, HookInfo{TransactionalID: t.ID, ProducerID: t.PID, Epoch: t.Epoch, Group: meta.GroupID})
	})))
}

// produceCopiesLocked writes dead-letter copies in the open transaction t,
// whose participant their DLQ partition becomes, so they are committed or
// aborted with it (the safe DLQ knob). The producer's and the
// transaction's locks are held.
func (p *Producer) produceCopiesLocked(op *syncPoint, t *txnState, dl deadLetters, now time.Duration) error {
	e := p.e
	if t.AddPart(dl.tp) {
		e.jTxnLocked(op, t, -1, 0)
	}
	err := e.withPartitionOp(dl.tp, op, func(part *partition) error {
		seq := p.mu.seqs[dl.tp]
		if _, err := e.appendLocked(part, batchOf(dl.recs, p.mu.pid, p.mu.epoch, seq, true, int64(now))); err != nil {
			return mapLogErr(err)
		}
		p.mu.seqs[dl.tp] = seq + int32(len(dl.recs))
		return nil
	})
	if err != nil {
		return err
	}
	e.stats.dlqWritten.Add(int64(len(dl.recs)))
	return nil
}

// checkShareMember fences staging by a member that left or whose epoch is
// stale, and returns its owner index. Called with a transaction shard lock
// held; takes the group shard lock (lockorder.go).
func (e *Engine) checkShareMember(meta GroupMetadata, now time.Duration) (sharepart.Owner, error) {
	gs := e.groupShard(meta.GroupID)
	gs.mu.Lock()
	defer gs.mu.Unlock()
	g := gs.mu.share[meta.GroupID]
	if g == nil {
		return 0, fmt.Errorf("%w: %q", ErrUnknownGroup, meta.GroupID)
	}
	st := g.members[meta.MemberID]
	if st == nil {
		return 0, fmt.Errorf("%w: %q in group %q", ErrUnknownMember, meta.MemberID, meta.GroupID)
	}
	if memberEpochStale(st.epoch, meta.MemberEpoch) {
		return 0, fmt.Errorf("%w: member %q epoch %d, group has %d", ErrFencedMemberEpoch, meta.MemberID, meta.MemberEpoch, st.epoch)
	}
	st.lastSeen = now
	return st.owner, nil
}

// memberEpochStale reports whether a staging call at member epoch sent
// must be fenced because the group holds the member at epoch held.
func memberEpochStale(held, sent int32) bool {
	if mutant.On("stale-member-epoch-accepted") {
		return false
	}
	return held != sent
}

// SendOffsetsToTransaction adds a classic group's offsets (the next offset
// to consume, per partition) to the open transaction; they become the
// group's committed offsets only if the transaction commits.
func (p *Producer) SendOffsetsToTransaction(offsets map[TopicPartition]int64, meta ClassicGroupMetadata) error {
	e := p.e
	var op syncPoint
	return p.failStaging(coordinatorReloaded(p.withTxn(&op, func(t *txnState, now time.Duration) error {
		if err := p.abortableLocked(); err != nil {
			return err
		}
		if !t.Ongoing() {
			return fmt.Errorf("%w: sending offsets outside a transaction (state %v)", ErrInvalidTxnState, t.State)
		}
		if err := e.addPendingOffsets(t.PID, offsets, meta); err != nil {
			return err
		}
		// The participant is logged before the offsets it covers.
		if t.AddGroup(meta.GroupID) {
			e.jTxnLocked(&op, t, -1, 0)
		}
		e.jPendingOffsets(&op, meta.GroupID, t.PID, offsets)
		return e.callHook(HookTxnOngoing, HookInfo{TransactionalID: t.ID, ProducerID: t.PID, Epoch: t.Epoch, Group: meta.GroupID})
	})))
}
