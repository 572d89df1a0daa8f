// This file holds the crash phases: the boundaries between a mode's
// actions, where a worker-crash fault strikes.

package vocab

import (
	"fmt"
	"strings"
)

// Phase is a boundary between two of a worker's actions. A worker that
// crashes there has done everything before it and nothing after.
type Phase string

// The crash phases, in loop order. Idle is where a worker sits between
// loops (nothing held); it is not a crash phase a fault can name.
const (
	Idle                 Phase = "idle"
	AfterPoll            Phase = "after-poll"              // records held, nothing written
	AfterProduce         Phase = "after-produce"           // outputs written (in the open transaction, if any)
	AfterStage           Phase = "after-stage"             // acks or offsets staged in the open transaction
	AfterCommitBeforeAck Phase = "after-commit-before-ack" // deferred: outputs committed, acks not yet sent
)

// The checkpoint model's phases (ackOnly workloads: a source task that
// writes to a two-phase sink and commits it with its acks at checkpoints),
// in checkpoint order. Its loop also crosses AfterPoll.
const (
	BeforeBarrier  Phase = "before-barrier"  // records held, nothing pre-committed
	AfterPreCommit Phase = "after-precommit" // sink transaction prepared, acks staged, no snapshot
	AfterSnapshot  Phase = "after-snapshot"  // checkpoint complete, notify-complete not received
	AfterNotify    Phase = "after-notify"    // notified, neither commit landed
	BetweenCommits Phase = "between-commits" // the first side of the commit order landed
)

// CrashPhases lists the phases a worker-crash fault can name, in loop
// order, the checkpoint model's last. The slice is the caller's.
func CrashPhases() []Phase {
	return append([]Phase{AfterPoll, AfterProduce, AfterStage, AfterCommitBeforeAck}, CheckpointPhases()...)
}

// CheckpointPhases lists the checkpoint model's own crash phases, in
// checkpoint order. The slice is the caller's.
func CheckpointPhases() []Phase {
	return []Phase{BeforeBarrier, AfterPreCommit, AfterSnapshot, AfterNotify, BetweenCommits}
}

// Checkpoint reports whether p is one of the checkpoint model's phases.
func (p Phase) Checkpoint() bool {
	switch p {
	case BeforeBarrier, AfterPreCommit, AfterSnapshot, AfterNotify, BetweenCommits:
		return true
	}
	return false
}

// CrashPhaseNames lists the crash phases' names in loop order.
func CrashPhaseNames() []string { return Names(CrashPhases()) }

// ParsePhase returns the crash phase named s, or an error naming the valid
// ones.
func ParsePhase(s string) (Phase, error) {
	for _, p := range CrashPhases() {
		if string(p) == s {
			return p, nil
		}
	}
	return "", fmt.Errorf("vocab: unknown crash phase %q (valid: %s)", s, strings.Join(CrashPhaseNames(), ", "))
}

// String returns the phase's name.
func (p Phase) String() string { return string(p) }

// In reports whether a worker of mode m ever crosses phase p: after-stage
// only in the modes that stage acks in their transaction, after-commit-
// before-ack only in deferred mode.
func (p Phase) In(m Mode) bool {
	switch p {
	case AfterStage:
		return m.StagesAcks()
	case AfterCommitBeforeAck:
		return m == Deferred
	case AfterPoll, AfterProduce:
		return true
	case BeforeBarrier, AfterPreCommit, AfterSnapshot, AfterNotify, BetweenCommits:
		// The checkpoint model runs these two modes.
		return m == Transactional || m == Explicit
	}
	return false
}
