// This file holds PendingBound: how many input records the broker does not yet
// hold terminal, from the input's end offsets and the share-partition start
// offsets (a classic group's committed offsets), so the load generator's
// drain ends once every record is done, archived ones included.

package kafkatarget

import (
	"context"
	"fmt"
	"strings"

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
	inputs := cfg.Inputs()
	ends, err := t.adm.ListEndOffsets(ctx, inputs...)
	if err == nil {
		err = ends.Error()
	}
	if err != nil {
		return 0, fmt.Errorf("kafka: listing the end offsets of %s: %w", strings.Join(inputs, ", "), err)
	}
	var starts kadm.ListedOffsets
	var n int64
	for _, in := range inputs {
		for p := range partitions(cfg.InputPartitions) {
			end, ok := ends.Lookup(in, p)
			if !ok {
				return 0, fmt.Errorf("kafka: no end offset for %s/%d", in, p)
			}
			// Inspect numbers partitions across the input topics.
			from, ok := st.SPSO[cfg.GlobalPartition(in, p)]
			if !ok {
				if starts == nil {
					if starts, err = t.adm.ListStartOffsets(ctx, inputs...); err == nil {
						err = starts.Error()
					}
					if err != nil {
						return 0, fmt.Errorf("kafka: listing the start offsets of %s: %w", strings.Join(inputs, ", "), err)
					}
				}
				s, _ := starts.Lookup(in, p)
				from = s.Offset
			}
			if end.Offset > from {
				n += end.Offset - from
			}
		}
	}
	return n, nil
}
