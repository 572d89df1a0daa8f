// Tests of the transactional worker's coordinator re-discovery: a fake
// transaction coordinator answers TxnShareAcknowledge with a coordinator
// error, and the worker finds the coordinator again, reconnects and
// stages there, a bounded number of times.

package kafkatarget

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"sync/atomic"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/sharebench/sharebench/engine"
	"github.com/sharebench/sharebench/internal/txnshareack"
	"github.com/sharebench/sharebench/loadgen/targets"
	"github.com/sharebench/sharebench/vocab"
)

// fakeCoordinator answers every request of key with a response carrying
// code, on 127.0.0.1, and counts the requests.
func fakeCoordinator(t *testing.T, key int16, code int16) (string, *atomic.Int32) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	var n atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				for {
					var size [4]byte
					if _, err := io.ReadFull(c, size[:]); err != nil {
						return
					}
					body := make([]byte, binary.BigEndian.Uint32(size[:]))
					if _, err := io.ReadFull(c, body); err != nil || len(body) < 8 {
						return
					}
					n.Add(1)
					resp := txnshareack.NewResponse(key)
					resp.ErrorCode = code
					out := []byte{0, 0, 0, 0}
					out = append(out, body[4:8]...) // correlation id
					out = append(out, 0)            // header tags
					out = resp.AppendTo(out)
					binary.BigEndian.PutUint32(out, uint32(len(out)-4))
					if _, err := c.Write(out); err != nil {
						return
					}
				}
			}()
		}
	}()
	return ln.Addr().String(), &n
}

// TestTransactionalCoordinatorMoved: the first coordinator the worker
// finds answers each coordinator error once; the worker finds the
// coordinator again (the real one), stages there and commits.
func TestTransactionalCoordinatorMoved(t *testing.T) {
	for name, code := range map[string]int16{"not-coordinator": kerr.NotCoordinator.Code, "not-available": kerr.CoordinatorNotAvailable.Code, "loading": kerr.CoordinatorLoadInProgress.Code} {
		t.Run(name, func(t *testing.T) {
			tg, e := newServed(t, 95)
			cfg := testConfig(t, 1)
			cfg.LockDuration = 30e9
			setup(t, tg, cfg)
			produceInputs(t, tg, cfg, "in", 2, 2)
			w := newWorker(t, tg, cfg, vocab.Transactional, 0)
			inner := txnInner(w)
			fake, requests := fakeCoordinator(t, 95, code)
			var lookups atomic.Int32
			inner.coordinator = func(ctx context.Context) (string, error) {
				if lookups.Add(1) == 1 {
					return fake, nil
				}
				return inner.findCoordinator(ctx)
			}
			ctx := ctxT(t)
			var recs []*targets.Record
			pollUntil(t, w, func(rs []*targets.Record) { recs = append(recs, rs...) }, func() bool { return len(recs) >= 2 })
			must(t, w.Begin(ctx))
			must(t, w.StageAcks(ctx, recs, vocab.AckAccept))
			must(t, w.Commit(ctx))
			if got := requests.Load(); got != 1 {
				t.Errorf("the moved coordinator got %d requests, want 1", got)
			}
			if got := lookups.Load(); got != 2 {
				t.Errorf("the coordinator was looked up %d times, want 2 (once more after it moved)", got)
			}
			if st := waitState(t, e, cfg, recs[0], engine.StateAcknowledged); st != engine.StateAcknowledged {
				t.Errorf("record after the commit: %v, want ACKNOWLEDGED", st)
			}
		})
	}
}

// TestTransactionalCoordinatorNeverFound: a coordinator that keeps
// answering NOT_COORDINATOR gets coordinatorAttempts requests, and the
// staging then fails abortable with NOT_COORDINATOR.
func TestTransactionalCoordinatorNeverFound(t *testing.T) {
	tg, _ := newServed(t, 95)
	cfg := testConfig(t, 1)
	cfg.LockDuration = 30e9
	setup(t, tg, cfg)
	produceInputs(t, tg, cfg, "in", 1, 1)
	w := newWorker(t, tg, cfg, vocab.Transactional, 0)
	fake, requests := fakeCoordinator(t, 95, kerr.NotCoordinator.Code)
	txnInner(w).coordinator = func(context.Context) (string, error) { return fake, nil }
	ctx := ctxT(t)
	var recs []*targets.Record
	pollUntil(t, w, func(rs []*targets.Record) { recs = append(recs, rs...) }, func() bool { return len(recs) >= 1 })
	must(t, w.Begin(ctx))
	err := w.StageAcks(ctx, recs, vocab.AckAccept)
	if !errors.Is(err, kerr.NotCoordinator) || !errors.Is(err, targets.ErrAbortable) {
		t.Fatalf("StageAcks = %v, want an abortable NOT_COORDINATOR", err)
	}
	if got := requests.Load(); got != coordinatorAttempts {
		t.Errorf("the coordinator got %d requests, want %d", got, coordinatorAttempts)
	}
	must(t, w.Abort(ctx))
}
