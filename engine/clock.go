// This file holds the engine's clock: a real monotonic clock, or a manual
// one that tests and the simulator move by hand.

package engine

import (
	"sync"
	"time"
)

// Clock tells the engine what time it is, as a duration since the clock's
// own origin. Every time-dependent transition (lock deadlines, transaction
// timeouts, session timeouts) reads it once per call and passes the value
// down into the pure state machines.
type Clock interface {
	Now() time.Duration
	// Manual reports whether the clock moves only when its owner moves
	// it. The engine then starts no timer goroutine (lock expiry, the
	// abort sweep, marker retries wait for Engine.FireTimers) and never
	// sleeps on wall time, since no wall-clock wait could see the clock
	// move: a single-goroutine driver stays reproducible.
	Manual() bool
}

// realClock is monotonic time since the engine started.
type realClock struct{ start time.Time }

func (c realClock) Now() time.Duration { return time.Since(c.start) }

// Manual is false: real time moves by itself.
func (realClock) Manual() bool { return false }

// ManualClock is a Clock that moves only when told to. With a manual clock
// the engine starts no timer goroutine: the caller fires due timers with
// Engine.FireTimers, so a single-goroutine driver is reproducible.
type ManualClock struct {
	mu  sync.Mutex
	now time.Duration
}

// NewManualClock returns a manual clock at time zero.
func NewManualClock() *ManualClock { return &ManualClock{} }

// Now returns the clock's time.
func (c *ManualClock) Now() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Manual is true: the clock moves only by Advance and Set.
func (*ManualClock) Manual() bool { return true }

// Advance moves the clock forward by d (never backwards).
func (c *ManualClock) Advance(d time.Duration) {
	if d < 0 {
		return
	}
	c.mu.Lock()
	c.now += d
	c.mu.Unlock()
}

// Set moves the clock to t if t is later than now.
func (c *ManualClock) Set(t time.Duration) {
	c.mu.Lock()
	if t > c.now {
		c.now = t
	}
	c.mu.Unlock()
}
