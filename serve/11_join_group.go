// JoinGroup: v0-9.
//
// v4+ members without an id get MEMBER_ID_REQUIRED with one to rejoin with.
// A join starts a round (or joins the running one) and waits until it
// completes; the leader's response lists the members and their metadata
// for the chosen protocol. Static membership (instance ids) is accepted
// and treated as dynamic.

package serve

import (
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() {
	register(int16(kmsg.JoinGroup), 0, 9, (*Server).handleJoinGroup)
	// Rebalance bookkeeping (sweepGroups) starts with the first server.
}

func (s *Server) handleJoinGroup(c *conn, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.JoinGroupRequest)
	resp := req.ResponseKind().(*kmsg.JoinGroupResponse)
	resp.Generation = -1
	if req.Group == "" {
		resp.ErrorCode = kerr.InvalidGroupID.Code
		return resp, nil
	}
	if s.isShareGroup(req.Group) {
		resp.ErrorCode = kerr.InconsistentGroupProtocol.Code
		return resp, nil
	}
	if req.SessionTimeoutMillis < 1000 || req.SessionTimeoutMillis > 30*60*1000 {
		resp.ErrorCode = kerr.InvalidSessionTimeout.Code
		return resp, nil
	}
	if req.MemberID == "" && req.Version >= 4 {
		resp.MemberID = newMemberID(c.clientID)
		resp.ErrorCode = kerr.MemberIDRequired.Code
		return resp, nil
	}
	g := s.classicGroup(req.Group, true)
	g.mu.Lock()
	if g.protocolType != "" && len(g.members) > 0 && g.protocolType != req.ProtocolType {
		g.mu.Unlock()
		resp.ErrorCode = kerr.InconsistentGroupProtocol.Code
		return resp, nil
	}
	g.protocolType = req.ProtocolType
	id := req.MemberID
	if id == "" {
		id = newMemberID(c.clientID)
	}
	m := g.members[id]
	if m == nil {
		m = &gmember{id: id}
		g.members[id] = m
	}
	m.instanceID, m.clientID, m.host = req.InstanceID, c.clientID, c.nc.RemoteAddr().String()
	m.protocols = req.Protocols
	m.sessionTimeout = time.Duration(req.SessionTimeoutMillis) * time.Millisecond
	m.rebalanceTimeout = m.sessionTimeout
	if req.Version >= 1 {
		m.rebalanceTimeout = time.Duration(req.RebalanceTimeoutMillis) * time.Millisecond
	}
	m.lastSeen = time.Now()
	g.startRoundLocked()
	m.joined = true
	done := g.joinDone
	g.maybeCompleteLocked()
	g.mu.Unlock()

	select {
	case <-done:
	case <-c.gone:
		return nil, errConnClosed
	case <-s.closing:
		return nil, errConnClosed
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if _, ok := g.members[id]; !ok {
		resp.ErrorCode = kerr.UnknownMemberID.Code
		return resp, nil
	}
	resp.Generation = g.generation
	pt, proto := g.protocolType, g.protocol
	resp.ProtocolType, resp.Protocol = &pt, &proto
	resp.LeaderID, resp.MemberID = g.leader, id
	if id == g.leader {
		for _, mm := range g.members {
			rm := kmsg.NewJoinGroupResponseMember()
			rm.MemberID, rm.InstanceID, rm.ProtocolMetadata = mm.id, mm.instanceID, mm.metadata(g.protocol)
			resp.Members = append(resp.Members, rm)
		}
	}
	return resp, nil
}
