// This file holds the conversions between targets.Record and *kgo.Record.

package kafkatarget

import (
	"context"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sharebench/sharebench/loadgen/targets"
)

// produceBuf holds the kgo records one producing client reuses from call
// to call: produceSync returns only once kgo has finished every record it
// was given (ProduceSync waits for each record's promise), after which kgo
// keeps no reference to them. A produceBuf serves one goroutine at a time
// (targets.Producer and targets.Worker calls do not overlap).
type produceBuf struct {
	recs []kgo.Record
	ptrs []*kgo.Record
}

// toKgo returns the records to produce for recs, in b's memory; a record
// without a topic goes to defaultTopic.
func (b *produceBuf) toKgo(recs []*targets.Record, defaultTopic string) ([]*kgo.Record, error) {
	if cap(b.recs) < len(recs) {
		b.recs = make([]kgo.Record, len(recs))
		b.ptrs = make([]*kgo.Record, len(recs))
	}
	out := b.ptrs[:len(recs)]
	for i, r := range recs {
		if r == nil {
			return nil, fmt.Errorf("kafka: record %d of %d is nil", i, len(recs))
		}
		topic := r.Topic
		if topic == "" {
			topic = defaultTopic
		}
		if topic == "" {
			return nil, fmt.Errorf("kafka: record %d of %d has no topic", i, len(recs))
		}
		b.recs[i] = kgo.Record{Topic: topic, Key: r.Key, Value: r.Value}
		out[i] = &b.recs[i]
	}
	return out, nil
}

// release forgets the keys and values of the last call, so the buffer
// keeps none of the caller's memory alive.
func (b *produceBuf) release(n int) {
	clear(b.recs[:n])
	clear(b.ptrs[:n])
}

// produceSync produces recs through cl, waits for every acknowledgement and
// writes the partition and offset back into recs. b is the caller's
// reusable record buffer.
func produceSync(ctx context.Context, cl *kgo.Client, b *produceBuf, recs []*targets.Record, defaultTopic string) error {
	if len(recs) == 0 {
		return nil
	}
	krs, err := b.toKgo(recs, defaultTopic)
	if err != nil {
		return err
	}
	defer b.release(len(krs))
	results := cl.ProduceSync(ctx, krs...)
	var errs []error
	for i, res := range results {
		if res.Err != nil {
			errs = append(errs, res.Err)
			continue
		}
		recs[i].Topic = krs[i].Topic
		recs[i].Partition = krs[i].Partition
		recs[i].Offset = krs[i].Offset
	}
	if len(errs) > 0 {
		return fmt.Errorf("kafka: producing %d of %d records failed: %w", len(errs), len(recs), errors.Join(dedupErrs(errs)...))
	}
	return nil
}

// dedupErrs keeps the first of each distinct error text, so a failed batch of
// a thousand records reports one cause.
func dedupErrs(errs []error) []error {
	seen := make(map[string]bool, len(errs))
	var out []error
	for _, err := range errs {
		if s := err.Error(); !seen[s] {
			seen[s] = true
			out = append(out, err)
		}
	}
	return out
}

// recordSlab hands out the targets.Records of one poll from one
// allocation (the records live as long as the caller holds any of them).
type recordSlab struct{ buf []targets.Record }

// fromKgo converts a fetched record into the slab; Handle keeps the
// *kgo.Record for acks. n is how many records the poll holds, so the slab
// is allocated once per poll.
func (s *recordSlab) fromKgo(r *kgo.Record, n int) *targets.Record {
	if len(s.buf) == 0 {
		s.buf = make([]targets.Record, max(n, 1))
	}
	rec := &s.buf[0]
	s.buf = s.buf[1:]
	*rec = targets.Record{
		Topic:         r.Topic,
		Partition:     r.Partition,
		Offset:        r.Offset,
		Key:           r.Key,
		Value:         r.Value,
		DeliveryCount: int(r.DeliveryCount()),
		ProducerID:    r.ProducerID,
		ProducerEpoch: r.ProducerEpoch,
		Transactional: r.Attrs.IsTransactional(),
		Headers:       headersOf(r.Headers),
		Handle:        r,
	}
	return rec
}

// headersOf converts a record's headers (nil for none, the common case).
func headersOf(hs []kgo.RecordHeader) []targets.Header {
	if len(hs) == 0 {
		return nil
	}
	out := make([]targets.Header, len(hs))
	for i, h := range hs {
		out[i] = targets.Header{Key: h.Key, Value: h.Value}
	}
	return out
}

// handles returns the *kgo.Record behind each of recs.
func handles(recs []*targets.Record) ([]*kgo.Record, error) {
	out := make([]*kgo.Record, len(recs))
	for i, r := range recs {
		if r == nil {
			return nil, fmt.Errorf("kafka: record %d of %d is nil", i, len(recs))
		}
		kr, ok := r.Handle.(*kgo.Record)
		if !ok || kr == nil {
			return nil, fmt.Errorf("kafka: record %s/%d@%d was not polled from this target", r.Topic, r.Partition, r.Offset)
		}
		out[i] = kr
	}
	return out, nil
}

// pollErr turns the errors of a poll into one error, ignoring the context
// error of a poll that simply waited out its context.
func pollErr(ctx context.Context, fetches kgo.Fetches) error {
	var errs []error
	for _, fe := range fetches.Errors() {
		if ctx.Err() != nil && (errors.Is(fe.Err, context.Canceled) || errors.Is(fe.Err, context.DeadlineExceeded)) {
			continue
		}
		if errors.Is(fe.Err, kgo.ErrClientClosed) {
			return errClientClosed
		}
		if fe.Topic != "" {
			errs = append(errs, fmt.Errorf("%s/%d: %w", fe.Topic, fe.Partition, fe.Err))
		} else {
			errs = append(errs, fe.Err)
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("kafka: poll: %w", errors.Join(dedupErrs(errs)...))
}

var errClientClosed = errors.New("kafka: client is closed")

// wrapNewClient explains a failure to create a kgo client (bad options only:
// creating a client does not connect).
func wrapNewClient(what string, err error) error {
	return fmt.Errorf("kafka: creating the %s client: %w", what, err)
}
