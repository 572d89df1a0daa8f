// This file holds the control of engine-side faults while the server runs:
// the actions a broker-control command sends (by signal or through the
// loopback admin endpoint, admin.go) and what each does to the engine.

package serve

import (
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/sharebench/sharebench/engine"
)

// Control actions. kill and restart both crash the engine and recover it
// from its data directory: the engine has no clean shutdown that would
// keep more than a crash does (every acknowledged change is durable), so a
// graceful restart and a SIGKILL leave the same state. stop crashes it and
// leaves it down (clients get retriable errors) until start.
const (
	ActionKill             = "kill"
	ActionRestart          = "restart"
	ActionStop             = "stop"
	ActionStart            = "start"
	ActionCoordinatorCrash = "coordinator-crash"
	ActionShareFailover    = "share-failover"
	ActionStatus           = "status"
)

// Actions lists the control actions, in the order usage messages give them.
var Actions = []string{ActionKill, ActionRestart, ActionStop, ActionStart, ActionCoordinatorCrash, ActionShareFailover, ActionStatus}

// ErrControl is wrapped by errors for an action that cannot apply (unknown
// action, missing parameter, no data directory): the caller's mistake, not
// the engine's failure.
var ErrControl = errors.New("serve: bad control request")

// Control applies engine-side faults to a running server's engine. Its
// methods are safe for concurrent use; actions run one at a time.
type Control struct {
	e  *engine.Engine
	mu sync.Mutex
}

// NewControl returns the control of e.
func NewControl(e *engine.Engine) *Control { return &Control{e: e} }

// Apply runs one action and returns what happened, for a log line.
// share-failover takes params group, topic and partition.
func (c *Control) Apply(action string, params map[string]string) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var rep engine.RecoveryReport
	var err error
	switch action {
	case ActionStatus:
		if c.e.Crashed() {
			return "stopped", nil
		}
		return "running", nil
	case ActionKill, ActionRestart:
		if err = c.e.Crash(); err == nil {
			rep, err = c.e.Restart()
		}
	case ActionStop:
		if err = c.e.Crash(); err == nil {
			return "engine stopped (crashed; start recovers it)", nil
		}
	case ActionStart:
		if !c.e.Crashed() {
			return "", fmt.Errorf("%w: start: the engine is running (stop it first)", ErrControl)
		}
		rep, err = c.e.Restart()
	case ActionCoordinatorCrash:
		rep, err = c.e.CrashCoordinator()
	case ActionShareFailover:
		p, perr := strconv.ParseInt(params["partition"], 10, 32)
		if params["group"] == "" || params["topic"] == "" || perr != nil {
			return "", fmt.Errorf("%w: share-failover needs group, topic and partition (got %v)", ErrControl, params)
		}
		tp := engine.TopicPartition{Topic: params["topic"], Partition: int32(p)}
		if err = c.e.FailoverSharePartition(params["group"], tp); err == nil {
			return fmt.Sprintf("share-partition %s/%s-%d failed over", params["group"], tp.Topic, tp.Partition), nil
		}
	default:
		return "", fmt.Errorf("%w: unknown action %q (valid: %v)", ErrControl, action, Actions)
	}
	if errors.Is(err, engine.ErrNoDataDir) {
		return "", fmt.Errorf("%w: %s needs a durable engine: start serve with --data-dir", ErrControl, action)
	}
	if err != nil {
		return "", fmt.Errorf("%s: %w", action, err)
	}
	return fmt.Sprintf("%s: %s", action, rep), nil
}

// crashHold bounds how long a request that arrives while the engine is
// down waits for it to come back before its handler answers the retriable
// error (NOT_LEADER_OR_FOLLOWER, COORDINATOR_LOAD_IN_PROGRESS). A broker
// restart looks to a client like requests that land once the broker is
// back; answering errors at once instead would send clients through their
// metadata refresh, which franz-go spaces by its 5s minimum metadata age, so
// a restart of well under a second would stall producers and consumers for
// seconds. Engine state is lost all the same: only the answer waits.
const crashHold = 2 * time.Second

// awaitEngine holds a request while the engine is crashed (between a
// control kill or restart and the end of its recovery), for at most
// crashHold, until the client goes or the server closes. It reports
// whether the engine is running.
func (s *Server) awaitEngine(c *conn) bool {
	if !s.e.Crashed() {
		return true
	}
	deadline := time.NewTimer(crashHold)
	defer deadline.Stop()
	for s.e.Crashed() {
		select {
		case <-s.e.Running():
		case <-deadline.C:
			return false
		case <-c.gone:
			return false
		case <-s.closing:
			return false
		}
	}
	return true
}
