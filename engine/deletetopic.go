// This file holds topic deletion for in-memory engines: the load generator
// frees each mode's topics once the mode is verified, so a run of many modes
// holds one mode's data at a time.

package engine

import "fmt"

// DeleteTopic removes a topic, its partitions and every share partition of
// them. Members still subscribed to it get ErrUnknownTopicOrPartition on
// their next poll. An engine with a data directory refuses (deletion is not
// journaled, so recovery would bring the topic back).
func (e *Engine) DeleteTopic(name string) error {
	if e.dur != nil {
		return fmt.Errorf("%w: deleting topic %q: not supported with a data directory", ErrInvalidConfig, name)
	}
	if err := e.enter(); err != nil {
		return err
	}
	defer e.exit()
	e.topicsMu.Lock()
	t := e.topics[name]
	if t == nil {
		e.topicsMu.Unlock()
		return fmt.Errorf("%w: topic %q", ErrUnknownTopicOrPartition, name)
	}
	delete(e.topics, name)
	e.topicsMu.Unlock()
	for p := int32(0); p < t.partitions; p++ {
		tp := TopicPartition{name, p}
		ds := e.dataShard(tp)
		ds.mu.Lock()
		delete(ds.mu.parts, tp)
		ds.mu.Unlock()
	}
	t.changed() // wake pollers and readers waiting on it
	return nil
}
