// SaslHandshake: v0-1, served only on a SASL listener (WithSASLUser,
// WithSASLUsersFile).
//
// Picks the connection's mechanism and lists the enabled ones. v1 is
// followed by SaslAuthenticate requests, v0 by bare size-prefixed tokens
// (sasl.go). An unsupported mechanism answers UNSUPPORTED_SASL_MECHANISM
// and a second handshake ILLEGAL_SASL_STATE; both then close the
// connection, as Kafka does.

package serve

import (
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

var saslHandshakeAPI = api{min: 0, max: 1, fn: (*Server).handleSaslHandshake}

func (s *Server) handleSaslHandshake(c *conn, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.SASLHandshakeRequest)
	resp := req.ResponseKind().(*kmsg.SASLHandshakeResponse)
	resp.SupportedMechanisms = s.sasl.mechs
	switch {
	case c.authed.Load() || c.sasl.mech != "":
		resp.ErrorCode = kerr.IllegalSaslState.Code
		c.closeAfter = true
	case !slices.Contains(s.sasl.mechs, req.Mechanism):
		resp.ErrorCode = kerr.UnsupportedSaslMechanism.Code
		c.closeAfter = true
	default:
		c.sasl.mech, c.sasl.raw = req.Mechanism, req.Version == 0
	}
	if c.closeAfter {
		s.logf("closing %s: SaslHandshake for %q: %s", c.nc.RemoteAddr(), req.Mechanism, kerr.ErrorForCode(resp.ErrorCode))
	}
	return resp, nil
}
