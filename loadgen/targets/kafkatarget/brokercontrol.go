// This file holds BrokerControl, the kafka target's fault runner for
// broker-side faults: it resolves which broker a fault's selector names
// through the cluster's admin APIs (FindCoordinator, Metadata,
// DescribeQuorum) when the fault fires, and runs the user's broker-control
// command with the action, the broker id and the run's identifiers.

package kafkatarget

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sharebench/sharebench/loadgen/targets"
	"github.com/sharebench/sharebench/vocab"
	"github.com/sharebench/sharebench/workloads"
)

// Actions the broker-control command receives as {action} and
// SHAREBENCH_ACTION.
const (
	ActionKill    = "kill"    // SIGKILL, start again after SHAREBENCH_FOR
	ActionRestart = "restart" // clean stop and start
	ActionPause   = "pause"   // SIGSTOP for SHAREBENCH_FOR, then SIGCONT
)

// BrokerAll is the broker a fault that names no broker (engine-restart,
// coordinator-crash and share-failover on an older workload) hands the
// command: the whole cluster.
const BrokerAll = "all"

// controlTimeout bounds one run of the broker-control command beyond the
// fault's own duration: a broker start waits up to 90 s for the broker. A
// command that runs longer is stopped, with its process group, and the
// fault is recorded as failed with what the command printed; a broker it
// started in its own session (scripts/kafka/control does) keeps running.
const controlTimeout = 3 * time.Minute

// resolveTimeout bounds the asking again for a role after its fault, and
// for one answer while the cluster elects.
const resolveTimeout = 15 * time.Second

// roleWait bounds how long a fault waits for the node its selector names
// to be out of an earlier fault (back, or the role handed to a live node):
// a node restart on a loaded machine takes 40-180 s. A fault still waiting
// then is skipped with a note and recorded as not landed.
const roleWait = 4 * time.Minute

// rolePoll is how often a resolution asks again while the cluster elects
// or the role holder is under a fault, and how often the role is asked
// while a fault runs.
const rolePoll = 500 * time.Millisecond

// BrokerControl applies broker-side faults to a real cluster by running a
// command through sh -c. In the command {action}, {broker} and {for} are
// replaced by the action (kill, restart, pause), the broker id and the
// fault's duration; the same values and the run's identifiers are in its
// environment (see Env).
type BrokerControl struct {
	t   *Target
	cmd string
	// run runs one command line with extra environment; tests replace it.
	run func(ctx context.Context, line string, env []string, timeout time.Duration) (string, error)
	// timeout bounds one run of the command beyond the fault's duration
	// (controlTimeout; tests shorten it).
	timeout time.Duration
	// view answers who holds a role (the cluster's admin APIs; tests
	// give a fake), wait and poll are roleWait and rolePoll.
	view       roleView
	wait, poll time.Duration
}

// BrokerControl returns the fault runner that runs cmd for broker faults.
func (t *Target) BrokerControl(cmd string) *BrokerControl {
	return &BrokerControl{t: t, cmd: cmd, run: runShell, timeout: controlTimeout,
		view: adminView{t}, wait: roleWait, poll: rolePoll}
}

// Supports reports whether kind can be applied: the broker-* kinds, and
// the engine's engine-restart, coordinator-crash and share-failover as
// restarts (of the whole cluster, the transaction coordinator and an input
// partition's leader).
func (b *BrokerControl) Supports(kind vocab.FaultKind) error {
	switch kind {
	case vocab.FaultBrokerKill, vocab.FaultBrokerRestart, vocab.FaultBrokerPause,
		vocab.FaultEngineRestart, vocab.FaultCoordinatorCrash, vocab.FaultShareFailover:
		return nil
	}
	return fmt.Errorf("broker control: %w: fault %q", targets.ErrUnsupported, kind)
}

// Apply applies kind with no knowledge of the run (a random pick takes
// the first candidate).
func (b *BrokerControl) Apply(kind vocab.FaultKind, params map[string]string) (string, error) {
	o, err := b.ApplyIn(context.Background(), targets.FaultScope{}, kind, params)
	return o.Detail, err
}

// plan is one resolved broker fault: the action, the selector and what it
// reads, and the duration ({for}).
type plan struct {
	action, selector string
	worker, part     int
	input            bool
	dur              time.Duration
}

