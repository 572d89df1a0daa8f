// This file keeps docs/cli.md equal to what the command table prints.

package cli_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sharebench/sharebench/internal/cli"
)

var updateReference = flag.Bool("update", false, "rewrite docs/cli.md from the command table")

// TestCLIReference: docs/cli.md is every command's --help as the binary
// prints it; -update rewrites it.
func TestCLIReference(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	if err := cli.WriteReference(&b); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("..", "..", "docs", "cli.md")
	if *updateReference {
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v; write it with: go test ./internal/cli -run TestCLIReference -update", err)
	}
	if !bytes.Equal(b.Bytes(), want) {
		t.Errorf("docs/cli.md differs from the flags the commands have; rewrite it with: go test ./internal/cli -run TestCLIReference -update")
	}
	// Every flag a command takes is in the reference.
	for _, name := range []string{"run", "serve", "verify", "gate", "compare", "report", "sim", "workloads"} {
		o := sharebench(t, name, "--help")
		for _, line := range strings.Split(o.stdout, "\n") {
			if f := strings.Fields(line); len(f) > 0 && strings.HasPrefix(f[0], "--") && !bytes.Contains(want, []byte(f[0])) {
				t.Errorf("%s: flag %s is not in docs/cli.md", name, f[0])
			}
		}
	}
}
