// This file holds the plain end-to-end runs: every mode the broker supports
// through a quick workload, and transactional failing fast.

package kafkait

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sharebench/sharebench/loadgen"
	"github.com/sharebench/sharebench/loadgen/result"
	"github.com/sharebench/sharebench/loadgen/targets"
	"github.com/sharebench/sharebench/loadgen/targets/kafkatarget"
	"github.com/sharebench/sharebench/reports"
	"github.com/sharebench/sharebench/vocab"
	"github.com/sharebench/sharebench/workloads"
)

// supportedModes are the modes Kafka 4.x runs today (docs/design.md §5).
var supportedModes = []string{"implicit", "explicit", "deferred", "classic-eos"}

// TestModes runs the quick workload in every supported mode, each in its own
// run (in parallel: four runs at 2000 records/s are light for the broker),
// and checks the verifier's verdict.
func TestModes(t *testing.T) {
	brokers(t)
	for _, mode := range supportedModes {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			r := sharebenchRun(t, "--workload", workload("quick-kafka.yaml"), "--modes", mode,
				"--seed", seedFor(t.Name()))
			m := checkMode(t, r, mode)
			if mode == "classic-eos" {
				checkJudged(t, m)
			}
		})
	}
}

// TestTransactionalFailsFast asks for the KIP-1289 mode by name: no released
// Kafka has the API, so the run must stop before it creates anything, with
// exit code 2 and the message that names the alternatives.
func TestTransactionalFailsFast(t *testing.T) {
	b := brokers(t)
	r := sharebenchRun(t, "--workload", workload("quick-kafka.yaml"), "--modes", "transactional",
		"--seed", seedFor(t.Name()))
	if r.code != reports.ExitUsage {
		t.Errorf("exit code %d, want %d (usage: the broker cannot run the mode asked for)", r.code, reports.ExitUsage)
	}
	// The target says why in its own terms; the CLI adds the flag that
	// runs the alternative.
	want := "mode transactional needs the KIP-1289 transactional share-acknowledgement API, which this broker does not advertise; run the deferred mode for today's best effort, or use the engine target"
	for _, w := range []string{want, "pass --modes deferred"} {
		if !strings.Contains(r.stderr, w) {
			t.Errorf("stderr does not explain the unsupported broker:\n got: %s\nwant it to contain: %s", r.stderr, w)
		}
	}
	if n := strings.Count(strings.TrimSpace(r.stderr), "\n"); n != 0 {
		t.Errorf("stderr has %d lines, want the one error line:\n%s", n+1, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(r.out, result.FileName)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a %s was written (stat: %v): the run should have stopped before running anything", result.FileName, err)
	}

	// Through the library, a mode the broker lacks is listed as
	// unsupported (with the same reason), not run and not an error.
	ctx := context.Background()
	tg, err := kafkatarget.New(ctx, kafkatarget.Options{Brokers: []string{b}})
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	if err := tg.Supports(ctx, vocab.Transactional); !errors.Is(err, targets.ErrUnsupported) {
		t.Errorf("Supports(transactional) = %v, want an error wrapping targets.ErrUnsupported", err)
	}
	spec, err := workloads.Load(workload("quick-kafka.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := loadgen.Run(ctx, loadgen.Config{Workload: spec, Target: tg, Modes: []vocab.Mode{vocab.Transactional}, Seed: 1})
	if err != nil {
		t.Fatalf("loadgen.Run: %v", err)
	}
	if len(res.Modes) != 1 || !strings.Contains(res.Modes[0].Unsupported, want) {
		t.Errorf("loadgen.Run modes = %+v, want one transactional mode marked unsupported with %q", res.Modes, want)
	}
}
