// ShareGroupDescribe: v1.
//
// The members the server tracks, with their epochs, subscriptions and
// assignments; the group epoch is the highest member epoch. A group the
// engine knows without members is Empty; an unknown one is
// GROUP_ID_NOT_FOUND.

package serve

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(int16(kmsg.ShareGroupDescribe), 1, 1, (*Server).handleShareGroupDescribe) }

func (s *Server) handleShareGroupDescribe(_ *conn, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.ShareGroupDescribeRequest)
	resp := req.ResponseKind().(*kmsg.ShareGroupDescribeResponse)
	for _, id := range req.GroupIDs {
		rg := kmsg.NewShareGroupDescribeResponseGroup()
		rg.GroupID, rg.Assignor, rg.AuthorizedOperations = id, "simple", -2147483648
		members := s.groupMembers(id)
		if len(members) == 0 {
			if !s.isShareGroup(id) {
				rg.ErrorCode = kerr.GroupIDNotFound.Code
			}
			rg.GroupState = "Empty"
			resp.Groups = append(resp.Groups, rg)
			continue
		}
		rg.GroupState = "Stable"
		for _, m := range members {
			m.mu.Lock()
			rm := kmsg.NewShareGroupDescribeResponseGroupMember()
			rm.MemberID, rm.MemberEpoch, rm.ClientID, rm.ClientHost = m.id, m.epochLocked(), m.clientID, m.host
			rm.SubscribedTopicNames = m.subscribed
			for t, ps := range s.assignmentLocked(m) {
				at := kmsg.NewShareGroupDescribeResponseGroupMemberAssignmentTopicPartition()
				at.TopicID, at.Topic, at.Partitions = s.topicID(t), t, ps
				rm.Assignment.TopicPartitions = append(rm.Assignment.TopicPartitions, at)
			}
			rg.GroupEpoch = max(rg.GroupEpoch, rm.MemberEpoch)
			m.mu.Unlock()
			rg.Members = append(rg.Members, rm)
		}
		rg.AssignmentEpoch = rg.GroupEpoch
		resp.Groups = append(resp.Groups, rg)
	}
	return resp, nil
}