// planFor turns a fault into its action and selector.
func planFor(kind vocab.FaultKind, params map[string]string) (plan, error) {
	p := plan{selector: params["broker"], worker: -1, part: -1, input: params["topic"] == workloads.TopicInput}
	if v, ok := params["worker"]; ok && v != workloads.Random {
		p.worker, _ = strconv.Atoi(v)
	}
	if v, ok := params["partition"]; ok && v != workloads.Random {
		p.part, _ = strconv.Atoi(v)
	}
	parseDur := func(name string) error {
		if v, ok := params[name]; ok {
			d, err := time.ParseDuration(v)
			if err != nil {
				return fmt.Errorf("broker control: param %s=%q is not a duration", name, v)
			}
			p.dur = d
		}
		return nil
	}
	switch kind {
	case vocab.FaultBrokerKill:
		p.action = ActionKill
		return p, parseDur("delay")
	case vocab.FaultBrokerRestart:
		p.action = ActionRestart
	case vocab.FaultBrokerPause:
		p.action = ActionPause
		return p, parseDur("for")
	case vocab.FaultEngineRestart:
		p.action, p.selector = ActionRestart, BrokerAll
	case vocab.FaultCoordinatorCrash:
		p.action, p.selector = ActionRestart, workloads.BrokerTxnCoordinator
	case vocab.FaultShareFailover:
		p.action, p.selector, p.input = ActionRestart, workloads.BrokerLeader, true
	default:
		return p, fmt.Errorf("broker control: %w: fault %q", targets.ErrUnsupported, kind)
	}
	if p.selector == "" {
		p.selector = workloads.Random
	}
	return p, nil
}

// ApplyIn resolves the broker the fault's selector names, once every
// earlier fault on that node has ended, then runs the command for it and
// returns once the command has (a pause returns after its duration, a
// kill once the broker is started again). For a role selector it asks who
// holds the role before, during and after the fault.
func (b *BrokerControl) ApplyIn(ctx context.Context, sc targets.FaultScope, kind vocab.FaultKind, params map[string]string) (targets.FaultOutcome, error) {
	p, err := planFor(kind, params)
	if err != nil {
		return targets.FaultOutcome{}, err
	}
	r, err := b.resolve(ctx, sc, p)
	if err != nil {
		return targets.FaultOutcome{}, fmt.Errorf("broker control: resolving broker %q: %w", p.selector, err)
	}
	o := targets.FaultOutcome{Broker: r.broker}
	if r.role {
		o.RoleBefore = r.broker
	}
	line := expand(b.cmd, p.action, r.broker, p.dur)
	env := b.Env(sc, p.action, r.broker, p.selector, p.dur)
	faults := b.t.nodeFaults()
	faults.begin(r.ids, p.action, r.addrs, time.Now())
	during := make(chan string, 1)
	cmdDone := make(chan struct{})
	go func() {
		var got string
		if r.role {
			got = b.roleDuring(ctx, sc, p, r, cmdDone)
		}
		during <- got
	}()
	out, err := b.run(ctx, line, env, b.timeout+p.dur)
	close(cmdDone)
	faults.end(r.ids)
	o.RoleDuring = <-during
	if r.role {
		o.RoleAfter = b.roleAfter(ctx, sc, p, r)
	}
	if err != nil {
		return o, fmt.Errorf("%s: %v: %s", line, err, lastLines(out, 5))
	}
	o.Detail = fmt.Sprintf("%s broker %s (%s) · ran %s", p.action, r.broker, r.why, line)
	if r.waited > 0 {
		o.Detail += fmt.Sprintf(" · waited %v for %s", r.waited.Round(time.Millisecond), r.waitedFor)
	}
	return o, nil
}

// roleDuring asks who holds the role while the fault runs: first halfway
// through a pause, or one poll into a kill or restart, then every poll
// until the answer names another node than the one the fault hit or the
// command returns. It returns the last answer ("" if none came).
func (b *BrokerControl) roleDuring(ctx context.Context, sc targets.FaultScope, p plan, r resolved, done <-chan struct{}) string {
	first := b.poll
	if p.action == ActionPause && p.dur/2 > first {
		first = p.dur / 2
	}
	var last string
	wait := first
	for {
		select {
		case <-done:
			return last
		case <-ctx.Done():
			return last
		case <-time.After(wait):
		}
		wait = b.poll
		under, _ := b.t.nodeFaults().state()
		actx, cancel := context.WithTimeout(ctx, resolveTimeout)
		id, _, err := b.roleOf(actx, sc, p, r, under)
		cancel()
		if err != nil {
			continue
		}
		last = strconv.Itoa(int(id))
		if last != r.broker {
			return last
		}
	}
}

