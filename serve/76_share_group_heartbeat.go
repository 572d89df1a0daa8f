// ShareGroupHeartbeat: v1.
//
// A request is validated first, as Kafka 4.4 does, each failure
// INVALID_REQUEST: an empty member id, or one longer than 36 characters
// (a UUID's text at most; clients choose their member id before joining),
// is refused without a message, at any epoch and before anything else, as
// measured against Kafka 4.4.0; then, with the group coordinator's
// messages, the member id and the group id must not be blank, the epoch
// must be -1 or more, and a join must name its subscribed topics.
// Epoch 0 joins. -1 leaves the group: with no share session open the engine
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
	"strings"
	"time"
	"unicode/utf16"

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
	if n := utf16Len(req.MemberID); n == 0 || n > maxMemberIDLen {
		return fail(kerr.InvalidRequest.Code, nil)
	}
	if err := checkShareHeartbeat(req); err != nil {
		return fail(kerr.InvalidRequest.Code, err)
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

// maxMemberIDLen is the longest member id Kafka 4.4 takes in a
// ShareGroupHeartbeat, in Java characters (UTF-16 code units).
const maxMemberIDLen = 36

// utf16Len is s's length as Java's String.length counts it.
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}

// blankChars are the characters Java's String.trim removes.
const blankChars = "\x00\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f "

// checkShareHeartbeat returns why Kafka refuses req as invalid, in
// Kafka's words, or nil.
func checkShareHeartbeat(req *kmsg.ShareGroupHeartbeatRequest) error {
	// Java's String.trim: every character up to the space counts as blank.
	blank := func(s string) bool { return strings.TrimLeft(s, blankChars) == "" }
	switch {
	case blank(req.MemberID):
		return errors.New("serve: MemberId can't be empty")
	case blank(req.GroupID):
		return errors.New("serve: GroupId can't be empty")
	case req.RackID != nil && blank(*req.RackID):
		return errors.New("serve: RackId can't be empty")
	case req.MemberEpoch == 0 && len(req.SubscribedTopicNames) == 0:
		return errors.New("serve: SubscribedTopicNames must be set in first request")
	case req.MemberEpoch < -1:
		return errors.New("serve: MemberEpoch is invalid")
	}
	return nil
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
