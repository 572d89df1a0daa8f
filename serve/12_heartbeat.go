// Heartbeat: v0-4.
//
// Keeps a classic member's session alive; during a join round the answer
// is REBALANCE_IN_PROGRESS, which makes the member rejoin.

package serve

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(int16(kmsg.Heartbeat), 0, 4, (*Server).handleHeartbeat) }

func (s *Server) handleHeartbeat(_ *conn, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.HeartbeatRequest)
	resp := req.ResponseKind().(*kmsg.HeartbeatResponse)
	g := s.classicGroup(req.Group, false)
	if g == nil {
		resp.ErrorCode = kerr.UnknownMemberID.Code
		return resp, nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	m, ok := g.members[req.MemberID]
	switch {
	case !ok:
		resp.ErrorCode = kerr.UnknownMemberID.Code
	case g.state == groupPreparing:
		m.lastSeen = timeNow()
		resp.ErrorCode = kerr.RebalanceInProgress.Code
	case req.Generation != g.generation:
		resp.ErrorCode = kerr.IllegalGeneration.Code
	default:
		m.lastSeen = timeNow()
	}
	return resp, nil
}
