// This file holds Setup: it creates the input and output topics, waits for
// their metadata, and writes the share group's configuration.

package kafkatarget

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sharebench/sharebench/loadgen/targets"
)

// setupTimeout bounds Setup when the caller's context has no deadline.
const setupTimeout = 60 * time.Second

// metadataPoll is how often Setup re-reads metadata while it waits for new
// topics to get leaders.
const metadataPoll = 50 * time.Millisecond

// Setup creates cfg's topics (replication factor and min.insync.replicas:
// cfg's, or the cluster's defaults where cfg leaves them 0) and sets
// the share group's configuration: share.auto.offset.reset=earliest, which
// correctness needs, and where the broker accepts them the lock duration,
// delivery limit and record-lock window of cfg. A refused optional setting
// becomes a note in Info, not an error.
func (t *Target) Setup(ctx context.Context, cfg targets.Config) error {
	if err := validateConfig(cfg); err != nil {
		return err
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, setupTimeout)
		defer cancel()
	}
	want := map[string]int32{}
	for _, in := range cfg.Inputs() {
		want[in] = partitions(cfg.InputPartitions)
	}
	if cfg.OutputTopic != "" {
		want[cfg.OutputTopic] = partitions(cfg.OutputPartitions)
	}
	rf := int16(-1) // the cluster's default.replication.factor
	if cfg.ReplicationFactor > 0 {
		rf = int16(cfg.ReplicationFactor)
	}
	var configs map[string]*string
	if cfg.MinInsyncReplicas > 0 {
		configs = map[string]*string{"min.insync.replicas": kmsg.StringPtr(strconv.Itoa(cfg.MinInsyncReplicas))}
	}
	for topic, n := range want {
		resp, err := t.adm.CreateTopic(ctx, n, rf, configs, topic)
		if err == nil {
			err = resp.Err
		}
		if err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
			if errors.Is(err, kerr.InvalidReplicationFactor) {
				return fmt.Errorf("kafka: creating topic %s with replication factor %d: %w; the cluster has fewer brokers: lower the workload's replicationFactor, or start more (scripts/kafka/up --nodes 3)", topic, rf, err)
			}
			return fmt.Errorf("kafka: creating topic %s with %d partitions: %w", topic, n, err)
		}
	}
	if cfg.DLQTopic != "" {
		if err := t.createDLQTopic(ctx, cfg); err != nil {
			return err
		}
		want[cfg.DLQTopic] = partitions(cfg.InputPartitions)
	}
	if err := t.waitTopics(ctx, want); err != nil {
		return err
	}
	if err := t.configureGroup(ctx, cfg); err != nil {
		return err
	}
	return t.configureDLQ(ctx, cfg)
}

func validateConfig(cfg targets.Config) error {
	switch {
	case cfg.InputTopic == "":
		return errors.New("kafka: config has no input topic")
	case cfg.Group == "":
		return errors.New("kafka: config has no group")
	case cfg.InputPartitions < 0 || cfg.OutputPartitions < 0:
		return fmt.Errorf("kafka: negative partition count (input %d, output %d)", cfg.InputPartitions, cfg.OutputPartitions)
	}
	if _, err := Codec(cfg.Compression); err != nil {
		return err
	}
	return nil
}

// partitions turns an unset partition count into 1.
func partitions(n int32) int32 {
	if n <= 0 {
		return 1
	}
	return n
}

