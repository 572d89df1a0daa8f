// ShareGroupHeartbeat: v1.
//
// Epoch 0 joins (the client chooses its member id; an empty one gets a
// server id). -1 leaves the group: with no share session open the engine
// member leaves and what it held goes back to the group without counting
// a delivery; with one open, the session and its records outlive the
// leave until the session closes, as in Kafka (member.go). Any other
// epoch must be the member's current one, or the one the last response
// gave the client (else FENCED_MEMBER_EPOCH). Every member is assigned
// every partition of its subscribed topics that exist; when that set
// changes the engine member is replaced and the epoch moves on.

package serve

import (
	"errors"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sharebench/sharebench/engine"
)

func init() { register(int16(kmsg.ShareGroupHeartbeat), 1, 1, (*Server).handleShareGroupHeartbeat) }

// heartbeatInterval is group.share.heartbeat.interval.ms's default.
const heartbeatInterval = 5000

func (s *Server) handleShareGroupHeartbeat(c *conn, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.ShareGroupHeartbeatRequest)
	resp := req.ResponseKind().(*kmsg.ShareGroupHeartbeatResponse)
	resp.HeartbeatIntervalMillis = heartbeatInterval
	fail := func(code int16, err error) (kmsg.Response, error) {
		resp.ErrorCode = code
		resp.ErrorMessage = msg(err)
		return resp, nil
	}
	if req.GroupID == "" {
		return fail(kerr.InvalidGroupID.Code, nil)
	}
	if s.classicGroup(req.GroupID, false) != nil {
		return fail(kerr.GroupIDNotFound.Code, engine.ErrGroupTypeMismatch)
	}
	id := req.MemberID
	switch req.MemberEpoch {
	case -1:
		m := s.lookupMember(req.GroupID, id)
		if m == nil {
			return fail(kerr.UnknownMemberID.Code, nil)
		}
		m.mu.Lock()
		if m.left || m.gone {
			m.mu.Unlock()
			return fail(kerr.UnknownMemberID.Code, nil)
		}
		s.leaveGroupLocked(m)
		m.mu.Unlock()
		resp.MemberID, resp.MemberEpoch = &id, -1
		return resp, nil
	case 0:
		if req.SubscribedTopicNames == nil {
			return fail(kerr.InvalidRequest.Code, errors.New("serve: a joining member must name its subscribed topics"))
		}
		if id == "" {
			id = newMemberID(c.clientID)
		}
		m := &member{group: req.GroupID, id: id}
		// m is locked before it is published, so no request sees it half
		// made.
		m.mu.Lock()
		defer m.mu.Unlock()
		s.state.mu.Lock()
		g := s.state.mu.share[req.GroupID]
		if g == nil {
			g = map[string]*member{}
			s.state.mu.share[req.GroupID] = g
		}
		old := g[id]
		g[id] = m
		s.state.mu.Unlock()
		if old != nil {
			// A rejoin with epoch 0 replaces the member: the old one
			// leaves, and the new epoch continues past the old one.
			old.mu.Lock()
			m.base = old.epochLocked()
			s.leaveLockedNoMap(old)
			old.mu.Unlock()
		}
		m.subscribed = req.SubscribedTopicNames
		m.clientID, m.host, m.lastSeen = c.clientID, c.nc.RemoteAddr().String(), time.Now()
		if err := s.syncLocked(m, true); err != nil {
			s.state.mu.Lock()
			if g[id] == m {
				delete(g, id)
			}
			s.state.mu.Unlock()
			return fail(errCode(err), err)
		}
		return s.heartbeatResponseLocked(resp, m), nil
	}
	m := s.lookupMember(req.GroupID, id)
	if m == nil {
		return fail(kerr.UnknownMemberID.Code, nil)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.gone || m.left {
		return fail(kerr.UnknownMemberID.Code, nil)
	}
	if req.MemberEpoch != m.epochLocked() && req.MemberEpoch != m.reported {
		return fail(kerr.FencedMemberEpoch.Code, nil)
	}
	m.lastSeen = time.Now()
	if req.SubscribedTopicNames != nil {
		m.subscribed = req.SubscribedTopicNames
	}
	if err := s.syncLocked(m, false); err != nil {
		return fail(errCode(err), err)
	}
	if _, err := m.em.Heartbeat(); errors.Is(err, engine.ErrUnknownMember) {
		// The engine timed the member out: a fresh engine member.
		if err := s.syncLocked(m, true); err != nil {
			return fail(errCode(err), err)
		}
	} else if err != nil {
		return fail(errCode(err), err)
	}
	return s.heartbeatResponseLocked(resp, m), nil
}

func (s *Server) heartbeatResponseLocked(resp *kmsg.ShareGroupHeartbeatResponse, m *member) *kmsg.ShareGroupHeartbeatResponse {
	id := m.id
	resp.MemberID = &id
	resp.MemberEpoch = m.epochLocked()
	m.reported = resp.MemberEpoch
	a := kmsg.NewShareGroupHeartbeatResponseAssignment()
	for _, t := range sortedKeys(s.assignmentLocked(m)) {
		tp := kmsg.NewShareGroupHeartbeatResponseAssignmentTopicPartition()
		tp.TopicID = s.topicID(t)
		n, _ := s.partitions(t)
		for p := int32(0); p < n; p++ {
			tp.Partitions = append(tp.Partitions, p)
		}
		a.TopicPartitions = append(a.TopicPartitions, tp)
	}
	resp.Assignment = &a
	return resp
}

// leaveLockedNoMap is leaveLocked for a member already replaced in the
// map; m.mu is held.
func (s *Server) leaveLockedNoMap(m *member) {
	m.gone = true
	m.session = nil
	if m.em != nil {
		_ = m.em.Leave()
		m.em = nil
	}
}
