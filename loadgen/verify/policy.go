// This file holds the per-mode policies: which anomaly kinds each
// acknowledgement mode allows (docs/design.md §5 and §7). The package documentation
// says why each mode allows what it allows.

package verify

import (
	"errors"
	"fmt"
	"strings"

	"github.com/sharebench/sharebench/vocab"
)

// ErrUnknownMode is matched (errors.Is) by the error Allowed and VerifyDir
// return for a mode the verifier has no policy for.
var ErrUnknownMode = errors.New("verify: unknown mode")

// policies maps each mode to the anomaly kinds it allows, sorted. The
// verifier takes modes by name (they come from ledger files), and imports
// only the pipeline's vocabulary for them.
var policies = map[vocab.Mode][]vocab.Finding{
	vocab.Implicit:      {vocab.KindDuplicate},
	vocab.Explicit:      {vocab.KindDuplicate},
	vocab.Deferred:      {vocab.KindDuplicate},
	vocab.Transactional: {},
	vocab.ClassicEOS:    {},
}

// deliveryLimited reports whether mode consumes through a share group,
// whose delivery limit bounds deliveries; a classic consumer group
// (classic-eos) refetches after every rebalance and has no limit.
func deliveryLimited(mode vocab.Mode) bool { return mode.DeliveryLimited() }

// Modes returns the modes with a policy, in report order.
func Modes() []string { return vocab.ModeNames() }

// Allowed returns the anomaly kinds mode allows, sorted (empty, not nil, for
// the exactly-once modes): duplicate for implicit, explicit and deferred
// (at-least-once: duplicates, never loss), nothing for transactional and
// classic-eos. For any other mode it returns an error matching
// ErrUnknownMode.
func Allowed(mode vocab.Mode) ([]vocab.Finding, error) {
	p, ok := policies[mode]
	if !ok {
		return nil, &modeError{mode: mode}
	}
	return append([]vocab.Finding{}, p...), nil
}

// modeError names an unknown mode and the valid ones.
type modeError struct{ mode vocab.Mode }

func (e *modeError) Error() string {
	return fmt.Sprintf("verify: unknown mode %q; want one of %s", e.mode, strings.Join(Modes(), ", "))
}

func (e *modeError) Is(target error) bool { return target == ErrUnknownMode }
