// This file pins the decision knobs' zero value (docs/design.md §3.4). The
// transactional acknowledgement rules themselves (staging, markers, each
// knob under both its settings) are the scripts testdata/stage.txt,
// marker.txt and knobs.txt.

package sharepart_test

import (
	"testing"

	"github.com/sharebench/sharebench/engine/internal/sharepart"
)

// TestKnobsZeroValueIsSafe pins that the zero Knobs is the safe choice.
func TestKnobsZeroValueIsSafe(t *testing.T) {
	t.Parallel()
	if (sharepart.Knobs{}) != testConfig().Knobs {
		t.Fatal("test config must use safe knobs")
	}
}
