// This file holds what broker faults know about the cluster's nodes: which
// nodes are under a fault (killed and not yet back, restarting, paused),
// and the role view that answers who holds a role (a coordinator, a
// partition's leader, the active controller) by asking only brokers that
// are not under a fault, so a node an earlier fault took down is never the
// one a request waits on.

package kafkatarget

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sharebench/sharebench/loadgen/targets"
)

// underFault is one node's fault while its command runs.
type underFault struct {
	action string
	since  time.Time
	addr   string // host:port from the metadata, "" if unknown
}

// nodeFaults keeps which nodes are under a fault. A node is under a fault
// from just before its command runs until the command returns (a kill's
// command returns once the node is back).
type nodeFaults struct {
	mu struct {
		sync.Mutex
		under map[int32]underFault
		// changed is closed and replaced whenever a node enters or
		// leaves a fault, waking the resolutions waiting on one.
		changed chan struct{}
		// known is the brokers the last metadata answer listed, by id.
		known map[int32]string
	}
}

// setKnown records the brokers a metadata answer listed.
func (n *nodeFaults) setKnown(all map[int32]string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.mu.known = all
}

// knownIDs is the sorted ids of the brokers last listed.
func (n *nodeFaults) knownIDs() []int32 {
	n.mu.Lock()
	defer n.mu.Unlock()
	var ids []int32
	for id := range n.mu.known {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

func newNodeFaults() *nodeFaults {
	n := &nodeFaults{}
	n.mu.under = map[int32]underFault{}
	n.mu.changed = make(chan struct{})
	return n
}

// begin puts ids under action's fault; addrs maps ids to their addresses.
func (n *nodeFaults) begin(ids []int32, action string, addrs map[int32]string, now time.Time) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, id := range ids {
		n.mu.under[id] = underFault{action: action, since: now, addr: addrs[id]}
	}
	n.changedLocked()
}

// end takes ids out of their faults.
func (n *nodeFaults) end(ids []int32) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, id := range ids {
		delete(n.mu.under, id)
	}
	n.changedLocked()
}

func (n *nodeFaults) changedLocked() {
	close(n.mu.changed)
	n.mu.changed = make(chan struct{})
}

// state returns the nodes under a fault and a channel closed at the next
// change.
func (n *nodeFaults) state() (map[int32]underFault, <-chan struct{}) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return cloneUnder(n.mu.under), n.mu.changed
}

