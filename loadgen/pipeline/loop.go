// This file holds what both worker machines share: the interface their
// drivers use (Loop), what they are configured with and told at each step
// (Config, Inputs), and the core they embed: the held poll, the open
// transaction, the crossed crash phase, and the failure, retry, replace
// and close rules of every mode.

package pipeline

import (
	"time"

	"github.com/sharebench/sharebench/vocab"
)

// Loop is one worker's loop as a pure state machine: Machine (a mode's own
// loop) or CheckpointMachine (the checkpoint model). It is not safe for
// concurrent use; one goroutine (or one simulator) drives it.
type Loop[R any] interface {
	// Next returns the worker's next action.
	Next(in Inputs) Action[R]
	// Done takes the outcome of the action Next returned last, and
	// returns the crash phase the worker crossed by it ("" for none): a
	// crash scheduled for that phase strikes now, before the next action.
	Done(res Result[R]) vocab.Phase
	// Phase is the boundary the worker last crossed.
	Phase() vocab.Phase
	// Open reports whether a transaction is open.
	Open() bool
	// Stopping reports whether the worker was asked to stop.
	Stopping() bool
	// Pending returns the records the next poll (or the close) accepts:
	// implicit mode's previous poll. The slice is the machine's.
	Pending() []R
}

// New returns the loop of a worker of cfg.Mode drawing from rng: the
// checkpoint model when cfg.Checkpoint is set, else the mode's own loop.
func New[R any](cfg Config, rng Rand) Loop[R] {
	if cfg.Checkpoint != nil {
		return NewCheckpointMachine[R](cfg, rng)
	}
	return NewMachine[R](cfg, rng)
}

// Config is what a machine needs of its workload.
type Config struct {
	Mode           vocab.Mode
	MaxPollRecords int
	// MaxRecords ends a transaction once it holds that many records (0: no
	// bound). MaxDuration ends it once it is that old (0: 1s).
	MaxRecords  int
	MaxDuration time.Duration
	// LockDuration is the share group's lock duration: a deferred worker
	// renews its held records' locks before a commit that comes past half
	// of it.
	LockDuration time.Duration
	// Checkpoint, when set, makes New return the checkpoint model
	// (CheckpointMachine) instead of the mode's own loop: Mode
	// Transactional or Explicit.
	Checkpoint *CheckpointConfig
	// BeginGiveUp replaces a worker whose begins have failed for that
	// long (0: it retries until the stop). A producer that cannot open a
	// transaction for a transaction timeout is wedged (its connection, its
	// producer id); a new incarnation gets new ones, as an application
	// recreates its producer, and the records it held go back to the
	// group (a share session's end releases them; a classic group's
	// offsets never moved past them).
	BeginGiveUp time.Duration
}

// Inputs is what the machine is told at each step.
type Inputs struct {
	Now time.Time
	// Stop asks the worker to finish: commit its open transaction (never
	// abort it by choice) and close.
	Stop bool
	// CutUntil: the worker is cut off from the target (a network
	// partition) until then; its calls wait.
	CutUntil time.Time
	// StallUntil: the worker stalls (holding its transaction open) until
	// then, at StallAt: AfterStage (the zero value: its acks or offsets
	// staged, the transaction whole) or AfterProduce (its outputs written
	// and nothing staged yet, so a commit that lands meanwhile is torn). A
	// worker still stalled at a stop is abandoned (OpAbandon).
	StallUntil time.Time
	StallAt    vocab.Phase
	// AbortRatio is the share of transactions to abort on purpose.
	AbortRatio float64
	// RejectRatio is the share of a poll's records rejected on purpose
	// (modes that can reject); ReleaseRatio the share released on purpose
	// without an output (explicit mode only: the other modes' acks are
	// part of, or follow, a transaction).
	RejectRatio, ReleaseRatio float64
	// RenewRatio is the chance that the worker renews its held records'
	// locks before it goes on with them (explicit: before processing a
	// poll; deferred: before ending its transaction).
	RenewRatio float64
	// EndTxn ends the open transaction at this step's commit check,
	// whatever its size and age (a checkpoint, or a simulator's choice).
	EndTxn bool
	// MaxPoll bounds this step's poll (0: Config.MaxPollRecords).
	MaxPoll int
	// SnapshotDelay is how long the worker's next snapshot takes (a
	// slow-checkpoint fault; checkpoint model). The machine waits it out
	// once per checkpoint; the caller clears it when the wait ends.
	SnapshotDelay time.Duration
}

