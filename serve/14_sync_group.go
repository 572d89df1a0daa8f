// SyncGroup: v0-5.
//
// The leader's assignments complete the round; the other members wait for
// them. A stale generation is ILLEGAL_GENERATION; a sync during a join
// round is REBALANCE_IN_PROGRESS.

package serve

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(int16(kmsg.SyncGroup), 0, 5, (*Server).handleSyncGroup) }

func (s *Server) handleSyncGroup(c *conn, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.SyncGroupRequest)
	resp := req.ResponseKind().(*kmsg.SyncGroupResponse)
	g := s.classicGroup(req.Group, false)
	if g == nil {
		resp.ErrorCode = kerr.UnknownMemberID.Code
		return resp, nil
	}
	g.mu.Lock()
	m, ok := g.members[req.MemberID]
	switch {
	case !ok:
		resp.ErrorCode = kerr.UnknownMemberID.Code
	case req.Generation != g.generation:
		resp.ErrorCode = kerr.IllegalGeneration.Code
	case g.state == groupPreparing:
		resp.ErrorCode = kerr.RebalanceInProgress.Code
	}
	if resp.ErrorCode != 0 {
		g.mu.Unlock()
		return resp, nil
	}
	m.lastSeen = timeNow()
	if req.MemberID == g.leader && g.state == groupCompleting {
		for _, a := range req.GroupAssignment {
			if mm := g.members[a.MemberID]; mm != nil {
				mm.assignment = a.MemberAssignment
			}
		}
		g.state = groupStable
		close(g.syncDone)
	}
	done, gen := g.syncDone, g.generation
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
	m, ok = g.members[req.MemberID]
	if !ok || g.generation != gen {
		resp.ErrorCode = kerr.RebalanceInProgress.Code
		return resp, nil
	}
	pt, proto := g.protocolType, g.protocol
	resp.ProtocolType, resp.Protocol = &pt, &proto
	resp.MemberAssignment = m.assignment
	if resp.MemberAssignment == nil {
		resp.MemberAssignment = []byte{}
	}
	return resp, nil
}
