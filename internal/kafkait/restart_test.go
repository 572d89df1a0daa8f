// This file holds the broker-restart run: a broker-side fault through
// --broker-control and scripts/kafka/control.

package kafkait

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sharebench/sharebench/loadgen/result"
)

// envControl overrides the broker-control command of TestBrokerRestart.
const envControl = "SHAREBENCH_KAFKA_CONTROL"

// TestBrokerRestart restarts the broker mid-load (testdata/broker-restart.yaml:
// engine-restart, which --broker-control maps to the "restart" action) in
// explicit and classic-eos: the producers and workers ride out the outage,
// and nothing committed before, during or after it is lost. explicit may show
// duplicates (acks in flight when the broker stopped are lost, so their
// records come again); classic-eos must show nothing.
//
// It runs the two modes one after the other (one restart each). No other run
// overlaps it: the top-level tests of this package run one after another
// (only subtests are parallel), and this one has no parallel subtests.
func TestBrokerRestart(t *testing.T) {
	brokers(t)
	control := os.Getenv(envControl)
	switch control {
	case "off":
		t.Skipf("%s=off", envControl)
	case "":
		script, err := filepath.Abs(filepath.Join("..", "..", "scripts", "kafka", "control"))
		if err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(script, "status").CombinedOutput()
		if err != nil {
			t.Fatalf("%s status: %v: %s\nthe restart test restarts the broker scripts/kafka/up started; for another broker set %s to a command with {action} (or to off)",
				script, err, strings.TrimSpace(string(out)), envControl)
		}
		control = script + " {action}"
	}
	for _, mode := range []string{"explicit", "classic-eos"} {
		t.Run(mode, func(t *testing.T) {
			r := sharebenchRun(t, "--workload", workload("broker-restart.yaml"), "--modes", mode,
				"--broker-control", control, "--seed", seedFor(t.Name()))
			m := checkMode(t, r, mode)
			var restart *result.FaultEvent
			for i, f := range m.Faults {
				t.Logf("  fault at %.2fs: %s %s", float64(f.AtNs)/1e9, f.Kind, f.Detail)
				if f.Kind == "engine-restart" && !f.Failed && f.Broker != "" {
					restart = &m.Faults[i]
				}
			}
			if restart == nil {
				t.Fatalf("mode %s: the broker was not restarted (faults %+v)", mode, m.Faults)
			}
			// Two load phases: inputs sent before the restart began, and
			// inputs sent after it began (the control script sends SIGTERM
			// at once; what is sent a second later is acknowledged by the
			// restarted broker, when the producers catch up with the
			// open-loop schedule). The drain then proves they were all
			// processed: every input has a committed output.
			var before, after int64
			for _, s := range m.Series {
				at := int64(s.T) * int64(time.Second)
				switch {
				case at+int64(time.Second) <= restart.AtNs:
					before += s.InputRate
				case at >= restart.AtNs+int64(time.Second):
					after += s.InputRate
				}
			}
			t.Logf("mode %s: %d inputs sent before the restart, %d after it began", mode, before, after)
			if before == 0 || after == 0 {
				t.Errorf("mode %s: %d inputs before the restart and %d after it; want load in both phases", mode, before, after)
			}
			if mode == "classic-eos" {
				checkJudged(t, m)
			}
		})
	}
}
