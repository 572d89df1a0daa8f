// This file holds the configurations DescribeConfigs and
// IncrementalAlterConfigs serve: a share group's share.* settings (kept by
// the engine), the topic defaults reported for configs a topic does not
// set (topicconfigs.go holds topic configs), and read-only broker
// defaults.

package serve

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sharebench/sharebench/engine"
)

// groupConfigs lists a share group's settings by name.
func groupConfigs(c engine.GroupConfig) [][2]string {
	reset, iso := "latest", "read_uncommitted"
	if c.AutoOffsetReset == engine.ResetEarliest {
		reset = "earliest"
	}
	if c.Isolation == engine.ReadCommitted {
		iso = "read_committed"
	}
	return [][2]string{
		{"share.record.lock.duration.ms", strconv.FormatInt(c.LockDuration.Milliseconds(), 10)},
		{"share.delivery.count.limit", strconv.Itoa(c.DeliveryLimit)},
		{"share.partition.max.record.locks", strconv.Itoa(c.MaxRecordLocks)},
		{"share.auto.offset.reset", reset},
		{"share.isolation.level", iso},
		{"errors.deadletterqueue.topic.name", c.DLQTopic},
		{"errors.deadletterqueue.copy.record.enable", strconv.FormatBool(c.DLQCopyRecord)},
	}
}

// setGroupConfig applies one setting to c (op: 0 set, 1 delete = default).
func setGroupConfig(c *engine.GroupConfig, name string, value *string, op kmsg.IncrementalAlterConfigOp) error {
	def := engine.DefaultGroupConfig()
	v := ""
	if value != nil {
		v = *value
	}
	if op == kmsg.IncrementalAlterConfigOpDelete {
		switch name {
		case "share.record.lock.duration.ms":
			c.LockDuration = def.LockDuration
		case "share.delivery.count.limit":
			c.DeliveryLimit = def.DeliveryLimit
		case "share.partition.max.record.locks":
			c.MaxRecordLocks = def.MaxRecordLocks
		case "share.auto.offset.reset":
			c.AutoOffsetReset = def.AutoOffsetReset
		case "share.isolation.level":
			c.Isolation = def.Isolation
		case "errors.deadletterqueue.topic.name":
			c.DLQTopic = def.DLQTopic
		case "errors.deadletterqueue.copy.record.enable":
			c.DLQCopyRecord = def.DLQCopyRecord
		default:
			return fmt.Errorf("%w: unknown group config %q", engine.ErrInvalidConfig, name)
		}
		return nil
	}
	if op != kmsg.IncrementalAlterConfigOpSet {
		return fmt.Errorf("%w: operation %v on %q (only SET and DELETE)", engine.ErrInvalidConfig, op, name)
	}
	num := func() (int64, error) {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%w: %s=%q is not a number", engine.ErrInvalidConfig, name, v)
		}
		return n, nil
	}
	switch name {
	case "share.record.lock.duration.ms":
		n, err := num()
		if err != nil {
			return err
		}
		c.LockDuration = time.Duration(n) * time.Millisecond
	case "share.delivery.count.limit":
		n, err := num()
		if err != nil {
			return err
		}
		c.DeliveryLimit = int(n)
	case "share.partition.max.record.locks":
		n, err := num()
		if err != nil {
			return err
		}
		c.MaxRecordLocks = int(n)
	case "share.auto.offset.reset":
		switch v {
		case "earliest":
			c.AutoOffsetReset = engine.ResetEarliest
		case "latest":
			c.AutoOffsetReset = engine.ResetLatest
		default:
			return fmt.Errorf("%w: share.auto.offset.reset=%q (valid: earliest, latest)", engine.ErrInvalidConfig, v)
		}
	case "share.isolation.level":
		switch v {
		case "read_committed":
			c.Isolation = engine.ReadCommitted
		case "read_uncommitted":
			c.Isolation = engine.ReadUncommitted
		default:
			return fmt.Errorf("%w: share.isolation.level=%q (valid: read_committed, read_uncommitted)", engine.ErrInvalidConfig, v)
		}
	case "errors.deadletterqueue.topic.name":
		if strings.HasPrefix(v, "__") {
			return fmt.Errorf("%w: errors.deadletterqueue.topic.name=%q starts with __, which names internal topics", engine.ErrInvalidConfig, v)
		}
		c.DLQTopic = v
	case "errors.deadletterqueue.copy.record.enable":
		b, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("%w: errors.deadletterqueue.copy.record.enable=%q (valid: true, false)", engine.ErrInvalidConfig, v)
		}
		c.DLQCopyRecord = b
	case "share.acknowledgement.mode", "share.acquire.mode":
		// Accepted: the mode is chosen by each client's requests (explicit
		// acknowledgements, or TxnShareAcknowledge), and the engine
		// acquires at most what a fetch asks for, which both acquire modes
		// allow.
	default:
		return fmt.Errorf("%w: unknown group config %q", engine.ErrInvalidConfig, name)
	}
	return nil
}

