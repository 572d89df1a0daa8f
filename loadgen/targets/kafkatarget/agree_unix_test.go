//go:build unix

package kafkatarget

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/sharebench/sharebench/loadgen/targets"
	"github.com/sharebench/sharebench/vocab"
)

// staleView is a cluster of three where the role moved from node 1 to node
// 3 and node 1, just back from a pause, still names itself for its first
// stale answers; nodes 2 and 3 name node 3. The broker asked is the
// lowest id a request's skip set leaves.
type staleView struct {
	mu    sync.Mutex
	stale int // answers node 1 still gives from its cache
}

func (v *staleView) answer(skip map[int32]underFault) (int32, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	for id := int32(1); id <= 3; id++ {
		if _, skipped := skip[id]; skipped {
			continue
		}
		if id == 1 && v.stale > 0 {
			v.stale--
			return 1, nil
		}
		return 3, nil
	}
	return -1, errNoLeader
}

func (v *staleView) brokers(context.Context, map[int32]underFault) (map[int32]string, error) {
	return map[int32]string{1: "127.0.0.1:1", 2: "127.0.0.1:2", 3: "127.0.0.1:3"}, nil
}
func (v *staleView) coordinator(_ context.Context, skip map[int32]underFault, _ int8, _ string) (int32, error) {
	return v.answer(skip)
}
func (v *staleView) leader(_ context.Context, skip map[int32]underFault, _ string, _ int32) (int32, error) {
	return v.answer(skip)
}
func (v *staleView) topicID(context.Context, map[int32]underFault, string) ([16]byte, error) {
	return [16]byte{1}, nil
}
func (v *staleView) controller(_ context.Context, skip map[int32]underFault) (int32, error) {
	return v.answer(skip)
}

// TestRoleSelectorsWaitForBrokersToAgree: a role is acted on only once
// every live broker names the same holder, so a broker's stale cache
// (the node the role just left) never picks the node a fault hits.
func TestRoleSelectorsWaitForBrokersToAgree(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t, 2)
	scope := targets.FaultScope{Config: cfg, Workers: 1, IntN: func(n int) int { return 0 }}
	for _, sel := range []string{"group-coordinator", "txn-coordinator", "share-coordinator", "leader", "controller"} {
		for _, stale := range []int{0, 1, 4} {
			t.Run(sel, func(t *testing.T) {
				t.Parallel()
				bc, _, dir := newFakeControlHold(t, false, false)
				bc.view = &staleView{stale: stale}
				out, err := bc.ApplyIn(ctxT(t), scope, vocab.FaultBrokerPause, map[string]string{"broker": sel, "for": "0s"})
				if err != nil {
					t.Fatalf("ApplyIn (node 1 stale for %d answers): %v", stale, err)
				}
				if got := strings.Join(askedFor(t, dir), " "); got != "pause 3" {
					t.Errorf("node 1 stale for %d answers: the script was asked %q, want %q (the holder every broker names)", stale, got, "pause 3")
				}
				if out.RoleBefore != "3" {
					t.Errorf("role before %q, want 3", out.RoleBefore)
				}
			})
		}
	}
}
