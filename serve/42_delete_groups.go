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
		return errCode(s.e.DeleteGroup(id))
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
