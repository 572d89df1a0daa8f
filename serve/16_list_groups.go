// ListGroups: v0-5.
//
// Classic groups (the server's and those the engine holds offsets of) and
// share groups (type "share", protocol type "share"), filtered by state
// (v4+) and type (v5+).

package serve

import (
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(int16(kmsg.ListGroups), 0, 5, (*Server).handleListGroups) }

func (s *Server) handleListGroups(_ *conn, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.ListGroupsRequest)
	resp := req.ResponseKind().(*kmsg.ListGroupsResponse)
	type entry struct{ id, protocolType, state, typ string }
	seen := map[string]entry{}
	for _, id := range s.e.ClassicGroups() {
		seen[id] = entry{id, "consumer", "Empty", "classic"}
	}
	s.state.mu.Lock()
	classic := make([]*group, 0, len(s.state.mu.classic))
	for _, g := range s.state.mu.classic {
		classic = append(classic, g)
	}
	shareIDs := sortedKeys(s.state.mu.share)
	s.state.mu.Unlock()
	for _, g := range classic {
		g.mu.Lock()
		pt := g.protocolType
		if pt == "" {
			pt = "consumer"
		}
		seen[g.id] = entry{g.id, pt, g.state.String(), "classic"}
		g.mu.Unlock()
	}
	for _, id := range append(s.e.ShareGroups(), shareIDs...) {
		state := "Empty"
		if len(s.groupMembers(id)) > 0 {
			state = "Stable"
		}
		seen[id] = entry{id, "share", state, "share"}
	}
	for _, id := range sortedKeys(seen) {
		e := seen[id]
		if len(req.StatesFilter) > 0 && !slices.ContainsFunc(req.StatesFilter, func(f string) bool { return strings.EqualFold(f, e.state) }) {
			continue
		}
		if len(req.TypesFilter) > 0 && !slices.ContainsFunc(req.TypesFilter, func(f string) bool { return strings.EqualFold(f, e.typ) }) {
			continue
		}
		rg := kmsg.NewListGroupsResponseGroup()
		rg.Group, rg.ProtocolType, rg.GroupState, rg.GroupType = e.id, e.protocolType, e.state, e.typ
		resp.Groups = append(resp.Groups, rg)
	}
	return resp, nil
}
