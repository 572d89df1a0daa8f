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
	refused := &kafkatarget.SecurityError{Brokers: "a:1", Failure: kafkatarget.LoginRefused, Mechanism: "PLAIN", User: "alice", Cause: "SASL_AUTHENTICATION_FAILED"}
	untrusted := &kafkatarget.SecurityError{Brokers: "a:1", Failure: kafkatarget.CertificateUntrusted, Cause: "x509: certificate signed by unknown authority"}
	mechanism := &kafkatarget.SecurityError{Brokers: "a:1", Failure: kafkatarget.MechanismRefused, Mechanism: "SCRAM-SHA-512", Cause: "UNSUPPORTED_SASL_MECHANISM"}
	flags := securityInputs{credentials: "--sasl-user and --sasl-password-file", mechanism: "--sasl-mechanism", ca: "--tls-ca"}
	file := securityInputs{credentials: propertyInput("c.properties", "sasl.password", "sasl.jaas.config"), mechanism: "--command-config c.properties: sasl.mechanism",
		ca: propertyInput("c.properties", "", "ssl.truststore.location (or ssl.ca.location)")}
	newErr := func(in securityInputs) func(error) error {
		return func(err error) error { return kafkaNewErr(err, in) }
	}
	for _, tc := range []struct {
		name  string
		err   error
		hint  func(error) error
		want  []string
		cause error
	}{
		{"unreachable brokers", unreachable, newErr(flags),
			[]string{"kafka: cannot reach brokers a:1: connection refused", "check --brokers", "omit --brokers"}, unreachable},
		{"security options without brokers", kafkatarget.ErrSecurityWithoutBrokers, newErr(flags),
			[]string{"--sasl-* and --tls* need --brokers"}, kafkatarget.ErrSecurityWithoutBrokers},
		{"login refused, flags", refused, newErr(flags),
			[]string{`kafka: brokers a:1: the SASL PLAIN login of user "alice" was refused (SASL_AUTHENTICATION_FAILED)`, "fix the user name or password in --sasl-user and --sasl-password-file"}, refused},
		{"login refused, properties", refused, newErr(file),
			[]string{"fix the user name or password in --command-config c.properties: sasl.password"}, refused},
		{"mechanism refused, properties", mechanism, newErr(file),
			[]string{"SCRAM-SHA-512 is not enabled", "set --command-config c.properties: sasl.mechanism to a mechanism the listener enables"}, mechanism},
		{"certificate untrusted, flags", untrusted, newErr(flags),
			[]string{"certificate is not trusted (x509: certificate signed by unknown authority)", "trust the CA that signed the brokers' certificates: --tls-ca"}, untrusted},
		{"certificate untrusted, properties without a CA", untrusted, newErr(file),
			[]string{"--command-config c.properties: add ssl.truststore.location (or ssl.ca.location)"}, untrusted},
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
