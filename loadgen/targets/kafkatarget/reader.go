// This file holds the output reader: a direct (group-less) consumer of every
// partition of one topic from its start, at a chosen isolation level.

package kafkatarget

import (
	"context"
	"fmt"
	"sync"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sharebench/sharebench/loadgen/targets"
)

// reader implements targets.Reader.
type reader struct {
	t    *Target
	cl   *kgo.Client
	once sync.Once
	// markers: control records are returned (NewMarkerReader); every
	// reader keeps them from the client, so its position passes them.
	markers bool
	// pos is, per partition, the offset past the last record or marker
	// fetched. The client's own position is not exposed: it also passes
	// batches of aborted transactions that read_committed drops, which
	// this cannot see, so a read_committed position whose last records
	// below the end belong to an aborted transaction whose marker lies
	// above it stays short of the end (only while another transaction
	// holds the last stable offset down).
	pos map[int32]int64
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
		kgo.KeepControlRecords(),
	)...)
	if err != nil {
		return nil, wrapNewClient("reader", err)
	}
	r := &reader{t: t, cl: cl, pos: map[int32]int64{}}
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
		if kr.Offset >= r.pos[kr.Partition] {
			r.pos[kr.Partition] = kr.Offset + 1
		}
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

// Positions returns, per partition, the offset past the last record or
// transaction marker fetched. It is called from the goroutine that polls.
func (r *reader) Positions() map[int32]int64 {
	out := make(map[int32]int64, len(r.pos))
	for p, o := range r.pos {
		out[p] = o
	}
	return out
}

// EndOffsets lists each partition's last stable offset (read_committed) or
// high watermark, as ListOffsets answers at that isolation level.
func (t *Target) EndOffsets(ctx context.Context, _ targets.Config, topic string, readCommitted bool) (map[int32]int64, error) {
	list := t.adm.ListEndOffsets
	if readCommitted {
		list = t.adm.ListCommittedOffsets
	}
	listed, err := list(ctx, topic)
	if err != nil {
		return nil, fmt.Errorf("listing the end offsets of %s: %w", topic, err)
	}
	if err := listed.Error(); err != nil {
		return nil, fmt.Errorf("listing the end offsets of %s: %w", topic, err)
	}
	out := map[int32]int64{}
	listed.Each(func(o kadm.ListedOffset) {
		if o.Topic == topic && o.Partition >= 0 {
			out[o.Partition] = o.Offset
		}
	})
	if len(out) == 0 {
		return nil, fmt.Errorf("listing the end offsets of %s: no partition listed", topic)
	}
	return out, nil
}

// Close closes the client.
func (r *reader) Close() error {
	r.t.untrack(r)
	r.closeForTarget()
	return nil
}

func (r *reader) closeForTarget() { r.once.Do(r.cl.Close) }
