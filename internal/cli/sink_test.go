package cli_test

import (
	"strings"
	"testing"

	"github.com/sharebench/sharebench/reports"
)

// TestRunSinkBadInput: --sink on a workload without the checkpoint model,
// and a sink URL that names nothing, are usage errors of one line naming
// the flag.
func TestRunSinkBadInput(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--workload", tinyWorkload, "--sink", "memory"}, "does not use the checkpoint model"},
		{[]string{"--workload", "checkpoint", "--sink", "mysql://localhost/x"}, "--sink: sink: unknown sink"},
	} {
		args := append([]string{"run", "--out", t.TempDir(), "--quiet", "--no-report", "--duration", "1s"}, tc.args...)
		o := sharebench(t, args...)
		if o.code != reports.ExitUsage {
			t.Errorf("%v: exit %d, want %d: %v", tc.args, o.code, reports.ExitUsage, o)
			continue
		}
		ls := lines(o.stderr)
		if len(ls) != 1 || !strings.Contains(ls[0], tc.want) {
			t.Errorf("%v: want one line containing %q: %v", tc.args, tc.want, o)
		}
	}
}