// roleAfter asks who holds the role once the fault has ended, asking
// again for up to resolveTimeout while the cluster elects.
func (b *BrokerControl) roleAfter(ctx context.Context, sc targets.FaultScope, p plan, r resolved) string {
	actx, cancel := context.WithTimeout(ctx, resolveTimeout)
	defer cancel()
	for {
		under, _ := b.t.nodeFaults().state()
		id, _, err := b.roleOf(actx, sc, p, r, under)
		if err == nil {
			return strconv.Itoa(int(id))
		}
		select {
		case <-actx.Done():
			return ""
		case <-time.After(b.poll):
		}
	}
}

// expand fills the command's placeholders.
func expand(cmd, action, broker string, d time.Duration) string {
	return strings.NewReplacer("{action}", action, "{broker}", broker, "{for}", durArg(d)).Replace(cmd)
}

// durArg writes d as the command reads it: a Go duration in whole
// milliseconds or above ("0s", "1.5s", "500ms").
func durArg(d time.Duration) string { return d.Round(time.Millisecond).String() }

// Env is the environment the command runs with, on top of sharebench's
// own: the action, the broker and how it was chosen, the duration, and the
// run's identifiers.
func (b *BrokerControl) Env(sc targets.FaultScope, action, broker, selector string, d time.Duration) []string {
	var txnIDs []string
	for i := 0; i < sc.Workers; i++ {
		txnIDs = append(txnIDs, transactionalID(sc.Config, i))
	}
	prefix := strings.TrimSuffix(sc.Config.InputTopic, "-in")
	return []string{
		"SHAREBENCH_ACTION=" + action,
		"SHAREBENCH_BROKER=" + broker,
		"SHAREBENCH_SELECTOR=" + selector,
		"SHAREBENCH_FOR=" + durArg(d),
		"SHAREBENCH_BOOTSTRAP=" + b.t.Info().Brokers,
		"SHAREBENCH_RUN_ID=" + sc.RunID,
		"SHAREBENCH_MODE=" + sc.ModeRun,
		"SHAREBENCH_TOPIC_PREFIX=" + prefix,
		"SHAREBENCH_INPUT_TOPIC=" + sc.Config.InputTopic,
		"SHAREBENCH_OUTPUT_TOPIC=" + sc.Config.OutputTopic,
		"SHAREBENCH_GROUP=" + sc.Config.Group,
		"SHAREBENCH_TRANSACTIONAL_IDS=" + strings.Join(txnIDs, ","),
	}
}

// pick chooses one of n from the scope's seeded choice (the first without one).
func pick(sc targets.FaultScope, n int) int {
	if sc.IntN == nil || n <= 1 {
		return 0
	}
	return sc.IntN(n)
}

// resolved is the broker a fault acts on: its id (or "all"), the node ids
// it puts under the fault and their addresses, how it was found, whether
// it holds a role the fault targets, and how long the resolution waited
// for an earlier fault on it.
type resolved struct {
	broker    string
	ids       []int32
	addrs     map[int32]string
	why       string
	role      bool
	waited    time.Duration
	waitedFor string
	// worker and part are the seeded picks of the selector, kept so the
	// role is asked again for the same transactional id and partition.
	worker, part int
}

// isRole reports whether a selector names a role that moves between nodes.
func isRole(selector string) bool {
	switch selector {
	case workloads.BrokerTxnCoordinator, workloads.BrokerGroupCoordinator, workloads.BrokerShareCoordinator,
		workloads.BrokerLeader, workloads.BrokerController:
		return true
	}
	return false
}

