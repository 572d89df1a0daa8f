// This file tests what a mode does with a fault runner that can settle
// the target (the wait before the drain lands in the notes and
// settle_ns) and one that skips a fault (not landed, said as skipped).

package loadgen

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sharebench/sharebench/loadgen/result"
	"github.com/sharebench/sharebench/loadgen/targets"
	"github.com/sharebench/sharebench/loadgen/targets/enginetarget"
	"github.com/sharebench/sharebench/vocab"
	"github.com/sharebench/sharebench/workloads"
)

// settling applies every fault through the engine's own runner, skips
// every second one as a broker control does whose node stayed down, and
// settles with a note.
type settling struct {
	FaultRunner
	n       int
	settled int
}

func (s *settling) Apply(kind vocab.FaultKind, params map[string]string) (string, error) {
	s.n++
	if s.n%2 == 0 {
		return "", fmt.Errorf("%w: node 2 stayed under a kill", targets.ErrFaultSkipped)
	}
	return s.FaultRunner.Apply(kind, params)
}

func (s *settling) Settle(_ context.Context, cfg targets.Config, limit time.Duration) (string, error) {
	s.settled++
	if limit <= 0 {
		return "", fmt.Errorf("limit %v", limit)
	}
	return "settled " + cfg.InputTopic, nil
}

func TestSettleBeforeDrainAndSkippedFaults(t *testing.T) {
	t.Parallel()
	spec, err := workloads.Parse("faults.yaml", []byte(faultsWorkload))
	if err != nil {
		t.Fatal(err)
	}
	tgt, err := enginetarget.New(enginetarget.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tgt.Close() })
	fr := &settling{FaultRunner: tgt.FaultRunner()}
	res, err := Run(runCtx(t), Config{Workload: spec, WorkloadRef: "faults", Target: tgt, Modes: []vocab.Mode{vocab.Explicit},
		Seed: testSeed, FaultRunner: fr})
	if err != nil {
		t.Fatalf("Run: %v; %s", err, repro(t))
	}
	mr := res.Modes[0]
	if fr.settled != 1 {
		t.Errorf("Settle was called %d times, want once before the drain", fr.settled)
	}
	if !slices.ContainsFunc(mr.Notes, func(n string) bool { return strings.HasPrefix(n, "settled ") }) {
		t.Errorf("mode notes %q: want the settle note", mr.Notes)
	}
	if landed, fired := mr.FaultsLanded(); landed != 1 || fired != 2 {
		t.Fatalf("%d of %d faults landed, want 1 of 2 (faults %+v); %s", landed, fired, mr.Faults, repro(t))
	}
	if !slices.ContainsFunc(mr.Faults, func(f result.FaultEvent) bool {
		return f.Failed && strings.HasPrefix(f.Detail, "skipped: ") && strings.Contains(f.Detail, "node 2")
	}) {
		t.Errorf("faults %+v: want the skipped one said as skipped, naming node 2", mr.Faults)
	}
}
