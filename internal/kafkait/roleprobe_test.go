// This file holds the role probe: the test binary, started again by the
// broker-control command a test installs, asks the cluster itself which
// node holds each role of the run right before the command acts, so a test
// can check a fault against the cluster's word and not against sharebench's
// own resolution of the selector.

package kafkait

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf16"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sharebench/sharebench/loadgen/result"
	"github.com/sharebench/sharebench/vocab"
	"github.com/sharebench/sharebench/workloads"
)

// envRoleProbe set to 1 makes the test binary print the run's role holders
// and exit instead of running tests (see probeCommand).
const envRoleProbe = "SHAREBENCH_KAFKAIT_ROLE_PROBE"

// probeTimeout bounds one probe: a coordinator that is still loading, or a
// quorum still electing, after an earlier fault is asked again until then
// (a controller election on this loaded machine takes several seconds).
const probeTimeout = 15 * time.Second

func TestMain(m *testing.M) {
	if os.Getenv(envRoleProbe) == "1" {
		line, err := probeRoles(os.Getenv)
		if err != nil {
			fmt.Fprintf(os.Stdout, "probe-error=%q\n", err.Error())
			os.Exit(0)
		}
		fmt.Fprintln(os.Stdout, line)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// probeCommand is the shell fragment that prints the role holders of the
// run whose SHAREBENCH_* environment the broker-control command has: the
// test binary itself, started with envRoleProbe.
func probeCommand(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatalf("the test binary's path: %v", err)
	}
	return fmt.Sprintf("%s=1 %s", envRoleProbe, shellQuote(exe))
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// probeRoles asks the cluster named by SHAREBENCH_BOOTSTRAP for the holder
// of every role of the run and returns them as space-separated key=node
// pairs: group (FindCoordinator of the group), txn/W (FindCoordinator of
// worker W's transactional id), share/P (FindCoordinator of the share state
// of input partition P), leader/P (Metadata: the leader of output partition
// P) and controller (DescribeQuorum: the leader of __cluster_metadata).
func probeRoles(getenv func(string) string) (string, error) {
	boot := getenv("SHAREBENCH_BOOTSTRAP")
	if boot == "" {
		return "", errors.New("no SHAREBENCH_BOOTSTRAP: the probe runs only inside a broker-control command")
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(boot, ",")...))
	if err != nil {
		return "", err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), probeTimeout)
	defer cancel()
	var pairs []string
	add := func(key string, node int32, err error) {
		if err != nil {
			pairs = append(pairs, key+"=?")
			return
		}
		pairs = append(pairs, fmt.Sprintf("%s=%d", key, node))
	}
	group := getenv("SHAREBENCH_GROUP")
	n, err := coordinator(ctx, cl, 0, group)
	add("group", n, err)
	for w, id := range strings.Split(getenv("SHAREBENCH_TRANSACTIONAL_IDS"), ",") {
		if id == "" {
			continue
		}
		n, err := coordinator(ctx, cl, 1, id)
		add("txn/"+strconv.Itoa(w), n, err)
	}
	meta := kmsg.NewPtrMetadataRequest()
	for _, topic := range []string{getenv("SHAREBENCH_INPUT_TOPIC"), getenv("SHAREBENCH_OUTPUT_TOPIC")} {
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr(topic)
		meta.Topics = append(meta.Topics, rt)
	}
	mresp, err := meta.RequestWith(ctx, cl)
	if err != nil {
		return "", fmt.Errorf("metadata: %w", err)
	}
	for _, mt := range mresp.Topics {
		if mt.Topic == nil {
			continue
		}
		parts := slices.Clone(mt.Partitions)
		slices.SortFunc(parts, func(a, b kmsg.MetadataResponseTopicPartition) int { return int(a.Partition - b.Partition) })
		switch *mt.Topic {
		case getenv("SHAREBENCH_OUTPUT_TOPIC"):
			for _, p := range parts {
				add("leader/"+strconv.Itoa(int(p.Partition)), p.Leader, kerr.ErrorForCode(p.ErrorCode))
			}
		case getenv("SHAREBENCH_INPUT_TOPIC"):
			// Kafka's Uuid prints as URL-safe base64 without padding; the
			// share coordinator key is group:topicId:partition.
			tid := base64.RawURLEncoding.EncodeToString(mt.TopicID[:])
			for _, p := range parts {
				n, err := coordinator(ctx, cl, 2, fmt.Sprintf("%s:%s:%d", group, tid, p.Partition))
				add("share/"+strconv.Itoa(int(p.Partition)), n, err)
			}
		}
	}
	// The quorum may be electing (an earlier fault took its leader): ask
	// again until it names a leader or the probe's bound passes.
	leader := int32(-1)
	for {
		q := kmsg.NewPtrDescribeQuorumRequest()
		qt := kmsg.NewDescribeQuorumRequestTopic()
		qt.Topic = "__cluster_metadata"
		qt.Partitions = append(qt.Partitions, kmsg.NewDescribeQuorumRequestTopicPartition())
		q.Topics = append(q.Topics, qt)
		var qresp *kmsg.DescribeQuorumResponse
		qresp, err = q.RequestWith(ctx, cl)
		if err == nil {
			err = kerr.ErrorForCode(qresp.ErrorCode)
		}
		if err == nil && len(qresp.Topics) > 0 && len(qresp.Topics[0].Partitions) > 0 {
			if leader = qresp.Topics[0].Partitions[0].LeaderID; leader < 0 {
				err = errors.New("the quorum names no leader")
			}
		}
		if err == nil || ctx.Err() != nil {
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	add("controller", leader, err)
	pairs = append(pairs, epochView(ctx, cl, getenv, mresp.Brokers)...)
	return strings.Join(pairs, " "), nil
}

// epochView names the same roles from the partitions that hold them, as
// every broker's metadata has them, taking for each partition the leader
// with the highest leader epoch: a broker just back from a fault may answer
// FindCoordinator or Metadata from a stale cache, the newest epoch is the
// controller's latest word. The coordinator of a key lives on partition
// abs(key.hashCode()) % partitions of its internal topic (Java's
// String.hashCode, Kafka's Utils.abs); the keys end in "#" (group#, txn/W#, share/P#,
// leader/P#).
func epochView(ctx context.Context, cl *kgo.Client, getenv func(string) string, brokers []kmsg.MetadataResponseBroker) []string {
	const (
		offsets = "__consumer_offsets"
		txns    = "__transaction_state"
		shares  = "__share_group_state"
	)
	out := getenv("SHAREBENCH_OUTPUT_TOPIC")
	in := getenv("SHAREBENCH_INPUT_TOPIC")
	type best struct{ epoch, leader int32 }
	view := map[string]map[int32]best{}
	counts := map[string]int{}
	var inID [16]byte
	for _, b := range brokers {
		req := kmsg.NewPtrMetadataRequest()
		for _, topic := range []string{offsets, txns, shares, out, in} {
			rt := kmsg.NewMetadataRequestTopic()
			rt.Topic = kmsg.StringPtr(topic)
			req.Topics = append(req.Topics, rt)
		}
		bctx, cancel := context.WithTimeout(ctx, time.Second)
		resp, err := req.RequestWith(bctx, cl.Broker(int(b.NodeID)))
		cancel()
		if err != nil {
			continue // paused or down: the others answer
		}
		for _, t := range resp.Topics {
			if t.Topic == nil || t.ErrorCode != 0 {
				continue
			}
			if *t.Topic == in {
				inID = t.TopicID
			}
			counts[*t.Topic] = max(counts[*t.Topic], len(t.Partitions))
			if view[*t.Topic] == nil {
				view[*t.Topic] = map[int32]best{}
			}
			for _, p := range t.Partitions {
				if cur, ok := view[*t.Topic][p.Partition]; p.ErrorCode == 0 && (!ok || p.LeaderEpoch > cur.epoch) {
					view[*t.Topic][p.Partition] = best{p.LeaderEpoch, p.Leader}
				}
			}
		}
	}
	var pairs []string
	holder := func(key, topic string, part int32) {
		if b, ok := view[topic][part]; ok {
			pairs = append(pairs, fmt.Sprintf("%s#=%d", key, b.leader))
		}
	}
	partFor := func(topic, key string) int32 {
		n := counts[topic]
		if n == 0 {
			return -1
		}
		return int32(kafkaAbs(javaHash(key)) % n)
	}
	holder("group", offsets, partFor(offsets, getenv("SHAREBENCH_GROUP")))
	for w, id := range strings.Split(getenv("SHAREBENCH_TRANSACTIONAL_IDS"), ",") {
		if id != "" {
			holder("txn/"+strconv.Itoa(w), txns, partFor(txns, id))
		}
	}
	tid := base64.RawURLEncoding.EncodeToString(inID[:])
	for p := 0; p < counts[in]; p++ {
		holder("share/"+strconv.Itoa(p), shares, partFor(shares, fmt.Sprintf("%s:%s:%d", getenv("SHAREBENCH_GROUP"), tid, p)))
	}
	for p := 0; p < counts[out]; p++ {
		holder("leader/"+strconv.Itoa(p), out, int32(p))
	}
	return pairs
}

// kafkaAbs is Kafka's Utils.abs: the absolute value, and 0 for the one
// int32 that has none.
func kafkaAbs(n int32) int {
	if n == math.MinInt32 {
		return 0
	}
	if n < 0 {
		return int(-n)
	}
	return int(n)
}

// javaHash is Java's String.hashCode over the UTF-16 code units of s.
func javaHash(s string) int32 {
	var h int32
	for _, u := range utf16.Encode([]rune(s)) {
		h = 31*h + int32(u)
	}
	return h
}

// coordinator asks FindCoordinator (type 0 group, 1 transaction, 2 share)
// for key, again while the answer is retriable (a coordinator loading
// after a fault), until ctx ends.
func coordinator(ctx context.Context, cl *kgo.Client, typ int8, key string) (int32, error) {
	for {
		req := kmsg.NewPtrFindCoordinatorRequest()
		req.CoordinatorType = typ
		req.CoordinatorKeys = []string{key}
		resp, err := req.RequestWith(ctx, cl)
		if err == nil && len(resp.Coordinators) == 1 {
			c := resp.Coordinators[0]
			if err = kerr.ErrorForCode(c.ErrorCode); err == nil {
				return c.NodeID, nil
			}
		} else if err == nil {
			err = fmt.Errorf("FindCoordinator answered %d coordinators for one key", len(resp.Coordinators))
		}
		if !kerr.IsRetriable(err) && ctx.Err() == nil && !errors.Is(err, context.DeadlineExceeded) {
			return -1, err
		}
		select {
		case <-ctx.Done():
			return -1, err
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// roleHolders parses a probe line (probeRoles) into key -> node id.
func roleHolders(line string) map[string]string {
	m := map[string]string{}
	for _, f := range strings.Fields(line) {
		if k, v, ok := strings.Cut(f, "="); ok {
			m[k] = v
		}
	}
	return m
}

// TestRoleKey checks which probe key a fault is checked against, without a
// cluster: the worker or partition from the workload, a random partition
// from the fault's detail, and a clear error when neither names one.
func TestRoleKey(t *testing.T) {
	spec := &workloads.Spec{Faults: []workloads.Fault{
		{Kind: vocab.FaultBrokerKill, Params: map[string]string{"broker": "txn-coordinator", "worker": "0"}},
		{Kind: vocab.FaultBrokerPause, Params: map[string]string{"broker": "share-coordinator", "partition": "0"}},
		{Kind: vocab.FaultBrokerKill, Params: map[string]string{"broker": "leader", "topic": "output", "partition": "random"}},
		{Kind: vocab.FaultBrokerRestart, Params: map[string]string{"broker": "controller"}},
		{Kind: vocab.FaultBrokerPause, Params: map[string]string{"broker": "group-coordinator"}},
	}}
	for _, tc := range []struct {
		kind, selector, detail, want string
	}{
		{"broker-kill", "txn-coordinator", "", "txn/0"},
		{"broker-pause", "share-coordinator", "", "share/0"},
		{"broker-kill", "leader", "kill broker 2 (leader of sb-1-7-explicit-out/3) · ran x", "leader/3"},
		{"broker-kill", "leader", "kill broker 2", ""},
		{"broker-restart", "controller", "", "controller"},
		{"broker-pause", "group-coordinator", "", "group"},
	} {
		got, err := roleKey(spec, result.FaultEvent{Kind: tc.kind, Selector: tc.selector, Detail: tc.detail})
		if tc.want == "" {
			if err == nil {
				t.Errorf("%s %s with detail %q: key %q, want an error (no partition named)", tc.kind, tc.selector, tc.detail, got)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s %s: key %q (%v), want %q", tc.kind, tc.selector, got, err, tc.want)
		}
	}
	// Java: "sharebench".hashCode() == -1785637455, "".hashCode() == 0.
	for _, tc := range []struct {
		s    string
		want int32
	}{{"", 0}, {"a", 97}, {"hello", 99162322}, {"sharebench", -1785637455}} {
		if got := javaHash(tc.s); got != tc.want {
			t.Errorf("javaHash(%q) = %d, want %d", tc.s, got, tc.want)
		}
	}
	if kafkaAbs(math.MinInt32) != 0 || kafkaAbs(-7) != 7 {
		t.Errorf("kafkaAbs: %d %d, want 0 7", kafkaAbs(math.MinInt32), kafkaAbs(-7))
	}
	holders := roleHolders("group=2 txn/0=1 share/0=? controller=3")
	if holders["group"] != "2" || holders["txn/0"] != "1" || holders["share/0"] != "?" || holders["controller"] != "3" {
		t.Errorf("roleHolders: %v", holders)
	}
	if line, ok := hitLine("explicit kill 2 leader | leader/0=2\nexplicit pause 1 group-coordinator | group=1\n", "explicit pause 1 group-coordinator | "); !ok || line != "group=1" {
		t.Errorf("hitLine: %q %v, want group=1", line, ok)
	}
}
