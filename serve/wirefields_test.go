// This file checks, for every API and every version the server advertises
// in ApiVersions, that the response fields Kafka 4.4's broker answers
// non-null are non-null here too: each request goes over the wire at a
// pinned version, its answer is decoded with kmsg (which keeps null and
// empty apart: a nil slice or pointer is what came as null), and each
// field of the table below is checked by its rule.

package serve_test

import (
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"reflect"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sharebench/sharebench/internal/txnshareack"
	"github.com/sharebench/sharebench/serve"
)

// fieldRule says when a nullable response field must be non-null.
type fieldRule int

const (
	always  fieldRule = iota // in every element the path reaches
	whenOK                   // where the nearest ErrorCode on the path is 0
	whenErr                  // where the nearest ErrorCode on the path is not 0
)

func (r fieldRule) String() string {
	return [...]string{"always", "when ok", "when an error"}[r]
}

// nonNull is one row of the table: in responses of API key from version
// min to max, the kmsg field at path (dotted, through slices) must be
// non-null by rule.
type nonNull struct {
	key      int16
	min, max int16
	path     string
	rule     fieldRule
}

// nonNullFields lists the nullable response fields ("nullableVersions")
// that Kafka 4.4's broker fills, for the versions the server serves.
//
// How it was checked: every *Response.json of the APIs in the server's
// table was read from Kafka 4.4.0's own kafka-clients jar
// (common/message/*.json), and each field with nullableVersions that meet
// the served range was listed with its default. Kafka's generated Java
// gives a nullable string or array without "default": "null" the empty
// value, so it is null only where the broker sets null. What the broker
// sets in each was read in its source (KafkaApis, ConfigHelper,
// GroupMetadataManager, ReplicationControlManager, Errors, ApiError; the
// apache/kafka trunk of late 2024, the newest source at hand, whose
// schemas list the same nullable fields as 4.4.0's for these APIs but for
// ShareFetch Records, which 4.4.0 makes non-nullable):
//
//   - Fetch Records: MemoryRecords.EMPTY for a partition read with
//     nothing to send, and for one whose read failed (null only for a
//     partition refused before any read, an unknown topic id: serve
//     answers that one empty too, which every client takes);
//     AbortedTransactions: a list (maybe empty) for a partition read under
//     read_committed, null under read_uncommitted or with an error.
//   - ShareFetch Records: not nullable at all from v1.
//   - Metadata ClusterId: the cluster id; Topics.Name (v12): the name of
//     every topic it knows.
//   - OffsetFetch Metadata: "" (OffsetFetchResponse.NO_METADATA) when no
//     offset or no metadata is committed.
//   - FindCoordinator ErrorMessage (v1-3) and Coordinators.ErrorMessage
//     (v4+): Errors.message(), "NONE" on success.
//   - JoinGroup (v7+) and SyncGroup (v5) ProtocolType and ProtocolName:
//     the group's, on success (null only with an error).
//   - CreateTopics Configs (v5+): the created topic's effective configs,
//     an empty list for a topic not created; ErrorMessage: the error's
//     message, null on success.
//   - DeleteTopics Responses.Name (v6): the topic's name.
//   - DescribeConfigs Results.ErrorMessage: "" on success (never set),
//     the message on an error; Configs.Documentation (v3+): the config's
//     doc when IncludeDocumentation asks for it.
//   - ShareGroupHeartbeat MemberId: the member's id on success.
//
// The other nullable fields of those schemas are null in Kafka's answers
// too when nothing fills them (error messages on success, racks, static
// member ids of dynamic members, sensitive config values, a heartbeat's
// unchanged assignment), so they are not rows here.
var nonNullFields = []nonNull{
	{int16(kmsg.Fetch), 4, 16, "Topics.Partitions.RecordBatches", always},
	{int16(kmsg.Fetch), 4, 16, "Topics.Partitions.AbortedTransactions", whenOK}, // the request reads committed
	{int16(kmsg.ShareFetch), 1, 2, "Topics.Partitions.Records", always},
	{int16(kmsg.Metadata), 2, 12, "ClusterID", always},
	{int16(kmsg.Metadata), 12, 12, "Topics.Topic", whenOK},
	{int16(kmsg.OffsetFetch), 1, 7, "Topics.Partitions.Metadata", always},
	{int16(kmsg.OffsetFetch), 8, 9, "Groups.Topics.Partitions.Metadata", always},
	{int16(kmsg.FindCoordinator), 1, 3, "ErrorMessage", always},
	{int16(kmsg.FindCoordinator), 4, 6, "Coordinators.ErrorMessage", always},
	{int16(kmsg.JoinGroup), 7, 9, "ProtocolType", whenOK},
	{int16(kmsg.JoinGroup), 7, 9, "Protocol", whenOK},
	{int16(kmsg.SyncGroup), 5, 5, "ProtocolType", whenOK},
	{int16(kmsg.SyncGroup), 5, 5, "Protocol", whenOK},
	{int16(kmsg.CreateTopics), 5, 7, "Topics.Configs", always},
	{int16(kmsg.CreateTopics), 1, 7, "Topics.ErrorMessage", whenErr},
	{int16(kmsg.DeleteTopics), 6, 6, "Topics.Topic", whenOK},
	// Kafka's controller answers a grown topic's ErrorMessage null and a
	// refused one's with the reason (ReplicationControlManager).
	{int16(kmsg.CreatePartitions), 0, 3, "Topics.ErrorMessage", whenErr},
	{int16(kmsg.DescribeConfigs), 0, 4, "Resources.ErrorMessage", always},
	{int16(kmsg.DescribeConfigs), 3, 4, "Resources.Configs.Documentation", always}, // the request asks for it
	{int16(kmsg.ShareGroupHeartbeat), 1, 1, "MemberID", whenOK},
}

