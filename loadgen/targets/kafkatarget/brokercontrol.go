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

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

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

// resolveTimeout bounds the admin requests that resolve a selector; a
// selector that cannot be resolved in it fails the fault (the broker may be
// down after an earlier fault), which the result records.
const resolveTimeout = 15 * time.Second

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
}

// BrokerControl returns the fault runner that runs cmd for broker faults.
func (t *Target) BrokerControl(cmd string) *BrokerControl {
	return &BrokerControl{t: t, cmd: cmd, run: runShell, timeout: controlTimeout}
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

// ApplyIn resolves the broker the fault's selector names, then runs the
// command for it and returns once the command has (a pause returns after
// its duration, a kill once the broker is started again).
func (b *BrokerControl) ApplyIn(ctx context.Context, sc targets.FaultScope, kind vocab.FaultKind, params map[string]string) (targets.FaultOutcome, error) {
	p, err := planFor(kind, params)
	if err != nil {
		return targets.FaultOutcome{}, err
	}
	broker, why, err := b.t.resolveRetrying(ctx, sc, p)
	if err != nil {
		return targets.FaultOutcome{}, fmt.Errorf("broker control: resolving broker %q: %w", p.selector, err)
	}
	line := expand(b.cmd, p.action, broker, p.dur)
	env := b.Env(sc, p.action, broker, p.selector, p.dur)
	out, err := b.run(ctx, line, env, b.timeout+p.dur)
	if err != nil {
		return targets.FaultOutcome{Broker: broker}, fmt.Errorf("%s: %v: %s", line, err, lastLines(out, 5))
	}
	return targets.FaultOutcome{Broker: broker, Detail: fmt.Sprintf("%s broker %s (%s) · ran %s", p.action, broker, why, line)}, nil
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

// resolveRetrying resolves p's selector, asking again for up to
// resolveTimeout while the cluster cannot answer (a broker an earlier fault
// took down may be the one the client dials first).
func (t *Target) resolveRetrying(ctx context.Context, sc targets.FaultScope, p plan) (string, string, error) {
	rctx, cancel := context.WithTimeout(ctx, resolveTimeout)
	defer cancel()
	for {
		broker, why, err := t.resolveBroker(rctx, sc, p)
		if err == nil || errors.Is(err, targets.ErrUnsupported) {
			return broker, why, err
		}
		select {
		case <-rctx.Done():
			return "", "", err
		case <-time.After(300 * time.Millisecond):
		}
	}
}

// resolveBroker returns the id of the broker p's selector names and a few
// words on how it was found.
func (t *Target) resolveBroker(ctx context.Context, sc targets.FaultScope, p plan) (string, string, error) {
	switch p.selector {
	case BrokerAll:
		return BrokerAll, "every broker", nil
	case workloads.Random:
		ids, err := t.brokerIDs(ctx)
		if err != nil {
			return "", "", err
		}
		id := ids[pick(sc, len(ids))]
		return strconv.Itoa(int(id)), fmt.Sprintf("random of %d live brokers", len(ids)), nil
	case workloads.BrokerTxnCoordinator:
		w := p.worker
		if w < 0 {
			w = pick(sc, max(sc.Workers, 1))
		}
		id := transactionalID(sc.Config, w)
		n, err := t.findCoordinator(ctx, 1, id)
		return strconv.Itoa(int(n)), "transaction coordinator of " + id, err
	case workloads.BrokerGroupCoordinator:
		n, err := t.findCoordinator(ctx, 0, sc.Config.Group)
		return strconv.Itoa(int(n)), "coordinator of group " + sc.Config.Group, err
	case workloads.BrokerShareCoordinator:
		topic, part := t.partitionOf(sc, p, true)
		tid, err := t.topicID(ctx, topic)
		if err != nil {
			return "", "", err
		}
		key := fmt.Sprintf("%s:%s:%d", sc.Config.Group, base64.RawURLEncoding.EncodeToString(tid[:]), part)
		n, err := t.findCoordinator(ctx, 2, key)
		return strconv.Itoa(int(n)), fmt.Sprintf("share coordinator of %s/%d for group %s", topic, part, sc.Config.Group), err
	case workloads.BrokerLeader:
		topic, part := t.partitionOf(sc, p, p.input)
		n, err := t.leaderOf(ctx, topic, int32(part))
		return strconv.Itoa(int(n)), fmt.Sprintf("leader of %s/%d", topic, part), err
	case workloads.BrokerController:
		n, err := t.activeController(ctx)
		return strconv.Itoa(int(n)), "active controller", err
	}
	n, err := strconv.Atoi(p.selector)
	if err != nil || n < 0 {
		return "", "", fmt.Errorf("%q is not a broker selector (use %s, or a broker id)", p.selector, strings.Join(workloads.BrokerSelectors, ", "))
	}
	return p.selector, "named by id", nil
}

// partitionOf returns the topic and partition a leader or share-coordinator
// selector reads (share state lives with the input topic).
func (t *Target) partitionOf(sc targets.FaultScope, p plan, input bool) (string, int) {
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

// brokerIDs lists the brokers the metadata names, sorted.
func (t *Target) brokerIDs(ctx context.Context) ([]int32, error) {
	m, err := t.adm.BrokerMetadata(ctx)
	if err != nil {
		return nil, err
	}
	var ids []int32
	for _, b := range m.Brokers {
		ids = append(ids, b.NodeID)
	}
	if len(ids) == 0 {
		return nil, errors.New("the metadata lists no broker")
	}
	slices.Sort(ids)
	return ids, nil
}

// findCoordinator asks FindCoordinator for the coordinator of key (type 0
// group, 1 transaction, 2 share), trying again while the coordinator is
// loading or not yet available (just after a broker restart).
func (t *Target) findCoordinator(ctx context.Context, typ int8, key string) (int32, error) {
	for {
		req := kmsg.NewPtrFindCoordinatorRequest()
		req.CoordinatorType = typ
		req.CoordinatorKey = key
		req.CoordinatorKeys = []string{key}
		resp, err := req.RequestWith(ctx, t.admin)
		if err == nil {
			code, node := resp.ErrorCode, resp.NodeID
			if len(resp.Coordinators) > 0 {
				code, node = resp.Coordinators[0].ErrorCode, resp.Coordinators[0].NodeID
			}
			err = kerr.ErrorForCode(code)
			if err == nil {
				return node, nil
			}
			if !kerr.IsRetriable(err) {
				return -1, err
			}
		}
		select {
		case <-ctx.Done():
			return -1, fmt.Errorf("%w (last: %v)", ctx.Err(), err)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// topicID returns a topic's id from the metadata.
func (t *Target) topicID(ctx context.Context, topic string) ([16]byte, error) {
	return kadmTopicID(ctx, t.admin, topic)
}

// leaderOf returns the leader of topic/part, waiting while it has none.
func (t *Target) leaderOf(ctx context.Context, topic string, part int32) (int32, error) {
	for {
		d, err := t.adm.ListTopics(ctx, topic)
		if err == nil {
			td, ok := d[topic]
			switch {
			case !ok:
				err = fmt.Errorf("topic %s is not in the metadata", topic)
			case td.Err != nil:
				err = td.Err
			default:
				pd, ok := td.Partitions[part]
				if !ok {
					return -1, fmt.Errorf("topic %s has no partition %d", topic, part)
				}
				if pd.Err == nil && pd.Leader >= 0 {
					return pd.Leader, nil
				}
				err = fmt.Errorf("partition %s/%d has no leader (%v)", topic, part, pd.Err)
			}
		}
		select {
		case <-ctx.Done():
			return -1, fmt.Errorf("%w (last: %v)", ctx.Err(), err)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// activeController returns the leader of the KRaft metadata quorum
// (DescribeQuorum on __cluster_metadata-0). The controller id of Metadata
// and DescribeCluster cannot stand in: a KRaft broker answers it with a
// random live broker.
func (t *Target) activeController(ctx context.Context) (int32, error) {
	if t.versions != nil && !hasKey(t.versions, kmsg.DescribeQuorum) {
		return -1, fmt.Errorf("the cluster does not advertise DescribeQuorum, so its controller cannot be named: %w", targets.ErrUnsupported)
	}
	req := kmsg.NewPtrDescribeQuorumRequest()
	rt := kmsg.NewDescribeQuorumRequestTopic()
	rt.Topic = "__cluster_metadata"
	rp := kmsg.NewDescribeQuorumRequestTopicPartition()
	rp.Partition = 0
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, t.admin)
	if err != nil {
		if errors.Is(err, kerr.UnsupportedVersion) || errors.Is(err, kerr.InvalidRequest) {
			return -1, fmt.Errorf("the cluster does not answer DescribeQuorum, so its controller cannot be named (%w): %w", targets.ErrUnsupported, err)
		}
		return -1, fmt.Errorf("DescribeQuorum: %w", err)
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return -1, fmt.Errorf("DescribeQuorum: %w", err)
	}
	for _, tp := range resp.Topics {
		for _, p := range tp.Partitions {
			if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
				return -1, fmt.Errorf("DescribeQuorum %s/%d: %w", tp.Topic, p.Partition, err)
			}
			if p.LeaderID >= 0 {
				return p.LeaderID, nil
			}
		}
	}
	return -1, errors.New("DescribeQuorum names no leader of the metadata quorum")
}

// lastLines keeps the last n lines of s, trimmed.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}
