// This file holds the engine target's fault runner (loadgen.FaultRunner):
// the engine-side faults of docs/design.md §8 — on an engine with a data directory
// engine-restart, coordinator-crash in a given transaction state and
// share-failover of an input partition; on any engine a network partition
// between the transaction coordinator and one partition's leader.

package enginetarget

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	eng "github.com/sharebench/sharebench/engine"
	"github.com/sharebench/sharebench/loadgen/targets"
	"github.com/sharebench/sharebench/workloads"
)

// NeedsDataDir reports whether the runner can apply faults of kind only on
// an engine with a data directory: those that crash or reload a component.
func NeedsDataDir(kind workloads.FaultKind) bool {
	switch kind {
	case workloads.FaultEngineRestart, workloads.FaultCoordinatorCrash, workloads.FaultShareFailover:
		return true
	}
	return false
}

// armWait bounds how long a coordinator-crash fault waits for a
// transaction to reach its state before it returns and leaves the crash
// armed (until the mode ends).
const armWait = time.Second

// FaultRunner applies engine-side faults (Target.FaultRunner); those that
// crash or reload a component need a data directory.
type FaultRunner struct {
	t       *Target
	durable bool // the engine has a data directory

	// armed is the crash waiting at the hook: nil, or the state.
	armed  atomic.Pointer[arm]
	struck chan string // the hook reports a strike here (buffered 1)
	once   sync.Once
	mu     sync.Mutex // serialises Apply
	rng    *rand.Rand
}

type arm struct {
	point  eng.HookPoint
	commit bool // at HookTxnPrepared: the decision that crashes
	err    error
	// late: Apply returned before the crash struck; a whole-engine crash
	// is then restarted by a goroutine the hook starts.
	late atomic.Bool
}

// FaultRunner returns the target's fault runner.
func (t *Target) FaultRunner() *FaultRunner { return t.faults }

// Supports reports whether kind is an engine-side fault this runner
// applies.
func (f *FaultRunner) Supports(kind workloads.FaultKind) error {
	switch {
	case kind == workloads.FaultNetworkPartition:
		return nil
	case NeedsDataDir(kind):
		if f.durable {
			return nil
		}
		return fmt.Errorf("engine target: %w: %w: fault %q", targets.ErrUnsupported, ErrNeedsDataDir, kind)
	}
	return fmt.Errorf("engine target: %w: fault %q", targets.ErrUnsupported, kind)
}

