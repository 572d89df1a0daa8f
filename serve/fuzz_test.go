package serve_test

import (
	"encoding/binary"
	"testing"

	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sharebench/sharebench/internal/txnshareack"
)

// frame encodes req as a request frame body (no size prefix), with the
// request header version its key and version call for.
func frame(req kmsg.Request, version int16) []byte {
	req.SetVersion(version)
	b := kbin.AppendInt16(nil, req.Key())
	b = kbin.AppendInt16(b, version)
	b = kbin.AppendInt32(b, 7)
	b = kbin.AppendNullableString(b, kmsg.StringPtr("fuzz"))
	if req.IsFlexible() {
		b = append(b, 0)
	}
	return req.AppendTo(b)
}

// seeds are valid frames of the APIs with the most decoding: produce,
// fetch, share fetch, share acknowledge, both TxnShareAcknowledge shapes.
func seeds() [][]byte {
	prod := kmsg.NewPtrProduceRequest()
	prod.Acks = -1
	pt := kmsg.NewProduceRequestTopic()
	pt.Topic = "t"
	pp := kmsg.NewProduceRequestTopicPartition()
	rb := kmsg.RecordBatch{Magic: 2, ProducerID: -1, ProducerEpoch: -1, FirstSequence: -1, NumRecords: 1,
		Records: []byte{16, 0, 0, 0, 0, 6, 'h', 'e', 'l', 'l', 'o', 0}}
	raw := rb.AppendTo(nil)
	binary.BigEndian.PutUint32(raw[8:], uint32(len(raw)-12))
	pp.Records = raw
	pt.Partitions = append(pt.Partitions, pp)
	prod.Topics = append(prod.Topics, pt)

	fetch := kmsg.NewPtrFetchRequest()
	ft := kmsg.NewFetchRequestTopic()
	ft.Topic = "t"
	fp := kmsg.NewFetchRequestTopicPartition()
	fp.PartitionMaxBytes = 1 << 20
	ft.Partitions = append(ft.Partitions, fp)
	fetch.Topics = append(fetch.Topics, ft)

	sf := kmsg.NewPtrShareFetchRequest()
	sf.GroupID, sf.MemberID = kmsg.StringPtr("g"), kmsg.StringPtr("m")
	st := kmsg.NewShareFetchRequestTopic()
	sp := kmsg.NewShareFetchRequestTopicPartition()
	ab := kmsg.NewShareFetchRequestTopicPartitionAcknowledgementBatch()
	ab.LastOffset, ab.AcknowledgeTypes = 3, []int8{1}
	sp.AcknowledgementBatches = append(sp.AcknowledgementBatches, ab)
	st.Partitions = append(st.Partitions, sp)
	sf.Topics = append(sf.Topics, st)

	t95 := txnshareack.NewRequest(95)
	t95.GroupID, t95.MemberID = "g", "m"
	t95.Topics = []txnshareack.Topic{{Partitions: []txnshareack.Partition{{Batches: []txnshareack.Batch{{LastOffset: 2, AcknowledgeTypes: []int8{1, 3, 0}}}}}}}

	return [][]byte{
		frame(kmsg.NewPtrApiVersionsRequest(), 3),
		frame(kmsg.NewPtrMetadataRequest(), 12),
		frame(prod, 9),
		frame(fetch, 12),
		frame(sf, 1),
		frame(kmsg.NewPtrShareAcknowledgeRequest(), 1),
		frame(kmsg.NewPtrJoinGroupRequest(), 9),
		frame(t95, 0),
	}
}

// FuzzRequestFrame feeds arbitrary request frames to the server's
// dispatch: every one must end in a response or a connection-closing
// error, never a panic (a handler's panic comes back as an error naming
// it, which fails the fuzz run).
func FuzzRequestFrame(f *testing.F) {
	for _, s := range seeds() {
		f.Add(s)
	}
	s, e := start(f)
	if err := e.CreateTopic("t", 1); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _, err := s.HandleFrameForTest(b)
		if err != nil && containsPanic(err.Error()) {
			t.Fatalf("handler panicked: %v", err)
		}
	})
}

func containsPanic(s string) bool {
	const p = "internal error serving a request"
	for i := 0; i+len(p) <= len(s); i++ {
		if s[i:i+len(p)] == p {
			return true
		}
	}
	return false
}
