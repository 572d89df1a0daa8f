// This file holds Inspect: the share-partition start offsets of the input
// topic, read with DescribeShareGroupOffsets (KIP-932). Kafka exposes no
// per-record share state, so ShareState.Records stays empty.

package kafkatarget

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sharebench/sharebench/loadgen/targets"
)

var errNoReaderTopic = errors.New("kafka: reader needs a topic")

// Inspect returns the share-partition start offset of every input partition
// the group has started; a partition the group never fetched has none and is
// absent from SPSO. Records is empty: Kafka does not expose per-record state.
func (t *Target) Inspect(ctx context.Context, cfg targets.Config) (*targets.ShareState, error) {
	if err := validateConfig(cfg); err != nil {
		return nil, err
	}
	if t.versions != nil && !hasKey(t.versions, kmsg.DescribeShareGroupOffsets) {
		return nil, fmt.Errorf("kafka: the broker does not advertise DescribeShareGroupOffsets (KIP-932), so share state cannot be inspected: %w", targets.ErrUnsupported)
	}
	req := kmsg.NewPtrDescribeShareGroupOffsetsRequest()
	rg := kmsg.NewDescribeShareGroupOffsetsRequestGroup()
	rg.GroupID = cfg.Group
	for _, in := range cfg.Inputs() {
		rt := kmsg.NewDescribeShareGroupOffsetsRequestGroupTopic()
		rt.Topic = in
		for p := range partitions(cfg.InputPartitions) {
			rt.Partitions = append(rt.Partitions, p)
		}
		rg.Topics = append(rg.Topics, rt)
	}
	req.Groups = append(req.Groups, rg)

	kresp, err := describeShareGroupOffsets(ctx, t, req)
	if err != nil {
		if errors.Is(err, kerr.UnsupportedVersion) {
			return nil, fmt.Errorf("kafka: the broker cannot describe share group offsets (KIP-932): %w", targets.ErrUnsupported)
		}
		return nil, fmt.Errorf("kafka: describing the offsets of share group %s: %w", cfg.Group, err)
	}
	st := &targets.ShareState{SPSO: make(map[int32]int64)}
	for _, g := range kresp.Groups {
		if g.GroupID != cfg.Group {
			continue
		}
		if err := kerr.ErrorForCode(g.ErrorCode); err != nil {
			if errors.Is(err, kerr.GroupIDNotFound) {
				// Not a share group: a classic group (classic-eos) reports
				// its committed offsets, below which every record is done.
				return t.classicState(ctx, cfg)
			}
			return nil, fmt.Errorf("kafka: describing the offsets of share group %s: %w", cfg.Group, err)
		}
		for _, tp := range g.Topics {
			if cfg.GlobalPartition(tp.Topic, 0) < 0 {
				continue
			}
			for _, p := range tp.Partitions {
				if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
					return nil, fmt.Errorf("kafka: describing the offsets of share group %s, partition %s/%d: %w", cfg.Group, tp.Topic, p.Partition, err)
				}
				if p.StartOffset >= 0 {
					st.SPSO[cfg.GlobalPartition(tp.Topic, p.Partition)] = p.StartOffset
				}
			}
		}
	}
	if len(st.SPSO) == 0 {
		// Kafka answers DescribeShareGroupOffsets for a classic group id
		// with no error and start offset -1 on every partition (kfake
		// says GROUP_ID_NOT_FOUND): with no start offset at all, look for
		// a classic group's committed offsets too.
		if cs, err := t.classicState(ctx, cfg); err == nil && len(cs.SPSO) > 0 {
			return cs, nil
		}
	}
	return st, nil
}

// inspectAttempts bounds the tries of a describe that fails in transport.
const inspectAttempts = 3

// describeShareGroupOffsets issues req, trying again after a transport
// error: after a broker restart, kgo's sharded DescribeShareGroupOffsets does
// not retry its FindCoordinator when the admin client's old connection
// answers EOF. A describe is read-only, so it is simply sent again (on a new
// connection).
func describeShareGroupOffsets(ctx context.Context, t *Target, req *kmsg.DescribeShareGroupOffsetsRequest) (*kmsg.DescribeShareGroupOffsetsResponse, error) {
	for attempt := 1; ; attempt++ {
		resp, err := req.RequestWith(ctx, t.admin)
		if err == nil || attempt == inspectAttempts || errors.Is(err, kerr.UnsupportedVersion) {
			return resp, err
		}
		select {
		case <-ctx.Done():
			return resp, err
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// hasKey reports whether resp advertises key.
func hasKey(resp *kmsg.ApiVersionsResponse, key kmsg.Key) bool {
	for _, k := range resp.ApiKeys {
		if k.ApiKey == int16(key) {
			return true
		}
	}
	return false
}

// classicState reports a classic group's committed offsets as the boundary
// below which input records are terminal.
func (t *Target) classicState(ctx context.Context, cfg targets.Config) (*targets.ShareState, error) {
	st := &targets.ShareState{SPSO: make(map[int32]int64)}
	resp, err := kadm.NewClient(t.admin).FetchOffsets(ctx, cfg.Group)
	if err != nil {
		return nil, fmt.Errorf("kafka: fetching the committed offsets of group %s: %w", cfg.Group, err)
	}
	for _, parts := range resp {
		for p, o := range parts {
			if g := cfg.GlobalPartition(o.Topic, p); o.Err == nil && g >= 0 && o.At >= 0 {
				st.SPSO[g] = o.At
			}
		}
	}
	return st, nil
}