// Apply applies one fault now and describes what happened:
//
//   - engine-restart: Crash and Restart from the data directory (sessions
//     are lost: workers get unknown-member and are replaced).
//   - coordinator-crash, params state=ongoing|prepare-commit|prepare-abort
//     and optional scope=coordinator|engine: the next transaction that
//     reaches the state (stages acknowledgements or offsets; logs
//     PREPARE_COMMIT; logs PREPARE_ABORT) crashes at that point. With
//     scope coordinator (the default) only the transaction coordinator
//     crashes and reloads from its log; with scope engine the whole engine
//     crashes there and restarts. Apply waits up to a second for a
//     transaction to get there and describes the crash; if none does, the
//     crash stays armed until one does or the mode ends (Setup disarms).
//   - share-failover, param partition=N|random: the share group's
//     share partition of input partition N is reloaded from the
//     share-state log (its acquisitions are lost).
func (f *FaultRunner) Apply(kind workloads.FaultKind, params map[string]string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.once.Do(func() {
		f.struck = make(chan string, 1)
		f.rng = rand.New(rand.NewPCG(1, 2))
	})
	e := f.t.e
	if err := f.Supports(kind); err != nil {
		return "", err
	}
	switch kind {
	case workloads.FaultNetworkPartition:
		return f.partition(params)
	case workloads.FaultEngineRestart:
		rep, err := e.Restart()
		if err != nil {
			return "", fmt.Errorf("engine target: restart: %w", err)
		}
		return "engine restarted: " + summary(rep), nil
	case workloads.FaultCoordinatorCrash:
		a := &arm{err: eng.ErrInjectedCoordinatorCrash}
		state := params["state"]
		switch state {
		case "ongoing":
			a.point = eng.HookTxnOngoing
		case "prepare-commit":
			a.point, a.commit = eng.HookTxnPrepared, true
		case "prepare-abort":
			a.point = eng.HookTxnPrepared
		default:
			return "", fmt.Errorf("engine target: coordinator-crash state %q (valid: ongoing, prepare-commit, prepare-abort)", state)
		}
		scope := params["scope"]
		switch scope {
		case "", "coordinator":
			scope = "coordinator"
		case "engine":
			a.err = eng.ErrInjectedCrash
		default:
			return "", fmt.Errorf("engine target: coordinator-crash scope %q (valid: coordinator, engine)", scope)
		}
		select {
		case <-f.struck: // a stale strike
		default:
		}
		f.armed.Store(a)
		select {
		case where := <-f.struck:
			if scope == "coordinator" {
				return fmt.Sprintf("transaction coordinator crashed %s and reloaded its log", where), nil
			}
			rep, err := e.Restart()
			if err != nil {
				return "", fmt.Errorf("engine target: restart after the crash %s: %w", where, err)
			}
			return fmt.Sprintf("engine crashed %s; restarted: %s", where, summary(rep)), nil
		case <-time.After(armWait):
			a.late.Store(true)
			select {
			case where := <-f.struck: // struck meanwhile
				if scope == "engine" {
					return fmt.Sprintf("engine crashed %s; restarting", where), nil
				}
				return fmt.Sprintf("transaction coordinator crashed %s and reloaded its log", where), nil
			default:
			}
			return fmt.Sprintf("armed: the next transaction to reach %s crashes the %s (none did within %v)", state, scope, armWait), nil
		}
	case workloads.FaultShareFailover:
		f.t.mu.Lock()
		cfg := f.t.mu.cfg
		f.t.mu.Unlock()
		if cfg.InputPartitions < 1 {
			return "", errors.New("engine target: share-failover before the run set up its topics")
		}
		var part int32
		switch p := params["partition"]; p {
		case "", "random":
			h := fnv.New64a()
			h.Write([]byte(cfg.Group))
			part = int32((h.Sum64() + f.rng.Uint64()) % uint64(cfg.InputPartitions))
		default:
			n, err := strconv.Atoi(p)
			if err != nil || n < 0 || n >= int(cfg.InputPartitions) {
				return "", fmt.Errorf("engine target: share-failover partition %q (valid: 0..%d or random)", p, cfg.InputPartitions-1)
			}
			part = int32(n)
		}
		tp := eng.TopicPartition{Topic: cfg.InputTopic, Partition: part}
		err := e.FailoverSharePartition(cfg.Group, tp)
		switch {
		case errors.Is(err, eng.ErrUnknownGroup):
			return fmt.Sprintf("no share partition of %s for group %s (a classic group, or nothing polled yet): nothing to fail over", tp, cfg.Group), nil
		case err != nil:
			return "", fmt.Errorf("engine target: share-failover of %s: %w", tp, err)
		}
		return fmt.Sprintf("share partition %s of group %s failed over: reloaded from the share-state log", tp, cfg.Group), nil
	}
	return "", f.Supports(kind)
}

