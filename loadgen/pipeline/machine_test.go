// This file checks the vocabulary the machines are written in: package
// vocab's modes and crash phases.

package pipeline

import (
	"strings"
	"testing"

	"github.com/sharebench/sharebench/vocab"
)

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
