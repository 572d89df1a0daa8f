// This file holds PendingBound: how many input records the broker does not yet
// hold terminal, from the input's end offsets and the share-partition start
// offsets (a classic group's committed offsets), so the load generator's
// drain ends once every record is done, archived ones included.

package kafkatarget

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/sharebench/sharebench/loadgen/targets"
)

// PendingBound counts, over the input partitions, the records from the
// share-partition start offset (for a classic group, the committed offset;
// for a partition the group never started, the log start) to the end
// offset. Every record below the start offset is terminal (acknowledged,
// rejected or archived at the delivery limit); records above it may be
// terminal too, so the count is an upper bound, and it is zero exactly when
// every input record is terminal. Without it, a record archived at the
// delivery limit, which never gets an output, would keep the drain waiting
// until its timeout. An error (a broker without DescribeShareGroupOffsets)
// leaves the drain to count outputs alone.
func (t *Target) PendingBound(ctx context.Context, cfg targets.Config) (int64, error) {
	st, err := t.Inspect(ctx, cfg)
	if err != nil {
		return 0, err
	}
	ends, err := t.adm.ListEndOffsets(ctx, cfg.InputTopic)
	if err == nil {
		err = ends.Error()
	}
	if err != nil {
		return 0, fmt.Errorf("kafka: listing the end offsets of %s: %w", cfg.InputTopic, err)
	}
	var starts kadm.ListedOffsets
	var n int64
	for p := range partitions(cfg.InputPartitions) {
		end, ok := ends.Lookup(cfg.InputTopic, p)
		if !ok {
			return 0, fmt.Errorf("kafka: no end offset for %s/%d", cfg.InputTopic, p)
		}
		from, ok := st.SPSO[p]
		if !ok {
			if starts == nil {
				if starts, err = t.adm.ListStartOffsets(ctx, cfg.InputTopic); err == nil {
					err = starts.Error()
				}
				if err != nil {
					return 0, fmt.Errorf("kafka: listing the start offsets of %s: %w", cfg.InputTopic, err)
				}
			}
			s, _ := starts.Lookup(cfg.InputTopic, p)
			from = s.Offset
		}
		if end.Offset > from {
			n += end.Offset - from
		}
	}
	return n, nil
}
