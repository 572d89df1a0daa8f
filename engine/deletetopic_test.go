package engine_test

import (
	"errors"
	"testing"

	"github.com/sharebench/sharebench/engine"
)

func TestDeleteTopic(t *testing.T) {
	t.Parallel()
	e, err := engine.New(engine.WithClock(engine.NewManualClock()))
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	for _, name := range []string{"in", "keep"} {
		if err := e.CreateTopic(name, 2); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.Produce("in", 0, []engine.ProduceRecord{{Value: []byte("x")}}); err != nil {
		t.Fatal(err)
	}
	m, err := e.JoinShareGroup("g", []string{"in"}, engine.AckExplicit)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.DeleteTopic("in"); err != nil {
		t.Fatalf("DeleteTopic: %v", err)
	}
	if _, err := e.Partitions("in"); !errors.Is(err, engine.ErrUnknownTopicOrPartition) {
		t.Errorf("Partitions after delete: got %v, want ErrUnknownTopicOrPartition", err)
	}
	if _, _, _, err := e.Offsets(engine.TopicPartition{Topic: "in", Partition: 0}); !errors.Is(err, engine.ErrUnknownTopicOrPartition) {
		t.Errorf("Offsets after delete: got %v, want ErrUnknownTopicOrPartition", err)
	}
	if _, err := m.Poll(10); !errors.Is(err, engine.ErrUnknownTopicOrPartition) {
		t.Errorf("Poll after delete: got %v, want ErrUnknownTopicOrPartition", err)
	}
	if err := e.DeleteTopic("in"); !errors.Is(err, engine.ErrUnknownTopicOrPartition) {
		t.Errorf("second DeleteTopic: got %v, want ErrUnknownTopicOrPartition", err)
	}
	if got := e.Topics(); len(got) != 1 || got[0] != "keep" {
		t.Errorf("Topics after delete = %v, want [keep]", got)
	}
	// The name can be used again, starting empty.
	if err := e.CreateTopic("in", 1); err != nil {
		t.Fatalf("re-create: %v", err)
	}
	if _, hw, _, err := e.Offsets(engine.TopicPartition{Topic: "in", Partition: 0}); err != nil || hw != 0 {
		t.Errorf("re-created topic: hw %d err %v, want 0 and nil", hw, err)
	}
}