// noNonNullFields are the APIs served whose responses have no nullable
// field Kafka fills on the paths the table covers (checked as above); a
// request of each is still sent at every version and must decode.
var noNonNullFields = map[int16]bool{
	int16(kmsg.Produce): true, int16(kmsg.ListOffsets): true, int16(kmsg.OffsetCommit): true,
	int16(kmsg.Heartbeat): true, int16(kmsg.LeaveGroup): true, int16(kmsg.DescribeGroups): true,
	int16(kmsg.ListGroups): true, int16(kmsg.ApiVersions): true, int16(kmsg.InitProducerID): true,
	int16(kmsg.AddPartitionsToTxn): true, int16(kmsg.AddOffsetsToTxn): true, int16(kmsg.EndTxn): true,
	int16(kmsg.TxnOffsetCommit): true, int16(kmsg.IncrementalAlterConfigs): true,
	int16(kmsg.AlterConfigs):    true,
	int16(kmsg.DescribeCluster): true, int16(kmsg.DescribeProducers): true,
	int16(kmsg.DescribeTransactions): true, int16(kmsg.ListTransactions): true,
	int16(kmsg.ShareGroupDescribe): true, int16(kmsg.ShareAcknowledge): true,
	int16(kmsg.DescribeShareGroupOffsets): true, int16(kmsg.AlterShareGroupOffsets): true,
	int16(kmsg.DeleteShareGroupOffsets): true,
	// DeleteGroups' ErrorMessage exists from v3, past what is served;
	// OffsetDelete has no nullable field.
	int16(kmsg.DeleteGroups): true, int16(kmsg.OffsetDelete): true,
}

// wireConn sends pinned-version requests on one raw connection.
type wireConn struct {
	t *testing.T
	s *serve.Server
	c net.Conn
}

