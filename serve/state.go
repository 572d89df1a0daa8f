// This file holds what the server keeps beside the engine: open
// connections, wire producers and the share-group members with
// their sessions. Lock order: a member's, a producer's or a classic group's
// own mutex before state.mu, never the reverse (code that walks the maps
// copies what it needs under state.mu and locks members after releasing
// it).

package serve

import (
	"crypto/tls"
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
		producers map[int64]*producer // by producer id
		txnIDs    map[string]int64    // transactional id -> producer id
		retired   []retiredProducer   // replaced producers, oldest first
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
	s.state.mu.producers = map[int64]*producer{}
	s.state.mu.txnIDs = map[string]int64{}
	s.state.mu.nextAlias = 1 << 48
	s.state.mu.share = map[string]map[string]*member{}
	s.state.mu.classic = map[string]*group{}
	s.state.mu.groupCfgs = map[string]engine.GroupConfig{}
}

// newConn registers a connection over raw, through TLS on a TLS listener
// (the handshake runs on the connection's goroutine).
func (s *Server) newConn(raw net.Conn) *conn {
	nc := raw
	if s.tls != nil {
		nc = tls.Server(raw, s.tls)
	}
	s.state.mu.Lock()
	defer s.state.mu.Unlock()
	s.state.mu.nextConn++
	c := &conn{srv: s, nc: nc, raw: raw, id: s.state.mu.nextConn, gone: make(chan struct{}), done: make(chan struct{})}
	s.state.mu.conns[c.id] = c
	return c
}

// connClosed frees c's connection slot, closes c and the share sessions
// it owned. The slot is freed first, so a client that sees the close can
// connect again at once.
func (s *Server) connClosed(c *conn) {
	s.nconns.Add(-1)
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
		// The socket itself: a TLS close would first write an alert,
		// which can wait on a client that does not read.
		c.raw.Close()
	}
}

// topicID is the id of topic name's current incarnation (the engine draws
// one when the topic is created), or the zero id for no such topic.
func (s *Server) topicID(name string) [16]byte {
	id, err := s.e.TopicID(name)
	if err != nil {
		return [16]byte{}
	}
	return id
}

// topicName returns the name of the topic with id, if it exists: an id of
// a deleted incarnation names no topic, even when the name has a new one.
func (s *Server) topicName(id [16]byte) (string, bool) {
	name, err := s.e.TopicByID(id)
	return name, err == nil
}

// partitions returns a topic's partition count, or 0 and false.
func (s *Server) partitions(topic string) (int32, bool) {
	n, err := s.e.Partitions(topic)
	return n, err == nil
}

// ensureTopic returns the partition count of topic, creating it with the
// default partition count when auto-creation is on and the partition caps
// allow it.
func (s *Server) ensureTopic(topic string) (int32, error) {
	if n, ok := s.partitions(topic); ok {
		return n, nil
	}
	if !s.cfg.autoCreate || !validTopicName(topic) {
		return 0, engine.ErrUnknownTopicOrPartition
	}
	if err := s.createTopic(topic, s.cfg.partitions, nil); err != nil && !errors.Is(err, engine.ErrTopicExists) {
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
