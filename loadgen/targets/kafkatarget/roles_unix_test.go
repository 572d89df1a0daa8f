//go:build unix

// This file checks that broker selectors resolve against live nodes when
// a fault fires: every role selector with its holder back, down under an
// earlier kill (the role moves) and paused by an earlier pause (it comes
// back), through a fake role view and a fake control script
// (testdata/fake-control.sh) that records the node it was asked to act on
// and marks it down or paused until the view has seen it so.

package kafkatarget

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/sharebench/sharebench/loadgen/targets"
	"github.com/sharebench/sharebench/vocab"
)

// fakeView is a three-node cluster's role view. Every role starts on node
// 2. A role whose holder is down (the script's state file, or an earlier
// kill or restart the target has under way) is answered first with an
// election error, then with the down holder (a stale answer), then moves
// to the lowest other node that is not down. A paused holder keeps its
// role; after two asks the view ends an earlier pause the target has
// under way on it (the pause's end).
type fakeView struct {
	dir    string
	faults *nodeFaults
	// elect false keeps every role where it is whatever happens.
	elect bool
	// earlier is the nodes the test put under an earlier fault.
	earlier map[int32]bool

	mu     sync.Mutex
	holder map[string]int32
	asks   map[string]int
	dialed []map[int32]underFault // the skip set of every ask
	// listed gets a value (when it has room) each time the brokers are
	// listed, once per round of a resolution.
	listed chan struct{}
}

func newFakeView(dir string, faults *nodeFaults, elect bool) *fakeView {
	return &fakeView{dir: dir, faults: faults, elect: elect, earlier: map[int32]bool{}, listed: make(chan struct{}, 1), holder: map[string]int32{}, asks: map[string]int{}}
}

// scriptState is the fake script's state of node id: "down", "paused" or "".
func (v *fakeView) scriptState(id int32) string {
	b, _ := os.ReadFile(filepath.Join(v.dir, fmt.Sprintf("state-%d", id)))
	return strings.TrimSpace(string(b))
}

// seen tells the fake script the view saw node id down or paused.
func (v *fakeView) seen(id int32) {
	_ = os.WriteFile(filepath.Join(v.dir, fmt.Sprintf("seen-%d", id)), nil, 0o644)
}

func (v *fakeView) ask(role string, skip map[int32]underFault, electionErr error) (int32, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.dialed = append(v.dialed, skip)
	h, ok := v.holder[role]
	if !ok {
		h = 2
		v.holder[role] = h
	}
	// A node is down or paused by the script (this fault), or by an
	// earlier fault the test put under way (in earlier and in skip).
	earlier := func(id int32) string {
		if u, under := skip[id]; under && v.earlier[id] {
			return u.action
		}
		return ""
	}
	down := func(id int32) bool {
		e := earlier(id)
		return v.scriptState(id) == "down" || e != "" && e != ActionPause
	}
	paused := v.scriptState(h) == "paused" || earlier(h) == ActionPause
	seen := func(id int32) {
		if v.scriptState(id) != "" {
			v.seen(id)
		}
	}
	switch {
	case down(h) && v.elect:
		n := v.asks[role]
		v.asks[role]++
		switch n {
		case 0:
			return -1, electionErr
		case 1:
			return h, nil
		}
		for id := int32(1); id <= 3; id++ {
			if id != h && !down(id) {
				seen(h)
				v.holder[role], v.asks[role] = id, 0
				return id, nil
			}
		}
		return -1, electionErr
	case paused:
		seen(h)
		v.asks[role]++
		if earlier(h) == ActionPause && v.asks[role] >= 2 && v.elect {
			v.faults.end([]int32{h})
			v.asks[role] = 0
		}
	}
	return h, nil
}

func (v *fakeView) brokers(_ context.Context, skip map[int32]underFault) (map[int32]string, error) {
	v.mu.Lock()
	v.dialed = append(v.dialed, skip)
	v.mu.Unlock()
	select {
	case v.listed <- struct{}{}:
	default:
	}
	return map[int32]string{1: "127.0.0.1:1", 2: "127.0.0.1:2", 3: "127.0.0.1:3"}, nil
}

