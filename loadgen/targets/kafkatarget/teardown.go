// This file holds Teardown: deleting a finished mode's topics and group
// once it is measured and verified, so runs do not pile up data on a
// cluster.

package kafkatarget

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/sharebench/sharebench/loadgen/targets"
)

// teardownTimeout bounds Teardown: after a broker fault the cluster may
// take a few seconds to lead every partition again.
const teardownTimeout = 30 * time.Second

// Teardown deletes the mode's input and output topics and its group once
// the mode is measured and verified, unless Options.Keep asked to leave
// them for inspection. A topic or group already gone is not an error.
// Transactional ids cannot be deleted in Kafka; they expire on their own
// (transactional.id.expiration.ms).
func (t *Target) Teardown(ctx context.Context, cfg targets.Config) error {
	if t.keep {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, teardownTimeout)
	defer cancel()
	var errs []error
	topics := append([]string(nil), cfg.Inputs()...)
	if cfg.OutputTopic != "" {
		topics = append(topics, cfg.OutputTopic)
	}
	if cfg.DLQTopic != "" {
		topics = append(topics, cfg.DLQTopic)
	}
	for {
		resp, err := t.adm.DeleteTopics(ctx, topics...)
		if err == nil {
			err = resp.Error()
		}
		if err == nil || errors.Is(err, kerr.UnknownTopicOrPartition) {
			break
		}
		if !kerr.IsRetriable(err) || ctx.Err() != nil {
			errs = append(errs, fmt.Errorf("kafka: deleting topics %v: %w", topics, err))
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if t.cluster == nil {
		if err := t.deleteGroup(ctx, cfg.Group); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// deleteGroup deletes a group (a share group or a classic one) once its
// members have left, trying again while it still has members or its
// coordinator is moving.
func (t *Target) deleteGroup(ctx context.Context, group string) error {
	for {
		resp, err := t.adm.DeleteGroup(ctx, group)
		if err == nil {
			err = resp.Err
		}
		switch {
		case err == nil, errors.Is(err, kerr.GroupIDNotFound):
			return nil
		case errors.Is(err, kerr.NonEmptyGroup), kerr.IsRetriable(err):
		default:
			return fmt.Errorf("kafka: deleting group %s: %w", group, err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("kafka: deleting group %s: %w (last: %v)", group, ctx.Err(), err)
		case <-time.After(200 * time.Millisecond):
		}
	}
}
