// This file holds the coordinator state's structural checks.

package txncoord

import (
	"fmt"

	"github.com/sharebench/sharebench/engine/internal/invariants"
)

// Check verifies the transaction's structure: a known state, a producer id
// and epoch in range, a positive timeout, distinct participants, and none
// while the id is EMPTY (an EMPTY id has no transaction). It returns the
// first rule broken.
func (t *Txn[P, S]) Check() error {
	switch {
	case t.State < Empty || t.State > Dead:
		return fmt.Errorf("txncoord: %q: unknown state %d", t.ID, int8(t.State))
	case t.PID < 0 || t.Epoch < 0:
		return fmt.Errorf("txncoord: %q: producer %d epoch %d out of range", t.ID, t.PID, t.Epoch)
	case t.Timeout <= 0:
		return fmt.Errorf("txncoord: %q: timeout %v is not positive", t.ID, t.Timeout)
	case t.State == Empty && len(t.Parts)+len(t.Shares)+len(t.Groups) > 0:
		return fmt.Errorf("txncoord: %q: EMPTY with %d participants", t.ID, len(t.Parts)+len(t.Shares)+len(t.Groups))
	}
	if k, dup := t.Parts.duplicate(); dup {
		return fmt.Errorf("txncoord: %q: partition %v joined twice", t.ID, k)
	}
	if k, dup := t.Shares.duplicate(); dup {
		return fmt.Errorf("txncoord: %q: share partition %v joined twice", t.ID, k)
	}
	if k, dup := t.Groups.duplicate(); dup {
		return fmt.Errorf("txncoord: %q: group %q joined twice", t.ID, k)
	}
	return nil
}

// checked runs Check after a mutation in an invariants build and panics
// with what broke; in other builds it is empty and compiled away.
func (t *Txn[P, S]) checked() {
	if invariants.Enabled {
		if err := t.Check(); err != nil {
			panic(err)
		}
	}
}
