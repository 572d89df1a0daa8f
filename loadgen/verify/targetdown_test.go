// This file tests target-down: a run whose target crashed and did not come
// back is FAIL in every mode, whatever its ledgers show, with the target's
// error as the only witness.

package verify_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/sharebench/sharebench/loadgen/verify"
	"github.com/sharebench/sharebench/vocab"
)

func TestTargetDownFailsEveryMode(t *testing.T) {
	const down = "engine target: the engine crashed and did not come back: its restart failed: engine: corrupt log"
	for _, tc := range []struct {
		name string
		down string
		want string
	}{
		{"target ran to the end", "", verify.VerdictPass},
		{"target went down", down, verify.VerdictFail},
	} {
		for _, mode := range verify.Modes() {
			v := verify.New(vocab.Mode(mode), verify.Options{TargetDown: tc.down})
			got := v.Finish()
			if got.Verdict != tc.want {
				t.Errorf("%s, %s: verdict %s, want %s", tc.name, mode, got.Verdict, tc.want)
			}
			ws := got.Witnesses[vocab.KindTargetDown]
			if tc.down == "" {
				if len(ws) > 0 || got.Counts[vocab.KindTargetDown] != 0 {
					t.Errorf("%s, %s: %s found (%v) when the target ran to the end", tc.name, mode, vocab.KindTargetDown, ws)
				}
				continue
			}
			if !slices.Equal(got.Forbidden, []vocab.Finding{vocab.KindTargetDown}) || got.Counts[vocab.KindTargetDown] != 1 {
				t.Errorf("%s, %s: forbidden %v, counts %v: want only %s, once", tc.name, mode, got.Forbidden, got.Counts, vocab.KindTargetDown)
			}
			if len(ws) != 1 || !strings.Contains(ws[0].Detail, down) {
				t.Errorf("%s, %s: witnesses %+v: want one holding the target's error", tc.name, mode, ws)
			}
		}
	}
}
