// DeleteGroups: v0-2.
//
// Deletes classic consumer groups and share groups, as Kafka's group
// coordinator does: an empty id is INVALID_GROUP_ID, a group with members
// NON_EMPTY_GROUP, an unknown one GROUP_ID_NOT_FOUND. A classic group's
// committed offsets go with it; a share group's share-partition state
// goes with it (Engine.DeleteGroup), so a share group created later under
// the id starts each partition where share.auto.offset.reset says. A share
// partition holding records staged in an open transaction answers
// CONCURRENT_TRANSACTIONS until the transaction's marker resolves them.
// A deleted group is gone from the server too: ListGroups no longer lists
// it, ShareGroupDescribe answers GROUP_ID_NOT_FOUND and DescribeGroups
// Dead, as Kafka answers once a group is deleted. A share group whose
// members left the group with their share sessions still open is not
// empty to the engine, which keeps their records locked until the
// sessions close (docs/design.md §3.2), so it answers NON_EMPTY_GROUP
// until then.

package serve

import (
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sharebench/sharebench/engine"
)

func init() { register(int16(kmsg.DeleteGroups), 0, 2, (*Server).handleDeleteGroups) }

func (s *Server) handleDeleteGroups(_ *conn, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.DeleteGroupsRequest)
	resp := req.ResponseKind().(*kmsg.DeleteGroupsResponse)
	for _, id := range req.Groups {
		rg := kmsg.NewDeleteGroupsResponseGroup()
		rg.Group = id
		rg.ErrorCode = s.deleteGroup(id)
		resp.Groups = append(resp.Groups, rg)
	}
	return resp, nil
}

// deleteGroup deletes one group and returns its error code.
func (s *Server) deleteGroup(id string) int16 {
	if id == "" {
		return kerr.InvalidGroupID.Code
	}
	g := s.classicGroup(id, false)
	if g == nil {
		return s.deleteShareGroup(id)
	}
	// The group's mutex is held across the engine's deletion, so no member
	// joins the classic group meanwhile.
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.members) > 0 {
		return kerr.NonEmptyGroup.Code
	}
	err := s.e.DeleteGroup(id)
	if err != nil && !errors.Is(err, engine.ErrUnknownGroup) {
		// An empty classic group that never committed is the server's
		// alone; any other failure is the engine's.
		return errCode(err)
	}
	s.state.mu.Lock()
	if s.state.mu.classic[id] == g {
		delete(s.state.mu.classic, id)
	}
	s.state.mu.Unlock()
	return 0
}

// deleteShareGroup deletes a group the server runs no classic membership
// of: a share group, or a classic group that holds only committed
// offsets. Once the engine has deleted it, the server forgets the share
// group's member map unless a member joining meanwhile put itself there
// (the group then lives on with it). A share group the engine does not
// know, whose members never joined a topic that exists, is the server's
// alone: deleted when it has no member left.
func (s *Server) deleteShareGroup(id string) int16 {
	err := s.e.DeleteGroup(id)
	if err != nil && !errors.Is(err, engine.ErrUnknownGroup) {
		return errCode(err)
	}
	s.state.mu.Lock()
	defer s.state.mu.Unlock()
	ms, known := s.state.mu.share[id]
	switch {
	case err != nil && !known:
		return errCode(err)
	case err != nil && len(ms) > 0:
		return kerr.NonEmptyGroup.Code
	case len(ms) == 0:
		delete(s.state.mu.share, id)
	}
	return 0
}
