// This file holds what the target lends to a caller that drives franz-go
// itself (sharebench peer): a client set up as the target's own, and the
// share group's offset-reset setting.

package kafkatarget

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Client returns a new franz-go client set up as the target's own clients
// are (its seed brokers, the client id prefix with name after it, SASL,
// TLS, no client metrics, uncompressed batches), with extra applied after
// those so it can override them. The caller closes it; Close of the target
// does not.
func (t *Target) Client(name string, extra ...kgo.Opt) (*kgo.Client, error) {
	cl, err := kgo.NewClient(append(t.conn.clientOpts(t.conn.newDialer(), name), extra...)...)
	if err != nil {
		return nil, fmt.Errorf("kafka: creating the %s client: %w", name, err)
	}
	return cl, nil
}

// SetShareGroupEarliest sets share.auto.offset.reset=earliest on group, as
// Setup does for a run's group, so a share consumer that joins after
// records were produced still reads them.
func (t *Target) SetShareGroupEarliest(ctx context.Context, group string) error {
	if err := t.alterConfig(ctx, kmsg.ConfigResourceTypeGroupConfig, group, "share.auto.offset.reset", "earliest"); err != nil {
		return fmt.Errorf("kafka: setting share.auto.offset.reset=earliest on group %s: %w", group, err)
	}
	return nil
}
