// This file holds the TxnShareAcknowledge messages and their encoding.

package txnshareack

import (
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The two API keys the draft has used.
const (
	Key93 int16 = 93 // AcknowledgeType per batch
	Key95 int16 = 95 // AcknowledgeTypes per offset, error messages
)

// Batch is one acknowledged range of offsets.
type Batch struct {
	FirstOffset int64
	LastOffset  int64
	// AcknowledgeTypes holds one type per offset, or a single type for the
	// whole range. Key 93 carries exactly one.
	AcknowledgeTypes []int8
}

// Partition is one partition's batches.
type Partition struct {
	Partition int32
	Batches   []Batch
}

// Topic is one topic's partitions, by topic id.
type Topic struct {
	TopicID    [16]byte
	Partitions []Partition
}

// Request is TxnShareAcknowledgeRequest.
type Request struct {
	key     int16
	Version int16

	TransactionalID *string
	GroupID         string
	ProducerID      int64
	ProducerEpoch   int16
	MemberID        string
	MemberEpoch     int32
	Topics          []Topic
}

// PartitionResponse is one partition's result.
type PartitionResponse struct {
	Partition    int32
	ErrorCode    int16
	ErrorMessage *string // key 95 only
}

// TopicResponse is one topic's results.
type TopicResponse struct {
	TopicID    [16]byte
	Partitions []PartitionResponse
}

// Response is TxnShareAcknowledgeResponse.
type Response struct {
	key     int16
	Version int16

	ThrottleMillis int32
	ErrorCode      int16
	Topics         []TopicResponse
}

// NewRequest returns an empty request of the shape of key (Key93 or Key95).
func NewRequest(key int16) *Request { return &Request{key: key} }

// NewResponse returns an empty response of the shape of key.
func NewResponse(key int16) *Response { return &Response{key: key} }

var (
	_ kmsg.Request  = (*Request)(nil)
	_ kmsg.Response = (*Response)(nil)
)

// ErrMalformed is returned by ReadFrom for a message that does not parse.
var ErrMalformed = errors.New("txnshareack: malformed message")

func (r *Request) Key() int16             { return r.key }
func (*Request) MaxVersion() int16        { return 0 }
func (r *Request) SetVersion(v int16)     { r.Version = v }
func (r *Request) GetVersion() int16      { return r.Version }
func (*Request) IsFlexible() bool         { return true }
func (*Request) IsTxnCoordinatorRequest() {}
func (r *Request) ResponseKind() kmsg.Response {
	return &Response{key: r.key, Version: r.Version}
}

func (r *Response) Key() int16         { return r.key }
func (*Response) MaxVersion() int16    { return 0 }
func (r *Response) SetVersion(v int16) { r.Version = v }
func (r *Response) GetVersion() int16  { return r.Version }
func (*Response) IsFlexible() bool     { return true }
func (r *Response) RequestKind() kmsg.Request {
	return &Request{key: r.key, Version: r.Version}
}

// Throttle and SetThrottle make Response a kmsg.ThrottleResponse.
func (r *Response) Throttle() (int32, bool) { return r.ThrottleMillis, false }
func (r *Response) SetThrottle(ms int32)    { r.ThrottleMillis = ms }

// AppendTo appends the request body (without the request header).
func (r *Request) AppendTo(dst []byte) []byte {
	dst = kbin.AppendCompactNullableString(dst, r.TransactionalID)
	dst = kbin.AppendCompactString(dst, r.GroupID)
	dst = kbin.AppendInt64(dst, r.ProducerID)
	dst = kbin.AppendInt16(dst, r.ProducerEpoch)
	dst = kbin.AppendCompactString(dst, r.MemberID)
	dst = kbin.AppendInt32(dst, r.MemberEpoch)
	dst = kbin.AppendCompactArrayLen(dst, len(r.Topics))
	for _, t := range r.Topics {
		dst = kbin.AppendUuid(dst, t.TopicID)
		dst = kbin.AppendCompactArrayLen(dst, len(t.Partitions))
		for _, p := range t.Partitions {
			dst = kbin.AppendInt32(dst, p.Partition)
			dst = kbin.AppendCompactArrayLen(dst, len(p.Batches))
			for _, b := range p.Batches {
				dst = kbin.AppendInt64(dst, b.FirstOffset)
				dst = kbin.AppendInt64(dst, b.LastOffset)
				if r.key == Key93 {
					var t int8
					if len(b.AcknowledgeTypes) > 0 {
						t = b.AcknowledgeTypes[0]
					}
					dst = kbin.AppendInt8(dst, t)
				} else {
					dst = kbin.AppendCompactArrayLen(dst, len(b.AcknowledgeTypes))
					for _, a := range b.AcknowledgeTypes {
						dst = kbin.AppendInt8(dst, a)
					}
				}
				dst = kbin.AppendUvarint(dst, 0) // tagged fields
			}
			dst = kbin.AppendUvarint(dst, 0)
		}
		dst = kbin.AppendUvarint(dst, 0)
	}
	return kbin.AppendUvarint(dst, 0)
}

// ReadFrom parses a request body; the key set at construction decides the
// shape.
func (r *Request) ReadFrom(src []byte) error {
	b := kbin.Reader{Src: src}
	r.TransactionalID = b.CompactNullableString()
	r.GroupID = b.CompactString()
	r.ProducerID = b.Int64()
	r.ProducerEpoch = b.Int16()
	r.MemberID = b.CompactString()
	r.MemberEpoch = b.Int32()
	nt := arrayLen(&b, 16+1+1)
	r.Topics = nil
	for range nt {
		var t Topic
		t.TopicID = b.Uuid()
		np := arrayLen(&b, 4+1+1)
		for range np {
			var p Partition
			p.Partition = b.Int32()
			nb := arrayLen(&b, 16+1+1)
			for range nb {
				var ba Batch
				ba.FirstOffset = b.Int64()
				ba.LastOffset = b.Int64()
				if r.key == Key93 {
					ba.AcknowledgeTypes = []int8{b.Int8()}
				} else {
					na := arrayLen(&b, 1)
					ba.AcknowledgeTypes = make([]int8, 0, na)
					for range na {
						ba.AcknowledgeTypes = append(ba.AcknowledgeTypes, b.Int8())
					}
				}
				skipTags(&b)
				p.Batches = append(p.Batches, ba)
			}
			skipTags(&b)
			t.Partitions = append(t.Partitions, p)
		}
		skipTags(&b)
		r.Topics = append(r.Topics, t)
	}
	skipTags(&b)
	if err := b.Complete(); err != nil {
		return fmt.Errorf("%w: key %d: %v", ErrMalformed, r.key, err)
	}
	return nil
}

// AppendTo appends the response body (without the response header).
func (r *Response) AppendTo(dst []byte) []byte {
	dst = kbin.AppendInt32(dst, r.ThrottleMillis)
	dst = kbin.AppendInt16(dst, r.ErrorCode)
	dst = kbin.AppendCompactArrayLen(dst, len(r.Topics))
	for _, t := range r.Topics {
		dst = kbin.AppendUuid(dst, t.TopicID)
		dst = kbin.AppendCompactArrayLen(dst, len(t.Partitions))
		for _, p := range t.Partitions {
			dst = kbin.AppendInt32(dst, p.Partition)
			dst = kbin.AppendInt16(dst, p.ErrorCode)
			if r.key != Key93 {
				dst = kbin.AppendCompactNullableString(dst, p.ErrorMessage)
			}
			dst = kbin.AppendUvarint(dst, 0)
		}
		dst = kbin.AppendUvarint(dst, 0)
	}
	return kbin.AppendUvarint(dst, 0)
}

// ReadFrom parses a response body.
func (r *Response) ReadFrom(src []byte) error {
	b := kbin.Reader{Src: src}
	r.ThrottleMillis = b.Int32()
	r.ErrorCode = b.Int16()
	nt := arrayLen(&b, 16+1+1)
	r.Topics = nil
	for range nt {
		var t TopicResponse
		t.TopicID = b.Uuid()
		np := arrayLen(&b, 4+2+1)
		for range np {
			var p PartitionResponse
			p.Partition = b.Int32()
			p.ErrorCode = b.Int16()
			if r.key != Key93 {
				p.ErrorMessage = b.CompactNullableString()
			}
			skipTags(&b)
			t.Partitions = append(t.Partitions, p)
		}
		skipTags(&b)
		r.Topics = append(r.Topics, t)
	}
	skipTags(&b)
	if err := b.Complete(); err != nil {
		return fmt.Errorf("%w: key %d: %v", ErrMalformed, r.key, err)
	}
	return nil
}

// arrayLen reads a compact array length, bounded by what the remaining
// bytes can hold (each element takes at least min bytes), so a corrupt
// length cannot make the reader allocate or loop without end.
func arrayLen(b *kbin.Reader, min int) int {
	n := b.CompactArrayLen()
	if n < 0 {
		return 0
	}
	if int(n)*min > len(b.Src) {
		b.Src = nil
		_ = b.Int8() // marks the reader as failed
		return 0
	}
	return int(n)
}

// skipTags skips a tagged-fields section.
func skipTags(b *kbin.Reader) {
	n := b.Uvarint()
	for i := uint32(0); i < n && b.Ok(); i++ {
		b.Uvarint()
		l := b.Uvarint()
		if int(l) > len(b.Src) {
			b.Src = nil
			_ = b.Int8()
			return
		}
		b.Span(int(l))
	}
}
