// This file holds what the target does when its engine crashes and does
// not come back: it says so (Down), so the load generator ends the mode
// with a verdict instead of waiting on calls that can only fail, and the
// next mode's Setup starts a fresh engine, so the modes after it still run.

package enginetarget

import (
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	eng "github.com/sharebench/sharebench/engine"
)

// downAfter is how long the engine may stay crashed with no restart under
// way before the target reports it down: a crash a fault arms is
// restarted by the fault runner within milliseconds (the restart itself
// is counted as under way), so an engine crashed this long with nobody
// restarting it crashed by itself (a journal I/O error) and stays so.
const downAfter = 5 * time.Second

// ErrEngineDown is wrapped by Down's error: the engine crashed and did not
// come back (its restart failed, or nothing restarted it).
var ErrEngineDown = errors.New("engine target: the engine crashed and did not come back")

// crashState is the target's knowledge of engine crashes.
type crashState struct {
	restarting   atomic.Int32 // restarts under way
	crashedSince atomic.Int64 // unix ns the engine was first seen crashed with no restart under way; 0: not
	mu           struct {
		sync.Mutex
		failed   error         // the last failed restart's error, until the engine is replaced
		failedCh chan struct{} // closed when a restart fails; nil until restartFailed asks
		replaced []string      // one line per engine replaced after it went down
		dir      string        // the data directory in use ("": Options.DataDir)
	}
}

// restart restarts the engine from its data directory, counting the
// restart as under way while it runs and remembering its failure: an
// engine whose recovery failed stays crashed.
func (t *Target) restart() (eng.RecoveryReport, error) {
	t.crash.restarting.Add(1)
	defer t.crash.restarting.Add(-1)
	rep, err := t.e.Restart()
	t.crash.mu.Lock()
	defer t.crash.mu.Unlock()
	if err != nil {
		t.crash.mu.failed = err
		if t.crash.mu.failedCh != nil {
			close(t.crash.mu.failedCh)
			t.crash.mu.failedCh = nil
		}
	} else {
		t.crash.mu.failed = nil
	}
	return rep, err
}

// restartFailed returns a channel closed when the next restart fails.
func (c *crashState) restartFailed() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.mu.failedCh == nil {
		c.mu.failedCh = make(chan struct{})
	}
	return c.mu.failedCh
}

// Down reports, once the engine crashed and will not come back, why: the
// error of its failed restart, or the engine's own crash error when it
// has been crashed for downAfter with no restart under way. Nil while the
// engine runs or a restart may still bring it back. On a manual clock only
// a failed restart counts: there the caller restarts the engine.
func (t *Target) Down() error {
	t.crash.mu.Lock()
	failed := t.crash.mu.failed
	t.crash.mu.Unlock()
	if failed != nil && t.e.Crashed() {
		return fmt.Errorf("%w: its restart from %s failed: %w", ErrEngineDown, t.dataDir(), failed)
	}
	if !t.e.Crashed() || t.crash.restarting.Load() > 0 || t.opts.Clock != nil {
		t.crash.crashedSince.Store(0)
		return nil
	}
	now := time.Now().UnixNano()
	since := t.crash.crashedSince.Load()
	if since == 0 {
		t.crash.crashedSince.CompareAndSwap(0, now)
		return nil
	}
	if time.Duration(now-since) < downAfter {
		return nil
	}
	return fmt.Errorf("%w: crashed for %v with no restart under way: %w", ErrEngineDown, downAfter, eng.ErrCrashed)
}

// replaceDown starts a fresh engine in place of one that is down, so the
// next mode runs: in a new directory inside the data directory
// (after-crash-N), which keeps the crashed engine's files as they are and
// goes wherever the data directory goes. Called by Setup, between modes,
// when no goroutine of the previous mode uses the engine.
func (t *Target) replaceDown() error {
	down := t.Down()
	if down == nil {
		return nil
	}
	t.crash.mu.Lock()
	defer t.crash.mu.Unlock()
	n := len(t.crash.mu.replaced) + 1
	dir := filepath.Join(t.opts.DataDir, fmt.Sprintf("after-crash-%d", n))
	e, err := t.startEngine(dir)
	if err != nil {
		return fmt.Errorf("engine target: a fresh engine after the crash (%v): %w", down, err)
	}
	_ = t.e.Close()
	t.e = e
	t.faults.Disarm()
	t.crash.mu.failed = nil
	t.crash.mu.dir = dir
	t.crash.crashedSince.Store(0)
	t.crash.mu.replaced = append(t.crash.mu.replaced, fmt.Sprintf("the engine crashed and did not come back (%v); the modes after it ran on a fresh engine in %s", down, dir))
	return nil
}

// dataDir is the data directory of the engine in use.
func (t *Target) dataDir() string {
	t.crash.mu.Lock()
	defer t.crash.mu.Unlock()
	if t.crash.mu.dir != "" {
		return t.crash.mu.dir
	}
	return t.opts.DataDir
}

// notes lists the engines replaced after a crash.
func (c *crashState) notes() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.mu.replaced...)
}
