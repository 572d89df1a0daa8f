package pipeline

import (
	"testing"
	"time"

	"github.com/sharebench/sharebench/vocab"
)

// cpConfig is a checkpoint-model machine configuration for the tests:
// barriers every second, a 2s lock, a 5s checkpoint timeout.
func cpConfig(mode vocab.Mode, edit func(c *CheckpointConfig)) Config {
	c := &CheckpointConfig{Interval: time.Second, Timeout: 5 * time.Second}
	if edit != nil {
		edit(c)
	}
	return Config{Mode: mode, MaxPollRecords: 50, LockDuration: 2 * time.Second, Checkpoint: c}
}

// TestMachineCheckpointBounds: maxRecords bounds the polls so a checkpoint
// holds no more, and brings the barrier once it is reached; an open
// checkpoint shortens the poll so the barrier is not late.
func TestMachineCheckpointBounds(t *testing.T) {
	m := New[int](cpConfig(vocab.Explicit, func(c *CheckpointConfig) { c.MaxRecords = 3 }), &seq{})
	if a := m.Next(Inputs{Now: t0}); a.Op != OpPoll || a.Max != 3 || a.Timeout != pollTimeout {
		t.Fatalf("first: %s max %d timeout %v, want poll max 3 timeout %v", a.Op, a.Max, a.Timeout, pollTimeout)
	}
	m.Done(Result[int]{Recs: []int{1, 2}, At: t0})
	m.Next(Inputs{Now: t0}) // process
	m.Done(Result[int]{})
	now := t0.Add(950 * time.Millisecond)
	if a := m.Next(Inputs{Now: now}); a.Op != OpPoll || a.Max != 1 || a.Timeout != 50*time.Millisecond {
		t.Fatalf("holding 2 of 3: %s max %d timeout %v, want poll max 1 timeout 50ms", a.Op, a.Max, a.Timeout)
	}
	m.Done(Result[int]{Recs: []int{3}, At: now})
	m.Next(Inputs{Now: now})
	m.Done(Result[int]{})
	if a := m.Next(Inputs{Now: now}); a.Op != OpBarrier || a.Checkpoint != 1 {
		t.Fatalf("holding 3 of 3: %s (checkpoint %d), want the barrier of checkpoint 1", a.Op, a.Checkpoint)
	}
	if p := m.Done(Result[int]{}); p != vocab.BeforeBarrier {
		t.Errorf("the barrier crossed %q, want %s", p, vocab.BeforeBarrier)
	}
}
