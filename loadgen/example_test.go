package loadgen_test

import (
	"context"
	"fmt"
	"time"

	"github.com/sharebench/sharebench/loadgen"
	"github.com/sharebench/sharebench/loadgen/targets/enginetarget"
	"github.com/sharebench/sharebench/workloads"
)

// Example runs a tiny workload in transactional mode against the embedded
// engine and prints the verifier's verdict: each input's output committed
// exactly once.
func Example() {
	spec := workloads.New("tiny")
	spec.ModeNames = []string{"transactional"}
	spec.PartitionsPerTopic, spec.Consumers, spec.ProducersPerTopic = 2, 2, 1
	spec.ProducerRate = 500
	spec.WarmupLength, spec.TestLength = 100*time.Millisecond, 300*time.Millisecond
	spec.Defaults()
	if err := spec.Validate(); err != nil {
		fmt.Println("workload:", err)
		return
	}
	tgt, err := enginetarget.New(enginetarget.Options{})
	if err != nil {
		fmt.Println("target:", err)
		return
	}
	defer tgt.Close()
	res, err := loadgen.Run(context.Background(), loadgen.Config{Workload: spec, Target: tgt, Seed: 42})
	if err != nil {
		fmt.Println("run:", err)
		return
	}
	for _, m := range res.Modes {
		v := m.Verify
		fmt.Printf("%s: %s, every input has one committed output: %v\n",
			m.Mode, v.VerdictName(), v.Inputs > 0 && v.Outputs == v.Inputs && len(v.Forbidden) == 0)
	}
	// Output:
	// transactional: PASS, every input has one committed output: true
}
