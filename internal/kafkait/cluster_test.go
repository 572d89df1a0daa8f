// This file holds the three-node chaos run: the kafka-chaos built-in
// against a cluster of three Kafka nodes (scripts/kafka/up --nodes 3), with
// broker faults applied through scripts/kafka/control.

package kafkait

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
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
	// The command notes what it was asked to hit, and which node the
	// cluster itself names for each role of the run at that moment (the
	// role probe), before acting on it.
	control := fmt.Sprintf(`echo "$SHAREBENCH_MODE {action} {broker} $SHAREBENCH_SELECTOR | $(%s)" >> %s && %s {action} --broker {broker} --for {for}`,
		probeCommand(t), hits, script)
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
			pausedLive := map[string]bool{}
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
				want := fmt.Sprintf("%s %s %s %s | ", mode, action, f.Broker, f.Selector)
				line, ok := hitLine(string(logged), want)
				if !ok {
					t.Errorf("%s recorded broker %s (%s), but the command was never asked %q", f.Kind, f.Broker, f.Selector, want)
					continue
				}
				key, err := roleKey(spec, f)
				if err != nil {
					t.Errorf("%s (%s): %v", f.Kind, f.Selector, err)
					continue
				}
				// The newest leader epoch of the partition holding the role
				// is the cluster's word; FindCoordinator (or one broker's
				// Metadata) may answer from a cache a fault left stale.
				holders := roleHolders(line)
				holder, asked := holders[key+"#"], holders[key]
				if holder == "" {
					holder = asked
				}
				t.Logf("  %-15s %s: when the command started the cluster named node %s for %s (newest leader epoch; FindCoordinator, Metadata or DescribeQuorum: %s); the command hit node %s",
					f.Kind, f.Selector, holder, key, asked, f.Broker)
				if holder != f.Broker {
					t.Errorf("%s (%s) hit node %s, but when the command started the cluster named node %q for %s (probe: %s)", f.Kind, f.Selector, f.Broker, holder, key, line)
				}
				if vocab.FaultKind(f.Kind) == vocab.FaultBrokerPause && !f.Failed {
					pausedLive[f.Selector] = true
				}
			}
			if mode != "classic-eos" {
				for _, sel := range []string{"group-coordinator", "share-coordinator"} {
					if !pausedLive[sel] {
						t.Errorf("mode %s: no pause of the %s landed (the workload schedules one)", mode, sel)
					}
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

// hitLine returns the line of the control command's log that starts with
// prefix, without it.
func hitLine(logged, prefix string) (string, bool) {
	for _, l := range strings.Split(logged, "\n") {
		if rest, ok := strings.CutPrefix(l, prefix); ok {
			return rest, true
		}
	}
	return "", false
}

// roleKey names the probe's key (probeRoles) for the role fault f's
// selector names: the worker or partition comes from the workload's params,
// and for a random partition from the partition sharebench recorded
// choosing (the choice is the workload's; which node holds it is the
// cluster's word).
func roleKey(spec *workloads.Spec, f result.FaultEvent) (string, error) {
	var params map[string]string
	for _, sf := range spec.Faults {
		if string(sf.Kind) == f.Kind && sf.Params["broker"] == f.Selector {
			params = sf.Params
		}
	}
	part := func() (string, error) {
		if p := params["partition"]; p != "" && p != workloads.Random {
			return p, nil
		}
		m := partitionInDetail.FindStringSubmatch(f.Detail)
		if m == nil {
			return "", fmt.Errorf("the workload picks a random partition and the fault's detail %q names none", f.Detail)
		}
		return m[1], nil
	}
	switch f.Selector {
	case workloads.BrokerGroupCoordinator:
		return "group", nil
	case workloads.BrokerController:
		return "controller", nil
	case workloads.BrokerTxnCoordinator:
		w := params["worker"]
		if w == "" || w == workloads.Random {
			return "", fmt.Errorf("the workload's txn-coordinator fault must name its worker for the probe to check it")
		}
		return "txn/" + w, nil
	case workloads.BrokerShareCoordinator:
		p, err := part()
		return "share/" + p, err
	case workloads.BrokerLeader:
		if params["topic"] == workloads.TopicInput {
			return "", fmt.Errorf("the probe names the leaders of the output topic only")
		}
		p, err := part()
		return "leader/" + p, err
	}
	return "", fmt.Errorf("no probe for selector %q", f.Selector)
}

// partitionInDetail finds the partition a leader or share-coordinator
// fault's detail names ("leader of sb-1-explicit-out/2").
var partitionInDetail = regexp.MustCompile(`(?:leader|share coordinator) of [^ /]+/(\d+)`)
