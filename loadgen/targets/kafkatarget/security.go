// This file classifies a failed first contact whose cause is the
// connection's security (a refused SASL login or mechanism, an untrusted
// broker certificate), so New fails at once with an error that says what
// to fix instead of one that blames the network.

package kafkatarget

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
)

// SecurityFailure is what a broker that answered refused.
type SecurityFailure int

const (
	// LoginRefused: the SASL login failed (wrong user or password).
	LoginRefused SecurityFailure = iota + 1
	// MechanismRefused: the broker does not enable the SASL mechanism.
	MechanismRefused
	// CertificateUntrusted: the broker's TLS certificate did not verify
	// against the trusted CAs (or does not name the address dialled).
	CertificateUntrusted
)

// SecurityError is New's error when a broker answered but the connection's
// security failed: the check cannot pass by waiting, so New returns at
// once, and a caller can name the input that set the credential or the CA.
// Its text never holds the password.
type SecurityError struct {
	Brokers   string // the seed brokers, comma-separated
	Failure   SecurityFailure
	Mechanism string // Options.SASLMechanism
	User      string // Options.SASLUser
	Cause     string // the broker's or the TLS stack's words
}

func (e *SecurityError) Error() string {
	return "kafka: brokers " + e.Brokers + ": " + e.Problem() + "; " + e.Fix()
}

// Problem says what failed, without the fix.
func (e *SecurityError) Problem() string {
	switch e.Failure {
	case LoginRefused:
		return fmt.Sprintf("the SASL %s login of user %q was refused (%s)", e.Mechanism, e.User, e.Cause)
	case MechanismRefused:
		return fmt.Sprintf("the SASL mechanism %s is not enabled (%s)", e.Mechanism, e.Cause)
	}
	return fmt.Sprintf("the brokers' TLS certificate is not trusted (%s)", e.Cause)
}

// Fix says which option to change, in Options' terms.
func (e *SecurityError) Fix() string {
	switch e.Failure {
	case LoginRefused:
		return "check the SASL user and password"
	case MechanismRefused:
		return "use a mechanism the listener enables"
	}
	return "trust the CA that signed the brokers' certificates"
}

// securityError classifies a failed ping: a refused login or mechanism, or
// a certificate that did not verify; nil for anything else.
func securityError(brokers string, o Options, err error) *SecurityError {
	e := &SecurityError{Brokers: brokers, Mechanism: strings.ToUpper(o.SASLMechanism), User: o.SASLUser}
	var (
		verr     *tls.CertificateVerificationError
		unknown  x509.UnknownAuthorityError
		hostname x509.HostnameError
		invalid  x509.CertificateInvalidError
	)
	switch {
	case errors.Is(err, kerr.SaslAuthenticationFailed):
		e.Failure = LoginRefused
	case errors.Is(err, kerr.UnsupportedSaslMechanism), errors.Is(err, kerr.IllegalSaslState):
		e.Failure = MechanismRefused
	case errors.As(err, &verr) || errors.As(err, &unknown) || errors.As(err, &hostname) || errors.As(err, &invalid):
		e.Failure = CertificateUntrusted
	default:
		return nil
	}
	e.Cause = securityCause(err)
	return e
}

// securityCause is the innermost words of err that say what failed: the
// TLS stack's verification error, or the broker's error message.
func securityCause(err error) string {
	var verr *tls.CertificateVerificationError
	if errors.As(err, &verr) && verr.Err != nil {
		return verr.Err.Error()
	}
	return err.Error()
}
