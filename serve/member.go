// This file holds the share-group members the server tracks for the wire
// protocol: the member id the client chose, its subscription, the engine
// member behind it and its share session. The wire member epoch is the
// engine member's epoch plus base, the sum of the final epochs of the
// engine members it had before: replacing the engine member (when the
// share session closes, or the subscribed topics change) therefore always
// moves the wire epoch forward, and requests that carry an older epoch are
// fenced.
//
// Group membership and the share session are apart, as in Kafka, where
// the group coordinator owns one and the partition leader the other: a
// member that leaves the group with a heartbeat (epoch -1) while its share
// session is open is out of the group (no assignment, not described, its
// heartbeats unknown) but keeps its session and the records it holds,
// whose locks run on. Its acknowledgements on that session apply, and
// its fetches acquire, until the session closes (epoch -1, its
// connection closes, or it goes silent for memberTimeout); only then do
// its records go back to the group.

package serve

import (
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sharebench/sharebench/engine"
)

type member struct {
	group, id string

	mu sync.Mutex
	// The fields below are guarded by mu.
	em         *engine.ShareMember
	base       int32
	subscribed []string
	joined     []string // the topics em was joined with, sorted
	sig        int64    // partition count of joined, to notice new partitions
	session    *shareSession
	clientID   string
	host       string
	// reported is the epoch the last heartbeat response gave the client:
	// a heartbeat may carry it after the engine moved the epoch on (the
	// client learns the new one from that heartbeat's response).
	reported int32
	lastSeen time.Time
	// left: the member left the group but its share session is still
	// open (the file comment); gone: both ended, the member is removed.
	left bool
	gone bool
}

// shareSession is a member's share session: its next epoch, the
// partitions it fetches and the connection it lives on.
type shareSession struct {
	epoch int32
	conn  *conn
	parts map[engine.TopicPartition]bool
}

// memberTimeout is how long a member may go without a request before the
// server drops it (Kafka's group.share.session.timeout.ms default).
const memberTimeout = 45 * time.Second

func (s *Server) isShareGroup(id string) bool {
	s.state.mu.Lock()
	_, ok := s.state.mu.share[id]
	s.state.mu.Unlock()
	if ok {
		return true
	}
	for _, g := range s.e.ShareGroups() {
		if g == id {
			return true
		}
	}
	return false
}

func (s *Server) lookupMember(group, id string) *member {
	s.state.mu.Lock()
	defer s.state.mu.Unlock()
	return s.state.mu.share[group][id]
}

func (s *Server) groupMembers(group string) []*member {
	s.state.mu.Lock()
	all := make([]*member, 0, len(s.state.mu.share[group]))
	for _, id := range sortedKeys(s.state.mu.share[group]) {
		all = append(all, s.state.mu.share[group][id])
	}
	s.state.mu.Unlock()
	// A member's lock comes before the state's (state.go), so left is
	// read after the state lock is released.
	out := all[:0]
	for _, m := range all {
		m.mu.Lock()
		left := m.left
		m.mu.Unlock()
		if !left {
			out = append(out, m)
		}
	}
	return out
}

// epochLocked is the wire member epoch.
func (m *member) epochLocked() int32 {
	if m.em == nil {
		return m.base
	}
	return m.base + m.em.Metadata().MemberEpoch
}

// existing returns the subscribed topics that exist, sorted, and their
// total partition count.
func (s *Server) existing(topics []string) ([]string, int64) {
	var out []string
	var n int64
	for _, t := range topics {
		if p, ok := s.partitions(t); ok {
			out = append(out, t)
			n += int64(p)
		}
	}
	sort.Strings(out)
	return slices.Compact(out), n
}

// syncLocked makes the engine member match the subscription, replacing it
// when the existing topics changed or it is gone. m.mu is held.
func (s *Server) syncLocked(m *member, force bool) error {
	topics, sig := s.existing(m.subscribed)
	if !force && m.em != nil && slices.Equal(topics, m.joined) && sig == m.sig {
		return nil
	}
	return s.rejoinLocked(m, topics, sig)
}

