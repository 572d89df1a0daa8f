// This file tests that the flags a newcomer gets wrong are refused with one
// line naming the flag and the fix, and exit 2, before anything runs.

package cli_test

import (
	"strings"
	"testing"

	"github.com/sharebench/sharebench/reports"
)

func TestStrictFlags(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args []string
		want string // in the one error line
	}{
		{[]string{"run", "--modes", ""}, "--modes is empty"},
		{[]string{"run", "--modes", " "}, "--modes is empty"},
		{[]string{"run", "--modes", "explicit,explicit"}, "explicit is named twice"},
		{[]string{"run", "--modes", "explicit, transactional,explicit"}, "explicit is named twice"},
		{[]string{"run", "--shards", "0"}, "--shards 0: must be at least 1"},
		{[]string{"run", "--shards", "-1"}, "--shards -1: must be at least 1"},
		{[]string{"run", "--workload", "testdata/unset-var.yaml"}, "SHAREBENCH_TEST_SURELY_UNSET_DURATION is not set"},
	}
	for _, tc := range tests {
		o := sharebench(t, tc.args...)
		ls := lines(o.stderr)
		if o.code != reports.ExitUsage || len(ls) != 1 || !strings.Contains(ls[0], tc.want) {
			t.Errorf("%q: want exit 2 and one line containing %q, got %v", tc.args, tc.want, o)
		}
	}
}

func TestVersionFlag(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"--version"}, {"version"}} {
		o := sharebench(t, args...)
		// A test binary carries no module version: "devel".
		if o.code != reports.ExitOK || !strings.HasPrefix(o.stdout, "sharebench devel (commit ") {
			t.Errorf("%q: %v", args, o)
		}
	}
}
