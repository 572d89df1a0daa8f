// DescribeGroups: v0-5.
//
// Classic groups: state, protocol and members (with their metadata and
// assignments). A group that holds only committed offsets (none of its
// members is connected, or the server restarted) is Empty; a share group id
// or an unknown one is Dead, as Kafka answers for an id it has no classic
// group under.

package serve

import (
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(int16(kmsg.DescribeGroups), 0, 5, (*Server).handleDescribeGroups) }

func (s *Server) handleDescribeGroups(_ *conn, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.DescribeGroupsRequest)
	resp := req.ResponseKind().(*kmsg.DescribeGroupsResponse)
	engineGroups := s.e.ClassicGroups()
	for _, id := range req.Groups {
		rg := kmsg.NewDescribeGroupsResponseGroup()
		rg.Group, rg.AuthorizedOperations = id, -2147483648
		g := s.classicGroup(id, false)
		if g == nil {
			rg.State = "Dead"
			if slices.Contains(engineGroups, id) {
				rg.State = "Empty"
			}
			resp.Groups = append(resp.Groups, rg)
			continue
		}
		g.mu.Lock()
		rg.State, rg.ProtocolType, rg.Protocol = g.state.String(), g.protocolType, g.protocol
		for _, id := range sortedKeys(g.members) {
			m := g.members[id]
			rm := kmsg.NewDescribeGroupsResponseGroupMember()
			rm.MemberID, rm.InstanceID, rm.ClientID, rm.ClientHost = m.id, m.instanceID, m.clientID, m.host
			rm.ProtocolMetadata, rm.MemberAssignment = m.metadata(g.protocol), m.assignment
			if rm.MemberAssignment == nil {
				rm.MemberAssignment = []byte{}
			}
			rg.Members = append(rg.Members, rm)
		}
		g.mu.Unlock()
		resp.Groups = append(resp.Groups, rg)
	}
	return resp, nil
}
