// This file runs the targets.Target conformance suite against the real
// broker through the Kafka target. Kafka reports the start offsets its
// share coordinator persisted, which lag the last acknowledgements
// (docs/real-kafka.md), hence LaggingStartOffsets.

package kafkait

import (
	"context"
	"testing"

	"github.com/sharebench/sharebench/loadgen/targets"
	"github.com/sharebench/sharebench/loadgen/targets/kafkatarget"
	"github.com/sharebench/sharebench/loadgen/targets/targettest"
)

func TestConformance(t *testing.T) {
	b := brokers(t)
	targettest.Run(t, func(t *testing.T) targets.Target {
		ctx, cancel := context.WithTimeout(context.Background(), 2*pingTimeout)
		defer cancel()
		tg, err := kafkatarget.New(ctx, kafkatarget.Options{Brokers: []string{b}, PingTimeout: pingTimeout})
		if err != nil {
			t.Fatalf("kafkatarget.New(%s): %v", b, err)
		}
		t.Cleanup(func() { tg.Close() })
		return tg
	}, targettest.LaggingStartOffsets())
}