// rejoinLocked replaces the engine member: the old one leaves (releasing
// what it held without counting a delivery), a new one joins.
func (s *Server) rejoinLocked(m *member, topics []string, sig int64) error {
	if m.em != nil {
		m.base += m.em.Metadata().MemberEpoch
		_ = m.em.Leave()
		m.em = nil
	}
	if err := s.applyPendingConfig(m.group); err != nil {
		return err
	}
	em, err := s.e.JoinShareGroup(m.group, topics, engine.AckExplicit)
	if err != nil {
		return err
	}
	m.em, m.joined, m.sig = em, topics, sig
	return nil
}

// closeSessionLocked ends the member's share session: what it held goes
// back to the group (the engine member is replaced, or, for a member that
// already left the group, leaves for good).
func (s *Server) closeSessionLocked(m *member) {
	if m.session == nil {
		return
	}
	m.session = nil
	if m.left {
		s.leaveLocked(m)
		return
	}
	if m.em != nil && !m.gone {
		topics, sig := s.existing(m.subscribed)
		_ = s.rejoinLocked(m, topics, sig)
	}
}

// closeSessionOf closes the member's session if it lives on c.
func (m *member) closeSessionOf(c *conn) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.session != nil && m.session.conn == c {
		c.srv.closeSessionLocked(m)
	}
}

// leaveGroupLocked is a heartbeat's leave: with a share session open the
// member only leaves the group (the file comment), else it is removed for
// good. m.mu is held.
func (s *Server) leaveGroupLocked(m *member) {
	if m.session != nil && m.em != nil {
		m.left = true
		return
	}
	s.leaveLocked(m)
}

// leaveLocked removes the member for good.
func (s *Server) leaveLocked(m *member) {
	m.gone = true
	m.session = nil
	if m.em != nil {
		m.base += m.em.Metadata().MemberEpoch
		_ = m.em.Leave()
		m.em = nil
	}
	s.state.mu.Lock()
	if g := s.state.mu.share[m.group]; g[m.id] == m {
		delete(g, m.id)
	}
	s.state.mu.Unlock()
}

// sweepMembers drops members that sent nothing for memberTimeout.
func (s *Server) sweepMembers(now time.Time) {
	s.state.mu.Lock()
	var all []*member
	for _, g := range s.state.mu.share {
		for _, m := range g {
			all = append(all, m)
		}
	}
	s.state.mu.Unlock()
	for _, m := range all {
		m.mu.Lock()
		if now.Sub(m.lastSeen) > memberTimeout {
			s.leaveLocked(m)
		}
		m.mu.Unlock()
	}
}

// assignmentLocked is the member's assignment: every partition of every
// subscribed topic that exists (share groups let members share
// partitions). m.mu is held.
func (s *Server) assignmentLocked(m *member) map[string][]int32 {
	out := map[string][]int32{}
	for _, t := range m.joined {
		n, _ := s.partitions(t)
		ps := make([]int32, n)
		for i := range ps {
			ps[i] = int32(i)
		}
		out[t] = ps
	}
	return out
}

// checkSessionLocked validates and advances the share session for a
// request with epoch on c; it returns a top-level error code.
func (s *Server) checkSessionLocked(m *member, c *conn, epoch int32, fetch bool) int16 {
	switch {
	case epoch == 0:
		if !fetch {
			return kerr.InvalidShareSessionEpoch.Code
		}
		m.session = &shareSession{epoch: 1, conn: c, parts: map[engine.TopicPartition]bool{}}
		return 0
	case epoch == -1:
		if m.session == nil {
			return kerr.ShareSessionNotFound.Code
		}
		return 0
	case m.session == nil:
		return kerr.ShareSessionNotFound.Code
	case epoch != m.session.epoch:
		return kerr.InvalidShareSessionEpoch.Code
	}
	m.session.epoch++
	m.session.conn = c
	return 0
}

func nodeEndpoint(s *Server) kmsg.ShareFetchResponseNodeEndpoint {
	ne := kmsg.NewShareFetchResponseNodeEndpoint()
	ne.NodeID, ne.Host, ne.Port = nodeID, s.host, s.port
	return ne
}
