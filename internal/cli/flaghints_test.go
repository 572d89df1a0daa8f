package cli

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/sharebench/sharebench/loadgen"
	"github.com/sharebench/sharebench/loadgen/targets"
	"github.com/sharebench/sharebench/loadgen/targets/enginetarget"
	"github.com/sharebench/sharebench/loadgen/targets/kafkatarget"
	"github.com/sharebench/sharebench/vocab"
)

// TestFlagHints: the packages below the CLI name what is missing in their
// own terms; the CLI adds the flags that give it, and keeps their error in
// the chain.
func TestFlagHints(t *testing.T) {
	t.Parallel()
	unreachable := &kafkatarget.UnreachableError{Brokers: "a:1", Cause: "connection refused"}
	for _, tc := range []struct {
		name  string
		err   error
		hint  func(error) error
		want  []string
		cause error
	}{
		{"unreachable brokers", unreachable, kafkaNewErr,
			[]string{"kafka: cannot reach brokers a:1: connection refused", "check --brokers", "omit --brokers"}, unreachable},
		{"security options without brokers", kafkatarget.ErrSecurityWithoutBrokers, kafkaNewErr,
			[]string{"--sasl-* and --tls* need --brokers"}, kafkatarget.ErrSecurityWithoutBrokers},
		{"a fault without control of the target", fmt.Errorf("%w: %w: fault %q", loadgen.ErrBadConfig, loadgen.ErrNoFaultControl, "broker-restart"), runFlagHints,
			[]string{`fault "broker-restart"`, "--broker-control", "--data-dir"}, loadgen.ErrBadConfig},
		{"an engine fault without a data directory", fmt.Errorf("engine target: %w: fault %q", enginetarget.ErrNeedsDataDir, "engine-restart"), runFlagHints,
			[]string{`fault "engine-restart"`, "run with --data-dir"}, enginetarget.ErrNeedsDataDir},
		{"a mode the brokers cannot run", &kafkatarget.UnsupportedModeError{Mode: vocab.ClassicEOS, Needs: "transactions", Instead: []vocab.Mode{vocab.Implicit, vocab.Explicit}}, runFlagHints,
			[]string{"mode classic-eos needs transactions", "run the implicit or explicit mode", "pass --modes implicit,explicit"}, targets.ErrUnsupported},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.hint(tc.err)
			for _, w := range tc.want {
				if !strings.Contains(got.Error(), w) {
					t.Errorf("error %q does not say %q", got, w)
				}
			}
			if !errors.Is(got, tc.cause) {
				t.Errorf("error %q lost %v from its chain", got, tc.cause)
			}
			if strings.Contains(tc.err.Error(), "--") {
				t.Errorf("the package's own error %q names a flag", tc.err)
			}
		})
	}
}
