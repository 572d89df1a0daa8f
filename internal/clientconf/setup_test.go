// This file holds what the cases set up and read back with the project's
// own franz-go clients: topics, records (plain and transactional), a share
// group's start offset, and the records a topic holds.

package clientconf

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func (s *server) ctx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), toolTimeout)
}

// createTopic creates topic with partitions partitions, replication 1.
func (s *server) createTopic(topic string, partitions int32) error {
	ctx, cancel := s.ctx()
	defer cancel()
	resp, err := s.adm.CreateTopic(ctx, partitions, 1, nil, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		return fmt.Errorf("setup: creating topic %s: %w", topic, err)
	}
	return nil
}

// produce writes values to one partition of topic, each keyed "k<i>".
func (s *server) produce(topic string, partition int32, values ...string) error {
	ctx, cancel := s.ctx()
	defer cancel()
	rs := make([]*kgo.Record, len(values))
	for i, v := range values {
		rs[i] = &kgo.Record{Topic: topic, Partition: partition, Key: fmt.Appendf(nil, "k%d", i), Value: []byte(v)}
	}
	if err := s.cl.ProduceSync(ctx, rs...).FirstErr(); err != nil {
		return fmt.Errorf("setup: producing to %s-%d: %w", topic, partition, err)
	}
	return nil
}

// txnProduce writes values to partition 0 of topic in one transaction of
// txnID, committed or aborted.
func (s *server) txnProduce(txnID, topic string, commit bool, values ...string) error {
	cl, err := s.txnClient(txnID)
	if err != nil {
		return err
	}
	defer cl.Close()
	ctx, cancel := s.ctx()
	defer cancel()
	if err := cl.BeginTransaction(); err != nil {
		return fmt.Errorf("setup: begin %s: %w", txnID, err)
	}
	for _, v := range values {
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte(v)}).FirstErr(); err != nil {
			return fmt.Errorf("setup: producing to %s in %s: %w", topic, txnID, err)
		}
	}
	if err := cl.EndTransaction(ctx, kgo.TransactionEndTry(commit)); err != nil {
		return fmt.Errorf("setup: ending %s (commit %v): %w", txnID, commit, err)
	}
	return s.awaitMarkers(topic)
}

// awaitMarkers waits until no transaction is open in topic: its last
// stable offset has reached its end. Kafka answers EndTxn once the
// decision is logged and writes the markers after, so a record produced
// next could land before the marker; the cases' expected offsets put each
// marker right after its transaction's records.
func (s *server) awaitMarkers(topic string) error {
	ctx, cancel := s.ctx()
	defer cancel()
	for {
		ends, err := s.adm.ListEndOffsets(ctx, topic)
		if err != nil {
			return fmt.Errorf("setup: end offsets of %s: %w", topic, err)
		}
		stable, err := s.adm.ListCommittedOffsets(ctx, topic)
		if err != nil {
			return fmt.Errorf("setup: last stable offsets of %s: %w", topic, err)
		}
		settled := true
		ends.Each(func(o kadm.ListedOffset) {
			if so, ok := stable.Lookup(o.Topic, o.Partition); !ok || so.Offset != o.Offset {
				settled = false
			}
		})
		if settled {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("setup: %s still has an undecided transaction after %v", topic, toolTimeout)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func (s *server) txnClient(txnID string) (*kgo.Client, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(s.addr), kgo.TransactionalID(txnID), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		return nil, fmt.Errorf("setup: transactional client %s: %w", txnID, err)
	}
	return cl, nil
}

// record is what a readback saw of one record.
type record struct {
	partition int32
	offset    int64
	key       string
	value     string
}

func (r record) String() string {
	return fmt.Sprintf("%d/%d %s=%s", r.partition, r.offset, r.key, r.value)
}

// sentinel is the value readCommitted appends to mark the end of a topic.
const sentinel = "<end-of-readback>"

// readCommitted returns the records a read_committed reader sees in every
// partition of topic, in partition then offset order. It first appends a
// plain sentinel record to each partition: a read_committed reader reaches
// it only once every transaction before it is decided, so reading up to
// the sentinels sees exactly what was committed, with no wait for silence.
func (s *server) readCommitted(topic string) ([]record, error) {
	ctx, cancel := s.ctx()
	defer cancel()
	td, err := s.adm.ListTopics(ctx, topic)
	if err != nil || td[topic].Err != nil {
		return nil, fmt.Errorf("readback: metadata of %s: %w", topic, errors.Join(err, td[topic].Err))
	}
	parts := td[topic].Partitions.Numbers()
	for _, p := range parts {
		if err := s.cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Partition: p, Value: []byte(sentinel)}).FirstErr(); err != nil {
			return nil, fmt.Errorf("readback: appending the end marker to %s-%d: %w", topic, p, err)
		}
	}
	offs := map[int32]kgo.Offset{}
	for _, p := range parts {
		offs[p] = kgo.NewOffset().AtStart()
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(s.addr), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: offs}))
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	var out []record
	ended := map[int32]bool{}
	for len(ended) < len(parts) {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			return out, fmt.Errorf("readback: %s: reached the end marker of %d of %d partitions within %v", topic, len(ended), len(parts), toolTimeout)
		}
		if err := fs.Err0(); err != nil {
			return out, fmt.Errorf("readback: %s: %w", topic, err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			if string(r.Value) == sentinel {
				ended[r.Partition] = true
				return
			}
			out = append(out, record{r.Partition, r.Offset, string(r.Key), string(r.Value)})
		})
	}
	slices.SortFunc(out, func(a, b record) int {
		if a.partition != b.partition {
			return int(a.partition - b.partition)
		}
		return int(a.offset - b.offset)
	})
	return out, nil
}

// values lists the records' values.
func values(rs []record) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.value
	}
	return out
}

// setShareEarliest sets share.auto.offset.reset=earliest on a share group,
// before it first consumes: a new share group starts at the log end
// otherwise, and never sees the records produced before it.
func (s *server) setShareEarliest(group string) error {
	ctx, cancel := s.ctx()
	defer cancel()
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	res := kmsg.NewIncrementalAlterConfigsRequestResource()
	res.ResourceType = kmsg.ConfigResourceTypeGroupConfig
	res.ResourceName = group
	c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
	c.Name, c.Value, c.Op = "share.auto.offset.reset", kmsg.StringPtr("earliest"), kmsg.IncrementalAlterConfigOpSet
	res.Configs = append(res.Configs, c)
	req.Resources = append(req.Resources, res)
	resp, err := req.RequestWith(ctx, s.cl)
	if err == nil && len(resp.Resources) == 1 {
		err = kerr.ErrorForCode(resp.Resources[0].ErrorCode)
	}
	if err != nil {
		return fmt.Errorf("setup: share.auto.offset.reset=earliest on group %s: %w", group, err)
	}
	return nil
}

// seq is n values prefix-0 … prefix-(n-1).
func seq(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s-%d", prefix, i)
	}
	return out
}

// sameValues compares what a client saw with what it should have, in order.
func sameValues(what string, got, want []string) error {
	if slices.Equal(got, want) {
		return nil
	}
	return fmt.Errorf("%s: got %d values %s, want %d values %s", what, len(got), short(got), len(want), short(want))
}

// short prints a list of values, its middle elided when long.
func short(vs []string) string {
	if len(vs) > 8 {
		return "[" + strings.Join(vs[:4], " ") + " … " + strings.Join(vs[len(vs)-3:], " ") + "]"
	}
	return "[" + strings.Join(vs, " ") + "]"
}
