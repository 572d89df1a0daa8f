// This file holds the coordinator's transaction states.

package txncoord

import "fmt"

// State is a transaction's coordinator state (Kafka's TransactionState).
type State int8

// Coordinator states.
const (
	Empty State = iota
	Ongoing
	PrepareCommit
	PrepareAbort
	CompleteCommit
	CompleteAbort
	PrepareEpochFence
	Dead
)

func (s State) String() string {
	switch s {
	case Empty:
		return "EMPTY"
	case Ongoing:
		return "ONGOING"
	case PrepareCommit:
		return "PREPARE_COMMIT"
	case PrepareAbort:
		return "PREPARE_ABORT"
	case CompleteCommit:
		return "COMPLETE_COMMIT"
	case CompleteAbort:
		return "COMPLETE_ABORT"
	case PrepareEpochFence:
		return "PREPARE_EPOCH_FENCE"
	case Dead:
		return "DEAD"
	}
	return fmt.Sprintf("TxnState(%d)", int8(s))
}

// Prepared reports whether s is a decided transaction whose markers are
// not all applied (PREPARE_COMMIT or PREPARE_ABORT).
func (s State) Prepared() bool { return s == PrepareCommit || s == PrepareAbort }

// Completed reports whether s is a transaction whose markers are all
// applied (COMPLETE_COMMIT or COMPLETE_ABORT).
func (s State) Completed() bool { return s == CompleteCommit || s == CompleteAbort }
