// This file holds the engine target's fault runner (loadgen.FaultRunner):
// the engine-side faults of docs/design.md §8 — on an engine with a data directory
// engine-restart, coordinator-crash (at once, or armed for a transaction
// state) and share-failover of a share partition; on any engine a network
// partition between the transaction coordinator and one partition's
// leader. The load generator applies them to the running mode's topics
// and group; a caller that drives several modes on one target (the
// simulator) names the topic, the group or the transactions in the params.

package enginetarget

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	eng "github.com/sharebench/sharebench/engine"
	"github.com/sharebench/sharebench/loadgen/targets"
	"github.com/sharebench/sharebench/vocab"
	"github.com/sharebench/sharebench/workloads"
)

// NeedsDataDir reports whether the runner can apply faults of kind only on
// an engine with a data directory: those that crash or reload a component.
func NeedsDataDir(kind vocab.FaultKind) bool {
	switch kind {
	case vocab.FaultEngineRestart, vocab.FaultCoordinatorCrash, vocab.FaultShareFailover:
		return true
	}
	return false
}

// armWait is how long a coordinator-crash fault waits, unless its wait
// param says otherwise, for a transaction to reach its state before it
// returns and leaves the crash armed.
const armWait = time.Second

// maxWait bounds the wait param of coordinator-crash (1h, as a workload's
// durations).
const maxWait = time.Hour

// Params of the engine-side faults that only a direct caller of the
// runner passes: they name one of the engine's topics, groups or
// transactional ids, which a workload file cannot know (the load
// generator names them for each run, and the runner then defaults to the
// running mode's).
const (
	ParamTopic                 = "topic"
	ParamGroup                 = "group"
	ParamTransactionalIDPrefix = "transactional-id-prefix"
)

// Params of coordinator-crash beyond state, which a workload file takes
// too (vocab.FaultCoordinatorCrash).
const (
	ParamScope = "scope"
	ParamWait  = "wait"
)

// faultParams lists the params each kind takes, for the refusal of any
// other. worker is a network-partition param of the workload (between
// worker-engine), which the load generator passes on resolved: ignored.
var faultParams = map[vocab.FaultKind][]string{
	vocab.FaultEngineRestart:    nil,
	vocab.FaultCoordinatorCrash: {"state", ParamScope, ParamWait, ParamTransactionalIDPrefix},
	vocab.FaultShareFailover:    {ParamGroup, ParamTopic, "partition"},
	vocab.FaultNetworkPartition: {"for", "between", ParamTopic, "partition", "worker"},
}

// FaultRunner applies engine-side faults (Target.FaultRunner); those that
// crash or reload a component need a data directory.
type FaultRunner struct {
	t       *Target
	durable bool // the engine has a data directory
	manual  bool // the engine runs on a manual clock: its one caller restarts it

	// armed is the crash waiting at the hook: nil, or the state.
	armed atomic.Pointer[arm]
	// last is the crash armed last, whose strike Struck reports.
	last atomic.Pointer[arm]
	mu   sync.Mutex // serialises Apply
	rng  *rand.Rand // random choices of Apply (under mu)
}

func newFaultRunner(durable, manual bool) *FaultRunner {
	return &FaultRunner{durable: durable, manual: manual, rng: rand.New(rand.NewPCG(1, 2))}
}

type arm struct {
	point eng.HookPoint
	// decided: only a transaction whose decision is commit crashes (at
	// HookTxnPrepared; prepare-commit and prepare-abort).
	decided, commit bool
	// prefixes: only a transaction whose transactional id starts with one
	// crashes (nil: any).
	prefixes []string
	err      error
	engine   bool // scope engine: the whole engine crashes
	// phase: armWaiting, armStruck or armLate, which decides who
	// restarts an engine the crash brings down.
	phase atomic.Int32
	// struck is closed by the hook once strike is set.
	struck chan struct{}
	strike Strike
	taken  atomic.Bool // Apply or Struck reported the strike
}