// partition cuts the transaction coordinator off from the leader of
// partition N (param partition, or random) of the run's input and output
// topics for the param for: the markers for those partitions (outputs,
// share partitions) wait until it heals.
func (f *FaultRunner) partition(params map[string]string) (string, error) {
	f.t.mu.Lock()
	cfg := f.t.mu.cfg
	f.t.mu.Unlock()
	d, err := time.ParseDuration(params["for"])
	if err != nil || d <= 0 {
		return "", fmt.Errorf("engine target: network-partition for %q (a duration above 0)", params["for"])
	}
	if cfg.InputPartitions < 1 {
		return "", errors.New("engine target: network-partition before the run set up its topics")
	}
	part := int32(f.rng.IntN(int(cfg.InputPartitions)))
	if p := params["partition"]; p != "" && p != "random" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 || n >= int(cfg.InputPartitions) {
			return "", fmt.Errorf("engine target: network-partition partition %q (valid: 0..%d or random)", p, cfg.InputPartitions-1)
		}
		part = int32(n)
	}
	cut := []eng.TopicPartition{{Topic: cfg.InputTopic, Partition: part}}
	if part < cfg.OutputPartitions || cfg.OutputPartitions == 0 {
		cut = append(cut, eng.TopicPartition{Topic: cfg.OutputTopic, Partition: part})
	}
	for _, tp := range cut {
		if err := f.t.e.PartitionMarkers(tp, d); err != nil {
			return "", fmt.Errorf("engine target: network-partition of %s: %w", tp, err)
		}
	}
	return fmt.Sprintf("transaction coordinator cut off from the leader of %v for %v", cut, d), nil
}

// hook strikes the armed crash (called by the engine with locks held).
func (f *FaultRunner) hook(pt eng.HookPoint, info eng.HookInfo) error {
	a := f.armed.Load()
	if a == nil || pt != a.point || (pt == eng.HookTxnPrepared && info.Commit != a.commit) {
		return nil
	}
	if !f.armed.CompareAndSwap(a, nil) {
		return nil
	}
	where := fmt.Sprintf("in transaction %s (producer %d)", info.TransactionalID, info.ProducerID)
	switch pt {
	case eng.HookTxnOngoing:
		where = "while ONGOING " + where
	case eng.HookTxnPrepared:
		word := "PREPARE_ABORT"
		if info.Commit {
			word = "PREPARE_COMMIT"
		}
		where = "after " + word + " was logged " + where
	}
	select {
	case f.struck <- where:
	default:
	}
	if a.late.Load() && errors.Is(a.err, eng.ErrInjectedCrash) {
		// Apply is gone: restart once the crashing call has returned
		// (Restart waits for it).
		go func() { _, _ = f.t.e.Restart() }()
	}
	return fmt.Errorf("engine target: fault: %w", a.err)
}

// disarm drops a crash still armed (a new mode starts).
func (f *FaultRunner) disarm() { f.armed.Store(nil) }

func summary(r eng.RecoveryReport) string {
	s := fmt.Sprintf("%d records replayed in %v, %d transactions completed, %d ongoing", r.Frames, r.Duration.Round(time.Microsecond), r.Completed, r.Ongoing)
	if n := r.TruncatedBytes(); n > 0 {
		s += fmt.Sprintf(", %d torn bytes dropped", n)
	}
	return s
}

// awaitRestart waits while the engine is crashed (a fault restarting it),
// at most a few seconds. On a manual clock it does not wait: the one
// caller is the only one who could restart the engine.
func (t *Target) awaitRestart(ctx context.Context) {
	if t.opts.Clock != nil {
		return
	}
	for i := 0; i < 5000 && t.e.Crashed() && ctx.Err() == nil; i++ {
		time.Sleep(time.Millisecond)
	}
}

// retryRestart runs f again when it met a restart in progress.
func retryRestart[T any](ctx context.Context, t *Target, f func() (T, error)) (T, error) {
	for attempt := 0; ; attempt++ {
		v, err := f()
		if !errors.Is(err, eng.ErrCrashed) || attempt >= 10 || t.opts.Clock != nil {
			return v, err
		}
		t.awaitRestart(ctx)
	}
}

// ErrNeedsDataDir is wrapped by the refusal of a fault that needs an
// engine with a data directory (Options.DataDir): one a restart must
// survive.
var ErrNeedsDataDir = errors.New("it needs an engine with a data directory")
