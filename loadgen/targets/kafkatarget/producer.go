// This file holds the input producer: an idempotent, non-transactional kgo
// client that produces synchronously with no linger.

package kafkatarget

import (
	"context"
	"strconv"
	"sync"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sharebench/sharebench/loadgen/targets"
)

// producer implements targets.Producer.
type producer struct {
	t     *Target
	cl    *kgo.Client
	topic string
	pb    produceBuf
	once  sync.Once
}

// NewProducer returns an idempotent producer of cfg.InputTopic records (a
// record with a topic of its own goes there).
func (t *Target) NewProducer(ctx context.Context, cfg targets.Config, id int) (targets.Producer, error) {
	// The tuning's default linger is 0: latency is measured per record,
	// so no record waits for its batch to fill unless asked to.
	// The run's codec, unless the input tuning (an OMB driver file) names
	// its own.
	opts := append(t.conn.clientOpts(t.conn.newDialer(), "producer-"+strconv.Itoa(id)), kgo.DefaultProduceTopic(cfg.InputTopic))
	opts = append(opts, compressionOpts(cfg.Compression)...)
	cl, err := kgo.NewClient(append(opts, t.input...)...)
	if err != nil {
		return nil, wrapNewClient("producer", err)
	}
	p := &producer{t: t, cl: cl, topic: cfg.InputTopic}
	if err := t.track(p); err != nil {
		cl.Close()
		return nil, err
	}
	return p, nil
}

// Produce writes recs and sets their partition and offset.
func (p *producer) Produce(ctx context.Context, recs []*targets.Record) error {
	return produceSync(ctx, p.cl, &p.pb, recs, p.topic)
}

// Close flushes nothing (Produce is synchronous) and closes the client.
func (p *producer) Close() error {
	p.t.untrack(p)
	p.closeForTarget()
	return nil
}

func (p *producer) closeForTarget() { p.once.Do(p.cl.Close) }
