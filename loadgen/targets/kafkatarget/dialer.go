// This file holds the dialer every client dials through. It tracks the
// connections it opened so a worker's Crash can cut them all at once, the way
// the operating system closes the sockets of a killed process.

package kafkatarget

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"sync"
	"time"
)

// dialTimeout bounds one TCP (and TLS) dial; kgo's own default is 10s.
const dialTimeout = 10 * time.Second

// errCrashed is what dials fail with after a crash; nothing outside the
// package sees it because a crashed worker's clients are closed at once.
var errCrashed = errors.New("kafka: worker crashed")

// dialer dials TCP, optionally TLS, and remembers the live connections.
type dialer struct {
	tls *tls.Config // nil without TLS

	mu struct {
		sync.Mutex
		dead  bool
		conns map[*trackedConn]struct{}
	}
}

func newDialer(tc *tls.Config) *dialer {
	d := &dialer{tls: tc}
	d.mu.conns = make(map[*trackedConn]struct{})
	return d
}

// DialContext has the signature kgo.Dialer wants.
func (d *dialer) DialContext(ctx context.Context, network, host string) (net.Conn, error) {
	d.mu.Lock()
	dead := d.mu.dead
	d.mu.Unlock()
	if dead {
		return nil, errCrashed
	}
	nd := net.Dialer{Timeout: dialTimeout}
	c, err := nd.DialContext(ctx, network, host)
	if err != nil {
		return nil, err
	}
	if d.tls != nil {
		cfg := d.tls.Clone()
		if cfg.ServerName == "" {
			if h, _, err := net.SplitHostPort(host); err == nil {
				cfg.ServerName = h
			}
		}
		tc := tls.Client(c, cfg)
		if err := tc.HandshakeContext(ctx); err != nil {
			c.Close()
			return nil, err
		}
		c = tc
	}
	tc := &trackedConn{Conn: c, d: d}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.mu.dead {
		c.Close()
		return nil, errCrashed
	}
	d.mu.conns[tc] = struct{}{}
	return tc, nil
}

// kill refuses every later dial and closes every open connection; nothing
// the clients queue afterwards reaches a broker.
func (d *dialer) kill() {
	d.mu.Lock()
	d.mu.dead = true
	conns := d.mu.conns
	d.mu.conns = make(map[*trackedConn]struct{})
	d.mu.Unlock()
	for c := range conns {
		c.Conn.Close()
	}
}

// trackedConn forgets itself in its dialer when closed.
type trackedConn struct {
	net.Conn
	d    *dialer
	once sync.Once
}

func (c *trackedConn) Close() error {
	c.once.Do(func() {
		c.d.mu.Lock()
		delete(c.d.mu.conns, c)
		c.d.mu.Unlock()
	})
	return c.Conn.Close()
}
