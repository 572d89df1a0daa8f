// This file holds the step list: what one seeded scheduler decides before a
// run starts (which actor moves, which fault strikes, how far the clock
// goes), and the world parameters a seed picks.

package sim

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/sharebench/sharebench/loadgen/pipeline"
	"github.com/sharebench/sharebench/vocab"
)

// Kind is what one step does.
type Kind uint8

// Step kinds.
const (
	// KindWork moves one worker one phase of its loop (poll, produce,
	// ack or stage, commit or abort); a slot with a zombie sometimes moves
	// the zombie instead.
	KindWork Kind = iota
	// KindProduce appends input records: plainly, or in an input
	// transaction that later commits or aborts.
	KindProduce
	// KindAdvance moves the manual clock and fires due timers (lock
	// expiry, session timeouts, the transaction timeout sweep).
	KindAdvance
	// KindCrash abandons a worker at whatever phase it is in (member and
	// producer dropped without a word) and starts its replacement with the
	// same transactional id.
	KindCrash
	// KindZombie starts a successor for a transactional worker while the
	// old one runs on as a zombie until its fenced producer is refused.
	KindZombie
	// KindStall freezes a worker past its transaction timeout.
	KindStall
	// KindLeave closes a worker cleanly (its session ends) and starts a
	// replacement.
	KindLeave
	// KindFailStage makes the next staging write fail (the engine's hook
	// seam), so staged records go back to ACQUIRED.
	KindFailStage
	// KindRestart crashes the engine and restarts it from its data
	// directory (durable seeds only).
	KindRestart
	// KindCrashEnd arms a crash inside the next worker transaction's end:
	// after PREPARE_* is logged, after its first marker or after
	// COMPLETE_*; the engine restarts and the client retries (durable
	// seeds only).
	KindCrashEnd
	// KindCoordinatorCrash reloads the transaction coordinator from its
	// log while partitions stay up (durable seeds only).
	KindCoordinatorCrash
	// KindFailover reloads one share partition from the share-state log
	// (durable seeds only).
	KindFailover
	// KindChurn changes a share group's membership (membership churn): an
	// extra member joins, or the one that joined leaves, which bumps every
	// member's epoch; workers learn it on their next poll, and a staging
	// with the old epoch is fenced.
	KindChurn
	// KindPartition cuts the transaction coordinator off from one input
	// or output partition's leader for a while (a network partition):
	// markers for it wait until the partition heals.
	KindPartition
	numKinds
)

var kindNames = [numKinds]string{"work", "produce", "advance", "crash", "zombie", "stall", "leave", "fail-stage",
	"restart", "crash-end", "coordinator-crash", "failover", "churn", "partition"}

