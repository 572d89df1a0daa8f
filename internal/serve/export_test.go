package serve

import (
	"net"
	"time"
)

// HandleFrameForTest runs one request frame (without its size) through
// the server's dispatch on a connection that is not attached to a socket.
func (s *Server) HandleFrameForTest(frame []byte) (out []byte, send bool, err error) {
	c, done := s.NewTestConn()
	defer done()
	// Requests that wait (long polls, join rounds) end as if the client
	// went away.
	stop := time.AfterFunc(20*time.Millisecond, func() { close(c.gone) })
	defer func() {
		if stop.Stop() {
			close(c.gone)
		}
	}()
	return s.handleFrame(c, frame, nil)
}

// TestConn is a connection for tests and benchmarks.
type TestConn = conn

// NewTestConn returns a connection not attached to a socket and a function
// that forgets it.
func (s *Server) NewTestConn() (*TestConn, func()) {
	a, b := net.Pipe()
	c := s.newConn(a)
	return c, func() {
		s.state.mu.Lock()
		delete(s.state.mu.conns, c.id)
		s.state.mu.Unlock()
		a.Close()
		b.Close()
	}
}

// Handle runs one request frame on c, appending the response to dst.
func (s *Server) Handle(c *TestConn, frame, dst []byte) ([]byte, bool, error) {
	return s.handleFrame(c, frame, dst)
}

// TopicID is the id the server gives a topic.
func TopicID(name string) [16]byte { return topicID(name) }

// WithMaxEpochForTest lowers the wire epoch past which a transaction end
// gives the producer a new producer id.
func WithMaxEpochForTest(e int16) Option { return func(c *config) { c.maxEpoch = e } }
