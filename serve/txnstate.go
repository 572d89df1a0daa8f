// This file maps engine coordinator states onto the names Kafka's admin
// APIs use.

package serve

import "github.com/sharebench/sharebench/engine"

func txnStateName(s engine.TxnState) string {
	switch s {
	case engine.TxnEmpty:
		return "Empty"
	case engine.TxnOngoing:
		return "Ongoing"
	case engine.TxnPrepareCommit:
		return "PrepareCommit"
	case engine.TxnPrepareAbort:
		return "PrepareAbort"
	case engine.TxnCompleteCommit:
		return "CompleteCommit"
	case engine.TxnCompleteAbort:
		return "CompleteAbort"
	case engine.TxnPrepareEpochFence:
		return "PrepareEpochFence"
	}
	return "Dead"
}
