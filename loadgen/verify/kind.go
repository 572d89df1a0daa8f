// This file holds the finding kinds: the anomalies of DESIGN §7, the phantom
// anomaly, and the informational kinds that are reported but never fail a
// mode.

package verify

// Anomaly kinds. See the package documentation for their definitions.
const (
	KindLost                = "lost"
	KindDuplicate           = "duplicate"
	KindAbortedRead         = "aborted-read"
	KindTornTransaction     = "torn-transaction"
	KindUnresolved          = "unresolved"
	KindOverDelivered       = "over-delivered"
	KindArchivedUnprocessed = "archived-unprocessed"
	// KindPhantom is a committed output whose input id is not in the input
	// ledger. No mode allows it.
	KindPhantom = "phantom"
)

// Informational kinds: counted and witnessed, never a failure.
const (
	// KindArchivedAtLimit is a record archived because it reached the
	// delivery limit (share groups' poison-record rule).
	KindArchivedAtLimit = "archived-at-limit"
	// KindRejected is a record the worker rejected on purpose.
	KindRejected = "rejected"
)

// Anomalies returns the anomaly kinds in report order.
func Anomalies() []string {
	return []string{
		KindLost, KindDuplicate, KindAbortedRead, KindTornTransaction,
		KindUnresolved, KindOverDelivered, KindArchivedUnprocessed, KindPhantom,
	}
}

// Informational returns the informational kinds in report order.
func Informational() []string {
	return []string{KindArchivedAtLimit, KindRejected}
}

// IsAnomaly reports whether kind is an anomaly (as opposed to an
// informational kind or an unknown string).
func IsAnomaly(kind string) bool {
	switch kind {
	case KindLost, KindDuplicate, KindAbortedRead, KindTornTransaction,
		KindUnresolved, KindOverDelivered, KindArchivedUnprocessed, KindPhantom:
		return true
	}
	return false
}

// kindOrder is the report order of every kind, anomalies first.
func kindOrder() []string {
	return append(Anomalies(), Informational()...)
}
