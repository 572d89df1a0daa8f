// This file tests the classification of a failed first contact: a refused
// login or mechanism and an untrusted certificate are security errors that
// never hold the password; anything else is not.

package kafkatarget

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
)

func TestSecurityError(t *testing.T) {
	t.Parallel()
	o := Options{SASLMechanism: SASLScramSHA512, SASLUser: "bob", SASLPassword: "s3cr"}
	for _, tc := range []struct {
		name string
		err  error
		want SecurityFailure // 0: not a security error
		says []string
	}{
		{"login refused", fmt.Errorf("sasl: %w", kerr.SaslAuthenticationFailed), LoginRefused,
			[]string{`the SASL SCRAM-SHA-512 login of user "bob" was refused`, "SASL_AUTHENTICATION_FAILED", "check the SASL user and password"}},
		{"mechanism refused", kerr.UnsupportedSaslMechanism, MechanismRefused,
			[]string{"SCRAM-SHA-512 is not enabled", "a mechanism the listener enables"}},
		{"unknown authority", &tls.CertificateVerificationError{Err: x509.UnknownAuthorityError{}}, CertificateUntrusted,
			[]string{"certificate is not trusted", "x509: certificate signed by unknown authority", "trust the CA"}},
		{"host name", x509.HostnameError{Certificate: &x509.Certificate{}, Host: "10.0.0.1"}, CertificateUntrusted,
			[]string{"certificate is not trusted", "10.0.0.1"}},
		{"refused connection", errors.New("dial tcp 127.0.0.1:1: connect: connection refused"), 0, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			se := securityError("b:9094", o, tc.err)
			if tc.want == 0 {
				if se != nil {
					t.Fatalf("got %v, want no security error", se)
				}
				return
			}
			if se == nil || se.Failure != tc.want {
				t.Fatalf("got %#v, want failure %d", se, tc.want)
			}
			msg := se.Error()
			for _, w := range append(tc.says, "kafka: brokers b:9094: ") {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q lacks %q", msg, w)
				}
			}
			if strings.Contains(msg, "s3cr") {
				t.Errorf("error holds the password: %q", msg)
			}
		})
	}
}
