// This file classifies the broker's fencing errors for the load generator:
// a worker whose producer was fenced or whose member left its group must be
// replaced, and loadgen recognises that by targets.ErrFenced, not by text.

package kafkatarget

import (
	"context"
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/sharebench/sharebench/loadgen/targets"
	"github.com/sharebench/sharebench/vocab"
)

// fencingErrors are the broker errors after which a client cannot go on.
var fencingErrors = []error{
	kerr.ProducerFenced, kerr.InvalidProducerEpoch,
	kerr.UnknownMemberID, kerr.IllegalGeneration, kerr.FencedInstanceID,
	kerr.FencedMemberEpoch,
}

// classify wraps a fencing error with targets.ErrFenced. An error already
// marked targets.ErrAbortable (a staging that failed, for a stale member
// epoch among other causes) stays abortable: the worker aborts and goes on,
// unless its producer was fenced.
func classify(err error) error {
	if err == nil || errors.Is(err, targets.ErrFenced) {
		return err
	}
	if errors.Is(err, targets.ErrAbortable) && !errors.Is(err, kerr.ProducerFenced) && !errors.Is(err, kerr.InvalidProducerEpoch) {
		return err
	}
	for _, f := range fencingErrors {
		if errors.Is(err, f) {
			return targets.Fenced(err)
		}
	}
	return err
}

// classifiedWorker classifies every error of the worker it wraps.
type classifiedWorker struct{ w targets.Worker }

func classified[W targets.Worker](w W, err error) (targets.Worker, error) {
	if err != nil {
		return nil, err
	}
	return classifiedWorker{w}, nil
}

func (c classifiedWorker) Poll(ctx context.Context, max int) ([]*targets.Record, error) {
	recs, err := c.w.Poll(ctx, max)
	return recs, classify(err)
}

func (c classifiedWorker) Produce(ctx context.Context, recs []*targets.Record) error {
	return classify(c.w.Produce(ctx, recs))
}

func (c classifiedWorker) Ack(ctx context.Context, recs []*targets.Record, t vocab.AckType) error {
	return classify(c.w.Ack(ctx, recs, t))
}

func (c classifiedWorker) Renew(ctx context.Context, recs []*targets.Record) error {
	return classify(c.w.Renew(ctx, recs))
}

func (c classifiedWorker) Begin(ctx context.Context) error { return classify(c.w.Begin(ctx)) }

func (c classifiedWorker) StageAcks(ctx context.Context, recs []*targets.Record, t vocab.AckType) error {
	return classify(c.w.StageAcks(ctx, recs, t))
}

func (c classifiedWorker) Commit(ctx context.Context) error { return classify(c.w.Commit(ctx)) }

func (c classifiedWorker) Abort(ctx context.Context) error { return classify(c.w.Abort(ctx)) }

func (c classifiedWorker) TxnInfo() (string, int16) { return c.w.TxnInfo() }

// ProducerID passes the wrapped worker's producer id through.
func (c classifiedWorker) ProducerID() int64 {
	if p, ok := c.w.(targets.ProducerIDer); ok {
		return p.ProducerID()
	}
	return 0
}

func (c classifiedWorker) Crash() { c.w.Crash() }

func (c classifiedWorker) Close(ctx context.Context) error { return c.w.Close(ctx) }
