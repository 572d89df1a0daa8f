package loadgen

import (
	"testing"

	"github.com/sharebench/sharebench/workloads"
)

// TestStreamsByLabel: a stream depends on its label, the seed and the mode
// only, and distinct labels give distinct streams (numbered ids such as
// 7 and 0<<20|7 can collide; labels do not).
func TestStreamsByLabel(t *testing.T) {
	mr := &modeRun{cfg: &Config{Seed: 42}, spec: &workloads.Spec{}, name: "transactional"}
	first := func(mr *modeRun, label string) [4]uint64 {
		r := mr.rng(label)
		return [4]uint64{r.Uint64(), r.Uint64(), r.Uint64(), r.Uint64()}
	}
	labels := []string{"fault", "worker/0/incarnation/7", "worker/0/incarnation/7/processing", "worker/7/incarnation/0", "producer/0", "producer/1"}
	seen := map[[4]uint64]string{}
	for _, l := range labels {
		v := first(mr, l)
		if other, dup := seen[v]; dup {
			t.Errorf("streams %q and %q are the same", l, other)
		}
		seen[v] = l
		if first(mr, l) != v {
			t.Errorf("stream %q is not reproducible", l)
		}
	}
	other := &modeRun{cfg: &Config{Seed: 43}, spec: &workloads.Spec{}, name: "transactional"}
	if first(other, "fault") == first(mr, "fault") {
		t.Error("the fault stream does not depend on the seed")
	}
}
