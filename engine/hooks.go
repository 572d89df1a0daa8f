// This file holds the hook seam: one entry point at which tests and the
// fault scheduler observe, delay or fail engine operations, so fault
// injection never reaches into internals (kfake's ControlKey idea).

package engine

import "errors"

// HookPoint names a place in the engine where the hook is called.
type HookPoint string

// Hook points.
const (
	// HookStageWrite: share acks are staged (TX_PENDING) and about to be
	// made durable. An error fails the staging: the records go back to
	// ACQUIRED per the FailedStageNoLock knob.
	HookStageWrite HookPoint = "share.stage.write"
	// HookTxnPrepared: the decision (PREPARE_COMMIT or PREPARE_ABORT) is
	// logged, no marker written yet.
	HookTxnPrepared HookPoint = "txn.prepared"
	// HookTxnMarker: one participant's marker was applied (HookInfo.Marker
	// counts them from 1).
	HookTxnMarker HookPoint = "txn.marker"
	// HookTxnCompleted: COMPLETE_COMMIT or COMPLETE_ABORT is logged.
	HookTxnCompleted HookPoint = "txn.completed"
	// HookTxnOngoing: acknowledgements or classic offsets were added to
	// the ONGOING transaction and logged (a crash point inside a
	// transaction).
	HookTxnOngoing HookPoint = "txn.ongoing"
)

// HookInfo describes the operation at a hook point.
type HookInfo struct {
	TransactionalID string
	ProducerID      int64
	Epoch           int16
	Commit          bool
	Marker          int // markers applied so far, at HookTxnMarker
	Markers         int // markers this transaction needs
	Group           string
	Topic           string
	Partition       int32
}

// Hook is called at each HookPoint with the shard lock of the operation
// held: it must not call back into the engine. HookStageWrite honours a
// returned error (the staging write fails); at the other points an error
// is ignored, except one wrapping ErrInjectedCrash.
//
// With a data directory, an error wrapping ErrInjectedCrash at any point
// crashes the engine right there, deterministically: what was logged up
// to the point is made durable, the operation stops (it returns
// ErrCrashed) and so does every later call, until Restart. So a crash
// "after PREPARE_COMMIT is logged, before any marker" is HookTxnPrepared;
// "after k markers" is HookTxnMarker with Marker == k; "after all markers,
// before COMPLETE_COMMIT" is HookTxnMarker with Marker == Markers; after
// COMPLETE_COMMIT is HookTxnCompleted; Commit false gives the abort cases.
type Hook func(HookPoint, HookInfo) error

// callHook calls the hook at pt. Only an injected crash (a returned error
// wrapping ErrInjectedCrash, with a data directory) counts: the engine
// crashes there and callHook returns ErrCrashed; other errors are ignored
// (the in-memory engine has nothing to fail at these points).
func (e *Engine) callHook(pt HookPoint, info HookInfo) error {
	if e.cfg.hook == nil {
		return nil
	}
	err := e.cfg.hook(pt, info)
	if e.injectedCrash(err) {
		return ErrCrashed
	}
	if err != nil && e.dur != nil && errors.Is(err, ErrInjectedCoordinatorCrash) && pt != HookStageWrite {
		if ferr := e.jrn().g.Flush(); ferr != nil {
			return e.journalFailed(ferr)
		}
		return errCoordinatorCrash
	}
	return nil
}

// injectedCrash crashes the engine, after making durable what was
// appended so far, when err is an injected crash.
func (e *Engine) injectedCrash(err error) bool {
	if err == nil || e.dur == nil || !errors.Is(err, ErrInjectedCrash) {
		return false
	}
	e.crashNow(true)
	return true
}
