package reports_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/sharebench/sharebench/loadgen/result"
	"github.com/sharebench/sharebench/reports"
)

// TestStoredFixture checks testdata/run-small/result.json still equals what
// the fixture builder makes (histograms compared decoded, so a change in
// zlib's output does not matter). -update rewrites it.
func TestStoredFixture(t *testing.T) {
	built := newFixture(t, smallRun())
	path := filepath.Join(storedFixture, result.FileName)
	if *update {
		if err := os.MkdirAll(storedFixture, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := result.Write(path, built); err != nil {
			t.Fatal(err)
		}
	}
	stored := loadStored(t).Result
	if stored.Schema != result.Schema {
		t.Fatalf("stored fixture schema = %q, want %q", stored.Schema, result.Schema)
	}
	tmp := filepath.Join(t.TempDir(), result.FileName)
	if err := result.Write(tmp, built); err != nil {
		t.Fatal(err)
	}
	fresh, err := result.Read(tmp)
	if err != nil {
		t.Fatal(err)
	}
	if len(stored.Modes) != len(fresh.Modes) {
		t.Fatalf("stored fixture has %d mode results, the builder %d; run with -update", len(stored.Modes), len(fresh.Modes))
	}
	for i := range stored.Modes {
		for name, sh := range stored.Modes[i].Histograms {
			fh := fresh.Modes[i].Histograms[name]
			a, errA := hdrhistogram.Decode([]byte(sh.EncodedV2))
			b, errB := hdrhistogram.Decode([]byte(fh.EncodedV2))
			if errA != nil || errB != nil || !a.Equals(b) {
				t.Errorf("mode %d histogram %s differs from the builder's (%v, %v); run with -update", i, name, errA, errB)
			}
			sh.EncodedV2, fh.EncodedV2 = "", ""
			stored.Modes[i].Histograms[name], fresh.Modes[i].Histograms[name] = sh, fh
		}
	}
	if !reflect.DeepEqual(stored, fresh) {
		t.Errorf("stored fixture differs from the builder's; run go test ./reports -run TestStoredFixture -update")
	}
}

func TestLoadMissingResult(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	_, err := reports.Load(dir)
	want := "reports: " + dir + " has no result.json; pass a directory written by sharebench run"
	if err == nil || err.Error() != want {
		t.Fatalf("Load(empty dir) error = %v, want %q", err, want)
	}
	if !errors.Is(err, reports.ErrNoResult) || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("error %v does not match ErrNoResult and fs.ErrNotExist", err)
	}
	if _, err := reports.Load(filepath.Join(dir, "nope")); !errors.Is(err, reports.ErrNoResult) {
		t.Errorf("Load(missing dir) error = %v, want ErrNoResult", err)
	}
}

func TestLoadBadFiles(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, content string }{
		{"not json", "{"},
		{"wrong schema", `{"schema":"other/v9"}`},
	} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, result.FileName), []byte(tc.content), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := reports.Load(dir)
		if err == nil || !strings.HasPrefix(err.Error(), "reports: reading run "+dir) || !errors.Is(err, result.ErrSchema) {
			t.Errorf("%s: Load error = %v, want a reports: error wrapping result.ErrSchema", tc.name, err)
		}
	}
}

func TestLoadNamesRunAfterDirectory(t *testing.T) {
	t.Parallel()
	run := loadStored(t)
	if run.Name != "run-small" {
		t.Errorf("Name = %q, want run-small", run.Name)
	}
	// The result file's own path works too.
	run2, err := reports.Load(filepath.Join(storedFixture, result.FileName))
	if err != nil || run2.Name != "run-small" {
		t.Errorf("Load(result.json path) = %v, %v; want the same run", run2, err)
	}
}