// Strike is an armed crash that struck: where, in which transaction, and
// what crashed.
type Strike struct {
	Point eng.HookPoint
	// Info is the transaction the crash struck: its id, producer and
	// decision, at HookTxnMarker the markers applied so far.
	Info eng.HookInfo
	// Where says the point and the transaction in words.
	Where string
	// Engine: the whole engine crashed (scope engine) and stays down
	// until it is restarted; otherwise the transaction coordinator alone
	// crashed and reloaded its log.
	Engine bool
}

// FaultRunner returns the target's fault runner.
func (t *Target) FaultRunner() *FaultRunner { return t.faults }

// Supports reports whether kind is an engine-side fault this runner
// applies.
func (f *FaultRunner) Supports(kind vocab.FaultKind) error {
	switch {
	case kind == vocab.FaultNetworkPartition:
		return nil
	case NeedsDataDir(kind):
		if f.durable {
			return nil
		}
		return fmt.Errorf("engine target: %w: %w: fault %q", targets.ErrUnsupported, ErrNeedsDataDir, kind)
	}
	return fmt.Errorf("engine target: %w: fault %q", targets.ErrUnsupported, kind)
}

// Apply applies one fault now and describes what happened. Each kind takes
// only its own params; the topic, group and partition a fault hits
// default to the running mode's (those of the last Setup).
//
//   - engine-restart, no params: Crash and Restart from the data directory
//     (sessions are lost: workers get unknown-member and are replaced).
//   - coordinator-crash, params state (required), scope, wait and
//     transactional-id-prefix. State now crashes the transaction
//     coordinator at once: it reloads from its log (decided transactions
//     complete with their decision) while partitions stay up. Any other
//     state arms a crash for the next transaction that reaches it:
//     ongoing (it stages acknowledgements or offsets), prepare-commit,
//     prepare-abort or prepared (PREPARE_COMMIT, PREPARE_ABORT or either
//     is logged), marker (its first marker is applied), completed
//     (COMPLETE_COMMIT or COMPLETE_ABORT is logged). With scope
//     coordinator (the default) only the transaction coordinator crashes
//     there and reloads its log; with scope engine the whole engine
//     crashes there. Apply waits up to wait (a Go duration up to 1h;
//     default 1s, and 0s on a manual clock, where nothing runs while the
//     caller waits) for a transaction to get there, restarts a crashed
//     engine and describes the crash. If none gets there in time (at once
//     with wait 0s), Apply returns and the crash stays armed until one
//     does, Disarm, or the mode ends (Setup disarms); a whole engine it
//     crashes later is restarted by the runner, except on a manual clock
//     (Options.Clock), where the caller learns of the crash from Struck
//     and restarts the engine (engine-restart). transactional-id-prefix,
//     one or more prefixes separated by commas, limits the crash to
//     transactions whose transactional id starts with one of them. State
//     now takes neither wait nor transactional-id-prefix, and not scope
//     engine: a whole-engine crash at once is engine-restart.
//   - share-failover, params group, topic, partition=N|random: the share
//     partition of group (default: the mode's group) on partition N of
//     topic (default: the mode's input topic) is reloaded from the
//     share-state log (its acquisitions are lost); random (the default)
//     picks one. A group with no share partition there (a classic group,
//     or nothing polled yet) has nothing to fail over: not an error.
//   - network-partition, params for (required), between, topic,
//     partition=N|random: the transaction coordinator is cut off for the
//     duration for from the leader of partition N of topic, or without
//     topic of partition N of the mode's input and output topics; the
//     markers for those partitions (outputs, share partitions) wait until
//     it heals. between, when given, is coordinator-participant (between
//     worker-engine is the load generator's, with its own clients, which
//     also reads the param worker).
func (f *FaultRunner) Apply(kind vocab.FaultKind, params map[string]string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.Supports(kind); err != nil {
		return "", err
	}
	if err := checkParams(kind, params); err != nil {
		return "", err
	}
	switch kind {
	case vocab.FaultNetworkPartition:
		return f.partition(params)
	case vocab.FaultEngineRestart:
		rep, err := f.t.restart()
		if err != nil {
			return "", fmt.Errorf("engine target: restart: %w", err)
		}
		return "engine restarted: " + summary(rep), nil
	case vocab.FaultCoordinatorCrash:
		return f.coordinatorCrash(params)
	case vocab.FaultShareFailover:
		return f.failover(params)
	}
	return "", f.Supports(kind)
}

