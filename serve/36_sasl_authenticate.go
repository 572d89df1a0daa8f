// SaslAuthenticate: v0-2, served only on a SASL listener.
//
// Carries one token of the exchange SaslHandshake v1 chose. A failed
// exchange answers SASL_AUTHENTICATION_FAILED with a message and closes
// the connection; one without a handshake before it, or after it
// succeeded, answers ILLEGAL_SASL_STATE and closes, as Kafka does.
// Sessions do not expire (SessionLifetimeMillis 0).

package serve

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

var saslAuthenticateAPI = api{min: 0, max: 2, fn: (*Server).handleSaslAuthenticate}

func (s *Server) handleSaslAuthenticate(c *conn, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.SASLAuthenticateRequest)
	resp := req.ResponseKind().(*kmsg.SASLAuthenticateResponse)
	if c.sasl.mech == "" || c.sasl.raw || c.authed.Load() {
		resp.ErrorCode = kerr.IllegalSaslState.Code
		resp.ErrorMessage = msg(kerr.IllegalSaslState)
		c.closeAfter = true
		s.logf("closing %s: SaslAuthenticate without a SaslHandshake v1 before it, or after authentication", c.nc.RemoteAddr())
		return resp, nil
	}
	reply, err := s.saslStep(c, req.SASLAuthBytes)
	if err != nil {
		resp.ErrorCode = kerr.SaslAuthenticationFailed.Code
		resp.ErrorMessage = msg(err)
		c.closeAfter = true
		s.logf("closing %s: %v", c.nc.RemoteAddr(), err)
		return resp, nil
	}
	resp.SASLAuthBytes = reply
	return resp, nil
}
