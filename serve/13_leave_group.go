// LeaveGroup: v0-5.
//
// Removes the members (one in v0-2, a list in v3+) and starts a join round
// for those that remain.

package serve

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(int16(kmsg.LeaveGroup), 0, 5, (*Server).handleLeaveGroup) }

func (s *Server) handleLeaveGroup(_ *conn, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.LeaveGroupRequest)
	resp := req.ResponseKind().(*kmsg.LeaveGroupResponse)
	g := s.classicGroup(req.Group, false)
	if g == nil {
		resp.ErrorCode = kerr.UnknownMemberID.Code
		return resp, nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if req.Version <= 2 {
		if _, ok := g.members[req.MemberID]; !ok {
			resp.ErrorCode = kerr.UnknownMemberID.Code
			return resp, nil
		}
		g.removeLocked(req.MemberID)
		return resp, nil
	}
	for _, lm := range req.Members {
		rm := kmsg.NewLeaveGroupResponseMember()
		rm.MemberID, rm.InstanceID = lm.MemberID, lm.InstanceID
		if _, ok := g.members[lm.MemberID]; ok {
			g.removeLocked(lm.MemberID)
		} else {
			rm.ErrorCode = kerr.UnknownMemberID.Code
		}
		resp.Members = append(resp.Members, rm)
	}
	return resp, nil
}