func (k Kind) String() string {
	if k < numKinds {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// kindWeights is the scheduler's mix, in percent.
var kindWeights = [numKinds]int{
	KindWork: 57, KindProduce: 8, KindAdvance: 16, KindCrash: 3,
	KindZombie: 2, KindStall: 2, KindLeave: 1, KindFailStage: 2,
	KindRestart: 1, KindCrashEnd: 2, KindCoordinatorCrash: 1, KindFailover: 1,
	KindChurn: 2, KindPartition: 2,
}

// Step is one scheduler decision. R seeds the step's own choices (how
// many records, which outcome, how far the clock moves), so a step means the
// same thing whichever other steps are removed while shrinking.
type Step struct {
	Kind Kind
	Slot int
	R    uint64
}

// Generate returns the n steps of seed: one PCG stream decides them all.
func Generate(seed int64, n int) []Step {
	r := rand.New(rand.NewPCG(uint64(seed), 0x5eed_0001))
	out := make([]Step, n)
	for i := range out {
		x := r.IntN(100)
		k := Kind(0)
		for ; k < numKinds-1 && x >= kindWeights[k]; k++ {
			x -= kindWeights[k]
		}
		out[i] = Step{Kind: k, Slot: r.IntN(numSlots), R: r.Uint64()}
	}
	return out
}

// stepRand returns the random stream of one step.
func stepRand(st Step) *rand.Rand { return rand.New(rand.NewPCG(st.R, 0x57e9)) }

// Modes, in report order (vocab.AllModes); slot i runs
// modes[i/slotsPerMode].
var modes = [...]vocab.Mode{vocab.Implicit, vocab.Explicit, vocab.Deferred, vocab.Transactional, vocab.ClassicEOS}

const (
	slotsPerMode = 2
	numSlots     = len(modes) * slotsPerMode
)

// params are the world a seed picks: partition counts, timeouts, limits.
// They depend on the seed only, so shrinking the step list keeps them.
type params struct {
	inParts, outParts int32
	lock              time.Duration // share.record.lock.duration.ms
	txnTimeout        time.Duration // transaction.timeout.ms
	sweep             time.Duration // abort sweep interval
	session           time.Duration // session timeout
	limit             int           // share.delivery.count.limit
	maxLocks          int           // share.partition.max.record.locks
	maxPoll           int           // records per poll, at most
	shards            int
	pace              float64 // scales clock advances: >1 means more expiries
	durable           bool    // a data directory: engine crashes and restarts
	// checkpoint is the lane (index in modes) whose workers run the
	// checkpoint model — a stream-processing task writing to a two-phase
	// sink — instead of its plain loop (-1: none), with the model's
	// settings cp.
	checkpoint int
	cp         pipeline.CheckpointConfig
}

// checkpointLanes are the lanes the checkpoint model can run in.
var checkpointLanes = [...]int{1, 3} // explicit, transactional

func paramsFor(seed int64) params {
	r := rand.New(rand.NewPCG(uint64(seed), 0x9a7a_0002))
	p := params{
		inParts:  int32(1 + r.IntN(3)),
		outParts: int32(1 + r.IntN(2)),
		lock:     []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second}[r.IntN(3)],
		limit:    []int{2, 3, 5}[r.IntN(3)],
		maxLocks: []int{4, 8, 32}[r.IntN(3)],
		maxPoll:  2 + r.IntN(8),
		shards:   []int{1, 2, 8}[r.IntN(3)],
		pace:     []float64{0.5, 1, 2}[r.IntN(3)],
	}
	p.txnTimeout = 2*p.lock + time.Duration(r.IntN(3))*p.lock/2
	p.sweep = p.lock / 4
	p.session = 5 * p.lock
	p.durable = r.IntN(2) == 0
	// Drawn after the others, which therefore do not depend on these.
	p.checkpoint = -1
	if x := r.IntN(3); x < len(checkpointLanes) {
		p.checkpoint = checkpointLanes[x]
	}
	p.cp = pipeline.CheckpointConfig{
		// The barrier comes before the locks of its first records end
		// (unless the worker stalls), and within a drain round.
		Interval:   p.lock / time.Duration(2+r.IntN(3)),
		MaxRecords: []int{0, maxTxnRecords}[r.IntN(2)],
		// A snapshot a lock duration after its barrier fails the
		// checkpoint (the clock moved on between the two).
		Timeout: p.lock,
		Renew:   r.IntN(2) == 0,
	}
	if p.checkpoint >= 0 && modes[p.checkpoint] == vocab.Transactional {
		// Acks first: the share-ack transaction, which can time out, commits
		// before the sink, which cannot; sink-first would turn a timed-out
		// transaction into duplicates the transactional mode forbids.
		p.cp.StageAtAcquisition = r.IntN(2) == 0
	} else {
		p.cp.SinkFirst = r.IntN(2) == 0
	}
	return p
}

func (p params) String() string {
	out := fmt.Sprintf("in=%d out=%d lock=%v txn-timeout=%v sweep=%v session=%v limit=%d max-locks=%d max-poll=%d shards=%d pace=%v durable=%v",
		p.inParts, p.outParts, p.lock, p.txnTimeout, p.sweep, p.session, p.limit, p.maxLocks, p.maxPoll, p.shards, p.pace, p.durable)
	if p.checkpoint < 0 {
		return out
	}
	c := p.cp
	order, staging := "acks-first", "barrier"
	if c.SinkFirst {
		order = "sink-first"
	}
	if c.StageAtAcquisition {
		staging = "acquisition"
	}
	return out + fmt.Sprintf(" checkpoint=%s(interval=%v max-records=%d timeout=%v staging=%s renew=%v order=%s)",
		modes[p.checkpoint], c.Interval, c.MaxRecords, c.Timeout, staging, c.Renew, order)
}

// advanceBy is how far a KindAdvance step moves the clock: mostly a little,
// sometimes past a lock, now and then past a transaction or session timeout.
func (p params) advanceBy(r *rand.Rand) time.Duration {
	var d time.Duration
	switch x := r.IntN(100); {
	case x < 70:
		d = time.Duration(1 + r.Int64N(int64(p.lock/10)))
	case x < 90:
		d = p.lock/10 + time.Duration(r.Int64N(int64(p.lock/2)))
	case x < 97:
		d = p.lock/2 + time.Duration(r.Int64N(int64(p.txnTimeout)))
	default:
		d = p.session + time.Duration(r.Int64N(int64(p.session/2)))
	}
	return time.Duration(float64(d) * p.pace).Round(time.Millisecond)
}
