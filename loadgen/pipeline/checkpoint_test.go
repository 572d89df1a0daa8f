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

// TestMachineCheckpoint pins the checkpoint model's loop: the order of a
// checkpoint's steps in each commit order, where its crash phases fall,
// and what each failure leads to.
func TestMachineCheckpoint(t *testing.T) {
	sinkFirst := func(c *CheckpointConfig) { c.SinkFirst = true }
	for _, tc := range []struct {
		name   string
		cfg    Config
		rnd    []float64
		script string
		want   string
	}{
		{"transactional, acks first: records wait for the barrier, staged there, then pre-commit, snapshot, notify, acks, sink",
			cpConfig(vocab.Transactional, nil), nil, `
				recs 1 2
				ok
				recs 3
				ok
				recs
				@at 1s
				ok
				ok
				ok
				ok
				ok
				ok
				ok
				ok
				ok
				recs`,
			"poll |after-poll process[1 2] poll |after-poll process[3] poll " +
				"barrier |before-barrier begin stage-accept[1 2 3] precommit[1 2 3] |after-precommit snapshot |after-snapshot notify |after-notify " +
				"commit |between-commits commit-sink end-checkpoint(committed) poll"},
		{"a record delivered again while held replaces the held copy: staged, written and acknowledged once",
			cpConfig(vocab.Transactional, func(c *CheckpointConfig) { c.Key = intKey }), nil, `
				recs 1 2
				ok
				recs 2 3
				ok
				recs
				@at 1s
				ok
				ok
				ok
				ok
				ok
				ok
				ok
				ok
				ok
				recs`,
			"poll |after-poll process[1 2] poll |after-poll process[2 3] poll " +
				"barrier |before-barrier begin stage-accept[1 2 3] precommit[1 2 3] |after-precommit snapshot |after-snapshot notify |after-notify " +
				"commit |between-commits commit-sink end-checkpoint(committed) poll"},
		{"without a key both deliveries are held",
			cpConfig(vocab.Transactional, nil), nil, `
				recs 1 2
				ok
				recs 2 3
				ok
				recs
				@at 1s
				ok
				ok
				ok`,
			"poll |after-poll process[1 2] poll |after-poll process[2 3] poll " +
				"barrier |before-barrier begin stage-accept[1 2 2 3]"},
		{"explicit, sink first, with a reject: the sink, then accept and reject as one group",
			cpConfig(vocab.Explicit, sinkFirst), []float64{0.9, 0.1}, `
				@reject 0.5
				recs 1 2
				ok
				@at 1s
				ok
				ok
				ok
				ok
				ok
				ok
				ok
				ok
				recs`,
			"poll |after-poll process[1 2] barrier |before-barrier precommit[1] |after-precommit snapshot |after-snapshot notify |after-notify " +
				"commit-sink |between-commits accept<[1] reject>[2] end-checkpoint(committed) poll"},
		{"transactional, acks first: a failed commit aborts, the sink follows and rolls back",
			cpConfig(vocab.Transactional, nil), nil, `
				recs 1
				ok
				@at 1s
				ok
				ok
				ok
				ok
				ok
				ok
				err
				ok
				ok
				ok
				recs`,
			"poll |after-poll process[1] barrier |before-barrier begin stage-accept[1] precommit[1] |after-precommit snapshot |after-snapshot notify |after-notify " +
				"commit abort(boom) abort-sink end-checkpoint(rolled-back: boom) poll"},
		{"transactional, sink first: fenced at the acks' commit, the records come back and the worker is replaced",
			cpConfig(vocab.Transactional, sinkFirst), nil, `
				recs 1
				ok
				@at 1s
				ok
				ok
				ok
				ok
				ok
				ok
				ok
				fenced
				ok
				ok
				ok`,
			"poll |after-poll process[1] barrier |before-barrier begin stage-accept[1] precommit[1] |after-precommit snapshot |after-snapshot notify |after-notify " +
				"commit-sink |between-commits commit abort(fenced) end-checkpoint(acks-lost: fenced) replace"},
		{"explicit, acks first: a failed accept still commits the sink (the acks that landed stay)",
			cpConfig(vocab.Explicit, nil), nil, `
				recs 1
				ok
				@at 1s
				ok
				ok
				ok
				ok
				err
				ok
				ok
				recs`,
			"poll |after-poll process[1] barrier |before-barrier precommit[1] |after-precommit snapshot |after-snapshot notify |after-notify " +
				"accept<>[1] commit-sink end-checkpoint(acks-failed: boom) poll"},
		{"acks first: the acks commit and the sink commit fails: the outputs are lost",
			cpConfig(vocab.Transactional, nil), nil, `
				recs 1
				ok
				@at 1s
				ok
				ok
				ok
				ok
				ok
				ok
				ok
				err
				ok
				recs`,
			"poll |after-poll process[1] barrier |before-barrier begin stage-accept[1] precommit[1] |after-precommit snapshot |after-snapshot notify |after-notify " +
				"commit |between-commits commit-sink end-checkpoint(sink-lost) poll"},
		{"explicit: a failed pre-commit fails the checkpoint and releases each held poll",
			cpConfig(vocab.Explicit, nil), nil, `
				recs 1
				ok
				recs 2
				ok
				@at 1s
				ok
				err
				ok
				ok
				ok
				recs`,
			"poll |after-poll process[1] poll |after-poll process[2] barrier |before-barrier precommit[1 2] " +
				"end-checkpoint(failed: pre-committing the sink: boom) release-held[1] release-held[2] poll"},
		{"transactional: a snapshot later than the timeout rolls the sink back and aborts (staged records come back with the abort)",
			cpConfig(vocab.Transactional, nil), nil, `
				recs 1
				ok
				@at 1s
				@slow 6s
				ok
				ok
				ok
				ok
				ok
				ok
				ok
				ok
				recs`,
			"poll |after-poll process[1] barrier |before-barrier begin stage-accept[1] precommit[1] |after-precommit wait(6s slow) " +
				"abort-sink end-checkpoint(failed: checkpoint 1 timed out (snapshot after 6s, timeout 5s)) abort(checkpoint 1 timed out (snapshot after 6s, timeout 5s)) poll"},
		{"transactional: a slow snapshot inside the timeout completes",
			cpConfig(vocab.Transactional, nil), nil, `
				recs 1
				ok
				@at 1s
				@slow 2s
				ok
				ok
				ok
				ok
				ok
				ok
				ok
				ok`,
			"poll |after-poll process[1] barrier |before-barrier begin stage-accept[1] precommit[1] |after-precommit wait(2s slow) snapshot |after-snapshot notify |after-notify commit |between-commits"},
		{"staging at acquisition: each poll's acks go into the transaction as it is processed; a failed begin releases the held polls",
			cpConfig(vocab.Transactional, func(c *CheckpointConfig) { c.StageAtAcquisition = true }), nil, `
				recs 1
				ok
				ok
				ok
				recs 2
				ok
				err
				ok
				ok
				recs`,
			"poll |after-poll process[1] begin stage-accept[1] poll |after-poll process[2] stage-accept[2] " +
				"end-checkpoint(failed: staging at acquisition: boom) abort(staging at acquisition: boom) poll"},
		{"a failed begin at the barrier: nothing staged, the held polls are released",
			cpConfig(vocab.Transactional, nil), nil, `
				recs 1
				ok
				@at 1s
				ok
				err
				ok
				ok
				recs`,
			"poll |after-poll process[1] barrier |before-barrier begin end-checkpoint(failed: staging at the barrier: boom) release-held[1] poll"},
		{"fenced while staging: the worker is replaced, nothing aborted by it",
			cpConfig(vocab.Transactional, nil), nil, `
				recs 1
				ok
				@at 1s
				ok
				ok
				fenced
				ok
				ok`,
			"poll |after-poll process[1] barrier |before-barrier begin stage-accept[1] end-checkpoint(failed: staging at the barrier: fenced) replace"},
		{"renew: held records whose lock is half gone are renewed, one poll at a time, before the next poll; a failed renew is tried again at the next pass",
			cpConfig(vocab.Explicit, func(c *CheckpointConfig) { c.Renew = true; c.Interval = 3 * time.Second }), nil, `
				recs 1
				ok
				@at 500ms
				recs 2
				ok
				@at 1100ms
				ok
				recs
				@at 1600ms
				err
				recs
				@at 2200ms
				ok
				ok
				recs`,
			"poll |after-poll process[1] poll |after-poll process[2] renew[1] poll renew[2] poll renew[1] renew[2] poll"},
		{"per poll: the barrier follows every poll",
			cpConfig(vocab.Explicit, func(c *CheckpointConfig) { c.PerPoll = true }), nil, `
				recs 1
				ok
				ok`,
			"poll |after-poll process[1] barrier |before-barrier"},
		{"stop: the held records' checkpoint runs to its end, then the worker closes",
			cpConfig(vocab.Explicit, nil), nil, `
				recs 1
				ok
				@stop
				ok
				ok
				ok
				ok
				ok
				ok
				ok
				ok`,
			"poll |after-poll process[1] barrier |before-barrier precommit[1] |after-precommit snapshot |after-snapshot notify |after-notify " +
				"accept<>[1] |between-commits commit-sink end-checkpoint(committed) close"},
		{"cut off: the worker waits before polling",
			cpConfig(vocab.Explicit, nil), nil, `
				@cut 50ms
				ok
				recs`,
			"wait(50ms) poll"},
		{"a failed poll is retried after a pause; a fenced one replaces the worker",
			cpConfig(vocab.Explicit, nil), nil, `
				err
				ok
				fenced
				ok`,
			"poll wait(10ms retry) poll replace"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := run(t, tc.cfg, tc.rnd, tc.script); got != tc.want {
				t.Errorf("trace\n got: %s\nwant: %s", got, tc.want)
			}
		})
	}
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

// intKey is the tests' CheckpointConfig.Key: a record is its number.
func intKey(r any) RecordKey { return RecordKey{Offset: int64(r.(int))} }
