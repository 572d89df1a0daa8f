// This file holds what the server keeps beside the engine: open
// connections, topic ids, wire producers and the share-group members with
// their sessions. Lock order: a member's, a producer's or a classic group's
// own mutex before state.mu, never the reverse (code that walks the maps
// copies what it needs under state.mu and locks members after releasing
// it); topicName calls the engine with state.mu released.

package serve

import (
	"crypto/sha256"
	"errors"
	"net"
	"sort"
	"sync"

	"github.com/sharebench/sharebench/engine"
)

type state struct {
	// stored holds the batches produced compressed (batches.go); its
	// lock is a leaf, taken with no other held.
	stored storedBatches
	mu     struct {
		sync.Mutex
		nextConn  int64
		conns     map[int64]*conn
		ids       map[[16]byte]string // topic id -> name
		producers map[int64]*producer // by producer id
		txnIDs    map[string]int64    // transactional id -> producer id
		// nextAlias is the last producer id minted for a producer whose
		// epoch ran out (EndTxn v5); far above the engine's ids.
		nextAlias int64
		share     map[string]map[string]*member
		classic   map[string]*group
		// groupCfgs holds share.* settings of groups the engine does
		// not hold as share groups yet: a group id becomes a share group
		// when its first member joins (Kafka lets configs be set on any
		// group id).
		groupCfgs map[string]engine.GroupConfig
	}
}

func (s *Server) initState() {
	s.state.mu.conns = map[int64]*conn{}
	s.state.mu.ids = map[[16]byte]string{}
	s.state.mu.producers = map[int64]*producer{}
	s.state.mu.txnIDs = map[string]int64{}
	s.state.mu.nextAlias = 1 << 48
	s.state.mu.share = map[string]map[string]*member{}
	s.state.mu.classic = map[string]*group{}
	s.state.mu.groupCfgs = map[string]engine.GroupConfig{}
}

func (s *Server) newConn(nc net.Conn) *conn {
	s.state.mu.Lock()
	defer s.state.mu.Unlock()
	s.state.mu.nextConn++
	c := &conn{srv: s, nc: nc, id: s.state.mu.nextConn, gone: make(chan struct{}), done: make(chan struct{})}
	s.state.mu.conns[c.id] = c
	return c
}

// connClosed closes c and the share sessions it owned.
func (s *Server) connClosed(c *conn) {
	c.nc.Close()
	close(c.done)
	s.state.mu.Lock()
	delete(s.state.mu.conns, c.id)
	var owned []*member
	for _, g := range s.state.mu.share {
		for _, m := range g {
			owned = append(owned, m)
		}
	}
	s.state.mu.Unlock()
	for _, m := range owned {
		m.closeSessionOf(c)
	}
}

func (s *Server) closeAllConns() {
	s.state.mu.Lock()
	defer s.state.mu.Unlock()
	for _, c := range s.state.mu.conns {
		c.nc.Close()
	}
}

// topicID is the id of topic name: derived from the name, so it is the
// same across restarts of a durable engine.
func topicID(name string) [16]byte {
	sum := sha256.Sum256([]byte("sharebench-topic:" + name))
	var id [16]byte
	copy(id[:], sum[:16])
	return id
}

// topicName returns the name of the topic with id, if it exists.
func (s *Server) topicName(id [16]byte) (string, bool) {
	s.state.mu.Lock()
	name, ok := s.state.mu.ids[id]
	s.state.mu.Unlock()
	if ok {
		return name, true
	}
	for _, t := range s.e.Topics() {
		tid := topicID(t)
		s.state.mu.Lock()
		s.state.mu.ids[tid] = t
		s.state.mu.Unlock()
		if tid == id {
			name, ok = t, true
		}
	}
	return name, ok
}

// partitions returns a topic's partition count, or 0 and false.
func (s *Server) partitions(topic string) (int32, bool) {
	n, err := s.e.Partitions(topic)
	return n, err == nil
}

// ensureTopic returns the partition count of topic, creating it with the
// default partition count when auto-creation is on.
func (s *Server) ensureTopic(topic string) (int32, error) {
	if n, ok := s.partitions(topic); ok {
		return n, nil
	}
	if !s.cfg.autoCreate || !validTopicName(topic) {
		return 0, engine.ErrUnknownTopicOrPartition
	}
	if err := s.e.CreateTopic(topic, s.cfg.partitions); err != nil && !errors.Is(err, engine.ErrTopicExists) {
		return 0, err
	}
	n, _ := s.partitions(topic)
	return n, nil
}

// validTopicName is Kafka's rule: 1 to 249 of [a-zA-Z0-9._-], not "." or "..".
func validTopicName(t string) bool {
	if t == "" || len(t) > 249 || t == "." || t == ".." {
		return false
	}
	for _, r := range t {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '_', r == '-':
		default:
			return false
		}
	}
	return true
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
