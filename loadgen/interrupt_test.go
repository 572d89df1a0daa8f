// This file tests what Run records of an interrupt: the mode it stopped is
// marked, and every mode run it never started is listed in NotRun, so no
// reader of result.json can take the run for complete.

package loadgen

import (
	"context"
	"errors"
	"reflect"
	"sync"
	"testing"

	"github.com/sharebench/sharebench/loadgen/result"
	"github.com/sharebench/sharebench/loadgen/targets/enginetarget"
	"github.com/sharebench/sharebench/vocab"
)

// cancelOnWrite cancels a context at the first progress line: the first
// mode is then running.
type cancelOnWrite struct {
	once   sync.Once
	cancel context.CancelFunc
}

func (c *cancelOnWrite) Write(p []byte) (int, error) {
	c.once.Do(c.cancel)
	return len(p), nil
}

func TestRunRecordsWhatAnInterruptLeftUnrun(t *testing.T) {
	t.Parallel()
	tgt, err := enginetarget.New(enginetarget.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tgt.Close() })
	ctx, cancel := context.WithCancel(runCtx(t))
	defer cancel()
	spec := quickSpec(t, "explicit", "transactional", "classic-eos")
	out := t.TempDir()
	res, err := Run(ctx, Config{Workload: spec, Target: tgt, Seed: testSeed, Repeats: 2,
		Modes:    []vocab.Mode{vocab.Explicit, vocab.Transactional, vocab.ClassicEOS},
		Progress: &cancelOnWrite{cancel: cancel}, OutDir: out})
	if !errors.Is(err, ErrInterrupted) {
		t.Fatalf("Run: %v, want ErrInterrupted", err)
	}
	if !res.Interrupted || len(res.Modes) != 1 || res.Modes[0].Mode != "explicit" || !res.Modes[0].Interrupted {
		t.Fatalf("interrupted %v, modes %+v; want explicit alone, marked interrupted", res.Interrupted, res.Modes)
	}
	ref := func(mode string, rep int) result.ModeRef { return result.ModeRef{Mode: vocab.Mode(mode), Repeat: rep} }
	want := []result.ModeRef{ref("transactional", 0), ref("classic-eos", 0), ref("explicit", 1), ref("transactional", 1), ref("classic-eos", 1)}
	if !reflect.DeepEqual(res.NotRun, want) {
		t.Errorf("not run %+v, want %+v", res.NotRun, want)
	}
	// result.json carries the list.
	f, err := result.Read(result.ResultPath(out))
	if err != nil {
		t.Fatal(err)
	}
	if !f.Interrupted || !reflect.DeepEqual(f.NotRun, want) {
		t.Errorf("result.json: interrupted %v, not run %+v; want %+v", f.Interrupted, f.NotRun, want)
	}
}
