// This file holds the output reader: a direct (group-less) consumer of every
// partition of one topic from its start, at a chosen isolation level.

package kafkatarget

import (
	"context"
	"sync"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sharebench/sharebench/loadgen/targets"
)

// reader implements targets.Reader.
type reader struct {
	t    *Target
	cl   *kgo.Client
	once sync.Once
	// markers: control records are kept and returned (NewMarkerReader).
	markers bool
}

// NewReader returns a reader of topic from its first offset; readCommitted
// selects read_committed, which hides aborted and still-open transactions.
func (t *Target) NewReader(ctx context.Context, cfg targets.Config, topic string, readCommitted bool) (targets.Reader, error) {
	if topic == "" {
		topic = cfg.OutputTopic
	}
	if topic == "" {
		return nil, errNoReaderTopic
	}
	level, name := kgo.ReadUncommitted(), "reader-uncommitted"
	if readCommitted {
		level, name = kgo.ReadCommitted(), "reader-committed"
	}
	cl, err := kgo.NewClient(append(t.conn.clientOpts(t.conn.newDialer(), name),
		kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(level),
	)...)
	if err != nil {
		return nil, wrapNewClient("reader", err)
	}
	r := &reader{t: t, cl: cl}
	if err := t.track(r); err != nil {
		cl.Close()
		return nil, err
	}
	return r, nil
}

// Poll returns the records fetched since the last call, waiting until some
// arrive or ctx is done.
func (r *reader) Poll(ctx context.Context) ([]*targets.Record, error) {
	fetches := r.cl.PollFetches(ctx)
	n := fetches.NumRecords()
	var recs []*targets.Record
	if n > 0 {
		recs = make([]*targets.Record, 0, n)
	}
	var slab recordSlab
	fetches.EachRecord(func(kr *kgo.Record) {
		rec := slab.fromKgo(kr, n)
		if kr.Attrs.IsControl() {
			if !r.markers {
				return
			}
			rec.Control, rec.Key, rec.Value = controlOf(kr), nil, nil
		}
		recs = append(recs, rec)
	})
	if len(recs) == 0 {
		if err := pollErr(ctx, fetches); err != nil {
			return nil, err
		}
	}
	return recs, nil
}

// Close closes the client.
func (r *reader) Close() error {
	r.t.untrack(r)
	r.closeForTarget()
	return nil
}

func (r *reader) closeForTarget() { r.once.Do(r.cl.Close) }