// checkParams refuses a param kind does not take.
func checkParams(kind vocab.FaultKind, params map[string]string) error {
	known := faultParams[kind]
	for _, name := range slices.Sorted(maps.Keys(params)) {
		if slices.Contains(known, name) {
			continue
		}
		if len(known) == 0 {
			return fmt.Errorf("engine target: %s param %q: %s takes no params; remove it", kind, name, kind)
		}
		return fmt.Errorf("engine target: %s param %q: not a param of %s; use %s", kind, name, kind, strings.Join(known, ", "))
	}
	return nil
}

// Phases of an armed crash: who restarts an engine it crashes.
const (
	armWaiting = iota // Apply waits for the strike
	armStruck         // struck while Apply waited: Apply restarts
	armLate           // Apply returned first: the runner (or the caller) restarts
)

// coordinatorCrash applies coordinator-crash (see Apply).
func (f *FaultRunner) coordinatorCrash(params map[string]string) (string, error) {
	const kind = vocab.FaultCoordinatorCrash
	state := params["state"]
	scope := params[ParamScope]
	switch scope {
	case "", workloads.CrashScopeCoordinator:
		scope = workloads.CrashScopeCoordinator
	case workloads.CrashScopeEngine:
	default:
		return "", fmt.Errorf("engine target: %s scope %q: not a scope; use %s or %s", kind, scope, workloads.CrashScopeCoordinator, workloads.CrashScopeEngine)
	}
	if state == workloads.StateNow {
		for _, p := range []string{ParamWait, ParamTransactionalIDPrefix} {
			if v, ok := params[p]; ok {
				return "", fmt.Errorf("engine target: %s %s %q with state now: a crash at once waits for no transaction; remove %s", kind, p, v, p)
			}
		}
		if scope == workloads.CrashScopeEngine {
			return "", fmt.Errorf("engine target: %s scope %q with state now: a whole-engine crash at once is the %s fault; use it, or scope %s",
				kind, scope, vocab.FaultEngineRestart, workloads.CrashScopeCoordinator)
		}
		rep, err := f.t.e.CrashCoordinator()
		if err != nil {
			return "", fmt.Errorf("engine target: %s: %w", kind, err)
		}
		return "transaction coordinator crashed and reloaded its log: " + summary(rep), nil
	}
	a := &arm{err: eng.ErrInjectedCoordinatorCrash, engine: scope == workloads.CrashScopeEngine}
	if a.engine {
		a.err = eng.ErrInjectedCrash
	}
	switch state {
	case workloads.StateOngoing:
		a.point = eng.HookTxnOngoing
	case workloads.StatePrepareCommit:
		a.point, a.decided, a.commit = eng.HookTxnPrepared, true, true
	case workloads.StatePrepareAbort:
		a.point, a.decided = eng.HookTxnPrepared, true
	case workloads.StatePrepared:
		a.point = eng.HookTxnPrepared
	case workloads.StateMarker:
		a.point = eng.HookTxnMarker
	case workloads.StateCompleted:
		a.point = eng.HookTxnCompleted
	default:
		return "", fmt.Errorf("engine target: %s state %q: not a transaction state; use %s", kind, state, strings.Join(workloads.CoordinatorCrashStates, ", "))
	}
	// On a manual clock nothing runs while the one caller waits.
	wait := armWait
	if f.manual {
		wait = 0
	}
	if v, ok := params[ParamWait]; ok {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 || d > maxWait {
			return "", fmt.Errorf("engine target: %s wait %q: not a duration from 0s to 1h; write a Go duration like 0s (return at once, the crash armed) or 2s", kind, v)
		}
		wait = d
	}
	if v, ok := params[ParamTransactionalIDPrefix]; ok {
		for p := range strings.SplitSeq(v, ",") {
			if p == "" {
				return "", fmt.Errorf("engine target: %s %s %q: an empty prefix; list prefixes separated by commas, like tx-a-,tx-b-", kind, ParamTransactionalIDPrefix, v)
			}
			a.prefixes = append(a.prefixes, p)
		}
	}
	a.struck = make(chan struct{})
	armed := fmt.Sprintf("armed: the next transaction to reach %s crashes the %s", state, scope)
	if a.prefixes != nil {
		armed = fmt.Sprintf("armed: the next transaction of %s to reach %s crashes the %s", strings.Join(a.prefixes, "*, ")+"*", state, scope)
	}
	if wait == 0 {
		a.phase.Store(armLate)
	}
	f.last.Store(a)
	f.armed.Store(a)
	if wait == 0 {
		return armed, nil
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case <-a.struck:
	case <-timer.C:
		if a.phase.CompareAndSwap(armWaiting, armLate) {
			return fmt.Sprintf("%s (none did within %v)", armed, wait), nil
		}
		<-a.struck // struck just now: the hook is closing it
	}
	a.taken.Store(true)
	return f.describe(a.strike)
}

