// This file lints the default suite's test files for comparisons of a
// wall-clock figure with a threshold.

package testsuite

import (
	"go/ast"
	"go/build/constraint"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// clockFuncs are the time package's functions that read the wall clock.
var clockFuncs = map[string]bool{"Since": true, "Until": true}

// clockFields are the selectors that hold a measured time or rate: a
// run's throughput and rates, its measured durations and its latency
// percentiles.
var clockFields = map[string]bool{
	"Throughput": true, "InputRate": true, "OutputRate": true, "Elapsed": true,
	"MeasuredNs": true, "DrainNs": true, "Seconds": true, "Milliseconds": true,
	"Min": true, "Max": true, "Mean": true,
	"P50": true, "P90": true, "P99": true, "P999": true, "P9999": true,
}

// allowMark on a comparison's line, with the reason after it, says the
// comparison cannot be broken by load (a lower bound that load only
// lengthens, a figure from a manual clock).
const allowMark = "wallclock:"

// TestNoWallClockThresholds fails on a comparison (<, <=, >, >=) of a
// wall-clock figure in a test file of the default suite, unless its line
// says why load cannot break it.
func TestNoWallClockThresholds(t *testing.T) {
	root := repoRoot(t)
	var found []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "testdata", ".cache", "node_modules":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, "_test.go") || path == selfPath(t) {
			return nil
		}
		found = append(found, lintFile(t, root, path)...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range found {
		t.Errorf("%s", f)
	}
	if len(found) > 0 {
		t.Logf("a test of the default suite compares a wall-clock figure with a threshold: load breaks it without a bug. Measure it in a benchmark, move the test to the long tier (//go:build long, a TestLong name), or, if load cannot break it (a lower bound, a manual clock), end the line with // %s REASON", allowMark)
	}
}

// lintFile returns the flagged comparisons of one file, or none when the
// file is not in the default suite.
func lintFile(t *testing.T, root, path string) []string {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, src, parser.ParseComments)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if !inDefaultSuite(f) {
		return nil
	}
	lines := strings.Split(string(src), "\n")
	rel, _ := filepath.Rel(root, path)
	var out []string
	for _, decl := range f.Decls {
		fn, ok := decl.(*ast.FuncDecl)
		if !ok || fn.Body == nil || strings.HasPrefix(fn.Name.Name, "Benchmark") {
			continue
		}
		clocky := clockyIdents(fn.Body)
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			be, ok := n.(*ast.BinaryExpr)
			if !ok {
				return true
			}
			switch be.Op {
			case token.LSS, token.LEQ, token.GTR, token.GEQ:
			default:
				return true
			}
			// A threshold is a measured figure on one side only: two
			// figures compared (a histogram's percentiles in order) and a
			// figure against zero (it was measured at all) are not.
			if isClocky(be.X, clocky) == isClocky(be.Y, clocky) || isZero(be.X) || isZero(be.Y) {
				return true
			}
			pos := fset.Position(be.Pos())
			if line := lines[pos.Line-1]; strings.Contains(line, "// "+allowMark) {
				return true
			}
			out = append(out, rel+":"+strconv.Itoa(pos.Line)+": "+strings.TrimSpace(lines[pos.Line-1]))
			return true
		})
	}
	return out
}

// clockyIdents are the names a function assigns from a wall-clock figure,
// directly or through another such name.
func clockyIdents(body *ast.BlockStmt) map[string]bool {
	clocky := map[string]bool{}
	for changed := true; changed; {
		changed = false
		ast.Inspect(body, func(n ast.Node) bool {
			as, ok := n.(*ast.AssignStmt)
			if !ok || len(as.Lhs) != len(as.Rhs) {
				return true
			}
			for i, rhs := range as.Rhs {
				id, ok := as.Lhs[i].(*ast.Ident)
				if ok && !clocky[id.Name] && isClocky(rhs, clocky) {
					clocky[id.Name] = true
					changed = true
				}
			}
			return true
		})
	}
	return clocky
}

// isClocky reports whether e reads a wall-clock figure.
func isClocky(e ast.Expr, clocky map[string]bool) bool {
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.Ident:
			if clocky[n.Name] {
				found = true
			}
		case *ast.SelectorExpr:
			if x, ok := n.X.(*ast.Ident); ok && x.Name == "time" && clockFuncs[n.Sel.Name] {
				found = true
			}
			if clockFields[n.Sel.Name] {
				found = true
			}
		}
		return !found
	})
	return found
}

// isZero reports whether e is the literal 0.
func isZero(e ast.Expr) bool {
	lit, ok := e.(*ast.BasicLit)
	return ok && (lit.Value == "0" || lit.Value == "0.0")
}

// inDefaultSuite reports whether plain go test builds the file: its build
// constraint holds with no tags but the platform's.
func inDefaultSuite(f *ast.File) bool {
	for _, cg := range f.Comments {
		if cg.Pos() > f.Package {
			break
		}
		for _, c := range cg.List {
			if !constraint.IsGoBuild(c.Text) {
				continue
			}
			expr, err := constraint.Parse(c.Text)
			if err != nil {
				return true
			}
			return expr.Eval(func(tag string) bool {
				switch tag {
				case runtime.GOOS, runtime.GOARCH, "gc", "cgo":
					return true
				case "unix":
					return runtime.GOOS != "windows" && runtime.GOOS != "plan9"
				}
				return strings.HasPrefix(tag, "go1.")
			})
		}
	}
	return true
}

func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}

// selfPath is this file: its own tables name the fields it looks for.
func selfPath(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(wd, "wallclock_test.go")
}

// TestLintFindsThresholds: the lint flags a threshold on an elapsed time,
// on a rate read through a variable and on a percentile, and leaves alone
// a percentile order, a check against zero, an allowed lower bound, a
// benchmark and a file outside the default suite.
func TestLintFindsThresholds(t *testing.T) {
	dir := t.TempDir()
	write := func(name, src string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	flagged := write("a_test.go", `package a

func TestA(t *testing.T) {
	if time.Since(start) > 2*time.Second {
	}
	r := m.Throughput / m.InputRate
	if r < 0.8 {
	}
	if h.P99 > limit {
	}
	if h.P50 <= h.P99 || m.Throughput <= 0 {
	}
	if h.Min < floor { // wallclock: a lower bound
	}
}

func BenchmarkA(b *testing.B) {
	if time.Since(start) > time.Second {
	}
}
`)
	got := lintFile(t, dir, flagged)
	if len(got) != 3 {
		t.Errorf("flagged %d comparisons, want 3 (elapsed, rate, percentile): %q", len(got), got)
	}
	tagged := write("b_test.go", "//go:build long\n\npackage a\n\nfunc TestB(t *testing.T) {\n\tif time.Since(start) > time.Second {\n\t}\n}\n")
	if got := lintFile(t, dir, tagged); len(got) != 0 {
		t.Errorf("flagged a file of the long tier: %q", got)
	}
}
