// This file exposes test-only hooks to the package's external tests.

package verify

// SetMaxOutputs makes v hold at most n outputs, so tests can reach the
// overflow path without four billion outputs.
func SetMaxOutputs(v *Verifier, n uint32) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.mu.s.maxOuts = n + 1 // slot 0 is never used
}

// Line decoders, for the differential test against encoding/json.
var (
	DecodeInput  = decodeInput
	DecodeOutput = decodeOutput
)