// describe says what a crash that struck while Apply waited did, after
// restarting a crashed engine.
func (f *FaultRunner) describe(st Strike) (string, error) {
	if !st.Engine {
		return fmt.Sprintf("transaction coordinator crashed %s and reloaded its log", st.Where), nil
	}
	rep, err := f.t.restart()
	if err != nil {
		return "", fmt.Errorf("engine target: restart after the crash %s: %w", st.Where, err)
	}
	return fmt.Sprintf("engine crashed %s; restarted: %s", st.Where, summary(rep)), nil
}

// Struck reports, once, the crash that struck after the coordinator-crash
// Apply that armed it returned (at once with wait 0s, or after its wait).
// A caller on a manual clock restarts the engine after a strike with
// Engine set (engine-restart); otherwise the runner already has.
func (f *FaultRunner) Struck() (Strike, bool) {
	a := f.last.Load()
	if a == nil {
		return Strike{}, false
	}
	select {
	case <-a.struck:
		if a.taken.CompareAndSwap(false, true) {
			return a.strike, true
		}
	default:
	}
	return Strike{}, false
}

// Disarm drops a crash still armed; Setup does so when a new mode starts.
// A caller that arms a crash (wait 0s) only for a stretch of its own calls
// disarms it when the stretch ends without a strike.
func (f *FaultRunner) Disarm() { f.armed.Store(nil) }

// failover applies share-failover (see Apply).
func (f *FaultRunner) failover(params map[string]string) (string, error) {
	const kind = vocab.FaultShareFailover
	cfg := f.mode()
	group, ok := params[ParamGroup]
	switch {
	case !ok && cfg.Group == "":
		return "", fmt.Errorf("engine target: %s before the run set up its topics; name the share group (param %s) or run Setup first", kind, ParamGroup)
	case !ok:
		group = cfg.Group
	case group == "":
		return "", fmt.Errorf(`engine target: %s %s "": empty; name a share group, or omit %s for the mode's`, kind, ParamGroup, ParamGroup)
	}
	topic, n, err := f.topicOf(kind, params, cfg.InputTopic, cfg.InputPartitions, "mode's input topic")
	if err != nil {
		return "", err
	}
	part, err := partitionOf(kind, params["partition"], topic, n, func() int32 {
		h := fnv.New64a()
		h.Write([]byte(group))
		return int32((h.Sum64() + f.rng.Uint64()) % uint64(n))
	})
	if err != nil {
		return "", err
	}
	tp := eng.TopicPartition{Topic: topic, Partition: part}
	err = f.t.e.FailoverSharePartition(group, tp)
	switch {
	case errors.Is(err, eng.ErrUnknownGroup):
		return fmt.Sprintf("no share partition of %s for group %s (a classic group, or nothing polled yet): nothing to fail over", tp, group), nil
	case err != nil:
		return "", fmt.Errorf("engine target: %s of %s: %w", kind, tp, err)
	}
	return fmt.Sprintf("share partition %s of group %s failed over: reloaded from the share-state log", tp, group), nil
}

