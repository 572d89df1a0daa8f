// This file runs the targets.Target conformance suite against the engine
// target.

package enginetarget

import (
	"testing"

	"github.com/sharebench/sharebench/loadgen/targets"
	"github.com/sharebench/sharebench/loadgen/targets/targettest"
)

func TestConformance(t *testing.T) {
	t.Parallel()
	targettest.Run(t, func(t *testing.T) targets.Target { return newTarget(t) })
}
