// FindCoordinator: v0-6.
//
// The server coordinates every group (classic and share) and every
// transactional id: the answer is always node 0. Key type 2 (share
// coordinator keys, "group:topicId:partition") gets the same answer. The
// error message is "NONE", as Kafka answers a found coordinator (its
// Errors.NONE.message()), never null.

package serve

import (
	"github.com/twmb/franz-go/pkg/kmsg"
)

// noErrorMessage is Kafka's message of error code 0.
const noErrorMessage = "NONE"

func init() { register(int16(kmsg.FindCoordinator), 0, 6, (*Server).handleFindCoordinator) }

func (s *Server) handleFindCoordinator(_ *conn, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.FindCoordinatorRequest)
	resp := req.ResponseKind().(*kmsg.FindCoordinatorResponse)
	if req.Version <= 3 {
		resp.NodeID, resp.Host, resp.Port = nodeID, s.host, s.port
		resp.ErrorMessage = kmsg.StringPtr(noErrorMessage)
		return resp, nil
	}
	for _, k := range req.CoordinatorKeys {
		c := kmsg.NewFindCoordinatorResponseCoordinator()
		c.Key, c.NodeID, c.Host, c.Port = k, nodeID, s.host, s.port
		c.ErrorMessage = kmsg.StringPtr(noErrorMessage)
		resp.Coordinators = append(resp.Coordinators, c)
	}
	return resp, nil
}