// configDocs is the documentation DescribeConfigs (v3+) answers for each
// group and broker setting it reports, when the request asks for it (topic
// configs' is in topicConfigDefs).
var configDocs = map[string]string{
	"share.record.lock.duration.ms":             "How long a share group's acquired record stays locked to the member that acquired it, in milliseconds.",
	"share.delivery.count.limit":                "How many times a record is delivered to a share group before it is archived.",
	"share.partition.max.record.locks":          "How many records of one share partition may be acquired at once.",
	"share.auto.offset.reset":                   "Where a share group starts reading a partition it has no offset for: earliest or latest.",
	"share.isolation.level":                     "Whether a share group reads only committed transactional records (read_committed) or all of them (read_uncommitted).",
	"errors.deadletterqueue.topic.name":         "The topic a share group's records go to once rejected or over the delivery count limit; empty for none.",
	"errors.deadletterqueue.copy.record.enable": "Whether a dead-lettered record's key and value are copied to the dead-letter topic.",
	"group.share.enable":                        "Whether share groups are served.",
	"share.version":                             "The finalized share.version feature level.",
	"transaction.state.log.replication.factor":  "The replication factor of the transaction state (one broker: 1).",
	"offsets.topic.replication.factor":          "The replication factor of the committed offsets (one broker: 1).",
}

// topicConfigs are the topic configs DescribeConfigs and CreateTopics
// (v5+) report at their default (what the engine does) for a topic that
// does not set them.
var topicConfigs = [][2]string{
	{"cleanup.policy", "delete"},
	{"retention.ms", "-1"},
	{"min.insync.replicas", "1"},
	{"message.timestamp.type", "LogAppendTime"},
}

// brokerConfigs are the read-only broker settings DescribeConfigs reports.
var brokerConfigs = [][2]string{
	{"group.share.enable", "true"},
	{"share.version", "1"},
	{"transaction.state.log.replication.factor", "1"},
	{"offsets.topic.replication.factor", "1"},
}

// shareGroupConfig is a share group's configuration, or the defaults for a
// group the engine does not know yet.
func (s *Server) shareGroupConfig(group string) engine.GroupConfig {
	if c, err := s.e.ShareGroupConfig(group); err == nil {
		return c
	}
	s.state.mu.Lock()
	defer s.state.mu.Unlock()
	if c, ok := s.state.mu.groupCfgs[group]; ok {
		return c
	}
	return engine.DefaultGroupConfig()
}

// setShareGroupConfig applies c to the engine's share group, or keeps it
// for the group's first member when the engine has no such group yet.
func (s *Server) setShareGroupConfig(group string, c engine.GroupConfig) error {
	if _, err := s.e.ShareGroupConfig(group); err == nil {
		return s.e.SetShareGroupConfig(group, c)
	}
	s.state.mu.Lock()
	s.state.mu.groupCfgs[group] = c
	s.state.mu.Unlock()
	return nil
}

// applyPendingConfig gives a share group its kept configuration as its
// first member joins.
func (s *Server) applyPendingConfig(group string) error {
	s.state.mu.Lock()
	c, ok := s.state.mu.groupCfgs[group]
	delete(s.state.mu.groupCfgs, group)
	s.state.mu.Unlock()
	if !ok {
		return nil
	}
	return s.e.SetShareGroupConfig(group, c)
}
