// This file checks broker selector resolution against a three-broker kfake
// cluster: each selector must name the broker the cluster itself reports
// (asked again through a client of the test's own), and the command must
// receive that broker, the action and the run's identifiers.

package kafkatarget

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sharebench/sharebench/loadgen/targets"
	"github.com/sharebench/sharebench/vocab"
)

// ranCommand is one run of the broker-control command.
type ranCommand struct {
	line string
	env  map[string]string
}

// newThreeBrokers starts a three-broker kfake cluster, a target on it with
// cfg set up, a broker control whose command runs are recorded, and an
// admin client of the test's own.
func newThreeBrokers(t *testing.T, cfg targets.Config) (*Target, *BrokerControl, *[]ranCommand, *kadm.Client) {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(3))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	tg, err := New(context.Background(), Options{Brokers: c.ListenAddrs()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tg.Close() })
	setup(t, tg, cfg)
	var ran []ranCommand
	bc := tg.BrokerControl("ctl {action} --broker {broker} --for {for}")
	bc.run = func(_ context.Context, line string, env []string, _ time.Duration) (string, error) {
		m := map[string]string{}
		for _, kv := range env {
			k, v, _ := strings.Cut(kv, "=")
			m[k] = v
		}
		ran = append(ran, ranCommand{line, m})
		return "", nil
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return tg, bc, &ran, kadm.NewClient(cl)
}

