package pipeline

import (
	"strings"
	"testing"
	"time"

	"github.com/sharebench/sharebench/vocab"
)

// TestMachinePollTimeout: an open transaction shortens the poll so the
// commit is not late, but never below 1ms.
func TestMachinePollTimeout(t *testing.T) {
	m := New[int](Config{Mode: vocab.Transactional, MaxDuration: time.Second}, &seq{})
	if a := m.Next(Inputs{Now: t0}); a.Op != OpPoll || a.Timeout != pollTimeout {
		t.Fatalf("idle poll: %s timeout %v, want poll %v", a.Op, a.Timeout, pollTimeout)
	}
	m.Done(Result[int]{Recs: []int{1}, At: t0})
	for _, op := range []Op{OpProcess, OpBegin, OpProduce, OpStageAccept} {
		if a := m.Next(Inputs{Now: t0}); a.Op != op {
			t.Fatalf("got %s, want %s", a.Op, op)
		}
		m.Done(Result[int]{})
	}
	for _, tc := range []struct {
		now  time.Duration
		want time.Duration
	}{{0, pollTimeout}, {950 * time.Millisecond, 50 * time.Millisecond}, {999900 * time.Microsecond, time.Millisecond}} {
		a := m.Next(Inputs{Now: t0.Add(tc.now)})
		if a.Op != OpPoll || a.Timeout != tc.want {
			t.Errorf("at %v: %s timeout %v, want poll %v", tc.now, a.Op, a.Timeout, tc.want)
		}
		m.Done(Result[int]{}) // nothing polled, not yet due
		if tc.now >= time.Second {
			break
		}
	}
}

func TestPhaseIn(t *testing.T) {
	want := map[vocab.Phase][]vocab.Mode{
		vocab.AfterPoll:            {vocab.Implicit, vocab.Explicit, vocab.Deferred, vocab.Transactional, vocab.ClassicEOS},
		vocab.AfterProduce:         {vocab.Implicit, vocab.Explicit, vocab.Deferred, vocab.Transactional, vocab.ClassicEOS},
		vocab.AfterStage:           {vocab.Transactional, vocab.ClassicEOS},
		vocab.AfterCommitBeforeAck: {vocab.Deferred},
		vocab.Idle:                 nil,
	}
	for p, modes := range want {
		for _, m := range vocab.AllModes() {
			in := false
			for _, x := range modes {
				in = in || x == m
			}
			if got := p.In(m); got != in {
				t.Errorf("%s.In(%s) = %v, want %v", p, m, got, in)
			}
		}
	}
}

func TestParse(t *testing.T) {
	for _, m := range vocab.AllModes() {
		if got, err := vocab.ParseMode(string(m)); err != nil || got != m {
			t.Errorf("ParseMode(%q) = %q, %v", m, got, err)
		}
	}
	if _, err := vocab.ParseMode("sometimes"); err == nil || !strings.Contains(err.Error(), `"sometimes"`) || !strings.Contains(err.Error(), "classic-eos") {
		t.Errorf("ParseMode(sometimes) error %v, want one naming the input and the valid modes", err)
	}
	for _, p := range vocab.CrashPhases() {
		if got, err := vocab.ParsePhase(string(p)); err != nil || got != p {
			t.Errorf("ParsePhase(%q) = %q, %v", p, got, err)
		}
	}
	if _, err := vocab.ParsePhase("idle"); err == nil {
		t.Error("ParsePhase(idle) succeeded; idle is not a crash phase")
	}
	if got := vocab.ClassicEOS.Order(); got != 4 {
		t.Errorf("ClassicEOS.Order() = %d, want 4", got)
	}
	if got := vocab.Mode("x").Order(); got != len(vocab.AllModes()) {
		t.Errorf(`Mode("x").Order() = %d, want %d`, got, len(vocab.AllModes()))
	}
}

// TestMachinePhaseIdle: the worker sits idle between loops with nothing
// held, and at after-stage between the polls of an open transaction.
func TestMachinePhaseIdle(t *testing.T) {
	m := New[int](Config{Mode: vocab.Transactional, MaxRecords: 2, MaxDuration: time.Hour}, &seq{})
	step := func(in Inputs, res Result[int]) Op {
		a := m.Next(in)
		m.Done(res)
		return a.Op
	}
	in := Inputs{Now: t0, MaxPoll: 7}
	if a := m.Next(in); a.Op != OpPoll || a.Max != 7 {
		t.Fatalf("first action %s max %d, want poll max 7", a.Op, a.Max)
	}
	m.Done(Result[int]{Recs: []int{1}, At: t0})
	for range 4 { // process, begin, produce, stage
		step(in, Result[int]{})
	}
	step(in, Result[int]{}) // an empty poll: the transaction stays open
	if got := m.Phase(); got != vocab.AfterStage {
		t.Errorf("between polls of an open transaction: phase %s, want %s", got, vocab.AfterStage)
	}
	in.EndTxn = true
	if op := step(in, Result[int]{}); op != OpCommit {
		t.Fatalf("with EndTxn: %s, want commit", op)
	}
	if got := m.Phase(); got != vocab.Idle {
		t.Errorf("after the commit: phase %s, want %s", got, vocab.Idle)
	}
}