func (v *fakeView) coordinator(_ context.Context, skip map[int32]underFault, typ int8, key string) (int32, error) {
	return v.ask(fmt.Sprintf("coordinator-%d-%s", typ, key), skip, kerr.NotCoordinator)
}

func (v *fakeView) leader(_ context.Context, skip map[int32]underFault, topic string, part int32) (int32, error) {
	return v.ask(fmt.Sprintf("leader-%s-%d", topic, part), skip, kerr.LeaderNotAvailable)
}

func (v *fakeView) topicID(context.Context, map[int32]underFault, string) ([16]byte, error) {
	return [16]byte{1, 2, 3}, nil
}

func (v *fakeView) controller(_ context.Context, skip map[int32]underFault) (int32, error) {
	return v.ask("controller", skip, fmt.Errorf("DescribeQuorum: %w of the metadata quorum", errNoLeader))
}

// newFakeControl returns a broker control on a target with no cluster,
// whose command is the fake script in dir and whose view is a fakeView.
func newFakeControl(t *testing.T, elect bool) (*BrokerControl, *fakeView, string) {
	t.Helper()
	return newFakeControlHold(t, elect, true)
}

// newFakeControlHold is newFakeControl whose script, with hold false,
// returns at once instead of waiting for the view to see the node.
func newFakeControlHold(t *testing.T, elect, hold bool) (*BrokerControl, *fakeView, string) {
	t.Helper()
	script, err := filepath.Abs("testdata/fake-control.sh")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if hold {
		if err := os.WriteFile(filepath.Join(dir, "hold"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tg := &Target{faults: newNodeFaults()}
	bc := tg.BrokerControl(fmt.Sprintf("sh %s %s {action} --broker {broker} --for {for}", script, dir))
	bc.timeout = 30 * time.Second
	bc.wait, bc.poll = time.Minute, 10*time.Millisecond
	v := newFakeView(dir, tg.faults, elect)
	bc.view = v
	return bc, v, dir
}

// underEarlier puts ids under an earlier fault of action, as a fault
// whose command still runs would be.
func underEarlier(bc *BrokerControl, v *fakeView, ids []int32, action string) {
	v.mu.Lock()
	for _, id := range ids {
		v.earlier[id] = true
	}
	v.mu.Unlock()
	bc.t.faults.begin(ids, action, nil, time.Now())
}

// askedFor is the fake script's log: one "ACTION ID" per run.
func askedFor(t *testing.T, dir string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "log"))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Fields(strings.ReplaceAll(strings.TrimSpace(string(b)), "\n", " "))
}

func TestRoleSelectorsAgainstLiveNodes(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t, 4)
	cfg.OutputPartitions = 4
	scope := targets.FaultScope{RunID: "run-1", Mode: vocab.ClassicEOS, ModeRun: "classic-eos", Config: cfg, Workers: 2,
		IntN: func(n int) int { return n - 1 }}
	selectors := []struct {
		name   string
		params map[string]string
	}{
		{"txn-coordinator", map[string]string{"broker": "txn-coordinator", "worker": "0"}},
		{"group-coordinator", map[string]string{"broker": "group-coordinator"}},
		{"share-coordinator", map[string]string{"broker": "share-coordinator", "partition": "1"}},
		{"leader of output", map[string]string{"broker": "leader", "topic": "output", "partition": "0"}},
		{"leader of input", map[string]string{"broker": "leader", "topic": "input", "partition": "1"}},
		{"controller", map[string]string{"broker": "controller"}},
	}
	// Every role starts on node 2. earlier is the fault already under way
	// on node 2 when this one fires ("" none).
	states := []struct {
		name     string
		earlier  string
		kind     vocab.FaultKind
		extra    map[string]string
		asked    string // the script's log line
		roles    [3]string
		waitNote bool
	}{
		{"holder back, kill", "", vocab.FaultBrokerKill, map[string]string{"delay": "0s"}, "kill 2", [3]string{"2", "1", "1"}, false},
		{"holder back, pause", "", vocab.FaultBrokerPause, map[string]string{"for": "100ms"}, "pause 2", [3]string{"2", "2", "2"}, false},
		// The earlier kill keeps 2 down: the role moves to 1, which this
		// kill hits; while 1 is down it moves to 3 (2 is still down).
		// With the holder back, the kill's own election moves it to 1.
		{"holder down under an earlier kill", ActionKill, vocab.FaultBrokerKill, map[string]string{"delay": "0s"}, "kill 1", [3]string{"1", "3", "3"}, true},
		// The earlier pause ends: the role stays on 2, which this kill
		// hits once it is back; the role then moves to 1.
		{"holder paused by an earlier pause", ActionPause, vocab.FaultBrokerKill, map[string]string{"delay": "0s"}, "kill 2", [3]string{"2", "1", "1"}, true},
	}
	for _, sel := range selectors {
		for _, st := range states {
			t.Run(sel.name+"/"+st.name, func(t *testing.T) {
				t.Parallel()
				bc, v, dir := newFakeControl(t, true)
				if st.earlier != "" {
					underEarlier(bc, v, []int32{2}, st.earlier)
				}
				params := map[string]string{}
				for k, v := range sel.params {
					params[k] = v
				}
				for k, v := range st.extra {
					params[k] = v
				}
				out, err := bc.ApplyIn(ctxT(t), scope, st.kind, params)
				if err != nil {
					t.Fatalf("ApplyIn: %v", err)
				}
				if got := strings.Join(askedFor(t, dir), " "); got != st.asked {
					t.Errorf("the script was asked %q, want %q", got, st.asked)
				}
				if got := [3]string{out.RoleBefore, out.RoleDuring, out.RoleAfter}; got != st.roles {
					t.Errorf("role before, during, after = %v, want %v", got, st.roles)
				}
				if got := strings.Contains(out.Detail, "waited"); got != st.waitNote {
					t.Errorf("detail %q: says it waited = %v, want %v", out.Detail, got, st.waitNote)
				}
			})
		}
		// A holder that stays under an earlier kill and keeps the role:
		// the fault is skipped at the bound, naming the node, and the
		// script never runs.
		t.Run(sel.name+"/holder stays down: skipped", func(t *testing.T) {
			t.Parallel()
			bc, v, dir := newFakeControl(t, false)
			bc.wait = 100 * time.Millisecond
			underEarlier(bc, v, []int32{2}, ActionKill)
			params := map[string]string{"delay": "0s"}
			for k, v := range sel.params {
				params[k] = v
			}
			_, err := bc.ApplyIn(ctxT(t), scope, vocab.FaultBrokerKill, params)
			if !errors.Is(err, targets.ErrFaultSkipped) {
				t.Fatalf("ApplyIn = %v, want it skipped (targets.ErrFaultSkipped)", err)
			}
			if !strings.Contains(err.Error(), "node 2") || !strings.Contains(err.Error(), "under a kill") {
				t.Errorf("skip note %q: want it to name node 2 and the kill it is under", err)
			}
			if got := askedFor(t, dir); len(got) != 0 {
				t.Errorf("the script ran (%v) for a fault that was skipped", got)
			}
		})
	}
}