func TestBrokerSelectors(t *testing.T) {
	cfg := testConfig(t, 6)
	cfg.OutputPartitions = 6
	_, bc, ran, adm := newThreeBrokers(t, cfg)
	ctx := ctxT(t)
	scope := targets.FaultScope{RunID: "run-7", Mode: vocab.ClassicEOS, ModeRun: "classic-eos", Config: cfg, Workers: 4, IntN: func(n int) int { return n - 1 }}

	topics, err := adm.ListTopics(ctx, cfg.InputTopic, cfg.OutputTopic)
	if err != nil {
		t.Fatal(err)
	}
	leaders := map[int32]bool{}
	for _, p := range topics[cfg.OutputTopic].Partitions {
		leaders[p.Leader] = true
	}
	if len(leaders) < 2 {
		t.Fatalf("kfake put every output partition on one broker (%v): the leader test could not tell partitions apart", leaders)
	}
	brokers, err := adm.BrokerMetadata(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ids := brokers.Brokers.NodeIDs()
	slices.Sort(ids)
	txnCoord := adm.FindTxnCoordinators(ctx, transactionalID(cfg, 2))[transactionalID(cfg, 2)]
	groupCoord := adm.FindGroupCoordinators(ctx, cfg.Group)[cfg.Group]
	tid := topics[cfg.InputTopic].ID
	shareKey := fmt.Sprintf("%s:%s:%d", cfg.Group, base64.RawURLEncoding.EncodeToString(tid[:]), 3)
	shareCoord := adm.FindShareCoordinators(ctx, shareKey)[shareKey]
	for _, r := range []kadm.FindCoordinatorResponse{txnCoord, groupCoord, shareCoord} {
		if r.Err != nil {
			t.Fatalf("the test's own FindCoordinator %s: %v", r.Name, r.Err)
		}
	}

	tests := []struct {
		name   string
		kind   vocab.FaultKind
		params map[string]string
		action string
		broker int32
		dur    string
	}{
		{"txn-coordinator of worker 2", vocab.FaultBrokerKill,
			map[string]string{"broker": "txn-coordinator", "worker": "2", "delay": "1500ms"}, ActionKill, txnCoord.NodeID, "1.5s"},
		{"group-coordinator", vocab.FaultBrokerPause,
			map[string]string{"broker": "group-coordinator", "for": "2s"}, ActionPause, groupCoord.NodeID, "2s"},
		{"share-coordinator of input partition 3", vocab.FaultBrokerRestart,
			map[string]string{"broker": "share-coordinator", "partition": "3"}, ActionRestart, shareCoord.NodeID, "0s"},
		{"leader of output partition 4", vocab.FaultBrokerKill,
			map[string]string{"broker": "leader", "topic": "output", "partition": "4", "delay": "0s"}, ActionKill,
			topics[cfg.OutputTopic].Partitions[4].Leader, "0s"},
		{"leader of input partition 1", vocab.FaultBrokerRestart,
			map[string]string{"broker": "leader", "topic": "input", "partition": "1"}, ActionRestart,
			topics[cfg.InputTopic].Partitions[1].Leader, "0s"},
		{"leader of a random output partition (the seeded pick: the last)", vocab.FaultBrokerRestart,
			map[string]string{"broker": "leader", "topic": "output", "partition": "random"}, ActionRestart,
			topics[cfg.OutputTopic].Partitions[5].Leader, "0s"},
		{"random broker (the seeded pick: the highest id)", vocab.FaultBrokerRestart,
			map[string]string{"broker": "random"}, ActionRestart, ids[len(ids)-1], "0s"},
		{"broker id", vocab.FaultBrokerPause,
			map[string]string{"broker": strconv.Itoa(int(ids[0])), "for": "500ms"}, ActionPause, ids[0], "500ms"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			*ran = nil
			out, err := bc.ApplyIn(ctx, scope, tt.kind, tt.params)
			if err != nil {
				t.Fatalf("ApplyIn: %v", err)
			}
			want := strconv.Itoa(int(tt.broker))
			if out.Broker != want {
				t.Errorf("resolved broker %s, the cluster says %s", out.Broker, want)
			}
			if len(*ran) != 1 {
				t.Fatalf("the command ran %d times, want once", len(*ran))
			}
			got := (*ran)[0]
			if line := fmt.Sprintf("ctl %s --broker %s --for %s", tt.action, want, tt.dur); got.line != line {
				t.Errorf("command line %q, want %q", got.line, line)
			}
			for k, v := range map[string]string{
				"SHAREBENCH_ACTION": tt.action, "SHAREBENCH_BROKER": want, "SHAREBENCH_SELECTOR": tt.params["broker"],
				"SHAREBENCH_RUN_ID": "run-7", "SHAREBENCH_MODE": "classic-eos", "SHAREBENCH_GROUP": cfg.Group,
				"SHAREBENCH_INPUT_TOPIC": cfg.InputTopic, "SHAREBENCH_OUTPUT_TOPIC": cfg.OutputTopic,
				"SHAREBENCH_TOPIC_PREFIX": strings.TrimSuffix(cfg.InputTopic, "-in"),
				"SHAREBENCH_TRANSACTIONAL_IDS": strings.Join([]string{transactionalID(cfg, 0), transactionalID(cfg, 1),
					transactionalID(cfg, 2), transactionalID(cfg, 3)}, ","),
			} {
				if got.env[k] != v {
					t.Errorf("env %s=%q, want %q", k, got.env[k], v)
				}
			}
		})
	}
}

// A selector that cannot be resolved fails the fault with the reason and
// never runs the command: kfake does not answer DescribeQuorum, so it has
// no controller to name.
func TestBrokerSelectorUnresolvable(t *testing.T) {
	cfg := testConfig(t, 2)
	_, bc, ran, _ := newThreeBrokers(t, cfg)
	ctx := ctxT(t)
	_, err := bc.ApplyIn(ctx, targets.FaultScope{Config: cfg, Workers: 1}, vocab.FaultBrokerRestart,
		map[string]string{"broker": "controller"})
	if err == nil || !strings.Contains(err.Error(), "controller") {
		t.Fatalf("ApplyIn(controller) on kfake = %v, want an error naming the controller", err)
	}
	if !errors.Is(err, targets.ErrUnsupported) {
		t.Errorf("ApplyIn(controller) on kfake = %v, want it to say the cluster cannot name its controller (ErrUnsupported)", err)
	}
	if len(*ran) != 0 {
		t.Errorf("the command ran %d times for a broker that could not be resolved", len(*ran))
	}
	if _, err := bc.ApplyIn(ctx, targets.FaultScope{Config: cfg}, vocab.FaultWorkerCrash, nil); err == nil {
		t.Error("ApplyIn(worker-crash) succeeded: a client-side fault is not the broker control's")
	}
}
