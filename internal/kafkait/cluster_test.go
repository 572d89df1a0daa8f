// This file holds the three-node chaos run: the kafka-chaos built-in
// against a cluster of three Kafka nodes (scripts/kafka/up --nodes 3), with
// broker faults applied through scripts/kafka/control.

package kafkait

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sharebench/sharebench/loadgen/result"
	"github.com/sharebench/sharebench/reports"
	"github.com/sharebench/sharebench/vocab"
	"github.com/sharebench/sharebench/workloads"
)

// envCluster names the bootstrap list of a three-node cluster started by
// this checkout's scripts/kafka/up --nodes 3; unset, the test skips.
const envCluster = "SHAREBENCH_KAFKA_CLUSTER"

// faultSlack is how late a fault may start after its schedule.
const faultSlack = time.Second

// TestThreeNodeChaos runs kafka-chaos in explicit, deferred and classic-eos
// against three nodes: every fault starts within a second of its schedule
// whatever the others are doing, each broker fault hits the broker its
// selector resolved to (the control command records what it acted on), no
// mode is PASS with inputs it could not judge, and the run leaves no topic
// or group of its own behind.
func TestThreeNodeChaos(t *testing.T) {
	bootstrap := os.Getenv(envCluster)
	if bootstrap == "" {
		t.Skipf("three-node tier is off: scripts/kafka/up --nodes 3 and set %s to the list it prints", envCluster)
	}
	script, err := filepath.Abs(filepath.Join("..", "..", "scripts", "kafka", "control"))
	if err != nil {
		t.Fatal(err)
	}
	hits := filepath.Join(t.TempDir(), "hits.log")
	// The command notes what it was asked to hit before acting on it.
	control := fmt.Sprintf(`echo "$SHAREBENCH_MODE {action} {broker} $SHAREBENCH_SELECTOR" >> %s && %s {action} --broker {broker} --for {for}`, hits, script)
	r := sharebenchRunAt(t, bootstrap, "--workload", "kafka-chaos", "--broker-control", control,
		"--seed", seedFor(t.Name()), "--dump-ledgers")
	if r.res == nil {
		t.Fatalf("no %s (exit %d)", result.FileName, r.code)
	}
	switch r.code {
	case reports.ExitOK, reports.ExitAnomaly, reports.ExitInconclusive:
	default:
		t.Errorf("exit %d: want a verdict (0, %d or %d)", r.code, reports.ExitAnomaly, reports.ExitInconclusive)
	}
	spec, ok := workloads.Lookup("kafka-chaos")
	if !ok {
		t.Fatal("no built-in kafka-chaos")
	}
	logged, err := os.ReadFile(hits)
	if err != nil {
		t.Fatalf("the broker-control command never ran: %v", err)
	}
	t.Logf("broker-control command log:\n%s", indent(string(logged)))
	for _, mode := range []string{"explicit", "deferred", "classic-eos"} {
		t.Run(mode, func(t *testing.T) {
			var m *result.ModeResult
			for i := range r.res.Modes {
				if r.res.Modes[i].Mode == vocab.Mode(mode) {
					m = &r.res.Modes[i]
				}
			}
			if m == nil || m.Error != "" || m.Unsupported != "" || m.Verify == nil {
				t.Fatalf("mode %s did not run to a verdict: %+v", mode, m)
			}
			v := m.Verify
			t.Logf("mode %s: verdict %s, counts %v, unjudged %d %v, drain timed out %v, notes %v",
				mode, v.VerdictName(), v.Counts, v.Unjudged, v.UnjudgedReasons, m.DrainTimedOut, v.Notes)
			if v.Pass && (v.Unjudged > 0 || m.DrainTimedOut) {
				t.Errorf("mode %s is PASS with %d unjudged inputs (drain timed out: %v)", mode, v.Unjudged, m.DrainTimedOut)
			}
			if !v.Pass && len(v.Forbidden) == 0 && !v.Inconclusive() {
				t.Errorf("mode %s: verdict %s with no forbidden anomaly and not INCONCLUSIVE", mode, v.VerdictName())
			}
			brokerFaults := 0
			for _, f := range m.Faults {
				t.Logf("  %-15s scheduled %6.2fs started %6.2fs ended %6.2fs broker %q (%s) failed=%v %s", f.Kind,
					float64(f.ScheduledNs)/1e9, float64(f.AtNs)/1e9, float64(f.EndNs)/1e9, f.Broker, f.Selector, f.Failed, f.Detail)
				if f.ScheduledNs > 0 {
					if late := time.Duration(f.AtNs - f.ScheduledNs); late > faultSlack || late < 0 {
						t.Errorf("%s scheduled at %.2fs started at %.2fs: %v off its schedule (at most %v)",
							f.Kind, float64(f.ScheduledNs)/1e9, float64(f.AtNs)/1e9, late, faultSlack)
					}
				}
				if !vocab.BrokerFault(vocab.FaultKind(f.Kind)) {
					continue
				}
				brokerFaults++
				if f.Broker == "" {
					// Resolution failed: the fault is recorded as failed with
					// the reason, and the command must not have run for it.
					if !f.Failed {
						t.Errorf("%s (%s) names no broker but is not marked failed", f.Kind, f.Selector)
					}
					continue
				}
				if n, err := strconv.Atoi(f.Broker); err != nil || n < 1 || n > 3 {
					t.Errorf("%s (%s) hit broker %q, not a node of the three", f.Kind, f.Selector, f.Broker)
				}
				action := map[vocab.FaultKind]string{vocab.FaultBrokerKill: "kill", vocab.FaultBrokerRestart: "restart", vocab.FaultBrokerPause: "pause"}[vocab.FaultKind(f.Kind)]
				want := fmt.Sprintf("%s %s %s %s", mode, action, f.Broker, f.Selector)
				if !strings.Contains(string(logged), want+"\n") {
					t.Errorf("%s recorded broker %s (%s), but the command was never asked %q", f.Kind, f.Broker, f.Selector, want)
				}
			}
			want := 0
			for _, f := range spec.Faults {
				if vocab.BrokerFault(f.Kind) {
					want++
				}
			}
			if brokerFaults != want {
				t.Errorf("mode %s: %d broker faults recorded, want the workload's %d", mode, brokerFaults, want)
			}
		})
	}
	// Nothing of the run is left on the cluster.
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(bootstrap, ",")...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	prefix := r.res.TopicPrefix
	if prefix == "" {
		t.Fatal("the result names no topic prefix")
	}
	topics, err := adm.ListTopics(ctx)
	if err != nil {
		t.Fatalf("listing topics: %v", err)
	}
	for _, name := range topics.Names() {
		if strings.HasPrefix(name, prefix) {
			t.Errorf("topic %s of the run is left on the cluster", name)
		}
	}
	groups, err := adm.ListGroups(ctx)
	if err != nil {
		t.Fatalf("listing groups: %v", err)
	}
	for _, g := range groups.Groups() {
		if strings.HasPrefix(g, prefix) {
			t.Errorf("group %s of the run is left on the cluster", g)
		}
	}
}
