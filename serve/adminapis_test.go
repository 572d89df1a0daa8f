package serve_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sharebench/sharebench/engine"
	"github.com/sharebench/sharebench/internal/txnshareack"
	"github.com/sharebench/sharebench/serve"
)

// durableServe starts a server over a durable engine in dir whose share
// groups start at the earliest offset; both close when the test ends or
// when the returned stop is called.
func durableServe(t *testing.T, dir string) (*serve.Server, *engine.Engine, func()) {
	t.Helper()
	g := engine.DefaultGroupConfig()
	g.AutoOffsetReset = engine.ResetEarliest
	e, err := engine.New(engine.WithDataDir(dir), engine.WithGroupDefaults(g))
	if err != nil {
		t.Fatal(err)
	}
	s, err := serve.New(e, serve.WithListen("127.0.0.1:0"))
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve()
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			s.Close()
			e.Close()
		}
	}
	t.Cleanup(stop)
	return s, e, stop
}

func adm(t *testing.T, s *serve.Server, opts ...kgo.Opt) (*kadm.Client, *kgo.Client) {
	t.Helper()
	cl := client(t, s, opts...)
	return kadm.NewClient(cl), cl
}

// shareConsumeAll reads every record of topic through a new member of
// group in the engine, accepting each, and leaves; it returns the count.
func shareConsumeAll(t *testing.T, e *engine.Engine, group, topic string) int {
	t.Helper()
	m, err := e.JoinShareGroup(group, []string{topic}, engine.AckExplicit)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for {
		recs, err := m.Poll(100)
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) == 0 {
			break
		}
		n += len(recs)
		for _, r := range recs {
			if err := m.Acknowledge([]engine.Acknowledgement{{Topic: r.Topic, Partition: r.Partition, First: r.Offset, Last: r.Offset, Type: engine.AckAccept}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := m.Leave(); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestCreatePartitionsAPI(t *testing.T) {
	t.Parallel()
	s, e, _ := durableServe(t, t.TempDir())
	ad, cl := adm(t, s, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	c := ctx(t)
	if _, err := ad.CreateTopic(c, 2, 1, nil, "t"); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		call func() (kadm.CreatePartitionsResponses, error)
		want error
		n    int32
	}{
		{"same count", func() (kadm.CreatePartitionsResponses, error) { return ad.UpdatePartitions(c, 2, "t") }, kerr.InvalidPartitions, 2},
		{"fewer", func() (kadm.CreatePartitionsResponses, error) { return ad.UpdatePartitions(c, 1, "t") }, kerr.InvalidPartitions, 2},
		{"validate only", func() (kadm.CreatePartitionsResponses, error) { return ad.ValidateCreatePartitions(c, 2, "t") }, nil, 2},
		{"unknown topic", func() (kadm.CreatePartitionsResponses, error) { return ad.UpdatePartitions(c, 3, "nope") }, kerr.UnknownTopicOrPartition, 2},
		{"grow", func() (kadm.CreatePartitionsResponses, error) { return ad.CreatePartitions(c, 2, "t") }, nil, 4},
	} {
		rs, err := tc.call()
		if err == nil {
			for _, r := range rs {
				err = r.Err
			}
		}
		if !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
		if n, _ := e.Partitions("t"); n != tc.n {
			t.Errorf("%s: %d partitions, want %d", tc.name, n, tc.n)
		}
	}
	md, err := ad.ListTopics(c, "t")
	if err != nil || len(md["t"].Partitions) != 4 {
		t.Fatalf("metadata after the growth: %v, %v; want 4 partitions", md["t"].Partitions, err)
	}
	if err := cl.ProduceSync(c, &kgo.Record{Topic: "t", Partition: 3, Value: []byte("x")}).FirstErr(); err != nil {
		t.Fatalf("produce to the new partition: %v", err)
	}
	if got := shareConsumeAll(t, e, "g", "t"); got != 1 {
		t.Fatalf("share group read %d records, want the new partition's 1", got)
	}
}

func TestDeleteGroupsAndOffsetsAPI(t *testing.T) {
	t.Parallel()
	s, e, _ := durableServe(t, t.TempDir())
	ad, cl := adm(t, s)
	c := ctx(t)
	if _, err := ad.CreateTopic(c, 2, 1, nil, "t"); err != nil {
		t.Fatal(err)
	}
	produceN(t, cl, "t", 4)

	// A live classic member subscribed to t.
	live := client(t, s, kgo.ConsumerGroup("live"), kgo.ConsumeTopics("t"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	pc, cancel := context.WithTimeout(c, 20*time.Second)
	fs := live.PollFetches(pc)
	cancel()
	if fs.NumRecords() == 0 {
		t.Fatalf("the live member read nothing: %v", fs.Errors())
	}
	if err := live.CommitUncommittedOffsets(c); err != nil {
		t.Fatal(err)
	}
	dr, err := ad.DeleteOffsets(c, "live", kadm.TopicsSet{"t": {0: {}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := dr.Error(); !errors.Is(err, kerr.GroupSubscribedToTopic) {
		t.Errorf("DeleteOffsets of a subscribed topic: %v, want GROUP_SUBSCRIBED_TO_TOPIC", err)
	}
	gr, _ := ad.DeleteGroups(c, "live")
	if err := gr["live"].Err; !errors.Is(err, kerr.NonEmptyGroup) {
		t.Errorf("DeleteGroups of a group with a member: %v, want NON_EMPTY_GROUP", err)
	}

	// An offsets-only classic group: DeleteOffsets takes the named
	// partition's offset, DeleteGroups the rest.
	os := kadm.Offsets{}
	os.Add(kadm.Offset{Topic: "t", Partition: 0, At: 2})
	os.Add(kadm.Offset{Topic: "t", Partition: 1, At: 1})
	if _, err := ad.CommitOffsets(c, "c", os); err != nil {
		t.Fatal(err)
	}
	dr, err = ad.DeleteOffsets(c, "c", kadm.TopicsSet{"t": {0: {}}})
	if err != nil || dr.Error() != nil {
		t.Fatalf("DeleteOffsets: %v, %v", err, dr.Error())
	}
	if got := e.CommittedOffsets("c"); len(got) != 1 || got[engine.TopicPartition{Topic: "t", Partition: 1}] != 1 {
		t.Fatalf("offsets after DeleteOffsets(t-0): %v, want only t-1 at 1", got)
	}
	dr, err = ad.DeleteOffsets(c, "nope", kadm.TopicsSet{"t": {0: {}}})
	if err == nil {
		err = dr.Error()
	}
	if !errors.Is(err, kerr.GroupIDNotFound) {
		t.Errorf("DeleteOffsets of an unknown group: %v, want GROUP_ID_NOT_FOUND", err)
	}

	// A share group: members block the deletion; deleted, a new group of
	// the name starts at the reset point (earliest here) again.
	if got := shareConsumeAll(t, e, "sg", "t"); got != 4 {
		t.Fatalf("share group read %d, want 4", got)
	}
	m, err := e.JoinShareGroup("sg", []string{"t"}, engine.AckExplicit)
	if err != nil {
		t.Fatal(err)
	}
	for _, step := range []struct {
		group string
		want  error
		after func()
	}{
		{"sg", kerr.NonEmptyGroup, func() {
			if err := m.Leave(); err != nil {
				t.Fatal(err)
			}
		}},
		{"sg", nil, nil},
		{"sg", kerr.GroupIDNotFound, nil},
		{"c", nil, nil},
		{"c", kerr.GroupIDNotFound, nil},
		{"", kerr.InvalidGroupID, nil},
	} {
		gr, err := ad.DeleteGroups(c, step.group)
		if err != nil {
			t.Fatal(err)
		}
		if err := gr[step.group].Err; !errors.Is(err, step.want) {
			t.Errorf("DeleteGroups(%q): %v, want %v", step.group, err, step.want)
		}
		if step.after != nil {
			step.after()
		}
	}
	if got := e.CommittedOffsets("c"); got != nil {
		t.Errorf("offsets of the deleted group c: %v", got)
	}
	if got := shareConsumeAll(t, e, "sg", "t"); got != 4 {
		t.Fatalf("the new share group sg read %d, want all 4 again", got)
	}
}

// TestDeleteTopicsDataDir: under --data-dir a deleted topic stays deleted
// across a restart, a topic created again under its name is empty with a
// new id, and a Fetch naming the old id gets UNKNOWN_TOPIC_ID.
func TestDeleteTopicsDataDir(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s, e, stop := durableServe(t, dir)
	ad, cl := adm(t, s)
	c := ctx(t)
	if _, err := ad.CreateTopic(c, 1, 1, nil, "t"); err != nil {
		t.Fatal(err)
	}
	produceN(t, cl, "t", 3)
	if got := shareConsumeAll(t, e, "sg", "t"); got != 3 {
		t.Fatalf("share group read %d, want 3", got)
	}
	md, err := ad.ListTopics(c, "t")
	if err != nil {
		t.Fatal(err)
	}
	oldID := md["t"].ID
	rs, err := ad.DeleteTopics(c, "t")
	if err != nil || rs["t"].Err != nil {
		t.Fatalf("DeleteTopics under a data directory: %v, %v", err, rs["t"].Err)
	}
	stop()

	s, e, _ = durableServe(t, dir)
	ad, cl = adm(t, s)
	if md, err := ad.ListTopics(c); err != nil || md.Has("t") {
		t.Fatalf("topics after the restart: %v, %v; want no t", md.Names(), err)
	}
	if _, err := ad.CreateTopic(c, 1, 1, nil, "t"); err != nil {
		t.Fatalf("create t again: %v", err)
	}
	md, err = ad.ListTopics(c, "t")
	if err != nil {
		t.Fatal(err)
	}
	if md["t"].ID == oldID {
		t.Fatalf("the recreated topic kept the id %v", oldID)
	}
	if _, hw, _, err := e.Offsets(engine.TopicPartition{Topic: "t"}); err != nil || hw != 0 {
		t.Fatalf("recreated t-0: hw %d, %v; want empty", hw, err)
	}
	produceN(t, cl, "t", 1)
	if got := shareConsumeAll(t, e, "sg", "t"); got != 1 {
		t.Fatalf("share group sg read %d of the new topic, want its 1 record", got)
	}

	for _, tc := range []struct {
		name string
		id   [16]byte
		want int16
	}{
		{"old id", oldID, kerr.UnknownTopicID.Code},
		{"new id", md["t"].ID, 0},
	} {
		req := kmsg.NewPtrFetchRequest()
		req.Version, req.ReplicaID, req.MaxBytes = 13, -1, 1<<20
		ft := kmsg.NewFetchRequestTopic()
		ft.TopicID = tc.id
		fp := kmsg.NewFetchRequestTopicPartition()
		fp.PartitionMaxBytes = 1 << 20
		ft.Partitions = append(ft.Partitions, fp)
		req.Topics = append(req.Topics, ft)
		resp, err := req.RequestWith(c, cl)
		if err != nil {
			t.Fatal(err)
		}
		if got := resp.Topics[0].Partitions[0].ErrorCode; got != tc.want {
			t.Errorf("Fetch v13 with the %s: error %d, want %d", tc.name, got, tc.want)
		}
	}
}

// TestOldTopicIDIsUnknown: once a topic is deleted and created again, every
// request that names topics by id and names the old one gets
// UNKNOWN_TOPIC_ID for it, as Kafka answers, and the new id works.
func TestOldTopicIDIsUnknown(t *testing.T) {
	t.Parallel()
	s, e := start(t)
	if err := e.CreateTopic("t", 1); err != nil {
		t.Fatal(err)
	}
	oldID := serve.TopicID(s, "t")
	if err := e.DeleteTopic("t"); err != nil {
		t.Fatal(err)
	}
	if err := e.CreateTopic("t", 1); err != nil {
		t.Fatal(err)
	}
	newID := serve.TopicID(s, "t")
	if newID == oldID || newID == ([16]byte{}) {
		t.Fatalf("ids: old %x, new %x; want two different non-zero ids", oldID, newID)
	}
	// A record for the new incarnation, which the share fetch's poll
	// delivers beside the old id's error.
	g := engine.DefaultGroupConfig()
	g.AutoOffsetReset = engine.ResetEarliest
	if err := e.SetShareGroupConfig("g", g); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Produce("t", 0, []engine.ProduceRecord{{Value: []byte("x")}}); err != nil {
		t.Fatal(err)
	}
	cl := client(t, s)
	m := &shareRaw{t: t, cl: cl, id: "member-a", topic: newID}
	m.heartbeat(false)
	c := ctx(t)

	shareFetch := func(id [16]byte, epoch int32) int16 {
		req := kmsg.NewPtrShareFetchRequest()
		req.GroupID, req.MemberID = kmsg.StringPtr("g"), kmsg.StringPtr(m.id)
		req.ShareSessionEpoch, req.MaxRecords, req.BatchSize, req.MaxBytes = epoch, 10, 10, 1<<20
		rt := kmsg.NewShareFetchRequestTopic()
		rt.TopicID = id
		rt.Partitions = append(rt.Partitions, kmsg.NewShareFetchRequestTopicPartition())
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(c, cl)
		if err != nil || resp.ErrorCode != 0 {
			t.Fatalf("share fetch: %v, %+v", err, resp)
		}
		// The poll may answer the new incarnation's partition too.
		for _, rt := range resp.Topics {
			if rt.TopicID == id && len(rt.Partitions) == 1 {
				return rt.Partitions[0].ErrorCode
			}
		}
		t.Fatalf("share fetch: no answer for the topic asked about: %+v", resp)
		return 0
	}
	shareAck := func(id [16]byte, epoch int32) int16 {
		req := kmsg.NewPtrShareAcknowledgeRequest()
		req.GroupID, req.MemberID, req.ShareSessionEpoch = kmsg.StringPtr("g"), kmsg.StringPtr(m.id), epoch
		rt := kmsg.NewShareAcknowledgeRequestTopic()
		rt.TopicID = id
		rp := kmsg.NewShareAcknowledgeRequestTopicPartition()
		b := kmsg.NewShareAcknowledgeRequestTopicPartitionAcknowledgementBatch()
		b.FirstOffset, b.LastOffset, b.AcknowledgeTypes = 0, 0, []int8{1}
		rp.AcknowledgementBatches = append(rp.AcknowledgementBatches, b)
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(c, cl)
		if err != nil || resp.ErrorCode != 0 || len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
			t.Fatalf("share acknowledge: %v, %+v", err, resp)
		}
		return resp.Topics[0].Partitions[0].ErrorCode
	}
	txnShareAck := func(id [16]byte, _ int32) int16 {
		req := txnshareack.NewRequest(95)
		req.GroupID, req.MemberID = "g", m.id
		req.Topics = []txnshareack.Topic{{TopicID: id, Partitions: []txnshareack.Partition{{Batches: []txnshareack.Batch{{LastOffset: 0, AcknowledgeTypes: []int8{1}}}}}}}
		// franz-go does not know the draft's key: the frame goes
		// through the server's dispatch directly.
		out, _, err := s.HandleFrameForTest(frame(req, 0))
		if err != nil {
			t.Fatalf("txn share acknowledge: %v", err)
		}
		resp := txnshareack.NewResponse(95)
		if err := resp.ReadFrom(out[4+4+1:]); err != nil {
			t.Fatalf("txn share acknowledge response: %v", err)
		}
		if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
			t.Fatalf("txn share acknowledge: %+v", resp)
		}
		return resp.Topics[0].Partitions[0].ErrorCode
	}
	produce := func(id [16]byte, _ int32) int16 {
		req := kmsg.NewPtrProduceRequest()
		req.Version, req.Acks, req.TimeoutMillis = 13, -1, 5000
		rt := kmsg.NewProduceRequestTopic()
		rt.TopicID = id
		rt.Partitions = append(rt.Partitions, kmsg.NewProduceRequestTopicPartition())
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(c, cl)
		if err != nil || len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
			t.Fatalf("produce: %v, %+v", err, resp)
		}
		return resp.Topics[0].Partitions[0].ErrorCode
	}
	for _, tc := range []struct {
		name  string
		call  func([16]byte, int32) int16
		epoch int32
	}{
		// The share session opens with the fetch (epoch 0), so the
		// acknowledgement continues it at epoch 1.
		{"ShareFetch", shareFetch, 0},
		{"ShareAcknowledge", shareAck, 1},
		{"TxnShareAcknowledge", txnShareAck, 0},
		{"Produce v13", produce, 0},
	} {
		if got := tc.call(oldID, tc.epoch); got != kerr.UnknownTopicID.Code {
			t.Errorf("%s naming the deleted incarnation's id: error %d, want UNKNOWN_TOPIC_ID (%d)", tc.name, got, kerr.UnknownTopicID.Code)
		}
	}
}

// TestDeletedGroupsGoneFromListings: a share group whose consumer read
// and left, and a classic group whose consumer committed and left, are
// deleted with DeleteGroups and are then gone, as Kafka answers:
// ListGroups lists neither, ShareGroupDescribe says GROUP_ID_NOT_FOUND and
// DescribeGroups Dead; deleting them again is GROUP_ID_NOT_FOUND.
func TestDeletedGroupsGoneFromListings(t *testing.T) {
	t.Parallel()
	s, e := start(t)
	if err := e.CreateTopic("t", 1); err != nil {
		t.Fatal(err)
	}
	if err := e.SetShareGroupConfig("sg", engine.GroupConfig{LockDuration: 30 * time.Second, DeliveryLimit: 5, MaxRecordLocks: 2000, AutoOffsetReset: engine.ResetEarliest}); err != nil {
		t.Fatal(err)
	}
	produceN(t, client(t, s), "t", 3)
	ad, _ := adm(t, s)
	c := ctx(t)

	share, err := kgo.NewClient(kgo.SeedBrokers(s.Addr()), kgo.ShareGroup("sg"), kgo.ConsumeTopics("t"), kgo.FetchMaxWait(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	for n := 0; n < 3; {
		fs := share.PollRecords(c, 3)
		if err := fs.Err(); err != nil {
			t.Fatal(err)
		}
		for _, r := range fs.Records() {
			share.MarkAcks(kgo.AckAccept, r)
			n++
		}
	}
	if err := share.FlushAcks(c); err != nil {
		t.Fatal(err)
	}
	share.Close()

	classic, err := kgo.NewClient(kgo.SeedBrokers(s.Addr()), kgo.ConsumerGroup("cg"), kgo.ConsumeTopics("t"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	pc, cancel := context.WithTimeout(c, 20*time.Second)
	fs := classic.PollFetches(pc)
	cancel()
	if fs.NumRecords() == 0 {
		t.Fatalf("the classic member read nothing: %v", fs.Errors())
	}
	if err := classic.CommitUncommittedOffsets(c); err != nil {
		t.Fatal(err)
	}
	classic.Close()

	listed := func() map[string]bool {
		t.Helper()
		gs, err := ad.ListGroups(c)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]bool{}
		for id := range gs {
			out[id] = true
		}
		return out
	}
	if got := listed(); !got["sg"] || !got["cg"] {
		t.Fatalf("before deletion ListGroups lists %v, want sg and cg", got)
	}
	for _, id := range []string{"sg", "cg"} {
		gr, err := ad.DeleteGroups(c, id)
		if err != nil {
			t.Fatal(err)
		}
		if err := gr[id].Err; err != nil {
			t.Fatalf("DeleteGroups(%s) after its consumer left: %v", id, err)
		}
	}
	if got := listed(); got["sg"] || got["cg"] {
		t.Errorf("after deletion ListGroups lists %v, want neither sg nor cg", got)
	}
	sd, err := ad.DescribeShareGroups(c, "sg")
	if err != nil && !errors.Is(err, kerr.GroupIDNotFound) {
		t.Fatal(err)
	}
	if err == nil {
		err = sd["sg"].Err
	}
	if !errors.Is(err, kerr.GroupIDNotFound) {
		t.Errorf("ShareGroupDescribe of the deleted sg: %v (state %q), want GROUP_ID_NOT_FOUND", err, sd["sg"].GroupState)
	}
	dg, err := ad.DescribeGroups(c, "cg", "sg")
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"cg", "sg"} {
		if st := dg[id].State; st != "Dead" {
			t.Errorf("DescribeGroups of the deleted %s: state %q, want Dead", id, st)
		}
	}
	for _, id := range []string{"sg", "cg"} {
		gr, err := ad.DeleteGroups(c, id)
		if err != nil {
			t.Fatal(err)
		}
		if err := gr[id].Err; !errors.Is(err, kerr.GroupIDNotFound) {
			t.Errorf("DeleteGroups(%s) again: %v, want GROUP_ID_NOT_FOUND", id, err)
		}
	}
}