// waitTopics waits until metadata shows every topic with all its partitions
// led.
func (t *Target) waitTopics(ctx context.Context, want map[string]int32) error {
	topics := make([]string, 0, len(want))
	for topic := range want {
		topics = append(topics, topic)
	}
	for {
		details, err := t.adm.ListTopics(ctx, topics...)
		if err == nil {
			ready := true
			for topic, n := range want {
				d, ok := details[topic]
				if !ok || d.Err != nil || int32(len(d.Partitions)) < n {
					ready = false
					break
				}
				for _, p := range d.Partitions {
					if p.Err != nil || p.Leader < 0 {
						ready = false
					}
				}
			}
			if ready {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("kafka: waiting for topics %v to appear in metadata: %w", topics, ctx.Err())
		case <-time.After(metadataPoll):
		}
	}
}

// configureGroup writes the per-group share configuration, one setting per
// request so a broker that refuses one setting does not take the others down
// with it.
func (t *Target) configureGroup(ctx context.Context, cfg targets.Config) error {
	if err := t.SetShareGroupEarliest(ctx, cfg.Group); err != nil {
		return fmt.Errorf("%w (needed so the group sees records produced before it first polls)", err)
	}
	type setting struct{ group, broker, value string }
	var settings []setting
	if cfg.LockDuration > 0 {
		settings = append(settings, setting{"share.record.lock.duration.ms", "group.share.record.lock.duration.ms", strconv.FormatInt(cfg.LockDuration.Milliseconds(), 10)})
	}
	if cfg.DeliveryLimit > 0 {
		settings = append(settings, setting{"share.delivery.count.limit", "group.share.delivery.count.limit", strconv.Itoa(cfg.DeliveryLimit)})
	}
	if cfg.MaxRecordLocks > 0 {
		settings = append(settings, setting{"share.partition.max.record.locks", "group.share.partition.max.record.locks", strconv.Itoa(cfg.MaxRecordLocks)})
	}
	for _, s := range settings {
		if err := t.alterConfig(ctx, kmsg.ConfigResourceTypeGroupConfig, cfg.Group, s.group, s.value); err != nil {
			t.note(fmt.Sprintf("the broker refused %s=%s for group %s (%v); the group runs with the broker's default", s.group, s.value, cfg.Group, err))
		}
		if t.cluster == nil {
			continue
		}
		// kfake accepts the per-group share.* settings but applies only
		// the broker-wide group.share.* defaults, so the embedded
		// cluster, which serves this run alone, gets them broker-wide.
		if err := t.alterConfig(ctx, kmsg.ConfigResourceTypeBroker, "", s.broker, s.value); err != nil {
			t.note(fmt.Sprintf("the embedded kfake cluster refused %s=%s (%v); it runs with its default", s.broker, s.value, err))
			continue
		}
		t.note("kfake applies share-group lock duration, delivery limit and record-lock window only from its broker-wide group.share.* configs: the embedded cluster sets them broker-wide as well as on the group")
	}
	return nil
}

// dlqTopicEnable is the topic config Kafka 4.4 requires on a share group's
// dead-letter topic before it writes there (KIP-1191).
const dlqTopicEnable = "errors.deadletterqueue.group.enable"

// createDLQTopic creates the dead-letter topic with as many partitions as
// the input (Kafka writes a dead letter to the partition of its source,
// modulo the count) and with dlqTopicEnable set.
func (t *Target) createDLQTopic(ctx context.Context, cfg targets.Config) error {
	n := partitions(cfg.InputPartitions)
	resp, err := t.adm.CreateTopic(ctx, n, -1, map[string]*string{dlqTopicEnable: kmsg.StringPtr("true")}, cfg.DLQTopic)
	if err == nil {
		err = resp.Err
	}
	if err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
		return fmt.Errorf("kafka: creating the dead-letter topic %s with %s=true: %w (a share-group DLQ needs Kafka 4.4+ with share.version=2)", cfg.DLQTopic, dlqTopicEnable, err)
	}
	return nil
}

// configureDLQ sets the group's dead-letter configs (KIP-1191). They are
// not optional: a broker that refuses them writes no dead letters, and the
// verifier would report every one missing.
func (t *Target) configureDLQ(ctx context.Context, cfg targets.Config) error {
	if cfg.DLQTopic == "" {
		return nil
	}
	for _, s := range [][2]string{
		{"errors.deadletterqueue.topic.name", cfg.DLQTopic},
		{"errors.deadletterqueue.copy.record.enable", strconv.FormatBool(cfg.DLQCopyRecord)},
	} {
		if err := t.alterConfig(ctx, kmsg.ConfigResourceTypeGroupConfig, cfg.Group, s[0], s[1]); err != nil {
			return fmt.Errorf("kafka: setting %s=%s on group %s: %w (a share-group DLQ needs Kafka 4.4+ with share.version=2; drop the workload's errors.deadletterqueue.* fields for other brokers)", s[0], s[1], cfg.Group, err)
		}
	}
	return nil
}

// alterConfig sets one config of one resource with IncrementalAlterConfigs.
func (t *Target) alterConfig(ctx context.Context, typ kmsg.ConfigResourceType, name, key, value string) error {
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	res := kmsg.NewIncrementalAlterConfigsRequestResource()
	res.ResourceType = typ
	res.ResourceName = name
	c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
	c.Name = key
	c.Value = kmsg.StringPtr(value)
	c.Op = kmsg.IncrementalAlterConfigOpSet
	res.Configs = append(res.Configs, c)
	req.Resources = append(req.Resources, res)
	shards := t.admin.RequestSharded(ctx, req)
	var errs []error
	for _, sh := range shards {
		if sh.Err != nil {
			errs = append(errs, sh.Err)
			continue
		}
		resp := sh.Resp.(*kmsg.IncrementalAlterConfigsResponse)
		for _, r := range resp.Resources {
			if err := kerr.ErrorForCode(r.ErrorCode); err != nil {
				if r.ErrorMessage != nil && *r.ErrorMessage != "" {
					err = fmt.Errorf("%s: %w", *r.ErrorMessage, err)
				}
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}
