package reports

import (
	"testing"

	"github.com/sharebench/sharebench/vocab"
)

// The verifier column counts the faults that landed when some did not,
// over every repeat, and says nothing of faults when all landed.
func TestVerdictTextCountsFaults(t *testing.T) {
	for _, tc := range []struct {
		name                string
		landed, fired, inco int
		want                string
	}{
		{"all landed", 5, 5, 0, "PASS"},
		{"some did not", 3, 5, 0, "PASS · 3 of 5 faults landed"},
		{"inconclusive by them", 0, 1, 1, "INCONCLUSIVE · 0 of 1 faults landed"},
	} {
		v := verdict{verified: 1, repeats: 1, inconclusive: tc.inco, faultsLanded: tc.landed, faultsFired: tc.fired, counts: map[vocab.Finding]int64{}}
		if got, _ := verdictText(v); got != tc.want {
			t.Errorf("%s: verdictText = %q, want %q", tc.name, got, tc.want)
		}
	}
}
