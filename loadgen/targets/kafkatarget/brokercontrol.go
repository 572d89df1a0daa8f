// This file holds BrokerControl, the fault runner of the kafka target: it
// applies broker-side faults by running the user's control command.

package kafkatarget

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"time"

	"github.com/sharebench/sharebench/loadgen/targets"
	"github.com/sharebench/sharebench/workloads"
)

// brokerControlTimeout bounds one run of the control command.
const brokerControlTimeout = 2 * time.Minute

// BrokerControl applies broker-side faults by running Cmd with sh -c,
// {action} replaced by the fault's action. Every broker-side fault the
// workloads name (engine-restart, coordinator-crash, share-failover) is a
// broker restart on a one-node cluster, so the action is "restart".
type BrokerControl struct {
	Cmd string
}

// brokerAction maps each fault kind BrokerControl applies to its action.
var brokerAction = map[workloads.FaultKind]string{
	workloads.FaultEngineRestart:    "restart",
	workloads.FaultCoordinatorCrash: "restart",
	workloads.FaultShareFailover:    "restart",
}

// Supports reports whether kind is a broker-side fault BrokerControl applies.
func (b *BrokerControl) Supports(kind workloads.FaultKind) error {
	if _, ok := brokerAction[kind]; ok {
		return nil
	}
	return fmt.Errorf("broker control: %w: fault %q", targets.ErrUnsupported, kind)
}

// Apply runs the control command for kind and says what it ran; the
// command's failure comes back with its output.
func (b *BrokerControl) Apply(kind workloads.FaultKind, _ map[string]string) (string, error) {
	action, ok := brokerAction[kind]
	if !ok {
		return "", b.Supports(kind)
	}
	line := strings.ReplaceAll(b.Cmd, "{action}", action)
	ctx, cancel := context.WithTimeout(context.Background(), brokerControlTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, "sh", "-c", line).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("%s: %v: %s", line, err, strings.TrimSpace(string(out)))
	}
	return "ran " + line, nil
}
