// FindCoordinator: v0-6.
//
// The server coordinates every group (classic and share) and every
// transactional id: the answer is always node 0. Key type 2 (share
// coordinator keys, "group:topicId:partition") gets the same answer.

package serve

import (
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(int16(kmsg.FindCoordinator), 0, 6, (*Server).handleFindCoordinator) }

func (s *Server) handleFindCoordinator(_ *conn, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.FindCoordinatorRequest)
	resp := req.ResponseKind().(*kmsg.FindCoordinatorResponse)
	if req.Version <= 3 {
		resp.NodeID, resp.Host, resp.Port = nodeID, s.host, s.port
		return resp, nil
	}
	for _, k := range req.CoordinatorKeys {
		c := kmsg.NewFindCoordinatorResponseCoordinator()
		c.Key, c.NodeID, c.Host, c.Port = k, nodeID, s.host, s.port
		resp.Coordinators = append(resp.Coordinators, c)
	}
	return resp, nil
}
