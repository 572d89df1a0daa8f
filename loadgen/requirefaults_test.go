// This file tests what a run says when its faults do not land: the verdict
// line counts the faults that did, and RequireFaults turns the PASS of a
// mode whose faults did not all land into INCONCLUSIVE.

package loadgen

import (
	"errors"
	"strings"
	"testing"

	"github.com/sharebench/sharebench/loadgen/result"
	"github.com/sharebench/sharebench/loadgen/targets/enginetarget"
	"github.com/sharebench/sharebench/loadgen/verify"
	"github.com/sharebench/sharebench/vocab"
	"github.com/sharebench/sharebench/workloads"
)

const faultsWorkload = `
name: faults-that-fail
partitionsPerTopic: 2
consumers: 2
producerRate: 300
testDuration: 1200ms
warmupDuration: 0s
drainTimeout: 10s
modes: [explicit]
faults:
  - {at: 200ms, kind: network-partition, params: {between: coordinator-participant, for: 100ms}}
  - {at: 500ms, kind: network-partition, params: {between: coordinator-participant, for: 100ms}}
`

// halfFailing applies every other fault through the engine's own runner and
// fails the rest, as a broker-control command that timed out fails.
type halfFailing struct {
	FaultRunner
	n int
}

func (h *halfFailing) Apply(kind vocab.FaultKind, params map[string]string) (string, error) {
	h.n++
	if h.n%2 == 0 {
		return "", errors.New("the control command ran past its timeout")
	}
	return h.FaultRunner.Apply(kind, params)
}

func TestFaultsThatDidNotLand(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		require     bool
		wantVerdict string
	}{
		{false, verify.VerdictPass},
		{true, verify.VerdictInconclusive},
	} {
		spec, err := workloads.Parse("faults.yaml", []byte(faultsWorkload))
		if err != nil {
			t.Fatal(err)
		}
		tgt, err := enginetarget.New(enginetarget.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { tgt.Close() })
		res, err := Run(runCtx(t), Config{Workload: spec, WorkloadRef: "faults", Target: tgt, Modes: []vocab.Mode{vocab.Explicit},
			Seed: testSeed, FaultRunner: &halfFailing{FaultRunner: tgt.FaultRunner()}, RequireFaults: tc.require})
		if err != nil {
			t.Fatalf("Run: %v; %s", err, repro(t))
		}
		mr := res.Modes[0]
		if mr.Verify == nil {
			t.Fatalf("no verification (error %q); %s", mr.Error, repro(t))
		}
		if landed, fired := mr.FaultsLanded(); landed != 1 || fired != 2 {
			t.Fatalf("require=%v: %d of %d faults landed, want 1 of 2 (faults %+v); %s", tc.require, landed, fired, mr.Faults, repro(t))
		}
		if mr.Verify.Verdict != tc.wantVerdict {
			t.Errorf("require=%v: verdict %s (notes %q), want %s; %s", tc.require, mr.Verify.Verdict, mr.Verify.Notes, tc.wantVerdict, repro(t))
		}
		line := verdict(mr)
		if !strings.HasPrefix(line, tc.wantVerdict) || !strings.HasSuffix(line, " · 1 of 2 faults landed") {
			t.Errorf("require=%v: verdict column %q, want %s … · 1 of 2 faults landed", tc.require, line, tc.wantVerdict)
		}
		var text strings.Builder
		if err := (TextFormatter{}).Format(&text, &result.Result{Workload: "faults", Modes: res.Modes}); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(text.String(), "1 of 2 faults landed") {
			t.Errorf("require=%v: the result table does not say how many faults landed:\n%s", tc.require, text.String())
		}
	}
}