func (w *wireConn) do(req kmsg.Request, v int16) kmsg.Response {
	w.t.Helper()
	if _, err := w.c.Write(sized(frame(req, v))); err != nil {
		w.t.Fatalf("%s v%d: write: %v", kmsg.NameForKey(req.Key()), v, err)
	}
	var size [4]byte
	if _, err := io.ReadFull(w.c, size[:]); err != nil {
		w.t.Fatalf("%s v%d: no answer: %v", kmsg.NameForKey(req.Key()), v, err)
	}
	body := make([]byte, binary.BigEndian.Uint32(size[:]))
	if _, err := io.ReadFull(w.c, body); err != nil {
		w.t.Fatalf("%s v%d: short answer: %v", kmsg.NameForKey(req.Key()), v, err)
	}
	resp := req.ResponseKind()
	resp.SetVersion(v)
	b := kbin.Reader{Src: body[4:]}
	if resp.IsFlexible() && req.Key() != int16(kmsg.ApiVersions) {
		for n := b.Uvarint(); n > 0; n-- { // the response header's tags
			b.Uvarint()
			b.Span(int(b.Uvarint()))
		}
	}
	if !b.Ok() {
		w.t.Fatalf("%s v%d: truncated header", kmsg.NameForKey(req.Key()), v)
	}
	if err := resp.ReadFrom(b.Src); err != nil {
		w.t.Fatalf("%s v%d: answer does not decode: %v", kmsg.NameForKey(req.Key()), v, err)
	}
	return resp
}

// fieldCheck walks path through v (structs and slices of them) and calls
// f on each element holding the last field, with the nearest ErrorCode on
// the way (the element's own first).
func fieldCheck(v reflect.Value, path []string, code int16, f func(field reflect.Value, code int16)) {
	for v.Kind() == reflect.Pointer && len(path) > 0 {
		v = v.Elem()
	}
	if v.Kind() == reflect.Slice {
		for i := range v.Len() {
			fieldCheck(v.Index(i), path, code, f)
		}
		return
	}
	if ec := v.FieldByName("ErrorCode"); ec.IsValid() {
		code = int16(ec.Int())
	}
	field := v.FieldByName(path[0])
	if !field.IsValid() {
		panic("no field " + path[0] + " in " + v.Type().String())
	}
	if len(path) == 1 {
		f(field, code)
		return
	}
	fieldCheck(field, path[1:], code, f)
}

// TestKafkaNonNullFields sends each API at each version the server
// advertises and checks the table's fields.
func TestKafkaNonNullFields(t *testing.T) {
	s, e := start(t)
	for _, name := range []string{"t"} {
		if err := e.CreateTopic(name, 2); err != nil {
			t.Fatal(err)
		}
	}
	w := &wireConn{t: t, s: s, c: dial(t, s)}
	// Records on partition 0 (partition 1 stays empty), and a committed
	// offset without metadata on it.
	w.do(produceReq(), 9)
	oc := kmsg.NewPtrOffsetCommitRequest()
	oc.Group, oc.Generation = "oc", -1
	oct := kmsg.NewOffsetCommitRequestTopic()
	oct.Topic = "t"
	ocp := kmsg.NewOffsetCommitRequestTopicPartition()
	ocp.Offset = 1
	oct.Partitions = append(oct.Partitions, ocp)
	oc.Topics = append(oc.Topics, oct)
	if r := w.do(oc, 8).(*kmsg.OffsetCommitResponse); r.Topics[0].Partitions[0].ErrorCode != 0 {
		t.Fatalf("committing an offset: error %d", r.Topics[0].Partitions[0].ErrorCode)
	}

	av := w.do(kmsg.NewPtrApiVersionsRequest(), 3).(*kmsg.ApiVersionsResponse)
	rows := map[int16][]nonNull{}
	for _, r := range nonNullFields {
		rows[r.key] = append(rows[r.key], r)
	}
	for _, k := range av.ApiKeys {
		if k.ApiKey == txnshareack.Key93 || k.ApiKey == txnshareack.Key95 {
			continue // the draft's own API, in no Kafka schema
		}
		name := kmsg.NameForKey(k.ApiKey)
		if len(rows[k.ApiKey]) == 0 && !noNonNullFields[k.ApiKey] {
			t.Errorf("%s (key %d) is served but neither in nonNullFields nor in noNonNullFields: check its response schema and add it", name, k.ApiKey)
			continue
		}
		build := requests[k.ApiKey]
		if build == nil {
			t.Errorf("%s (key %d) is served but has no representative request in requests", name, k.ApiKey)
			continue
		}
		for v := k.MinVersion; v <= k.MaxVersion; v++ {
			resp := build(w, v)
			for _, r := range rows[k.ApiKey] {
				if v < r.min || v > r.max {
					continue
				}
				checked := 0
				fieldCheck(reflect.ValueOf(resp), strings.Split(r.path, "."), 0, func(f reflect.Value, code int16) {
					if (r.rule == whenOK && code != 0) || (r.rule == whenErr && code == 0) {
						return
					}
					checked++
					if f.IsNil() {
						t.Errorf("%s v%d: %s is null (error code %d); Kafka answers it non-null (%s)", name, v, r.path, code, r.rule)
					}
				})
				if checked == 0 {
					t.Errorf("%s v%d: the representative request gave no %s to check (%s): fix the request in requests", name, v, r.path, r.rule)
				}
			}
		}
	}
	for _, r := range nonNullFields {
		if r.min > r.max {
			t.Errorf("row %s %s: versions %d-%d are empty", kmsg.NameForKey(r.key), r.path, r.min, r.max)
		}
	}
}

