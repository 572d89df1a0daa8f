// This file holds the classic group coordinator: membership, join rounds
// and generations, which the server runs itself (offsets live in the
// engine). A join round completes when every member has rejoined or when
// the longest rebalance timeout passes (members that did not rejoin are
// dropped); the leader's SyncGroup then hands out the assignments. Members
// that stop heartbeating for their session timeout are dropped by
// sweepGroups, during a join round too unless they have rejoined.

package serve

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

type groupState int8

const (
	groupEmpty groupState = iota
	groupPreparing
	groupCompleting // waiting for the leader's SyncGroup
	groupStable
)

func (g groupState) String() string {
	return [...]string{"Empty", "PreparingRebalance", "CompletingRebalance", "Stable"}[g]
}

type group struct {
	id string
	mu sync.Mutex
	// The fields below are guarded by mu.
	state        groupState
	generation   int32
	protocolType string
	protocol     string
	leader       string
	members      map[string]*gmember
	joinDone     chan struct{} // closed when the current round completes
	syncDone     chan struct{} // closed when the leader's assignment arrives
	roundTimer   *time.Timer
}

type gmember struct {
	id               string
	instanceID       *string
	clientID, host   string
	protocols        []kmsg.JoinGroupRequestProtocol
	sessionTimeout   time.Duration
	rebalanceTimeout time.Duration
	lastSeen         time.Time
	joined           bool
	assignment       []byte
}

var memberSeq atomic.Int64

func (s *Server) classicGroup(id string, create bool) *group {
	s.state.mu.Lock()
	defer s.state.mu.Unlock()
	g := s.state.mu.classic[id]
	if g == nil && create {
		g = &group{id: id, members: map[string]*gmember{}}
		s.state.mu.classic[id] = g
	}
	return g
}

// checkGeneration fences a classic member by id and generation.
func (s *Server) checkGeneration(groupID, memberID string, gen int32) int16 {
	g := s.classicGroup(groupID, false)
	if g == nil {
		return kerr.IllegalGeneration.Code
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if _, ok := g.members[memberID]; !ok {
		return kerr.UnknownMemberID.Code
	}
	if gen != g.generation {
		return kerr.IllegalGeneration.Code
	}
	if g.state == groupPreparing {
		return kerr.RebalanceInProgress.Code
	}
	return 0
}

// startRoundLocked begins a join round (if none is running).
func (g *group) startRoundLocked() {
	if g.state == groupPreparing {
		return
	}
	if g.state == groupCompleting {
		// Followers waiting for a leader that will not sync (it left or
		// timed out) return and find the round moved on.
		close(g.syncDone)
	}
	g.state = groupPreparing
	g.joinDone = make(chan struct{})
	var timeout time.Duration
	for _, m := range g.members {
		m.joined = false
		timeout = max(timeout, m.rebalanceTimeout)
	}
	if timeout == 0 {
		timeout = 5 * time.Second
	}
	done := g.joinDone
	g.roundTimer = time.AfterFunc(timeout, func() {
		g.mu.Lock()
		defer g.mu.Unlock()
		if g.joinDone == done && g.state == groupPreparing {
			g.completeRoundLocked()
		}
	})
}

// maybeCompleteLocked completes the round once every member has joined.
func (g *group) maybeCompleteLocked() {
	if g.state != groupPreparing {
		return
	}
	for _, m := range g.members {
		if !m.joined {
			return
		}
	}
	g.completeRoundLocked()
}

func (g *group) completeRoundLocked() {
	if g.roundTimer != nil {
		g.roundTimer.Stop()
	}
	for id, m := range g.members {
		if !m.joined {
			delete(g.members, id)
		}
	}
	g.generation++
	close(g.joinDone)
	if len(g.members) == 0 {
		g.state, g.leader, g.protocol = groupEmpty, "", ""
		return
	}
	if _, ok := g.members[g.leader]; !ok {
		g.leader = ""
		for id := range g.members {
			if g.leader == "" || id < g.leader {
				g.leader = id
			}
		}
	}
	g.protocol = g.chooseProtocolLocked()
	g.state = groupCompleting
	g.syncDone = make(chan struct{})
	for _, m := range g.members {
		m.assignment = nil
		m.lastSeen = time.Now()
	}
}

// chooseProtocolLocked picks the leader's most preferred protocol that
// every member supports.
func (g *group) chooseProtocolLocked() string {
	for _, p := range g.members[g.leader].protocols {
		all := true
		for _, m := range g.members {
			found := false
			for _, q := range m.protocols {
				if q.Name == p.Name {
					found = true
					break
				}
			}
			all = all && found
		}
		if all {
			return p.Name
		}
	}
	return ""
}

func (m *gmember) metadata(protocol string) []byte {
	for _, p := range m.protocols {
		if p.Name == protocol {
			return p.Metadata
		}
	}
	return nil
}

// removeLocked removes a member and starts a new round for the others.
func (g *group) removeLocked(id string) {
	delete(g.members, id)
	if len(g.members) == 0 {
		if g.state == groupPreparing {
			g.completeRoundLocked()
			return
		}
		if g.state == groupCompleting {
			close(g.syncDone)
		}
		g.state, g.leader, g.protocol = groupEmpty, "", ""
		g.generation++
		return
	}
	if g.state == groupPreparing {
		g.maybeCompleteLocked()
		return
	}
	g.startRoundLocked()
}

// sweepGroups drops members whose session timed out. It runs until the
// server closes.
func (s *Server) sweepGroups() {
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-s.closing:
			return
		case <-tick.C:
		}
		s.state.mu.Lock()
		groups := make([]*group, 0, len(s.state.mu.classic))
		for _, g := range s.state.mu.classic {
			groups = append(groups, g)
		}
		s.state.mu.Unlock()
		now := time.Now()
		s.sweepMembers(now)
		for _, g := range groups {
			g.mu.Lock()
			for id, m := range g.members {
				// A member waiting in a join round is kept alive by its
				// pending JoinGroup; one that has not rejoined expires at
				// its session timeout even mid-round, as in Kafka, so a
				// crashed member holds the round up for its session, not
				// for the longest rebalance timeout from the round's start.
				if now.Sub(m.lastSeen) > m.sessionTimeout && !(g.state == groupPreparing && m.joined) {
					g.removeLocked(id)
				}
			}
			g.mu.Unlock()
		}
	}
}

func newMemberID(clientID string) string {
	return fmt.Sprintf("%s-%d-%d", clientID, time.Now().UnixNano(), memberSeq.Add(1))
}
