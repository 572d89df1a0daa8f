// This file holds the fuzz target of what report, compare and gate read: any
// bytes as a run's result.json load as a run or fail with an error, and a
// run that loads compares and gates against itself without a panic.

package reports_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/sharebench/sharebench/loadgen/result"
	"github.com/sharebench/sharebench/reports"
)

func FuzzLoad(f *testing.F) {
	f.Add([]byte(`{"schema":"sharebench/result/v1","modes":[{"mode":"transactional","throughput":10,"histograms":{},"verify":{"verdict":"PASS","pass":true,"allowed":[],"counts":{}}}]}`))
	f.Add([]byte(`{"schema":"sharebench/result/v1","modes":[{"mode":"x","histograms":{"end_to_end":{"unit":"ns","count":1,"encoded_v2":"!!"}}}]}`))
	f.Add([]byte(`{"schema":"sharebench/result/v1","modes":[{"mode":"explicit","histograms":{"commit":{"unit":"ns","count":2,"encoded_v2":"HISTFAAAACB4nJNpmSzMwMDAwcDAzMDAwQAAFgQBBg=="}}}]}`))
	f.Add([]byte(`not json`))
	f.Fuzz(func(t *testing.T, b []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, result.FileName), b, 0o644); err != nil {
			t.Fatal(err)
		}
		run, err := reports.Load(dir)
		if err != nil {
			return
		}
		cmp := reports.Compare([]*reports.Run{run}, []*reports.Run{run})
		_ = reports.Gate(cmp, reports.GateOptions{})
	})
}
