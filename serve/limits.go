// This file holds the partition caps: how many partitions one topic and
// all topics together may have, checked before the engine allocates any.

package serve

import (
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/sharebench/sharebench/engine"
)

// capError is a request refused by a partition cap. It unwraps to the
// Kafka error the response carries (INVALID_PARTITIONS for the per-topic
// cap, POLICY_VIOLATION for the total, as Kafka's create-topic policies
// answer), and its message names the cap and the flag that raises it.
type capError struct {
	code *kerr.Error
	msg  string
}

func (e *capError) Error() string { return e.msg }
func (e *capError) Unwrap() error { return e.code }

// checkPartitions reports whether topic may have n partitions in all: n
// within the per-topic cap, and the partitions of every topic, with
// topic's count replaced by n, within the total cap. It allocates
// nothing for n, so a refused count costs nothing. CreateTopics and
// auto-creation call it through createTopic; a handler that grows a topic
// calls it with the new count while holding s.topicsMu, so that no other
// creation passes the total cap between the check and the change.
func (s *Server) checkPartitions(topic string, n int32) error {
	if n > s.cfg.maxPartsTopic {
		return &capError{kerr.InvalidPartitions, fmt.Sprintf(
			"topic %q: %d partitions exceed the cap of %d per topic (raise it with --max-partitions-per-topic)",
			topic, n, s.cfg.maxPartsTopic)}
	}
	var total int64
	for _, t := range s.e.Topics() {
		if t == topic {
			continue
		}
		if p, ok := s.partitions(t); ok {
			total += int64(p)
		}
	}
	if total+int64(n) > s.cfg.maxParts {
		return &capError{kerr.PolicyViolation, fmt.Sprintf(
			"topic %q: %d partitions would make %d in all, past the cap of %d (raise it with --max-partitions)",
			topic, n, total+int64(n), s.cfg.maxParts)}
	}
	return nil
}

// createTopic creates topic with n partitions and the topic configs (nil:
// none, already validated) if the caps allow it.
func (s *Server) createTopic(topic string, n int32, configs map[string]string) error {
	s.topicsMu.Lock()
	defer s.topicsMu.Unlock()
	if _, ok := s.partitions(topic); ok {
		return engine.ErrTopicExists
	}
	if err := s.checkPartitions(topic, n); err != nil {
		return err
	}
	return s.e.CreateTopicWithConfigs(topic, n, configs)
}

// isCapError reports whether err is a partition cap's refusal.
func isCapError(err error) bool {
	var ce *capError
	return errors.As(err, &ce)
}