// resolve names the broker p's selector picks, against the nodes that are
// not under a fault: a role is looked up now and asked again while the
// cluster elects; a role holder, or a named node, under an earlier fault
// is waited for (bounded by wait) until it is back or the role moved to a
// live node; random picks among the live nodes. A fault still waiting at
// the bound is skipped (targets.ErrFaultSkipped) with which node and why.
func (b *BrokerControl) resolve(ctx context.Context, sc targets.FaultScope, p plan) (resolved, error) {
	start := time.Now()
	r := resolved{role: isRole(p.selector), worker: p.worker, part: -1}
	if r.role {
		r.worker, r.part = b.seededPicks(sc, p)
	}
	deadline := time.NewTimer(b.wait)
	defer deadline.Stop()
	var last error
	busy := int32(-1)
	var busyFault underFault
	for {
		under, changed := b.t.nodeFaults().state()
		actx, cancel := context.WithTimeout(ctx, resolveTimeout)
		all, err := b.view.brokers(actx, under)
		var id int32 = -1
		var why string
		if err == nil {
			r.addrs = all
			id, why, err = b.pickNode(actx, sc, p, r, all, under)
		}
		cancel()
		switch {
		case err == nil && id == -2:
			// every broker, once none is under a fault
			if len(under) == 0 {
				r.broker, r.why = BrokerAll, why
				for n := range all {
					r.ids = append(r.ids, n)
				}
				slices.Sort(r.ids)
				return b.waitedNote(r, start, busy, busyFault), nil
			}
			for n, u := range under {
				busy, busyFault = n, u
			}
		case err == nil:
			if u, down := under[id]; down {
				busy, busyFault = id, u
				break
			}
			if r.role {
				if err := b.agreed(ctx, sc, p, r, all, under, id); err != nil {
					last = err
					break
				}
			}
			r.broker, r.ids, r.why = strconv.Itoa(int(id)), []int32{id}, why
			return b.waitedNote(r, start, busy, busyFault), nil
		case errors.Is(err, targets.ErrUnsupported) || errors.Is(err, errBadSelector):
			return r, err
		default:
			last = err
		}
		select {
		case <-ctx.Done():
			return r, ctx.Err()
		case <-deadline.C:
			if busy >= 0 {
				return r, fmt.Errorf("%w: node %d (%s) has been under a %s for %v and neither came back nor handed the role to a live node within %v",
					targets.ErrFaultSkipped, busy, b.roleName(sc, p, r), busyFault.action, time.Since(busyFault.since).Round(time.Second), b.wait)
			}
			return r, fmt.Errorf("%w: no answer within %v (last: %v)", targets.ErrFaultSkipped, b.wait, last)
		case <-changed:
		case <-time.After(b.poll):
		}
	}
}

// agreed asks every live broker on its own who holds p's role and returns
// nil once each names id. One broker's answer comes from its own metadata
// cache, which lags a move of the role: a node just back from a pause still
// names itself the coordinator it was, so a fault acting on one answer
// would hit a node the role has left. The resolution polls again until the
// brokers agree.
func (b *BrokerControl) agreed(ctx context.Context, sc targets.FaultScope, p plan, r resolved, all map[int32]string, under map[int32]underFault, id int32) error {
	for _, n := range liveIDs(all, under) {
		only := make(map[int32]underFault, len(all))
		for other := range all {
			if other != n {
				only[other] = underFault{}
			}
		}
		actx, cancel := context.WithTimeout(ctx, resolveTimeout)
		got, _, err := b.roleOf(actx, sc, p, r, only)
		cancel()
		if err != nil {
			return fmt.Errorf("asking broker %d for the %s: %w", n, b.roleName(sc, p, r), err)
		}
		if got != id {
			return fmt.Errorf("the brokers do not agree yet on the %s: broker %d names node %d, another named node %d", b.roleName(sc, p, r), n, got, id)
		}
	}
	return nil
}

// waitedNote records in r how long the resolution waited for busy.
func (b *BrokerControl) waitedNote(r resolved, start time.Time, busy int32, u underFault) resolved {
	if busy >= 0 {
		r.waited = time.Since(start)
		r.waitedFor = fmt.Sprintf("node %d, under a %s, to come back or hand the role over", busy, u.action)
	}
	return r
}

// errBadSelector is wrapped by a selector that is none of the known ones.
var errBadSelector = errors.New("not a broker selector")