func produceReq() *kmsg.ProduceRequest {
	req := kmsg.NewPtrProduceRequest()
	req.Acks, req.TimeoutMillis = -1, 5000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = "t"
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Records = batchBytes(3, 8)
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return req
}

// join joins a fresh classic group at version v, sending the member id a
// MEMBER_ID_REQUIRED answer hands out.
func join(w *wireConn, group string, v int16) *kmsg.JoinGroupResponse {
	req := kmsg.NewPtrJoinGroupRequest()
	req.Group, req.SessionTimeoutMillis, req.RebalanceTimeoutMillis, req.ProtocolType = group, 10000, 10000, "consumer"
	p := kmsg.NewJoinGroupRequestProtocol()
	p.Name, p.Metadata = "range", []byte{0, 0, 0, 0, 0, 0, 0, 0}
	req.Protocols = append(req.Protocols, p)
	resp := w.do(req, v).(*kmsg.JoinGroupResponse)
	if resp.ErrorCode == 79 { // MEMBER_ID_REQUIRED
		req.MemberID = resp.MemberID
		resp = w.do(req, v).(*kmsg.JoinGroupResponse)
	}
	return resp
}

// shareMember joins the share group "shg" as member id.
func shareMember(w *wireConn, id string) {
	req := kmsg.NewPtrShareGroupHeartbeatRequest()
	req.GroupID, req.MemberID, req.SubscribedTopicNames = "shg", id, []string{"t"}
	if r := w.do(req, 1).(*kmsg.ShareGroupHeartbeatResponse); r.ErrorCode != 0 {
		w.t.Fatalf("share member %s: heartbeat error %d", id, r.ErrorCode)
	}
}

func shareFetchReq(w *wireConn, id string, epoch int32) *kmsg.ShareFetchRequest {
	req := kmsg.NewPtrShareFetchRequest()
	req.GroupID, req.MemberID, req.ShareSessionEpoch = kmsg.StringPtr("shg"), kmsg.StringPtr(id), epoch
	req.MaxRecords, req.BatchSize, req.MaxBytes = 10, 10, 1<<20
	rt := kmsg.NewShareFetchRequestTopic()
	rt.TopicID = serve.TopicID(w.s, "t")
	for p := range int32(2) {
		rp := kmsg.NewShareFetchRequestTopicPartition()
		rp.Partition = p
		rt.Partitions = append(rt.Partitions, rp)
	}
	req.Topics = append(req.Topics, rt)
	return req
}

