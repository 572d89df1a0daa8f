// This file tests a run whose engine crashes and does not come back: the
// mode ends FAIL (target-down) with the engine's error as the witness and
// its ledgers dumped, and the modes after it run on a fresh engine.

package loadgen

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	eng "github.com/sharebench/sharebench/engine"
	"github.com/sharebench/sharebench/loadgen/targets/enginetarget"
	"github.com/sharebench/sharebench/loadgen/verify"
	"github.com/sharebench/sharebench/vocab"
	"github.com/sharebench/sharebench/workloads"
)

// downWorkload restarts the engine from its data directory 400ms in; the
// test spoils the directory's marker before that, so the restart fails.
const downWorkload = `
name: target-down
partitionsPerTopic: 2
consumers: 2
producerRate: 1000
testDuration: 1s
warmupDuration: 200ms
drainTimeout: 10s
modes: [transactional, explicit]
faults:
  - {at: 400ms, kind: engine-restart}
`

func TestRunTargetDownEndsTheModeWithAVerdict(t *testing.T) {
	t.Parallel()
	spec, err := workloads.Parse("target-down.yaml", []byte(downWorkload))
	if err != nil {
		t.Fatal(err)
	}
	dataDir := t.TempDir()
	var spoil sync.Once
	tgt, err := enginetarget.New(enginetarget.Options{DataDir: dataDir, Flush: eng.FlushNever,
		// The first transaction of the run spoils the data directory's
		// marker: the engine runs on, and its restart cannot recover.
		Hook: func(eng.HookPoint, eng.HookInfo) error {
			spoil.Do(func() {
				if err := os.WriteFile(filepath.Join(dataDir, "SHAREBENCH"), []byte("spoiled\n"), 0o644); err != nil {
					t.Error(err)
				}
			})
			return nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tgt.Close() })
	out := t.TempDir()
	res, err := Run(runCtx(t), Config{Workload: spec, WorkloadRef: "target-down", Target: tgt, Modes: []vocab.Mode{vocab.Transactional, vocab.Explicit},
		Seed: testSeed, OutDir: out, DumpLedgers: true, FaultRunner: tgt.FaultRunner()})
	if err != nil {
		t.Fatalf("Run: %v; %s", err, repro(t))
	}
	if len(res.Modes) != 2 {
		t.Fatalf("%d modes in the result, want 2", len(res.Modes))
	}
	crashed, after := res.Modes[0], res.Modes[1]
	if crashed.Error != "" || crashed.Verify == nil {
		t.Fatalf("%s: error %q, verification %v: want a verdict and no error; %s", crashed.Mode, crashed.Error, crashed.Verify, repro(t))
	}
	v := crashed.Verify
	if v.Verdict != verify.VerdictFail || !slices.Contains(v.Forbidden, vocab.KindTargetDown) {
		t.Fatalf("%s: %s, forbidden %v: want FAIL with %s; %s", crashed.Mode, v.Verdict, v.Forbidden, vocab.KindTargetDown, repro(t))
	}
	ws := v.Witnesses[vocab.KindTargetDown]
	if len(ws) != 1 || !strings.Contains(ws[0].Detail, eng.ErrNotDataDir.Error()) {
		t.Errorf("%s witness %+v: want one naming the engine's error (%v)", vocab.KindTargetDown, ws, eng.ErrNotDataDir)
	}
	t.Logf("%s: %s, forbidden %v, witness %+v", crashed.Mode, v.Verdict, v.Forbidden, ws)
	// The dumped ledgers alone give the same verdict.
	dv, err := verify.VerifyDir(crashed.Mode, filepath.Join(out, "ledgers", crashed.Mode.String()), verify.Options{})
	if err != nil {
		t.Fatalf("verifying the dumped ledgers: %v", err)
	}
	if dv.Verdict != v.Verdict || !slices.Equal(dv.Forbidden, v.Forbidden) {
		t.Errorf("the dumped ledgers say %s %v, the run said %s %v", dv.Verdict, dv.Forbidden, v.Verdict, v.Forbidden)
	}
	if dv.Inputs == 0 {
		t.Errorf("the dumped ledgers hold no input: the crashed mode's ledgers were not kept")
	}
	// The next mode ran, on a fresh engine, to a verdict of its own.
	if after.Error != "" || after.Verify == nil || slices.Contains(after.Verify.Forbidden, vocab.KindTargetDown) {
		t.Fatalf("%s after the crash: error %q, verification %+v: want it run on a fresh engine", after.Mode, after.Error, after.Verify)
	}
	if after.Verify.Verdict != verify.VerdictPass {
		t.Errorf("%s after the crash: %s (forbidden %v, notes %q)", after.Mode, after.Verify.Verdict, after.Verify.Forbidden, after.Verify.Notes)
	}
	if _, err := os.Stat(filepath.Join(dataDir, "after-crash-1", "SHAREBENCH")); err != nil {
		t.Errorf("the fresh engine's directory: %v", err)
	}
	if notes := strings.Join(tgt.Info().Notes, "\n"); !strings.Contains(notes, "after-crash-1") {
		t.Errorf("the target's notes do not say the engine was replaced:\n%s", notes)
	}
}