// partition applies network-partition (see Apply).
func (f *FaultRunner) partition(params map[string]string) (string, error) {
	const kind = vocab.FaultNetworkPartition
	d, err := time.ParseDuration(params["for"])
	if err != nil || d <= 0 {
		return "", fmt.Errorf("engine target: %s for %q: not a duration above 0; write a Go duration like 500ms or 2s", kind, params["for"])
	}
	switch b := params["between"]; b {
	case "", workloads.BetweenCoordinatorParticipant:
	case workloads.BetweenWorkerEngine:
		return "", fmt.Errorf("engine target: %s between %q: the load generator cuts a worker off with its own clients; the fault runner cuts the coordinator off (between %s)",
			kind, b, workloads.BetweenCoordinatorParticipant)
	default:
		return "", fmt.Errorf("engine target: %s between %q: not a network partition; use %s", kind, b, workloads.BetweenCoordinatorParticipant)
	}
	cfg := f.mode()
	topic, n, err := f.topicOf(kind, params, cfg.InputTopic, cfg.InputPartitions, "mode's input and output topics")
	if err != nil {
		return "", err
	}
	part, err := partitionOf(kind, params["partition"], topic, n, func() int32 { return int32(f.rng.IntN(int(n))) })
	if err != nil {
		return "", err
	}
	cut := []eng.TopicPartition{{Topic: topic, Partition: part}}
	if _, named := params[ParamTopic]; !named && (part < cfg.OutputPartitions || cfg.OutputPartitions == 0) {
		cut = append(cut, eng.TopicPartition{Topic: cfg.OutputTopic, Partition: part})
	}
	for _, tp := range cut {
		if err := f.t.e.PartitionMarkers(tp, d); err != nil {
			return "", fmt.Errorf("engine target: %s of %s: %w", kind, tp, err)
		}
	}
	return fmt.Sprintf("transaction coordinator cut off from the leader of %v for %v", cut, d), nil
}

// mode returns the config of the last Setup (the running mode's).
func (f *FaultRunner) mode() targets.Config {
	f.t.mu.Lock()
	defer f.t.mu.Unlock()
	return f.t.mu.cfg
}

// topicOf reads param topic: one of the engine's topics and its partition
// count; without it, the mode's topic def with its n partitions.
func (f *FaultRunner) topicOf(kind vocab.FaultKind, params map[string]string, def string, n int32, what string) (string, int32, error) {
	topic, ok := params[ParamTopic]
	if !ok {
		if n < 1 {
			return "", 0, fmt.Errorf("engine target: %s before the run set up its topics; name the topic (param %s) or run Setup first", kind, ParamTopic)
		}
		return def, n, nil
	}
	n, err := f.t.e.Partitions(topic)
	switch {
	case errors.Is(err, eng.ErrUnknownTopicOrPartition):
		return "", 0, fmt.Errorf("engine target: %s %s %q: no such topic on the engine; name one of %s, or omit %s for the %s",
			kind, ParamTopic, topic, strings.Join(f.t.e.Topics(), ", "), ParamTopic, what)
	case err != nil:
		return "", 0, fmt.Errorf("engine target: %s %s %q: %w", kind, ParamTopic, topic, err)
	}
	return topic, n, nil
}

// partitionOf reads param partition: N of topic's n partitions, or random
// (or absent), which pick draws.
func partitionOf(kind vocab.FaultKind, v, topic string, n int32, pick func() int32) (int32, error) {
	if v == "" || v == workloads.Random {
		return pick(), nil
	}
	p, err := strconv.Atoi(v)
	if err != nil || p < 0 || p >= int(n) {
		return 0, fmt.Errorf("engine target: %s partition %q: not a partition of %s (%d partitions); use 0..%d or %s",
			kind, v, topic, n, n-1, workloads.Random)
	}
	return int32(p), nil
}

