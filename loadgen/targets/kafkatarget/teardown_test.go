package kafkatarget

import (
	"slices"
	"testing"

	"github.com/sharebench/sharebench/engine"
	"github.com/sharebench/sharebench/serve"
)

// TestTeardownDurableServe: against sharebench serve with a data
// directory, Teardown deletes the mode's topics and its share group, and
// a restart from the directory does not bring them back.
func TestTeardownDurableServe(t *testing.T) {
	dir := t.TempDir()
	e, err := engine.New(engine.WithDataDir(dir))
	if err != nil {
		t.Fatal(err)
	}
	s, err := serve.New(e, serve.WithListen("127.0.0.1:0"))
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve()
	tg, err := New(ctxT(t), Options{Brokers: []string{s.Addr()}})
	if err != nil {
		t.Fatal(err)
	}
	cfg := testConfig(t, 2)
	setup(t, tg, cfg)
	produceInputs(t, tg, cfg, "in", 4, 4)
	m, err := e.JoinShareGroup(cfg.Group, []string{cfg.InputTopic}, engine.AckExplicit)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Poll(10); err != nil {
		t.Fatal(err)
	}
	if err := m.Leave(); err != nil {
		t.Fatal(err)
	}
	if err := tg.Teardown(ctxT(t), cfg); err != nil {
		t.Fatalf("Teardown against a durable serve: %v", err)
	}
	tg.Close()
	s.Close()
	check := func(when string, e *engine.Engine) {
		t.Helper()
		for _, topic := range []string{cfg.InputTopic, cfg.OutputTopic} {
			if slices.Contains(e.Topics(), topic) {
				t.Errorf("%s: topic %s is still there", when, topic)
			}
		}
		if slices.Contains(e.ShareGroups(), cfg.Group) {
			t.Errorf("%s: share group %s is still there", when, cfg.Group)
		}
	}
	check("after Teardown", e)
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e2, err := engine.New(engine.WithDataDir(dir))
	if err != nil {
		t.Fatal(err)
	}
	defer e2.Close()
	check("after a restart", e2)
}
