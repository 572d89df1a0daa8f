// This file holds lifecycle, the end of a Kafka worker's life that the
// share, transactional and classic-eos workers share: Crash, Close and the
// target's Close each end the worker, whichever comes first, exactly once.

package kafkatarget

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"

	"github.com/twmb/franz-go/pkg/kgo"
)

var errWorkerClosed = errors.New("kafka: worker is closed or crashed")

// ender is how a worker ends, the part that differs between workers.
type ender interface {
	// crash drops the worker as a killed process would: its connections
	// close and nothing more is sent (no ack, no leave, no end of the
	// open transaction).
	crash()
	// leave ends the worker cleanly: its open transaction aborted, what
	// it holds given back, its member gone from the group, its clients
	// closed.
	leave(ctx context.Context) error
}

// lifecycle is embedded by each worker; its Crash and Close are the
// worker's. A worker's methods run on one goroutine (the targets.Worker
// contract), except closeForTarget, which Target.Close may call from
// another: once guards the end, and done tells the worker's later calls
// that it is gone (they return errWorkerClosed).
type lifecycle struct {
	t      *Target
	worker ender // the worker that embeds this lifecycle
	once   sync.Once
	done   atomic.Bool
}

// register makes Target.Close end the worker if its owner does not; it
// fails once the target is closed. The target tracks the lifecycle, not
// the worker, so that Crash and Close untrack what was tracked.
func (l *lifecycle) register() error { return l.t.track(l) }

// Crash drops the worker as a killed process would (see ender.crash): the
// broker releases what the worker's group member held, and an open
// transaction stays open until a worker with the same transactional id
// fences it or it times out.
func (l *lifecycle) Crash() {
	l.t.untrack(l)
	l.shutdown(context.Background(), true)
}

// Close ends the worker cleanly (see ender.leave).
func (l *lifecycle) Close(ctx context.Context) error {
	l.t.untrack(l)
	return l.shutdown(ctx, false)
}

// closeForTarget is Target.Close's clean end of a worker its owner left
// open, bounded by closeTimeout.
func (l *lifecycle) closeForTarget() {
	ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
	defer cancel()
	l.shutdown(ctx, false)
}

// shutdown ends the worker, crashed or cleanly, unless it already ended;
// the worker's constructor calls it to undo a half-built worker.
func (l *lifecycle) shutdown(ctx context.Context, crash bool) error {
	var err error
	l.once.Do(func() {
		l.done.Store(true)
		if crash {
			l.worker.crash()
			return
		}
		err = l.worker.leave(ctx)
	})
	return err
}

// crashLeave is the part of a crash the share and classic-eos workers
// share, before they close their clients: the dialer dies, so nothing more
// reaches a broker, and the group member (the share consumer, or the
// classic-eos session's client) leaves with a canceled context, so the
// leave gives up at once.
func crashLeave(d *dialer, member *kgo.Client) {
	d.kill()
	dead, cancel := context.WithCancel(context.Background())
	cancel()
	member.LeaveGroupContext(dead)
}
