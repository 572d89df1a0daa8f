// TxnShareAcknowledge (the KIP-1289 draft): key 95 v0, flexible, topic ids,
// member id and epoch, per-offset AcknowledgeTypes (a single value covers
// the whole range) and a per-partition error message in the response;
// served and advertised with WithTxnShareAck(95), the default. The handler
// is shared with key 93 (93_txn_share_acknowledge.go); the two shapes
// differ only in their encoding (internal/txnshareack).

package serve

import (
	"errors"

	"github.com/sharebench/sharebench/engine"
)

// asAckError is errors.As for the engine's per-partition staging errors.
func asAckError(err error, ae **engine.AckError) bool { return errors.As(err, ae) }