// random picks among nodes no fault is on, and a node named by id waits
// for an earlier fault on it to end; the view is never asked through a
// node under a fault.
func TestRandomAndIDSelectorsAgainstLiveNodes(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t, 2)
	scope := targets.FaultScope{Config: cfg, Workers: 1, IntN: func(n int) int { return n - 1 }}
	tests := []struct {
		name  string
		down  []int32
		param string
		asked string
	}{
		{"random, none down: the seeded pick of three", nil, "random", "restart 3"},
		{"random, 3 down", []int32{3}, "random", "restart 2"},
		{"random, 2 and 3 down", []int32{2, 3}, "random", "restart 1"},
		{"random, 1 and 3 down", []int32{1, 3}, "random", "restart 2"},
		{"id 1", nil, "1", "restart 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			bc, v, dir := newFakeControlHold(t, true, false)
			underEarlier(bc, v, tt.down, ActionKill)
			if _, err := bc.ApplyIn(ctxT(t), scope, vocab.FaultBrokerRestart, map[string]string{"broker": tt.param}); err != nil {
				t.Fatalf("ApplyIn: %v", err)
			}
			if got := strings.Join(askedFor(t, dir), " "); got != tt.asked {
				t.Errorf("the script was asked %q, want %q", got, tt.asked)
			}
			for _, skip := range v.dialed {
				for _, id := range tt.down {
					if _, ok := skip[id]; !ok {
						t.Errorf("the view was asked with skip set %v: node %d, under a fault, was not left out", skip, id)
					}
				}
			}
		})
	}
	// A node named by id under an earlier pause: the fault waits until
	// the pause ends, then acts on it.
	t.Run("id 2 under an earlier pause", func(t *testing.T) {
		t.Parallel()
		bc, v, dir := newFakeControlHold(t, true, false)
		underEarlier(bc, v, []int32{2}, ActionPause)
		res := make(chan error, 1)
		go func() {
			_, err := bc.ApplyIn(ctxT(t), scope, vocab.FaultBrokerRestart, map[string]string{"broker": "2"})
			res <- err
		}()
		// The fault must not run while 2 is paused: once the resolution
		// has listed the brokers twice (it went round its wait at least
		// once), it has neither returned nor run the script.
		for range 2 {
			<-v.listed
		}
		select {
		case err := <-res:
			t.Fatalf("ApplyIn returned (%v) while node 2 was still under a pause", err)
		default:
		}
		if got := askedFor(t, dir); len(got) != 0 {
			t.Fatalf("the script ran (%v) while node 2 was paused", got)
		}
		bc.t.faults.end([]int32{2})
		if err := <-res; err != nil {
			t.Fatalf("ApplyIn: %v", err)
		}
		if got := strings.Join(askedFor(t, dir), " "); got != "restart 2" {
			t.Errorf("the script was asked %q, want %q", got, "restart 2")
		}
	})
}

