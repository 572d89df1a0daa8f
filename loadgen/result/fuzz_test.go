// This file holds the fuzz target of result.Read, which report, compare
// and gate use to load a run: any bytes give a *Result or an error, never
// a panic, and what reads back writes and reads again unchanged.

package result_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/sharebench/sharebench/loadgen/result"
)

func FuzzRead(f *testing.F) {
	f.Add([]byte(`{"schema":"sharebench/result/v1","modes":[{"mode":"transactional","histograms":{},"verify":{"verdict":"PASS","pass":true,"allowed":[],"counts":{}}}]}`))
	f.Add([]byte(`{"schema":"sharebench/result/v1","modes":[{"mode":"x","histograms":{"end_to_end":{"unit":"ns","count":1,"encoded_v2":"!!"}}}]}`))
	f.Add([]byte(`{"schema":"other"}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		dir := t.TempDir()
		path := filepath.Join(dir, result.FileName)
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		r, err := result.Read(path)
		if err != nil {
			return
		}
		// Written back, read again and written again, it is the same file.
		first, second := filepath.Join(dir, "first.json"), filepath.Join(dir, "second.json")
		if err := result.Write(first, r); err != nil {
			t.Fatalf("writing back what was read: %v", err)
		}
		r2, err := result.Read(first)
		if err != nil {
			t.Fatalf("reading back what was written: %v", err)
		}
		if err := result.Write(second, r2); err != nil {
			t.Fatal(err)
		}
		b1, _ := os.ReadFile(first)
		b2, _ := os.ReadFile(second)
		if !bytes.Equal(b1, b2) {
			t.Fatalf("round trip changed the result:\n%s\n%s", b1, b2)
		}
	})
}
