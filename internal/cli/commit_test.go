// This file tests where the recorded commit comes from: the binary's build
// information only, never git in the current directory.

package cli

import (
	"os"
	"runtime/debug"
	"strings"
	"testing"
)

func TestCommitFromBuildInfoOnly(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		settings []debug.BuildSetting
		want     string
	}{
		{nil, "unknown"},
		{[]debug.BuildSetting{{Key: "vcs.revision", Value: "0123456789abcdef0123"}}, "0123456789ab"},
		{[]debug.BuildSetting{{Key: "vcs.revision", Value: "0123456789abcdef"}, {Key: "vcs.modified", Value: "true"}}, "0123456789ab-dirty"},
		{[]debug.BuildSetting{{Key: "vcs.modified", Value: "true"}}, "unknown"},
	} {
		if got := commitOf(tc.settings); got != tc.want {
			t.Errorf("commitOf(%v) = %q, want %q", tc.settings, got, tc.want)
		}
	}
	// The CLI never runs git: no file of the package imports os/exec
	// except the broker-control shell.
	files, _ := os.ReadDir(".")
	for _, f := range files {
		if !strings.HasSuffix(f.Name(), ".go") || strings.HasSuffix(f.Name(), "_test.go") || f.Name() == "shell.go" {
			continue
		}
		b, err := os.ReadFile(f.Name())
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), `"os/exec"`) {
			t.Errorf("%s imports os/exec: the commit must come from the build information only", f.Name())
		}
	}
}
