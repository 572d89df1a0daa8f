package serve

import (
	"encoding/binary"
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

// Handle runs one request frame on c, appending the response to dst, and
// then recycles the frame as the connection loop does: pass a frame from
// ReadFrame, or one Handle may put in the buffer pool.
func (s *Server) Handle(c *TestConn, frame, dst []byte) ([]byte, bool, error) {
	out, send, err := s.handleFrame(c, frame, dst)
	recycleFrame(frame)
	return out, send, err
}

// ReadFrame returns frame (without its size) in a buffer obtained as the
// connection loop obtains the buffer it reads a frame into.
func ReadFrame(frame []byte) []byte {
	var key int16 = -1
	if len(frame) >= 2 {
		key = int16(binary.BigEndian.Uint16(frame))
	}
	f := newFrame(key, len(frame))
	copy(f, frame)
	return f
}

// TopicID is the id the server gives a topic.
func TopicID(s *Server, name string) [16]byte { return s.topicID(name) }

// WithMaxEpochForTest lowers the wire epoch past which a transaction end
// gives the producer a new producer id.
func WithMaxEpochForTest(e int16) Option { return func(c *config) { c.maxEpoch = e } }
