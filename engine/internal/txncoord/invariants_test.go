//go:build invariants

// This file checks that an invariants build stops at the transition that
// breaks the coordinator state, naming what broke.

package txncoord_test

import (
	"strings"
	"testing"

	"github.com/sharebench/sharebench/engine/internal/txncoord"
)

func TestInvariantsPanicAtTheBreakingTransition(t *testing.T) {
	t.Parallel()
	x := txncoord.New[string, string]("a", 1, 1)
	x.Parts = txncoord.Set[string]{"p", "p"} // a participant joined twice
	defer func() {
		r := recover()
		err, ok := r.(error)
		if !ok || !strings.Contains(err.Error(), `partition p joined twice`) {
			t.Fatalf("recover() = %v, want the duplicate participant named", r)
		}
	}()
	x.Begin(0)
	t.Fatal("Begin on a broken state did not panic")
}
