// This file holds the fault kinds of a run's timeline.

package vocab

import (
	"fmt"
	"strings"
)

// FaultKind names a fault (docs/design.md §8). It is the one spelling of a
// fault kind: workload files, the fault runners of the targets and the
// result files all use these constants.
type FaultKind string

// Fault kinds.
const (
	// FaultWorkerCrash crashes a worker at a phase of its loop.
	// Params: phase (required), worker.
	FaultWorkerCrash FaultKind = "worker-crash"
	// FaultAbortRatio makes workers abort that share of their transactions
	// for a while. Params: ratio, for (both required).
	FaultAbortRatio FaultKind = "abort-ratio"
	// FaultStallWorker stalls a worker inside an open transaction, so a
	// stall longer than transactionTimeout times it out: after staging
	// its acks or offsets (phase after-stage, the default), or after
	// writing its outputs and before staging (phase after-produce). A
	// worker still stalled when the run stops is abandoned, as a hung
	// process is killed. Params: for (required), phase, worker.
	FaultStallWorker FaultKind = "stall-worker"
	// FaultSlowProcessing adds delay to each batch a worker polls, so a
	// delay longer than lockDuration lets the batch's locks expire.
	// Params: for, delay (both required), worker.
	FaultSlowProcessing FaultKind = "slow-processing"
	// FaultCoordinatorCrash crashes the transaction coordinator at once
	// or once a transaction reaches state (or with scope engine the whole
	// engine there). Params: state (required), scope, wait.
	FaultCoordinatorCrash FaultKind = "coordinator-crash"
	// FaultShareFailover moves a share partition's leadership.
	// Params: partition.
	FaultShareFailover FaultKind = "share-failover"
	// FaultZombieProducer keeps a fenced producer of a worker sending: a
	// successor takes the worker's transactional id, and the old
	// incarnation runs on, keeping a stall it was in; with pause it makes
	// no call for that long first (a process paused by a GC or SIGSTOP
	// that wakes to find itself replaced). Params: pause, worker.
	FaultZombieProducer FaultKind = "zombie-producer"
	// FaultEngineRestart restarts the engine from its data directory.
	// No params.
	FaultEngineRestart FaultKind = "engine-restart"
	// FaultNetworkPartition cuts, for a while, either the transaction
	// coordinator off from the leader of one partition (its markers wait)
	// or one worker off from the target (its requests wait, as a
	// disconnected client's would). Params: for (required), between
	// (coordinator-participant | worker-engine, default worker-engine),
	// partition (coordinator-participant), worker (worker-engine).
	FaultNetworkPartition FaultKind = "network-partition"
	// FaultMembershipChurn adds a member to the mode's group and removes
	// it after a while: two assignment changes, which bump every
	// member's epoch (share groups) or generation (classic groups).
	// Params: for (how long the extra member stays, default 1s).
	FaultMembershipChurn FaultKind = "membership-churn"
	// FaultSlowCheckpoint makes a worker's next checkpoint take delay
	// between its barrier and its snapshot (checkpoint model): past
	// checkpoint.timeout the checkpoint fails, past transactionTimeout its
	// share-ack transaction times out, past lockDuration the locks of
	// records it holds for the barrier expire. Params: delay (required),
	// worker.
	FaultSlowCheckpoint FaultKind = "slow-checkpoint"
	// FaultBrokerKill kills one broker of a real cluster with SIGKILL (a
	// crash: nothing flushed, no controlled shutdown) and starts it again
	// after a delay. Params: broker (selector, default random), delay
	// (default 0s), worker, topic and partition (which the selector reads).
	FaultBrokerKill FaultKind = "broker-kill"
	// FaultBrokerRestart stops one broker cleanly (controlled shutdown)
	// and starts it again. Params: broker, worker, topic, partition.
	FaultBrokerRestart FaultKind = "broker-restart"
	// FaultBrokerPause freezes one broker with SIGSTOP for a while, then
	// resumes it with SIGCONT: to its peers and clients a network
	// partition or a long GC pause. Params: for (required), broker,
	// worker, topic, partition.
	FaultBrokerPause FaultKind = "broker-pause"
)

// BrokerFault reports whether kind is one of the broker-* kinds, applied
// to a real cluster through a broker-control command.
func BrokerFault(kind FaultKind) bool {
	switch kind {
	case FaultBrokerKill, FaultBrokerRestart, FaultBrokerPause:
		return true
	}
	return false
}

// ClientSide reports whether the load generator applies faults of kind k
// with its own clients, on every target; the others need the target's fault
// runner. A network partition is client side only between a worker and the
// target: Fault.ClientSide decides it.
func (k FaultKind) ClientSide() bool {
	switch k {
	case FaultWorkerCrash, FaultAbortRatio, FaultStallWorker, FaultSlowProcessing, FaultZombieProducer, FaultMembershipChurn, FaultSlowCheckpoint:
		return true
	}
	return false
}

// FaultKinds lists the fault kinds in documentation order. The slice is
// the caller's.
func FaultKinds() []FaultKind {
	return []FaultKind{
		FaultWorkerCrash, FaultAbortRatio, FaultStallWorker, FaultSlowProcessing,
		FaultCoordinatorCrash, FaultShareFailover, FaultZombieProducer, FaultEngineRestart,
		FaultNetworkPartition, FaultMembershipChurn, FaultSlowCheckpoint, FaultBrokerKill, FaultBrokerRestart, FaultBrokerPause,
	}
}

// ParseFaultKind returns the fault kind named s, or an error naming the
// valid ones.
func ParseFaultKind(s string) (FaultKind, error) {
	for _, k := range FaultKinds() {
		if string(k) == s {
			return k, nil
		}
	}
	return "", fmt.Errorf("vocab: unknown fault kind %q (valid: %s)", s, strings.Join(Names(FaultKinds()), ", "))
}

// String returns the kind's name.
func (k FaultKind) String() string { return string(k) }