// pickNode returns the node p's selector names among all, -2 for every
// broker, and a few words on how it was found.
func (b *BrokerControl) pickNode(ctx context.Context, sc targets.FaultScope, p plan, r resolved, all map[int32]string, under map[int32]underFault) (int32, string, error) {
	switch p.selector {
	case BrokerAll:
		return -2, "every broker", nil
	case workloads.Random:
		live := liveIDs(all, under)
		if len(live) == 0 {
			return -1, "", errors.New("every broker is under a fault")
		}
		return live[pick(sc, len(live))], fmt.Sprintf("random of %d live brokers", len(live)), nil
	}
	if isRole(p.selector) {
		return b.roleOf(ctx, sc, p, r, under)
	}
	n, err := strconv.Atoi(p.selector)
	if err != nil || n < 0 {
		return -1, "", fmt.Errorf("%q is %w (use %s, or a broker id)", p.selector, errBadSelector, strings.Join(workloads.BrokerSelectors, ", "))
	}
	return int32(n), "named by id", nil
}

// seededPicks draws the worker and partition a role selector reads from
// the fault's seeded stream, once per fault.
func (b *BrokerControl) seededPicks(sc targets.FaultScope, p plan) (worker, part int) {
	worker, part = p.worker, p.part
	switch p.selector {
	case workloads.BrokerTxnCoordinator:
		if worker < 0 {
			worker = pick(sc, max(sc.Workers, 1))
		}
	case workloads.BrokerShareCoordinator:
		_, part = partitionOf(sc, p, true)
	case workloads.BrokerLeader:
		_, part = partitionOf(sc, p, p.input)
	}
	return worker, part
}

// roleName says which role p's selector names.
func (b *BrokerControl) roleName(sc targets.FaultScope, p plan, r resolved) string {
	switch p.selector {
	case workloads.BrokerTxnCoordinator:
		return "transaction coordinator of " + transactionalID(sc.Config, r.worker)
	case workloads.BrokerGroupCoordinator:
		return "coordinator of group " + sc.Config.Group
	case workloads.BrokerShareCoordinator:
		topic, _ := partitionOf(sc, plan{part: r.part}, true)
		return fmt.Sprintf("share coordinator of %s/%d for group %s", topic, r.part, sc.Config.Group)
	case workloads.BrokerLeader:
		topic, _ := partitionOf(sc, plan{part: r.part}, p.input)
		return fmt.Sprintf("leader of %s/%d", topic, r.part)
	case workloads.BrokerController:
		return "active controller"
	}
	return "broker " + p.selector
}

// roleOf asks the view once who holds p's role (the worker and partition
// r picked), through brokers not under a fault.
func (b *BrokerControl) roleOf(ctx context.Context, sc targets.FaultScope, p plan, r resolved, under map[int32]underFault) (int32, string, error) {
	why := b.roleName(sc, p, r)
	switch p.selector {
	case workloads.BrokerTxnCoordinator:
		n, err := b.view.coordinator(ctx, under, 1, transactionalID(sc.Config, r.worker))
		return n, why, err
	case workloads.BrokerGroupCoordinator:
		n, err := b.view.coordinator(ctx, under, 0, sc.Config.Group)
		return n, why, err
	case workloads.BrokerShareCoordinator:
		topic, _ := partitionOf(sc, plan{part: r.part}, true)
		tid, err := b.view.topicID(ctx, under, topic)
		if err != nil {
			return -1, why, err
		}
		key := fmt.Sprintf("%s:%s:%d", sc.Config.Group, base64.RawURLEncoding.EncodeToString(tid[:]), r.part)
		n, err := b.view.coordinator(ctx, under, 2, key)
		return n, why, err
	case workloads.BrokerLeader:
		topic, _ := partitionOf(sc, plan{part: r.part}, p.input)
		n, err := b.view.leader(ctx, under, topic, int32(r.part))
		return n, why, err
	case workloads.BrokerController:
		n, err := b.view.controller(ctx, under)
		return n, why, err
	}
	return -1, why, fmt.Errorf("%q is %w", p.selector, errBadSelector)
}

// partitionOf returns the topic and partition a leader or share-coordinator
// selector reads (share state lives with the input topic): p's partition,
// or a seeded pick when it names none or one out of range.
func partitionOf(sc targets.FaultScope, p plan, input bool) (string, int) {
	topic, n := sc.Config.OutputTopic, partitions(sc.Config.OutputPartitions)
	if input || topic == "" {
		topic, n = sc.Config.InputTopic, partitions(sc.Config.InputPartitions)
	}
	part := p.part
	if part < 0 || part >= int(n) {
		part = pick(sc, int(n))
	}
	return topic, part
}

// lastLines keeps the last n lines of s, trimmed.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}
