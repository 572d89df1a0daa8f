package serve

import (
	"net"
	"time"
)

// HandleFrameForTest runs one request frame (without its size) through
// the server's dispatch on a connection that is not attached to a socket.
func (s *Server) HandleFrameForTest(frame []byte) (out []byte, send bool, err error) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	c := s.newConn(a)
	// Requests that wait (long polls, join rounds) end as if the client
	// went away.
	stop := time.AfterFunc(20*time.Millisecond, func() { close(c.gone) })
	defer func() {
		if stop.Stop() {
			close(c.gone)
		}
	}()
	defer func() {
		s.state.mu.Lock()
		delete(s.state.mu.conns, c.id)
		s.state.mu.Unlock()
	}()
	return s.handleFrame(c, frame, nil)
}