// requests builds, for each API, a representative request at a version
// (sending any request it needs first) and returns the answer to check.
var requests = map[int16]func(w *wireConn, v int16) kmsg.Response{
	int16(kmsg.Produce): func(w *wireConn, v int16) kmsg.Response { return w.do(produceReq(), v) },
	int16(kmsg.Fetch): func(w *wireConn, v int16) kmsg.Response {
		req := kmsg.NewPtrFetchRequest()
		req.ReplicaID, req.MaxBytes, req.IsolationLevel, req.SessionEpoch = -1, 1<<20, 1, -1
		rt := kmsg.NewFetchRequestTopic()
		rt.Topic, rt.TopicID = "t", serve.TopicID(w.s, "t")
		for p := range int32(2) {
			rp := kmsg.NewFetchRequestTopicPartition()
			rp.Partition, rp.PartitionMaxBytes, rp.CurrentLeaderEpoch, rp.LogStartOffset = p, 1<<20, -1, -1
			rt.Partitions = append(rt.Partitions, rp)
		}
		req.Topics = append(req.Topics, rt)
		return w.do(req, v)
	},
	int16(kmsg.ListOffsets): func(w *wireConn, v int16) kmsg.Response {
		req := kmsg.NewPtrListOffsetsRequest()
		rt := kmsg.NewListOffsetsRequestTopic()
		rt.Topic = "t"
		rp := kmsg.NewListOffsetsRequestTopicPartition()
		rp.Timestamp = -1
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		return w.do(req, v)
	},
	int16(kmsg.Metadata): func(w *wireConn, v int16) kmsg.Response {
		req := kmsg.NewPtrMetadataRequest()
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr("t")
		req.Topics = append(req.Topics, rt)
		return w.do(req, v)
	},
	int16(kmsg.OffsetCommit): func(w *wireConn, v int16) kmsg.Response {
		req := kmsg.NewPtrOffsetCommitRequest()
		req.Group, req.Generation = fmt.Sprintf("oc-v%d", v), -1
		rt := kmsg.NewOffsetCommitRequestTopic()
		rt.Topic = "t"
		rt.Partitions = append(rt.Partitions, kmsg.NewOffsetCommitRequestTopicPartition())
		req.Topics = append(req.Topics, rt)
		return w.do(req, v)
	},
	int16(kmsg.OffsetFetch): func(w *wireConn, v int16) kmsg.Response {
		req := kmsg.NewPtrOffsetFetchRequest()
		req.Group = "oc"
		rt := kmsg.NewOffsetFetchRequestTopic()
		rt.Topic, rt.Partitions = "t", []int32{0, 1}
		req.Topics = append(req.Topics, rt)
		g := kmsg.NewOffsetFetchRequestGroup()
		g.Group, g.MemberEpoch = "oc", -1
		gt := kmsg.NewOffsetFetchRequestGroupTopic()
		gt.Topic, gt.Partitions = "t", []int32{0, 1}
		g.Topics = append(g.Topics, gt)
		req.Groups = append(req.Groups, g)
		return w.do(req, v)
	},
	int16(kmsg.FindCoordinator): func(w *wireConn, v int16) kmsg.Response {
		req := kmsg.NewPtrFindCoordinatorRequest()
		req.CoordinatorKey, req.CoordinatorKeys = "g", []string{"g"}
		return w.do(req, v)
	},
	int16(kmsg.JoinGroup): func(w *wireConn, v int16) kmsg.Response {
		return join(w, fmt.Sprintf("jg-v%d", v), v)
	},
	int16(kmsg.Heartbeat): func(w *wireConn, v int16) kmsg.Response {
		j := join(w, fmt.Sprintf("hb-v%d", v), 9)
		req := kmsg.NewPtrHeartbeatRequest()
		req.Group, req.Generation, req.MemberID = fmt.Sprintf("hb-v%d", v), j.Generation, j.MemberID
		return w.do(req, v)
	},
	int16(kmsg.LeaveGroup): func(w *wireConn, v int16) kmsg.Response {
		j := join(w, fmt.Sprintf("lg-v%d", v), 9)
		req := kmsg.NewPtrLeaveGroupRequest()
		req.Group, req.MemberID = fmt.Sprintf("lg-v%d", v), j.MemberID
		m := kmsg.NewLeaveGroupRequestMember()
		m.MemberID = j.MemberID
		req.Members = append(req.Members, m)
		return w.do(req, v)
	},
	int16(kmsg.SyncGroup): func(w *wireConn, v int16) kmsg.Response {
		group := fmt.Sprintf("sg-v%d", v)
		j := join(w, group, 9)
		req := kmsg.NewPtrSyncGroupRequest()
		req.Group, req.Generation, req.MemberID = group, j.Generation, j.MemberID
		req.ProtocolType, req.Protocol = kmsg.StringPtr("consumer"), kmsg.StringPtr("range")
		a := kmsg.NewSyncGroupRequestGroupAssignment()
		a.MemberID, a.MemberAssignment = j.MemberID, []byte{0, 0, 0, 0, 0, 0, 0, 0}
		req.GroupAssignment = append(req.GroupAssignment, a)
		return w.do(req, v)
	},
	int16(kmsg.DescribeGroups): func(w *wireConn, v int16) kmsg.Response {
		req := kmsg.NewPtrDescribeGroupsRequest()
		req.Groups = []string{"jg-v9"}
		return w.do(req, v)
	},
	int16(kmsg.ListGroups): func(w *wireConn, v int16) kmsg.Response {
		return w.do(kmsg.NewPtrListGroupsRequest(), v)
	},
	int16(kmsg.ApiVersions): func(w *wireConn, v int16) kmsg.Response {
		req := kmsg.NewPtrApiVersionsRequest()
		req.ClientSoftwareName, req.ClientSoftwareVersion = "sharebench-test", "1"
		return w.do(req, v)
	},
	int16(kmsg.CreateTopics): func(w *wireConn, v int16) kmsg.Response {
		req := kmsg.NewPtrCreateTopicsRequest()
		req.TimeoutMillis = 5000
		for _, name := range []string{fmt.Sprintf("ct-v%d", v), "t"} { // created, and already there
			ct := kmsg.NewCreateTopicsRequestTopic()
			ct.Topic, ct.NumPartitions, ct.ReplicationFactor = name, 1, 1
			req.Topics = append(req.Topics, ct)
		}
		return w.do(req, v)
	},
	int16(kmsg.CreatePartitions): func(w *wireConn, v int16) kmsg.Response {
		name := fmt.Sprintf("cp-v%d", v)
		create := kmsg.NewPtrCreateTopicsRequest()
		ct := kmsg.NewCreateTopicsRequestTopic()
		ct.Topic, ct.NumPartitions, ct.ReplicationFactor = name, 1, 1
		create.Topics = append(create.Topics, ct)
		w.do(create, 7)
		req := kmsg.NewPtrCreatePartitionsRequest()
		req.TimeoutMillis = 5000
		for _, c := range []struct {
			topic string
			count int32
		}{{name, 2}, {"t", 1}} { // grown, and refused (not an increase)
			rt := kmsg.NewCreatePartitionsRequestTopic()
			rt.Topic, rt.Count = c.topic, c.count
			req.Topics = append(req.Topics, rt)
		}
		return w.do(req, v)
	},
	int16(kmsg.DeleteGroups): func(w *wireConn, v int16) kmsg.Response {
		req := kmsg.NewPtrDeleteGroupsRequest()
		req.Groups = []string{fmt.Sprintf("no-such-group-v%d", v)}
		return w.do(req, v)
	},
	int16(kmsg.OffsetDelete): func(w *wireConn, v int16) kmsg.Response {
		req := kmsg.NewPtrOffsetDeleteRequest()
		req.Group = fmt.Sprintf("no-such-group-v%d", v)
		rt := kmsg.NewOffsetDeleteRequestTopic()
		rt.Topic = "t"
		rp := kmsg.NewOffsetDeleteRequestTopicPartition()
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		return w.do(req, v)
	},
	int16(kmsg.DeleteTopics): func(w *wireConn, v int16) kmsg.Response {
		name := fmt.Sprintf("dt-v%d", v)
		create := kmsg.NewPtrCreateTopicsRequest()
		ct := kmsg.NewCreateTopicsRequestTopic()
		ct.Topic, ct.NumPartitions, ct.ReplicationFactor = name, 1, 1
		create.Topics = append(create.Topics, ct)
		w.do(create, 7)
		req := kmsg.NewPtrDeleteTopicsRequest()
		req.TimeoutMillis, req.TopicNames = 5000, []string{name}
		dt := kmsg.NewDeleteTopicsRequestTopic()
		dt.Topic = kmsg.StringPtr(name)
		req.Topics = append(req.Topics, dt)
		return w.do(req, v)
	},
	int16(kmsg.InitProducerID): func(w *wireConn, v int16) kmsg.Response {
		req := kmsg.NewPtrInitProducerIDRequest()
		req.TransactionalID, req.TransactionTimeoutMillis = kmsg.StringPtr(fmt.Sprintf("ip-v%d", v)), 10000
		return w.do(req, v)
	},
	int16(kmsg.AddPartitionsToTxn): func(w *wireConn, v int16) kmsg.Response {
		req := kmsg.NewPtrAddPartitionsToTxnRequest()
		req.TransactionalID, req.ProducerID = "nope", 1
		rt := kmsg.NewAddPartitionsToTxnRequestTopic()
		rt.Topic, rt.Partitions = "t", []int32{0}
		req.Topics = append(req.Topics, rt)
		tx := kmsg.NewAddPartitionsToTxnRequestTransaction()
		tx.TransactionalID, tx.ProducerID = "nope", 1
		txt := kmsg.NewAddPartitionsToTxnRequestTransactionTopic()
		txt.Topic, txt.Partitions = "t", []int32{0}
		tx.Topics = append(tx.Topics, txt)
		req.Transactions = append(req.Transactions, tx)
		return w.do(req, v)
	},
	int16(kmsg.AddOffsetsToTxn): func(w *wireConn, v int16) kmsg.Response {
		req := kmsg.NewPtrAddOffsetsToTxnRequest()
		req.TransactionalID, req.ProducerID, req.Group = "nope", 1, "g"
		return w.do(req, v)
	},
	int16(kmsg.EndTxn): func(w *wireConn, v int16) kmsg.Response {
		req := kmsg.NewPtrEndTxnRequest()
		req.TransactionalID, req.ProducerID = "nope", 1
		return w.do(req, v)
	},
	int16(kmsg.TxnOffsetCommit): func(w *wireConn, v int16) kmsg.Response {
		req := kmsg.NewPtrTxnOffsetCommitRequest()
		req.TransactionalID, req.Group, req.ProducerID, req.Generation = "nope", "g", 1, -1
		rt := kmsg.NewTxnOffsetCommitRequestTopic()
		rt.Topic = "t"
		rt.Partitions = append(rt.Partitions, kmsg.NewTxnOffsetCommitRequestTopicPartition())
		req.Topics = append(req.Topics, rt)
		return w.do(req, v)
	},
	int16(kmsg.DescribeConfigs): func(w *wireConn, v int16) kmsg.Response {
		req := kmsg.NewPtrDescribeConfigsRequest()
		req.IncludeSynonyms, req.IncludeDocumentation = true, true
		for _, name := range []string{"t", "no-such-topic"} {
			r := kmsg.NewDescribeConfigsRequestResource()
			r.ResourceType, r.ResourceName = kmsg.ConfigResourceTypeTopic, name
			req.Resources = append(req.Resources, r)
		}
		return w.do(req, v)
	},
	int16(kmsg.IncrementalAlterConfigs): func(w *wireConn, v int16) kmsg.Response {
		req := kmsg.NewPtrIncrementalAlterConfigsRequest()
		req.ValidateOnly = true
		r := kmsg.NewIncrementalAlterConfigsRequestResource()
		r.ResourceType, r.ResourceName = kmsg.ConfigResourceTypeTopic, "t"
		c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		c.Name, c.Value = "retention.ms", kmsg.StringPtr("1000")
		r.Configs = append(r.Configs, c)
		req.Resources = append(req.Resources, r)
		return w.do(req, v)
	},
	int16(kmsg.AlterConfigs): func(w *wireConn, v int16) kmsg.Response {
		req := kmsg.NewPtrAlterConfigsRequest()
		req.ValidateOnly = true
		r := kmsg.NewAlterConfigsRequestResource()
		r.ResourceType, r.ResourceName = kmsg.ConfigResourceTypeTopic, "t"
		c := kmsg.NewAlterConfigsRequestResourceConfig()
		c.Name, c.Value = "retention.ms", kmsg.StringPtr("1000")
		r.Configs = append(r.Configs, c)
		req.Resources = append(req.Resources, r)
		return w.do(req, v)
	},
	int16(kmsg.DescribeCluster): func(w *wireConn, v int16) kmsg.Response {
		return w.do(kmsg.NewPtrDescribeClusterRequest(), v)
	},
	int16(kmsg.DescribeProducers): func(w *wireConn, v int16) kmsg.Response {
		req := kmsg.NewPtrDescribeProducersRequest()
		rt := kmsg.NewDescribeProducersRequestTopic()
		rt.Topic, rt.Partitions = "t", []int32{0, 1}
		req.Topics = append(req.Topics, rt)
		return w.do(req, v)
	},
	int16(kmsg.DescribeTransactions): func(w *wireConn, v int16) kmsg.Response {
		req := kmsg.NewPtrDescribeTransactionsRequest()
		req.TransactionalIDs = []string{"ip-v5", "nope"}
		return w.do(req, v)
	},
	int16(kmsg.ListTransactions): func(w *wireConn, v int16) kmsg.Response {
		req := kmsg.NewPtrListTransactionsRequest()
		req.DurationFilterMillis = -1
		return w.do(req, v)
	},
	int16(kmsg.ShareGroupHeartbeat): func(w *wireConn, v int16) kmsg.Response {
		req := kmsg.NewPtrShareGroupHeartbeatRequest()
		req.GroupID, req.MemberID, req.SubscribedTopicNames = "shg", fmt.Sprintf("hb-member-v%d", v), []string{"t"}
		return w.do(req, v)
	},
	int16(kmsg.ShareGroupDescribe): func(w *wireConn, v int16) kmsg.Response {
		req := kmsg.NewPtrShareGroupDescribeRequest()
		req.GroupIDs = []string{"shg", "no-such-group"}
		return w.do(req, v)
	},
	int16(kmsg.ShareFetch): func(w *wireConn, v int16) kmsg.Response {
		// The first fetch starts the share partitions at their end
		// (share.auto.offset.reset latest); the second acquires what was
		// produced since.
		id := fmt.Sprintf("fetch-member-v%d", v)
		shareMember(w, id)
		w.do(shareFetchReq(w, id, 0), v)
		w.do(produceReq(), 9)
		return w.do(shareFetchReq(w, id, 1), v)
	},
	int16(kmsg.ShareAcknowledge): func(w *wireConn, v int16) kmsg.Response {
		id := fmt.Sprintf("ack-member-v%d", v)
		shareMember(w, id)
		w.do(shareFetchReq(w, id, 0), 1)
		req := kmsg.NewPtrShareAcknowledgeRequest()
		req.GroupID, req.MemberID, req.ShareSessionEpoch = kmsg.StringPtr("shg"), kmsg.StringPtr(id), 1
		return w.do(req, v)
	},
	int16(kmsg.DescribeShareGroupOffsets): func(w *wireConn, v int16) kmsg.Response {
		req := kmsg.NewPtrDescribeShareGroupOffsetsRequest()
		g := kmsg.NewDescribeShareGroupOffsetsRequestGroup()
		g.GroupID = "shg"
		gt := kmsg.NewDescribeShareGroupOffsetsRequestGroupTopic()
		gt.Topic, gt.Partitions = "t", []int32{0, 1}
		g.Topics = append(g.Topics, gt)
		req.Groups = append(req.Groups, g)
		return w.do(req, v)
	},
	int16(kmsg.AlterShareGroupOffsets): func(w *wireConn, v int16) kmsg.Response {
		req := kmsg.NewPtrAlterShareGroupOffsetsRequest()
		req.GroupID = "alter-empty"
		rt := kmsg.NewAlterShareGroupOffsetsRequestTopic()
		rt.Topic = "t"
		rt.Partitions = append(rt.Partitions, kmsg.NewAlterShareGroupOffsetsRequestTopicPartition())
		req.Topics = append(req.Topics, rt)
		return w.do(req, v)
	},
	int16(kmsg.DeleteShareGroupOffsets): func(w *wireConn, v int16) kmsg.Response {
		req := kmsg.NewPtrDeleteShareGroupOffsetsRequest()
		req.GroupID = "delete-empty"
		rt := kmsg.NewDeleteShareGroupOffsetsRequestTopic()
		rt.Topic = "t"
		req.Topics = append(req.Topics, rt)
		return w.do(req, v)
	},
}
