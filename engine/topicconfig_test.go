package engine_test

import (
	"errors"
	"fmt"
	"maps"
	"strconv"
	"testing"

	"github.com/sharebench/sharebench/engine"
)

// TestTopicConfigsDurable: a topic's configs, given at creation and
// replaced after, survive a restart by Close and by Crash; deleting the
// topic takes them, and a topic created again under its name starts with
// none; the returned map is a copy.
func TestTopicConfigsDurable(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	e, err := engine.New(engine.WithDataDir(dir))
	if err != nil {
		t.Fatal(err)
	}
	check := func(when, topic string, want map[string]string) {
		t.Helper()
		got, err := e.TopicConfigs(topic)
		if err != nil {
			t.Fatalf("%s: TopicConfigs(%s): %v", when, topic, err)
		}
		if !maps.Equal(got, want) {
			t.Fatalf("%s: TopicConfigs(%s) = %v, want %v", when, topic, got, want)
		}
	}
	if err := e.CreateTopicWithConfigs("t", 2, map[string]string{"retention.ms": "3600000", "cleanup.policy": "delete"}); err != nil {
		t.Fatal(err)
	}
	if err := e.CreateTopic("plain", 1); err != nil {
		t.Fatal(err)
	}
	if err := e.CreateTopicWithConfigs("gone", 1, map[string]string{"retention.ms": "1"}); err != nil {
		t.Fatal(err)
	}
	got, _ := e.TopicConfigs("t")
	got["retention.ms"] = "changed by the caller"
	check("created", "t", map[string]string{"retention.ms": "3600000", "cleanup.policy": "delete"})
	check("created", "plain", map[string]string{})

	e = reopen(t, e, dir)
	check("reopened", "t", map[string]string{"retention.ms": "3600000", "cleanup.policy": "delete"})
	if err := e.SetTopicConfigs("t", map[string]string{"max.message.bytes": "1000"}); err != nil {
		t.Fatal(err)
	}
	if err := e.DeleteTopic("gone"); err != nil {
		t.Fatal(err)
	}
	if err := e.Crash(); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Restart(); err != nil {
		t.Fatal(err)
	}
	check("crashed", "t", map[string]string{"max.message.bytes": "1000"})
	check("crashed", "plain", map[string]string{})
	if _, err := e.TopicConfigs("gone"); !errors.Is(err, engine.ErrUnknownTopicOrPartition) {
		t.Fatalf("TopicConfigs of a deleted topic: %v, want ErrUnknownTopicOrPartition", err)
	}
	if err := e.CreateTopic("gone", 1); err != nil {
		t.Fatal(err)
	}
	e = reopen(t, e, dir)
	check("recreated", "gone", map[string]string{})
	if err := e.SetTopicConfigs("t", nil); err != nil {
		t.Fatal(err)
	}
	e = reopen(t, e, dir)
	check("cleared", "t", map[string]string{})
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestTopicConfigsBadInput: an unknown topic and an unnamed config are
// refused with the engine's sentinels.
func TestTopicConfigsBadInput(t *testing.T) {
	t.Parallel()
	e, err := engine.New()
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if err := e.SetTopicConfigs("nope", map[string]string{"a": "b"}); !errors.Is(err, engine.ErrUnknownTopicOrPartition) {
		t.Errorf("SetTopicConfigs(unknown topic): %v, want ErrUnknownTopicOrPartition", err)
	}
	if err := e.CreateTopicWithConfigs("t", 1, map[string]string{"": "x"}); !errors.Is(err, engine.ErrInvalidConfig) {
		t.Errorf("CreateTopicWithConfigs with an unnamed config: %v, want ErrInvalidConfig", err)
	}
	if _, err := e.Partitions("t"); err == nil {
		t.Errorf("the refused topic was created")
	}
}

// TestAlterTopicConfigsNoLostUpdate: alterations running at once each see
// the configs the previous one left, so every one's change is kept; a
// failing alteration changes nothing.
func TestAlterTopicConfigsNoLostUpdate(t *testing.T) {
	t.Parallel()
	e, err := engine.New()
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if err := e.CreateTopic("t", 1); err != nil {
		t.Fatal(err)
	}
	const n = 16
	errs := make(chan error, n)
	for i := range n {
		go func() {
			errs <- e.AlterTopicConfigs("t", func(c map[string]string) error {
				c[fmt.Sprintf("k%d", i)] = strconv.Itoa(len(c))
				return nil
			})
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	refused := errors.New("refused")
	if err := e.AlterTopicConfigs("t", func(c map[string]string) error {
		clear(c)
		return refused
	}); !errors.Is(err, refused) {
		t.Fatalf("a failing alteration returned %v, want its error", err)
	}
	got, err := e.TopicConfigs("t")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for i := range n {
		v, ok := got[fmt.Sprintf("k%d", i)]
		if !ok {
			t.Fatalf("k%d lost: %v", i, got)
		}
		seen[v] = true
	}
	if len(seen) != n {
		t.Fatalf("alterations saw the same configs (values %v), want each to see the one before", got)
	}
}