func cloneUnder(m map[int32]underFault) map[int32]underFault {
	out := make(map[int32]underFault, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// liveSeeds returns the seeds that are not the address of a node under a
// fault; all of them when every seed is (a client must have one to start).
func (n *nodeFaults) liveSeeds(seeds []string) []string {
	if n == nil {
		return seeds
	}
	under, _ := n.state()
	var live []string
	for _, s := range seeds {
		down := false
		for _, u := range under {
			if u.addr != "" && sameAddr(s, u.addr) {
				down = true
			}
		}
		if !down {
			live = append(live, s)
		}
	}
	if len(live) == 0 {
		return seeds
	}
	return live
}

// sameAddr reports whether two host:port addresses name one listener: the
// same port and the same host, taking every loopback name as one host.
func sameAddr(a, b string) bool {
	ah, ap, err1 := net.SplitHostPort(a)
	bh, bp, err2 := net.SplitHostPort(b)
	if err1 != nil || err2 != nil {
		return a == b
	}
	return ap == bp && (ah == bh || loopback(ah) && loopback(bh))
}

func loopback(h string) bool {
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// roleView answers who holds a role, asking only brokers not in skip. Its
// errors are worth asking again for (an election in progress) unless they
// wrap targets.ErrUnsupported.
type roleView interface {
	// brokers lists the registered brokers and their addresses.
	brokers(ctx context.Context, skip map[int32]underFault) (map[int32]string, error)
	// coordinator is FindCoordinator for key (type 0 group, 1
	// transaction, 2 share).
	coordinator(ctx context.Context, skip map[int32]underFault, typ int8, key string) (int32, error)
	// leader is the leader of topic/part (an error while it has none).
	leader(ctx context.Context, skip map[int32]underFault, topic string, part int32) (int32, error)
	// topicID is the topic's id.
	topicID(ctx context.Context, skip map[int32]underFault, topic string) ([16]byte, error)
	// controller is the leader of the KRaft metadata quorum.
	controller(ctx context.Context, skip map[int32]underFault) (int32, error)
}

// errNoLeader is the role view's answer while a partition or the quorum
// has no leader.
var errNoLeader = errors.New("no leader")

// adminView is the roleView of a real cluster: each request goes to one
// broker franz-go has discovered that is not under a fault, trying the
// next on a connection error, so a killed node turns into another broker
// answering rather than a connection refused or a deadline.
type adminView struct{ t *Target }

// perBroker bounds one request to one broker, so a broker that accepts the
// connection but does not answer (paused) costs this much, not the
// resolution's whole bound.
const perBroker = 3 * time.Second

// request sends req to the live brokers in turn until one answers.
func (v adminView) request(ctx context.Context, skip map[int32]underFault, req kmsg.Request) (kmsg.Response, error) {
	var tried []int32
	var last error
	for _, id := range v.t.faults.knownIDs() {
		if _, down := skip[id]; down {
			continue
		}
		tried = append(tried, id)
		rctx, cancel := context.WithTimeout(ctx, perBroker)
		resp, err := v.t.admin.Broker(int(id)).Request(rctx, req)
		cancel()
		if err == nil {
			return resp, nil
		}
		last = fmt.Errorf("broker %d: %w", id, err)
		if ctx.Err() != nil {
			break
		}
	}
	if len(tried) == 0 {
		// Nothing discovered yet (or every broker is under a fault):
		// franz-go picks a seed.
		return v.t.admin.Request(ctx, req)
	}
	return nil, last
}

func (v adminView) metadata(ctx context.Context, skip map[int32]underFault, topics ...string) (*kmsg.MetadataResponse, error) {
	req := kmsg.NewPtrMetadataRequest()
	for _, tp := range topics {
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr(tp)
		req.Topics = append(req.Topics, rt)
	}
	if len(topics) == 0 {
		req.Topics = []kmsg.MetadataRequestTopic{}
	}
	resp, err := v.request(ctx, skip, req)
	if err != nil {
		return nil, err
	}
	return resp.(*kmsg.MetadataResponse), nil
}

func (v adminView) brokers(ctx context.Context, skip map[int32]underFault) (map[int32]string, error) {
	m, err := v.metadata(ctx, skip)
	if err != nil {
		return nil, err
	}
	out := map[int32]string{}
	for _, b := range m.Brokers {
		out[b.NodeID] = net.JoinHostPort(b.Host, fmt.Sprint(b.Port))
	}
	if len(out) == 0 {
		return nil, errors.New("the metadata lists no broker")
	}
	v.t.faults.setKnown(out)
	return out, nil
}

func (v adminView) coordinator(ctx context.Context, skip map[int32]underFault, typ int8, key string) (int32, error) {
	req := kmsg.NewPtrFindCoordinatorRequest()
	req.CoordinatorType = typ
	req.CoordinatorKey = key
	req.CoordinatorKeys = []string{key}
	resp, err := v.request(ctx, skip, req)
	if err != nil {
		return -1, err
	}
	r := resp.(*kmsg.FindCoordinatorResponse)
	code, node := r.ErrorCode, r.NodeID
	if len(r.Coordinators) > 0 {
		code, node = r.Coordinators[0].ErrorCode, r.Coordinators[0].NodeID
	}
	if err := kerr.ErrorForCode(code); err != nil {
		if !kerr.IsRetriable(err) {
			return -1, fmt.Errorf("FindCoordinator %s: %w", key, errors.Join(err, targets.ErrUnsupported))
		}
		return -1, fmt.Errorf("FindCoordinator %s: %w", key, err)
	}
	return node, nil
}

func (v adminView) leader(ctx context.Context, skip map[int32]underFault, topic string, part int32) (int32, error) {
	m, err := v.metadata(ctx, skip, topic)
	if err != nil {
		return -1, err
	}
	for _, tp := range m.Topics {
		if tp.Topic == nil || *tp.Topic != topic {
			continue
		}
		if err := kerr.ErrorForCode(tp.ErrorCode); err != nil {
			return -1, fmt.Errorf("topic %s: %w", topic, err)
		}
		for _, p := range tp.Partitions {
			if p.Partition != part {
				continue
			}
			if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
				return -1, fmt.Errorf("partition %s/%d: %w", topic, part, err)
			}
			if p.Leader < 0 {
				return -1, fmt.Errorf("partition %s/%d: %w", topic, part, errNoLeader)
			}
			return p.Leader, nil
		}
		return -1, fmt.Errorf("topic %s has no partition %d: %w", topic, part, targets.ErrUnsupported)
	}
	return -1, fmt.Errorf("topic %s is not in the metadata", topic)
}

func (v adminView) topicID(ctx context.Context, skip map[int32]underFault, topic string) ([16]byte, error) {
	m, err := v.metadata(ctx, skip, topic)
	if err != nil {
		return [16]byte{}, err
	}
	for _, tp := range m.Topics {
		if tp.Topic != nil && *tp.Topic == topic && tp.ErrorCode == 0 {
			return tp.TopicID, nil
		}
	}
	return [16]byte{}, fmt.Errorf("topic %s is not in the metadata", topic)
}

// controller asks DescribeQuorum on __cluster_metadata-0. The controller
// id of Metadata and DescribeCluster cannot stand in: a KRaft broker
// answers it with a random live broker.
func (v adminView) controller(ctx context.Context, skip map[int32]underFault) (int32, error) {
	t := v.t
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
	raw, err := v.request(ctx, skip, req)
	if err != nil {
		if errors.Is(err, kerr.UnsupportedVersion) || errors.Is(err, kerr.InvalidRequest) {
			return -1, fmt.Errorf("the cluster does not answer DescribeQuorum, so its controller cannot be named (%w): %w", targets.ErrUnsupported, err)
		}
		return -1, fmt.Errorf("DescribeQuorum: %w", err)
	}
	resp := raw.(*kmsg.DescribeQuorumResponse)
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
	return -1, fmt.Errorf("DescribeQuorum: %w of the metadata quorum", errNoLeader)
}

// liveIDs is the sorted ids of brokers not under a fault.
func liveIDs(all map[int32]string, under map[int32]underFault) []int32 {
	var ids []int32
	for id := range all {
		if _, down := under[id]; !down {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}

var _ roleView = adminView{}

// Settle waits, up to limit, until no node is under a fault and every
// partition of cfg's topics has a leader that is not under one, asking
// only live brokers. It returns a note on how long it waited, or an error
// naming what was still missing at the limit (the drain starts anyway).
func (b *BrokerControl) Settle(ctx context.Context, cfg targets.Config, limit time.Duration) (string, error) {
	start := time.Now()
	deadline := time.NewTimer(limit)
	defer deadline.Stop()
	var missing string
	for {
		under, changed := b.t.nodeFaults().state()
		if len(under) > 0 {
			var ids []int32
			for id := range under {
				ids = append(ids, id)
			}
			slices.Sort(ids)
			missing = fmt.Sprintf("node(s) %v still under a fault", ids)
		} else {
			missing = b.unled(ctx, cfg, under)
			if missing == "" {
				return fmt.Sprintf("before the drain, waited %v for every broker fault to end and every partition of %s and %s to be led",
					time.Since(start).Round(time.Millisecond), cfg.InputTopic, cfg.OutputTopic), nil
			}
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-deadline.C:
			return "", fmt.Errorf("after waiting %v the cluster was not whole again (%s); the drain started anyway", limit, missing)
		case <-changed:
		case <-time.After(b.poll):
		}
	}
}

// unled names the first partition of cfg's topics without a live leader,
// "" when every one has one.
func (b *BrokerControl) unled(ctx context.Context, cfg targets.Config, under map[int32]underFault) string {
	for _, tp := range []struct {
		topic string
		n     int32
	}{{cfg.InputTopic, partitions(cfg.InputPartitions)}, {cfg.OutputTopic, partitions(cfg.OutputPartitions)}} {
		if tp.topic == "" {
			continue
		}
		for p := int32(0); p < tp.n; p++ {
			actx, cancel := context.WithTimeout(ctx, resolveTimeout)
			id, err := b.view.leader(actx, under, tp.topic, p)
			cancel()
			if err != nil {
				return fmt.Sprintf("%s/%d: %v", tp.topic, p, err)
			}
			if _, down := under[id]; down {
				return fmt.Sprintf("%s/%d is led by node %d, under a fault", tp.topic, p, id)
			}
		}
	}
	return ""
}

// initRetryLimit bounds how long a new transactional client asks again for
// its producer id while a node is under a broker fault.
const initRetryLimit = 2 * time.Minute

// initProducerID is cl.ProducerID, asked again (every rolePoll, up to
// initRetryLimit) while it fails with anything but a non-retriable Kafka
// error and some node is under a broker fault: the transaction
// coordinator the cluster names may be the node a fault took down until
// the cluster moves the role, and kgo loads the id afresh on each call
// after a failed load.
func (t *Target) initProducerID(ctx context.Context, cl *kgo.Client) (int64, int16, error) {
	deadline := time.Now().Add(initRetryLimit)
	for {
		pid, epoch, err := cl.ProducerID(ctx)
		if err == nil || ctx.Err() != nil || !time.Now().Before(deadline) {
			return pid, epoch, err
		}
		var ke *kerr.Error
		if errors.As(err, &ke) && !ke.Retriable {
			return pid, epoch, err
		}
		if t.faults == nil {
			return pid, epoch, err
		}
		if under, _ := t.faults.state(); len(under) == 0 {
			return pid, epoch, err
		}
		select {
		case <-ctx.Done():
			return pid, epoch, err
		case <-time.After(rolePoll):
		}
	}
}