// Idle poll bound: a worker with nothing to do polls at least this often,
// so it sees a stop or a due commit.
const pollTimeout = 100 * time.Millisecond

// RetryPause is how long a worker waits after a call failed with an error
// that is neither fencing nor a cancellation, before it goes on.
const RetryPause = 10 * time.Millisecond

// core is what both machines embed: the state the tables move, the poll
// being processed, the open transaction, and the rules every mode keeps.
type core[R any] struct {
	cfg   Config
	rng   Rand
	st    state
	last  Op // the action Next returned last, whose outcome Done takes
	phase vocab.Phase

	stopping bool

	// The poll being processed, and its records' fates (split).
	pollAt        time.Time
	held          []R
	acc, rej, rel []R
	// Implicit mode: the previous poll's records, which the next poll (or
	// the close) accepts.
	prev []R

	// The open transaction.
	open     bool
	txnStart time.Time

	aborted bool // of the replace to send: the fencing aborted the open transaction
	wedged  bool // of the replace to send: the begins failed for Config.BeginGiveUp
}

func newCore[R any](cfg Config, rng Rand) core[R] {
	if cfg.MaxDuration <= 0 {
		cfg.MaxDuration = time.Second
	}
	return core[R]{cfg: cfg, rng: rng, st: stTop, phase: vocab.Idle}
}

// Phase is the boundary the worker last crossed.
func (c *core[R]) Phase() vocab.Phase { return c.phase }

// Pending returns the records the next poll (or the close) accepts:
// implicit mode's previous poll. The slice is the machine's.
func (c *core[R]) Pending() []R { return c.prev }

// Open reports whether a transaction is open.
func (c *core[R]) Open() bool { return c.open }

// Stopping reports whether the worker was asked to stop.
func (c *core[R]) Stopping() bool { return c.stopping }

// step is the action of a state both machines share.
func (c *core[R]) step(in Inputs) (Action[R], bool) {
	switch c.st {
	case stRetry:
		return c.retryWait(in), true
	case stReplace:
		return Action[R]{Op: OpReplace, Aborted: c.aborted, Wedged: c.wedged}, true
	case stClose:
		return Action[R]{Op: OpClose, Recs: c.prev}, true
	}
	return Action[R]{Op: OpExit}, true
}

// retryWait is the pause after a failed call.
func (c *core[R]) retryWait(in Inputs) Action[R] {
	return Action[R]{Op: OpWait, Until: in.Now.Add(RetryPause), Retry: true}
}

// pollTimeoutBefore is the poll's timeout when something falls due at due:
// short enough not to be late, but never below 1ms.
func pollTimeoutBefore(now, due time.Time) time.Duration {
	if d := due.Sub(now); d < pollTimeout {
		return max(d, time.Millisecond)
	}
	return pollTimeout
}

func (c *core[R]) cross(p vocab.Phase) vocab.Phase {
	c.phase = p
	return p
}

// top sends the worker back to the top of its loop: to poll again, in its
// open transaction if one is open, else idle.
func (c *core[R]) top() {
	c.st = stTop
	if !c.open {
		c.phase = vocab.Idle
	}
}

// split decides the fate of the poll's records: rejected on purpose at the
// reject ratio (modes that can reject), released at the release ratio
// (explicit mode), accepted otherwise.
func (c *core[R]) split(in Inputs) {
	c.acc, c.rej, c.rel = c.held, nil, nil
	rej, rel := in.RejectRatio, in.ReleaseRatio
	if !c.cfg.Mode.CanReject() {
		rej = 0
	}
	if c.cfg.Mode != vocab.Explicit {
		rel = 0
	}
	if rej <= 0 && rel <= 0 {
		return
	}
	c.acc = nil
	for _, r := range c.held {
		switch x := c.rng.Float64(); {
		case x < rej:
			c.rej = append(c.rej, r)
		case x < rej+rel:
			c.rel = append(c.rel, r)
		default:
			c.acc = append(c.acc, r)
		}
	}
}

// fail handles a failed call: a cancelled one ends the loop, a fenced
// worker is replaced (the fencing ended its transaction), anything else
// is retried after a pause.
func (c *core[R]) fail(res Result[R]) {
	switch {
	case res.Canceled:
		c.st = stExit
	case res.Fenced:
		c.open = false
		c.aborted = false
		c.st = stReplace
	default:
		c.st = stRetry
	}
}
