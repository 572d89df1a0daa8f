// This file holds topic configs: the name=value settings a topic was
// created with or altered to, kept per topic incarnation and journaled in
// the meta log (with the topic's creation, and as a whole set on each
// change), so a recovery sees the configs the last acknowledged change
// left and a deleted topic's configs go with it. The engine keeps them
// as given and applies none: which names and values are valid, and what
// they mean, is the caller's (the Kafka-protocol server's) to decide.

package engine

import (
	"fmt"
	"maps"
)

// maxTopicConfigBytes bounds one topic's configs, names and values
// together, so a topic's journal record stays small.
const maxTopicConfigBytes = 1 << 20

func validTopicConfigs(topic string, configs map[string]string) error {
	size := 0
	for n, v := range configs {
		if n == "" {
			return fmt.Errorf("%w: topic %q: a topic config with an empty name", ErrInvalidConfig, topic)
		}
		size += len(n) + len(v)
	}
	if size > maxTopicConfigBytes {
		return fmt.Errorf("%w: topic %q: configs of %d bytes, above the limit of %d", ErrInvalidConfig, topic, size, maxTopicConfigBytes)
	}
	return nil
}

func cloneConfigs(configs map[string]string) map[string]string {
	out := make(map[string]string, len(configs))
	maps.Copy(out, configs)
	return out
}

// TopicConfigs returns a copy of the topic configs set on topic name
// (empty when none are).
func (e *Engine) TopicConfigs(name string) (map[string]string, error) {
	if err := e.enter(); err != nil {
		return nil, err
	}
	defer e.exit()
	e.topicsMu.RLock()
	defer e.topicsMu.RUnlock()
	t := e.topics[name]
	if t == nil {
		return nil, fmt.Errorf("%w: topic %q", ErrUnknownTopicOrPartition, name)
	}
	return maps.Clone(t.configs), nil
}

// SetTopicConfigs replaces the topic configs of topic name with configs
// (nil or empty: none). With a data directory the new set is durable when
// the call returns.
func (e *Engine) SetTopicConfigs(name string, configs map[string]string) error {
	return e.AlterTopicConfigs(name, func(c map[string]string) error {
		clear(c)
		maps.Copy(c, configs)
		return nil
	})
}

// AlterTopicConfigs changes the topic configs of topic name by calling
// alter with a copy of them and keeping what it leaves, unless it fails:
// then nothing changes and its error is returned. Alterations of one
// engine's topics run one at a time, so none is lost to another; alter
// must not call the engine. With a data directory the new set is durable
// when the call returns.
func (e *Engine) AlterTopicConfigs(name string, alter func(configs map[string]string) error) error {
	if err := e.enterWrite(); err != nil {
		return err
	}
	defer e.exit()
	e.adminMu.Lock()
	defer e.adminMu.Unlock()
	// adminMu keeps the topic and its configs as they are until the new
	// set is installed: only admin calls change either.
	e.topicsMu.RLock()
	t := e.topics[name]
	e.topicsMu.RUnlock()
	if t == nil {
		return fmt.Errorf("%w: topic %q", ErrUnknownTopicOrPartition, name)
	}
	configs := maps.Clone(t.configs)
	if err := alter(configs); err != nil {
		return err
	}
	if err := validTopicConfigs(name, configs); err != nil {
		return err
	}
	var op syncPoint
	e.topicsMu.Lock()
	t.configs = configs
	e.jTopicConfigs(&op, t.id, t.configs)
	e.topicsMu.Unlock()
	return e.finish(&op, nil)
}
