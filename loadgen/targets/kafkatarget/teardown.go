// This file holds Teardown: dropping a finished mode's topics on a cluster
// that keeps them in memory.

package kafkatarget

import (
	"context"

	"github.com/sharebench/sharebench/internal/serve"
	"github.com/sharebench/sharebench/loadgen/targets"
)

// inMemory reports whether the cluster holds its topics in memory: the
// embedded kfake cluster, or sharebench serve (which names itself by its
// cluster id; with a data directory it refuses deletion, which Teardown
// ignores). A real cluster's topics are left for the user to inspect.
func (t *Target) inMemory(ctx context.Context) bool {
	if t.cluster != nil {
		return true
	}
	m, err := t.adm.BrokerMetadata(ctx)
	return err == nil && m.Cluster == serve.ClusterID
}

// Teardown deletes the mode's topics from an in-memory cluster once the
// mode is measured and verified, so a run of many modes holds one mode's
// records at a time. Elsewhere it does nothing.
func (t *Target) Teardown(ctx context.Context, cfg targets.Config) error {
	if !t.inMemory(ctx) {
		return nil
	}
	topics := []string{cfg.InputTopic, cfg.OutputTopic}
	if cfg.DLQTopic != "" {
		topics = append(topics, cfg.DLQTopic)
	}
	_, err := t.adm.DeleteTopics(ctx, topics...)
	return err
}