// Clients started while a node is under a fault leave its address out of
// their seeds (all of them stay when every seed is down).
func TestLiveSeeds(t *testing.T) {
	t.Parallel()
	n := newNodeFaults()
	seeds := []string{"127.0.0.1:9092", "127.0.0.1:9094", "localhost:9096"}
	n.begin([]int32{2}, ActionKill, map[int32]string{2: "localhost:9094"}, time.Now())
	if got, want := strings.Join(n.liveSeeds(seeds), ","), "127.0.0.1:9092,localhost:9096"; got != want {
		t.Errorf("live seeds with node 2 (localhost:9094) killed = %s, want %s", got, want)
	}
	n.begin([]int32{1, 3}, ActionPause, map[int32]string{1: "127.0.0.1:9092", 3: "127.0.0.1:9096"}, time.Now())
	if got, want := strings.Join(n.liveSeeds(seeds), ","), strings.Join(seeds, ","); got != want {
		t.Errorf("live seeds with every node down = %s, want all of them %s", got, want)
	}
	n.end([]int32{1, 2, 3})
	if got, want := strings.Join(n.liveSeeds(seeds), ","), strings.Join(seeds, ","); got != want {
		t.Errorf("live seeds once every node is back = %s, want %s", got, want)
	}
}

// Settle waits for every fault to end and every partition to be led by a
// live node: at its limit with a node still under a fault it says which;
// once none is, it returns a note.
func TestSettle(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t, 2)
	bc, v, _ := newFakeControlHold(t, true, false)
	underEarlier(bc, v, []int32{2}, ActionKill)
	if _, err := bc.Settle(ctxT(t), cfg, 50*time.Millisecond); err == nil || !strings.Contains(err.Error(), "node(s) [2] still under a fault") {
		t.Errorf("Settle with node 2 under a kill = %v, want an error naming node 2", err)
	}
	bc.t.faults.end([]int32{2})
	note, err := bc.Settle(ctxT(t), cfg, time.Minute)
	if err != nil || !strings.Contains(note, "every partition of "+cfg.InputTopic) {
		t.Errorf("Settle with every node back = %q, %v: want a note naming the topics", note, err)
	}
}
