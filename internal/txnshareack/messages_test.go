package txnshareack_test

import (
	"errors"
	"reflect"
	"testing"

	"github.com/sharebench/sharebench/internal/txnshareack"
)

func sample(key int16) *txnshareack.Request {
	id := "tx-1"
	r := txnshareack.NewRequest(key)
	r.TransactionalID, r.GroupID, r.ProducerID, r.ProducerEpoch = &id, "g", 7, 3
	r.MemberID, r.MemberEpoch = "m", 5
	types := []int8{1, 3, 0}
	if key == txnshareack.Key93 {
		types = []int8{3}
	}
	r.Topics = []txnshareack.Topic{{TopicID: [16]byte{1, 2}, Partitions: []txnshareack.Partition{
		{Partition: 2, Batches: []txnshareack.Batch{{FirstOffset: 10, LastOffset: 12, AcknowledgeTypes: types}}},
	}}}
	return r
}

// TestRoundTrip: both shapes decode to what they encoded, requests and
// responses, and a truncated body is ErrMalformed.
func TestRoundTrip(t *testing.T) {
	for _, key := range []int16{txnshareack.Key93, txnshareack.Key95} {
		req := sample(key)
		b := req.AppendTo(nil)
		got := txnshareack.NewRequest(key)
		if err := got.ReadFrom(b); err != nil {
			t.Fatalf("key %d: %v", key, err)
		}
		if !reflect.DeepEqual(got, req) {
			t.Errorf("key %d: request\n got %+v\nwant %+v", key, got, req)
		}
		for n := range len(b) - 1 {
			if err := txnshareack.NewRequest(key).ReadFrom(b[:n]); !errors.Is(err, txnshareack.ErrMalformed) {
				t.Fatalf("key %d: %d of %d bytes decoded: %v", key, n, len(b), err)
			}
		}
		msg := "not held"
		resp := req.ResponseKind().(*txnshareack.Response)
		resp.ErrorCode = 0
		resp.Topics = []txnshareack.TopicResponse{{TopicID: [16]byte{1, 2}, Partitions: []txnshareack.PartitionResponse{{Partition: 2, ErrorCode: 124}}}}
		if key == txnshareack.Key95 {
			resp.Topics[0].Partitions[0].ErrorMessage = &msg
		}
		gotResp := resp.RequestKind().ResponseKind().(*txnshareack.Response)
		if err := gotResp.ReadFrom(resp.AppendTo(nil)); err != nil {
			t.Fatalf("key %d response: %v", key, err)
		}
		if !reflect.DeepEqual(gotResp, resp) {
			t.Errorf("key %d: response\n got %+v\nwant %+v", key, gotResp, resp)
		}
	}
}

// TestShapesDiffer: the same request encodes differently under the two
// keys (93 carries one type per batch, 95 an array).
func TestShapesDiffer(t *testing.T) {
	a := sample(txnshareack.Key95)
	a.Topics[0].Partitions[0].Batches[0].AcknowledgeTypes = []int8{1}
	b := sample(txnshareack.Key93)
	b.Topics[0].Partitions[0].Batches[0].AcknowledgeTypes = []int8{1}
	if len(a.AppendTo(nil)) != len(b.AppendTo(nil))+1 {
		t.Errorf("key 95 body %d bytes, key 93 %d: want 95 one byte longer (the array length)", len(a.AppendTo(nil)), len(b.AppendTo(nil)))
	}
}
