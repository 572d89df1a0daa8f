// This file holds the run configuration: what Run needs beyond the workload
// (the target, the seed, the output directory, overrides from flags).

package loadgen

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/sharebench/sharebench/loadgen/ledger"
	"github.com/sharebench/sharebench/loadgen/sink"
	"github.com/sharebench/sharebench/loadgen/targets"
	"github.com/sharebench/sharebench/vocab"
	"github.com/sharebench/sharebench/workloads"
)

// HeaderBytes is the size of the header at the start of every payload
// (ledger.HeaderBytes); the workload's messageSize must be at least this.
const HeaderBytes = ledger.HeaderBytes

// Config is one run: a workload against one target.
type Config struct {
	// Workload is the resolved, validated workload.
	Workload *workloads.Spec
	// WorkloadRef is how the user named it (a built-in name or a file).
	WorkloadRef string
	// WorkloadNotes say how the workload file was read
	// (workloads.LoadWithNotes); recorded in the result as given.
	WorkloadNotes []string
	// Target is the system under test; Run does not close it.
	Target targets.Target
	// Modes to run, in order; empty: the workload's modes.
	Modes []vocab.Mode
	// Seed drives every random choice of the run.
	Seed int64
	// Repeats runs each mode this many times, interleaved
	// (A B C A B C ...). Default 1.
	Repeats int
	// OutDir receives result.json, the .hlog files and ledgers; "" writes
	// nothing.
	OutDir string
	// DumpLedgers writes ledgers/<mode>/inputs.jsonl and outputs.jsonl.
	DumpLedgers bool
	// RequireFaults makes a mode whose faults did not all land (a fault
	// that could not be applied: its broker could not be resolved, its
	// command failed or timed out) INCONCLUSIVE instead of PASS: a run that
	// exists to test those faults proves nothing without them.
	RequireFaults bool
	// Progress receives one line per second per mode; nil: silent.
	Progress io.Writer
	// Args and Flags are recorded in the result as given.
	Args  []string
	Flags map[string]string
	// RunID prefixes every topic, group and transactional id of the run so
	// runs never see each other's data. Default: derived from the seed and
	// the start time.
	RunID string
	// Env is recorded in the result (commit, CPU, ...); Run fills the
	// target's part.
	Commit string
	// FaultRunner applies faults that need more than a client (engine
	// crashes, coordinator failover); nil: such faults are refused.
	FaultRunner FaultRunner
	// Sink is the external two-phase sink of ackOnly workloads (the
	// checkpoint model); nil: each mode run uses an in-process one, in
	// memory. Run does not close it.
	Sink sink.Sink

	// readStall overrides readStall for tests (0: readStall).
	readStall time.Duration
}

// FaultRunner applies target-side faults. It returns an error wrapping
// targets.ErrUnsupported when it cannot apply a kind.
type FaultRunner interface {
	// Supports reports whether kind can be applied.
	Supports(kind vocab.FaultKind) error
	// Apply applies one fault now and returns a short description.
	Apply(kind vocab.FaultKind, params map[string]string) (string, error)
}

// ScopedFaultRunner is a FaultRunner that also takes the mode's identifiers
// and a seeded random choice (a broker-control command needs to know which
// topics, group and transactional ids a selector reads); Run prefers
// ApplyIn over Apply when the runner has it.
type ScopedFaultRunner interface {
	FaultRunner
	ApplyIn(ctx context.Context, scope targets.FaultScope, kind vocab.FaultKind, params map[string]string) (targets.FaultOutcome, error)
}

// Settler is a FaultRunner that can wait for the target to be whole again
// after its faults (every node a fault took down back, every partition of
// the mode's topics led): a mode with faults asks it before the drain's
// timeout starts, so a broker restart that outlasts the load does not eat
// the drain. Settle returns within limit, with a note on what it waited
// for, or an error saying what was still missing at the limit.
type Settler interface {
	Settle(ctx context.Context, cfg targets.Config, limit time.Duration) (string, error)
}

// ErrNoFaultControl is wrapped by the refusal of a fault that needs
// control of the target (Config.FaultRunner) when the run has none.
var ErrNoFaultControl = errors.New("loadgen: no control of the target")

// ErrBadConfig is wrapped by configuration errors (exit code 2).
var ErrBadConfig = errors.New("loadgen: bad configuration")

// maxEmbeddedBacklogGB bounds an OMB consumer backlog on an embedded
// target, which keeps every record in memory.
const maxEmbeddedBacklogGB = 1

func (c *Config) validate() error {
	if c.Workload == nil {
		return fmt.Errorf("%w: no workload", ErrBadConfig)
	}
	if c.Target == nil {
		return fmt.Errorf("%w: no target", ErrBadConfig)
	}
	if c.Workload.MessageSizeBytes < HeaderBytes {
		return fmt.Errorf("%w: messageSize %d is below the %d-byte header", ErrBadConfig, c.Workload.MessageSizeBytes, HeaderBytes)
	}
	if b := c.Workload.ConsumerBacklogSizeGB; b > maxEmbeddedBacklogGB && c.Target.Info().Embedded {
		return fmt.Errorf("%w: consumerBacklogSizeGB %v: an embedded target holds the backlog in this process's memory, at most %d GiB; run it against a Kafka cluster (--target kafka), or lower consumerBacklogSizeGB", ErrBadConfig, b, maxEmbeddedBacklogGB)
	}
	if c.Repeats <= 0 {
		c.Repeats = 1
	}
	if len(c.Modes) == 0 {
		c.Modes = c.Workload.Modes()
	}
	if c.Workload.AckOnly {
		for _, m := range c.Modes {
			if m != vocab.Transactional && m != vocab.Explicit {
				return fmt.Errorf("%w: ackOnly (the checkpoint model) runs the transactional and explicit modes, not %s; on the kafka target use explicit (the sink commits, then the explicit acks)", ErrBadConfig, m)
			}
		}
	}
	if c.RunID == "" {
		c.RunID = fmt.Sprintf("sb-%d-%x", time.Now().Unix()%100000, uint32(c.Seed))
	}
	return nil
}

// checkFaults refuses, before any load, a workload whose target-side faults
// this run cannot apply, with one error for the first such fault.
func (c *Config) checkFaults() error {
	for _, f := range c.Workload.Faults {
		if f.ClientSide() {
			continue
		}
		if c.FaultRunner == nil {
			return fmt.Errorf("%w: %w: fault %q needs control of the %s target, which this run does not have (the kafka target needs a broker-control command, the engine target a data directory)", ErrBadConfig, ErrNoFaultControl, f.Kind, c.Target.Info().Target)
		}
		if err := c.FaultRunner.Supports(f.Kind); err != nil {
			return fmt.Errorf("%w: fault %q cannot run on the %s target: %v", ErrBadConfig, f.Kind, c.Target.Info().Target, err)
		}
	}
	return nil
}