// matches reports whether the hook call at pt strikes a.
func (a *arm) matches(pt eng.HookPoint, info eng.HookInfo) bool {
	switch {
	case pt != a.point,
		a.decided && info.Commit != a.commit,
		pt == eng.HookTxnMarker && info.Marker != 1:
		return false
	case a.prefixes == nil:
		return true
	}
	return slices.ContainsFunc(a.prefixes, func(p string) bool { return strings.HasPrefix(info.TransactionalID, p) })
}

// hook strikes the armed crash (called by the engine with locks held).
func (f *FaultRunner) hook(pt eng.HookPoint, info eng.HookInfo) error {
	a := f.armed.Load()
	if a == nil || !a.matches(pt, info) || !f.armed.CompareAndSwap(a, nil) {
		return nil
	}
	decision := map[bool]string{true: "COMMIT", false: "ABORT"}[info.Commit]
	in := fmt.Sprintf("in transaction %s (producer %d)", info.TransactionalID, info.ProducerID)
	var where string
	switch pt {
	case eng.HookTxnOngoing:
		where = "while ONGOING " + in
	case eng.HookTxnPrepared:
		where = "after PREPARE_" + decision + " was logged " + in
	case eng.HookTxnMarker:
		where = fmt.Sprintf("after %s marker %d of %d was applied %s", decision, info.Marker, info.Markers, in)
	default:
		where = "after COMPLETE_" + decision + " was logged " + in
	}
	a.strike = Strike{Point: pt, Info: info, Where: where, Engine: a.engine}
	late := !a.phase.CompareAndSwap(armWaiting, armStruck)
	close(a.struck)
	if late && a.engine && !f.manual {
		// Apply is gone: restart once the crashing call has returned
		// (Restart waits for it). On a manual clock the caller restarts.
		f.t.crash.restarting.Add(1) // from now: the crash is being restarted
		go func() {
			defer f.t.crash.restarting.Add(-1)
			_, _ = f.t.restart()
		}()
	}
	return fmt.Errorf("engine target: fault: %w", a.err)
}

func summary(r eng.RecoveryReport) string {
	s := fmt.Sprintf("%d records replayed in %v, %d transactions completed, %d ongoing", r.Frames, r.Duration.Round(time.Microsecond), r.Completed, r.Ongoing)
	if n := r.TruncatedBytes(); n > 0 {
		s += fmt.Sprintf(", %d torn bytes dropped", n)
	}
	return s
}

// restartWait bounds awaitRestart. A fault's restart takes milliseconds;
// a caller that waited this long retries (or learns from Down that the
// engine is not coming back) instead of waiting on.
const restartWait = 5 * time.Second

// awaitRestart waits while the engine is crashed (a fault restarting it)
// until the engine runs again (Engine.Running), a restart fails, ctx is
// done or restartWait passes. On a manual clock it does not wait: the one
// caller is the only one who could restart the engine.
func (t *Target) awaitRestart(ctx context.Context) {
	if t.opts.Clock != nil {
		return
	}
	deadline := time.NewTimer(restartWait)
	defer deadline.Stop()
	for {
		// Both channels are taken before the checks, so a restart that
		// completes or fails after them still wakes this wait.
		running, failed := t.e.Running(), t.crash.restartFailed()
		if !t.e.Crashed() || t.Down() != nil {
			return
		}
		select {
		case <-running:
			// A crash after the restart shows on the next Running:
			// check again.
		case <-failed:
		case <-ctx.Done():
			return
		case <-deadline.C:
			return
		}
	}
}

// retryRestart runs f again when it met a restart in progress.
func retryRestart[T any](ctx context.Context, t *Target, f func() (T, error)) (T, error) {
	for attempt := 0; ; attempt++ {
		v, err := f()
		if !errors.Is(err, eng.ErrCrashed) || attempt >= 10 || t.opts.Clock != nil {
			return v, err
		}
		if down := t.Down(); down != nil {
			// Nothing will restart it: waiting is futile.
			return v, fmt.Errorf("%w (%w)", down, err)
		}
		t.awaitRestart(ctx)
	}
}

// ErrNeedsDataDir is wrapped by the refusal of a fault that needs an
// engine with a data directory (Options.DataDir): one a restart must
// survive.
var ErrNeedsDataDir = errors.New("it needs an engine with a data directory")
