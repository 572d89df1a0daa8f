// This file holds the acknowledgement-batch decoder that ShareFetch,
// ShareAcknowledge and TxnShareAcknowledge share, and the engine call that
// applies a share member's acknowledgements.

package serve

import (
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sharebench/sharebench/engine"
	"github.com/sharebench/sharebench/internal/txnshareack"
)

// ackBatch is one wire acknowledgement batch: the three requests that carry
// acknowledgements spell it as different types with the same fields.
type ackBatch struct {
	first, last int64
	types       []int8
}

func shareFetchBatch(b *kmsg.ShareFetchRequestTopicPartitionAcknowledgementBatch) ackBatch {
	return ackBatch{b.FirstOffset, b.LastOffset, b.AcknowledgeTypes}
}

func shareAckBatch(b *kmsg.ShareAcknowledgeRequestTopicPartitionAcknowledgementBatch) ackBatch {
	return ackBatch{b.FirstOffset, b.LastOffset, b.AcknowledgeTypes}
}

func txnShareAckBatch(b *txnshareack.Batch) ackBatch {
	return ackBatch{b.FirstOffset, b.LastOffset, b.AcknowledgeTypes}
}

// ackPartition is one request partition's acknowledgements, decoded.
type ackPartition struct {
	tp engine.TopicPartition
	// code is UNKNOWN_TOPIC_ID for a topic id the server has no name for
	// and INVALID_REQUEST for a malformed batch; either way acks is
	// empty, because a partition applies all of its batches or none.
	code int16
	acks []engine.Acknowledgement
}

// decodeAcks decodes the acknowledgement batches of one request partition
// of topic name (known is false when the request's topic id names no
// topic). A batch is malformed if its range is empty or its types are
// neither one type for the whole range nor one per offset.
func decodeAcks[B any](name string, known bool, partition int32, batches []B, conv func(*B) ackBatch) ackPartition {
	ap := ackPartition{tp: engine.TopicPartition{Topic: name, Partition: partition}}
	if !known {
		ap.code = kerr.UnknownTopicID.Code
		return ap
	}
	acks := make([]engine.Acknowledgement, 0, len(batches))
	for i := range batches {
		b := conv(&batches[i])
		a := engine.Acknowledgement{Topic: name, Partition: partition, First: b.first, Last: b.last}
		switch {
		case b.last < b.first || len(b.types) == 0:
			ap.code = kerr.InvalidRequest.Code
			return ap
		case len(b.types) == 1:
			a.Type = engine.AckType(b.types[0])
		case int64(len(b.types)) == b.last-b.first+1:
			a.Types = make([]engine.AckType, len(b.types))
			for j, t := range b.types {
				a.Types[j] = engine.AckType(t)
			}
		default:
			ap.code = kerr.InvalidRequest.Code
			return ap
		}
		acks = append(acks, a)
	}
	ap.acks = acks
	return ap
}

// ackCodes applies acks as member m and returns each partition's error.
func ackCodes(em *engine.ShareMember, acks []engine.Acknowledgement) (map[engine.TopicPartition]error, error) {
	if len(acks) == 0 {
		return nil, nil
	}
	err := em.Acknowledge(acks)
	var ae *engine.AckError
	if errors.As(err, &ae) {
		return ae.Partitions, nil
	}
	return nil, err
}

// ackCallCode is the top-level error code of acknowledgements that failed
// as a whole with err. An engine member that is gone (its engine session
// timed out, releasing its records) has no share session any more:
// SHARE_SESSION_NOT_FOUND, as Kafka answers a request on a closed session.
func ackCallCode(err error) int16 {
	if errors.Is(err, engine.ErrUnknownMember) {
		return kerr.ShareSessionNotFound.Code
	}
	return errCode(err)
}
