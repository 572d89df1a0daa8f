// This file checks the package map's arrows: which of the module's packages
// each package may depend on (directly or through others), so an import that
// points up the map fails the default suite instead of settling in.

package testsuite

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/sharebench/sharebench/"

// arrows is the package map as rules over a package's dependency closure
// (go list -deps), in the module's own paths. only lists every module
// package the closure may hold besides the package itself (a trailing /...
// takes a whole subtree); never lists packages it must not hold.
var arrows = []struct {
	pkg   string
	why   string
	only  []string
	never []string
}{
	{pkg: "vocab", why: "the vocabulary is the leaf everything imports", only: []string{}},
	{pkg: "engine", why: "the reference engine imports nothing of sharebench", only: []string{"engine/..."}},
	{pkg: "loadgen/result", why: "the run-artifact schema is a leaf above the vocabulary", only: []string{"vocab"}},
	{pkg: "loadgen/verify", why: "the verifier is a leaf above the artifact schema", only: []string{"vocab", "loadgen/result"}},
	{pkg: "reports/...", why: "reports read artifacts and the vocabulary only", only: []string{"vocab", "loadgen/result", "reports/..."}},
	{pkg: "workloads", why: "workloads know the vocabulary, never a runner", only: []string{"vocab"}},
	{pkg: "loadgen/pipeline", why: "the worker machine is pure", only: []string{"vocab"}},
	{pkg: "loadgen/targets", why: "the target interface knows the vocabulary only", only: []string{"vocab", "loadgen/result"}},
	{pkg: "internal/sim", why: "the simulator steps the pipeline through the ledger, never the runner", never: []string{"loadgen"}},
	{pkg: "loadgen/ledger", why: "the ledger is below the runner", never: []string{"loadgen"}},
	{pkg: "loadgen/targets/kafkatarget", why: "the Kafka target is a client: it knows no server", never: []string{"serve", "engine", "engine/..."}},
}

// matches reports whether module path p (without the module prefix) is
// named by pattern: an exact path or a subtree (x/...).
func matches(pattern, p string) bool {
	switch {
	case strings.HasSuffix(pattern, "/..."):
		root := strings.TrimSuffix(pattern, "/...")
		return p == root || strings.HasPrefix(p, root+"/")
	}
	return p == pattern
}

func TestPackageArrows(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Fatalf("the go command is not on PATH (%v); the arrows are read with go list -deps", err)
	}
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..")
	for _, a := range arrows {
		t.Run(a.pkg, func(t *testing.T) {
			cmd := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", "./"+a.pkg)
			cmd.Dir = root
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("go list -deps ./%s: %v\n%s", a.pkg, err, out)
			}
			self := map[string]bool{}
			var deps []string
			for line := range strings.Lines(string(out)) {
				f := strings.Fields(line)
				if len(f) == 0 || !strings.HasPrefix(f[0], module) {
					continue
				}
				deps = append(deps, strings.TrimPrefix(f[0], module))
			}
			for _, d := range deps {
				if matches(a.pkg, d) {
					self[d] = true
				}
			}
			for _, d := range deps {
				if self[d] {
					continue
				}
				if a.only != nil && !slices.ContainsFunc(a.only, func(p string) bool { return matches(p, d) }) {
					t.Errorf("%s depends on %s: %s (allowed: %s)", a.pkg, d, a.why, strings.Join(a.only, ", "))
				}
				if slices.ContainsFunc(a.never, func(p string) bool { return matches(p, d) }) {
					t.Errorf("%s depends on %s: %s", a.pkg, d, a.why)
				}
			}
		})
	}
}
