// This file tests that --command-config errors name the flag, the file, the
// line and the property in one usage line (the translation itself is
// tested in loadgen/targets/kafkatarget).

package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sharebench/sharebench/reports"
)

func TestCommandConfigErrorNamesFlagAndLine(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, tc := range []struct {
		name, text, want string
	}{
		{"unsupported", "security.protocol=SSL\nclient.id=x\n", "client.properties:2: client.id: not supported by sharebench"},
		{"no-name", "=x\n", "client.properties: line 1: no property name before the value"},
	} {
		path := filepath.Join(dir, tc.name, "client.properties")
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(tc.text), 0o644); err != nil {
			t.Fatal(err)
		}
		o := sharebench(t, "run", "--target", "kafka", "--command-config", path)
		ls := lines(o.stderr)
		want := "sharebench run: --command-config " + filepath.Join(dir, tc.name, tc.want)
		if o.code != reports.ExitUsage || len(ls) != 1 || !strings.HasPrefix(ls[0], want) {
			t.Errorf("%s: got exit %d, stderr %q; want exit %d and one line starting %q", tc.name, o.code, o.stderr, reports.ExitUsage, want)
		}
	}
}
