package engine_test

import (
	"errors"
	"testing"

	"github.com/sharebench/sharebench/engine"
)

// TestResumeProducer: a producer resumed by id and epoch commits the open
// transaction its crashed predecessor left, without fencing it first; once
// that transaction is no longer open, resuming it is refused.
func TestResumeProducer(t *testing.T) {
	e, err := engine.New(engine.WithMarkerDelivery(engine.MarkersInline))
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if err := e.CreateTopic("out", 1); err != nil {
		t.Fatal(err)
	}
	cfg := engine.ProducerConfig{TransactionalID: "task-0"}
	p, err := e.NewProducer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Begin(); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Produce("out", 0, []engine.ProduceRecord{{Value: []byte("x")}}); err != nil {
		t.Fatal(err)
	}
	pid, epoch := p.ProducerID(), p.Epoch()
	// p is dropped here, as a crashed task's producer is.
	if _, err := e.ResumeProducer(cfg, pid, epoch+1); !errors.Is(err, engine.ErrProducerFenced) {
		t.Errorf("resuming with another epoch: %v, want ErrProducerFenced", err)
	}
	r, err := e.ResumeProducer(cfg, pid, epoch)
	if err != nil {
		t.Fatalf("resume: %v", err)
	}
	if err := r.Commit(); err != nil {
		t.Fatalf("commit of the resumed transaction: %v", err)
	}
	recs, _, err := e.Fetch(engine.TopicPartition{Topic: "out"}, 0, 10, engine.ReadCommitted)
	if err != nil || len(recs) != 1 {
		t.Fatalf("read_committed after the resumed commit: %d records, %v; want the one output", len(recs), err)
	}
	if _, err := e.ResumeProducer(cfg, pid, epoch); !errors.Is(err, engine.ErrProducerFenced) {
		t.Errorf("resuming a committed transaction: %v, want ErrProducerFenced", err)
	}
	if _, err := e.ResumeProducer(engine.ProducerConfig{}, pid, epoch); err == nil {
		t.Error("resuming without a transactional id succeeded")
	}
}
