// This file checks that each fault runs on its own timeline: a fault that
// blocks (a broker restart) delays no other fault, against an injected clock.

package loadgen

import (
	"sync"
	"testing"
	"time"

	"github.com/sharebench/sharebench/vocab"
	"github.com/sharebench/sharebench/workloads"
)

// fakeClock is a faultClock the test moves by hand.
type fakeClock struct {
	mu      sync.Mutex
	now     time.Time
	waiters []fakeWaiter
	changed chan struct{} // closed and replaced whenever a waiter is added
}

type fakeWaiter struct {
	at time.Time
	ch chan time.Time
}

func newFakeClock(t0 time.Time) *fakeClock {
	return &fakeClock{now: t0, changed: make(chan struct{})}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := make(chan time.Time, 1)
	c.waiters = append(c.waiters, fakeWaiter{c.now.Add(d), ch})
	close(c.changed)
	c.changed = make(chan struct{})
	return ch
}

// waitWaiters blocks until n goroutines wait on the clock.
func (c *fakeClock) waitWaiters(t *testing.T, n int) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		c.mu.Lock()
		got, ch := len(c.waiters), c.changed
		c.mu.Unlock()
		if got >= n {
			return
		}
		select {
		case <-ch:
		case <-deadline:
			t.Fatalf("%d goroutines wait on the clock, want %d", got, n)
		}
	}
}

// advanceTo sets the time and fires every waiter due by then.
func (c *fakeClock) advanceTo(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
	kept := c.waiters[:0]
	for _, w := range c.waiters {
		if !w.at.After(t) {
			w.ch <- t
			continue
		}
		kept = append(kept, w)
	}
	c.waiters = kept
}

func TestFaultTimelinesAreIndependent(t *testing.T) {
	t0 := time.Unix(1000, 0)
	clk := newFakeClock(t0)
	sec := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	// Three faults at 6, 7 and 8 s; the first blocks (a broker restart
	// that takes far longer than the gaps between them).
	times := [][]time.Time{{sec(6)}, {sec(7)}, {sec(8)}}
	release := make(chan struct{})
	started := make(chan firing, 3)
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		runTimelines(clk, times, stop, func(fr firing) {
			started <- fr
			if fr.fault == 0 {
				<-release
			}
		})
	}()
	clk.waitWaiters(t, 3)
	for i, at := range []time.Time{sec(6), sec(7), sec(8)} {
		clk.advanceTo(at)
		select {
		case fr := <-started:
			if fr.fault != i || !fr.start.Equal(at) || !fr.scheduled.Equal(at) {
				t.Errorf("firing %d: got fault %d scheduled %v started %v, want fault %d started on schedule at %v",
					i, fr.fault, fr.scheduled.Sub(t0), fr.start.Sub(t0), i, at.Sub(t0))
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("fault %d did not start at %v while fault 0 was still being applied", i, at.Sub(t0))
		}
	}
	select {
	case <-done:
		t.Fatal("runTimelines returned while fault 0 was still being applied")
	default:
	}
	close(release)
	<-done
}

func TestFaultTimelineRepeatsLateNotSkipped(t *testing.T) {
	t0 := time.Unix(1000, 0)
	clk := newFakeClock(t0)
	f := workloads.Fault{Every: time.Second, Kind: vocab.FaultBrokerRestart}
	times := [][]time.Time{firings(f, t0, t0.Add(3500*time.Millisecond))}
	if len(times[0]) != 3 {
		t.Fatalf("firings of every 1s over 3.5s = %v, want 3", times[0])
	}
	stop := make(chan struct{})
	var got []firing
	done := make(chan struct{})
	go func() {
		defer close(done)
		runTimelines(clk, times, stop, func(fr firing) {
			got = append(got, fr)
			if len(got) == 1 {
				// The first firing runs 1.5 s: past the second's time.
				clk.advanceTo(t0.Add(2500 * time.Millisecond))
			}
		})
	}()
	clk.waitWaiters(t, 1)
	clk.advanceTo(t0.Add(time.Second))
	clk.waitWaiters(t, 1) // waiting for the third firing at 3 s
	clk.advanceTo(t0.Add(3 * time.Second))
	<-done
	want := []time.Duration{time.Second, 2500 * time.Millisecond, 3 * time.Second}
	if len(got) != 3 {
		t.Fatalf("got %d firings, want 3", len(got))
	}
	for i, fr := range got {
		if fr.start.Sub(t0) != want[i] {
			t.Errorf("firing %d (scheduled %v) started at %v, want %v", i, fr.scheduled.Sub(t0), fr.start.Sub(t0), want[i])
		}
	}
}

func TestFaultTimelinesStop(t *testing.T) {
	t0 := time.Unix(1000, 0)
	clk := newFakeClock(t0)
	stop := make(chan struct{})
	fired := make(chan firing, 2)
	done := make(chan struct{})
	go func() {
		defer close(done)
		runTimelines(clk, [][]time.Time{{t0.Add(time.Second)}, {t0.Add(5 * time.Second)}}, stop, func(fr firing) { fired <- fr })
	}()
	clk.waitWaiters(t, 2)
	clk.advanceTo(t0.Add(time.Second))
	<-fired
	close(stop)
	<-done
	select {
	case fr := <-fired:
		t.Errorf("fault %d fired after the timelines were stopped", fr.fault)
	default:
	}
}
