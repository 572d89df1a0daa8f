// This file holds the cross-check of a ledger directory against the run's
// result.json: the load generator dumps the ledgers from the very records
// its own verifier judged, so the counts result.json records for the mode
// are what the ledgers must give again. Ledgers that were cut, emptied or
// mixed up with another run's are refused, not judged.

package verify

import (
	"fmt"

	"github.com/sharebench/sharebench/loadgen/result"
)

// CheckRecorded compares got, the verdict on dir's ledgers, with rec, what
// result.json recorded of the same mode run. It returns nil when rec has no
// verdict (the mode failed or was interrupted before it was verified: there
// is nothing to compare), and a *LedgerError naming dir for the first
// count that differs.
func CheckRecorded(dir string, got *result.Verification, rec *result.ModeResult) error {
	if got == nil || rec == nil || rec.Verify == nil {
		return nil
	}
	for _, c := range []struct {
		what, field string
		ledgers     int64
		recorded    int64
	}{
		{"inputs", "total_inputs", got.Inputs, rec.TotalInputs},
		{"inputs", "verify.inputs", got.Inputs, rec.Verify.Inputs},
		{"outputs", "verify.outputs", got.Outputs, rec.Verify.Outputs},
		{"deliveries", "verify.deliveries", got.Deliveries, rec.Verify.Deliveries},
	} {
		if c.ledgers != c.recorded {
			return &LedgerError{Path: dir, Reason: fmt.Sprintf("the ledgers hold %d %s, but %s records %d (%s of mode %s repeat %d): the ledgers are not the run's",
				c.ledgers, c.what, result.FileName, c.recorded, c.field, rec.Mode, rec.Repeat)}
		}
	}
	return nil
}
