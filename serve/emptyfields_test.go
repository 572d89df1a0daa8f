package serve_test

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sharebench/sharebench/serve"
)

// Fields Kafka answers non-null are non-null here too: an empty record set
// for a partition with nothing to send (Fetch), and the created topic's
// configs (CreateTopics v5+), each an empty list rather than null, which
// librdkafka and Kafka's own tools refuse.
func TestEmptyNotNull(t *testing.T) {
	s, _ := start(t)
	cl := client(t, s)

	create := kmsg.NewPtrCreateTopicsRequest()
	ct := kmsg.NewCreateTopicsRequestTopic()
	ct.Topic, ct.NumPartitions, ct.ReplicationFactor = "empty", 2, 1
	create.Topics = append(create.Topics, ct)
	cresp, err := create.RequestWith(ctx(t), cl)
	if err != nil {
		t.Fatal(err)
	}
	if cresp.Version < 5 {
		t.Fatalf("CreateTopics v%d negotiated; the test needs v5+", cresp.Version)
	}
	if len(cresp.Topics) != 1 || cresp.Topics[0].ErrorCode != 0 {
		t.Fatalf("CreateTopics: %+v", cresp.Topics)
	}
	if cresp.Topics[0].Configs == nil {
		t.Errorf("CreateTopics v%d answered configs as null; want a list (Kafka's kafka-topics --create reads it)", cresp.Version)
	}

	fetch := kmsg.NewPtrFetchRequest()
	fetch.MaxWaitMillis, fetch.MaxBytes = 10, 1<<20
	ft := kmsg.NewFetchRequestTopic()
	ft.Topic, ft.TopicID = "empty", cresp.Topics[0].TopicID
	for p := range int32(2) {
		fp := kmsg.NewFetchRequestTopicPartition()
		fp.Partition, fp.PartitionMaxBytes = p, 1<<20
		ft.Partitions = append(ft.Partitions, fp)
	}
	fetch.Topics = append(fetch.Topics, ft)
	fresp, err := fetch.RequestWith(ctx(t), cl)
	if err != nil {
		t.Fatal(err)
	}
	if len(fresp.Topics) != 1 || len(fresp.Topics[0].Partitions) != 2 {
		t.Fatalf("Fetch v%d: %+v", fresp.Version, fresp.Topics)
	}
	for _, p := range fresp.Topics[0].Partitions {
		if p.ErrorCode != 0 || p.HighWatermark != 0 {
			t.Errorf("Fetch v%d partition %d: error %d, high watermark %d; want 0 and 0", fresp.Version, p.Partition, p.ErrorCode, p.HighWatermark)
		}
		if p.RecordBatches == nil || len(p.RecordBatches) != 0 {
			t.Errorf("Fetch v%d partition %d: records %v; want an empty set, not null", fresp.Version, p.Partition, p.RecordBatches)
		}
	}
}

// A caught-up partition, an empty one and one whose records an open
// transaction holds back are each answered, at every Fetch version served
// and both isolation levels, with an empty record set (never null) and
// the high watermark, last stable offset and log start offset Kafka
// answers: librdkafka signals the end of a partition only from such an
// answer (records read up to the high watermark, or up to the last stable
// offset under read_committed).
func TestFetchCaughtUpEveryVersion(t *testing.T) {
	s, e := start(t)
	if err := e.CreateTopic("t", 2); err != nil {
		t.Fatal(err)
	}
	if err := e.CreateTopic("held", 1); err != nil {
		t.Fatal(err)
	}
	produceN(t, client(t, s, kgo.DefaultProduceTopic("t"), kgo.RecordPartitioner(kgo.ManualPartitioner())), "t", 3)
	tx := client(t, s, kgo.TransactionalID("held-open"), kgo.DefaultProduceTopic("held"))
	produceN(t, client(t, s), "held", 2)
	if err := tx.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := tx.ProduceSync(ctx(t), &kgo.Record{Value: []byte("open")}).FirstErr(); err != nil {
		t.Fatal(err)
	}

	type part struct {
		topic     string
		partition int32
		offset    int64
		hw, lso   int64
	}
	parts := []part{
		{"t", 0, 3, 3, 3},    // caught up
		{"t", 1, 0, 0, 0},    // empty
		{"held", 0, 2, 3, 2}, // the open transaction's record is past the last stable offset
	}
	w := &wireConn{t: t, s: s, c: dial(t, s)}
	av := w.do(kmsg.NewPtrApiVersionsRequest(), 3).(*kmsg.ApiVersionsResponse)
	var min, max int16 = -1, -1
	for _, k := range av.ApiKeys {
		if k.ApiKey == int16(kmsg.Fetch) {
			min, max = k.MinVersion, k.MaxVersion
		}
	}
	if min < 0 {
		t.Fatal("ApiVersions lists no Fetch")
	}
	for v := min; v <= max; v++ {
		for _, iso := range []int8{0, 1} {
			req := kmsg.NewPtrFetchRequest()
			req.ReplicaID, req.MaxBytes, req.IsolationLevel, req.SessionEpoch = -1, 1<<20, iso, -1
			for _, p := range parts {
				rt := kmsg.NewFetchRequestTopic()
				rt.Topic, rt.TopicID = p.topic, serve.TopicID(s, p.topic)
				rp := kmsg.NewFetchRequestTopicPartition()
				rp.Partition, rp.FetchOffset, rp.PartitionMaxBytes, rp.CurrentLeaderEpoch, rp.LogStartOffset = p.partition, p.offset, 1<<20, -1, -1
				rt.Partitions = append(rt.Partitions, rp)
				req.Topics = append(req.Topics, rt)
			}
			resp := w.do(req, v).(*kmsg.FetchResponse)
			if resp.ErrorCode != 0 || len(resp.Topics) != len(parts) {
				t.Fatalf("Fetch v%d: error %d, %d topics; want 0 and %d", v, resp.ErrorCode, len(resp.Topics), len(parts))
			}
			for i, p := range parts {
				if len(resp.Topics[i].Partitions) != 1 {
					t.Fatalf("Fetch v%d %s: %d partitions, want 1", v, p.topic, len(resp.Topics[i].Partitions))
				}
				rp := resp.Topics[i].Partitions[0]
				where := fmt.Sprintf("Fetch v%d isolation %d %s[%d] at %d", v, iso, p.topic, p.partition, p.offset)
				wantRecs := 0
				if iso == 0 && p.offset < p.hw {
					wantRecs = -1 // records (the open transaction's) to send
				}
				switch {
				case rp.ErrorCode != 0:
					t.Errorf("%s: error %d", where, rp.ErrorCode)
				case rp.RecordBatches == nil:
					t.Errorf("%s: records null; want an empty set", where)
				case wantRecs == 0 && len(rp.RecordBatches) != 0:
					t.Errorf("%s: %d record bytes; want none", where, len(rp.RecordBatches))
				case wantRecs < 0 && len(rp.RecordBatches) == 0:
					t.Errorf("%s: no records; want the open transaction's record", where)
				}
				if rp.HighWatermark != p.hw || rp.LastStableOffset != p.lso || (v >= 5 && rp.LogStartOffset != 0) {
					t.Errorf("%s: high watermark %d, last stable offset %d, log start offset %d; want %d, %d, 0",
						where, rp.HighWatermark, rp.LastStableOffset, rp.LogStartOffset, p.hw, p.lso)
				}
			}
		}
	}
}

// kcat (librdkafka) reads every record of a topic and, with -e, exits 0
// once it reached the end of each partition ("Reached end of topic"),
// with no protocol parse failure in its protocol debug log.
func TestKcatReachesEndOfTopic(t *testing.T) {
	kcat, err := exec.LookPath("kcat")
	if err != nil {
		t.Skip("kcat is not installed (apt-get install kcat); it checks the fetch path against librdkafka")
	}
	s, e := start(t)
	if err := e.CreateTopic("kc", 2); err != nil {
		t.Fatal(err)
	}
	cl := client(t, s, kgo.DefaultProduceTopic("kc"), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	produceN(t, cl, "kc", 5) // partition 1 stays empty
	c, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(c, kcat, "-b", s.Addr(), "-C", "-t", "kc", "-e", "-f", "%p %o %s\n", "-d", "protocol")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	if c.Err() != nil {
		t.Fatalf("kcat -e did not exit within a minute: it never saw the end of every partition\nstderr tail: %s", tail(stderr.String(), 2000))
	}
	if err != nil {
		t.Fatalf("kcat: %v\nstderr tail: %s", err, tail(stderr.String(), 2000))
	}
	var want []string
	for i := range 5 {
		want = append(want, fmt.Sprintf("0 %d %d", i, i))
	}
	if got := strings.TrimSpace(stdout.String()); got != strings.Join(want, "\n") {
		t.Errorf("kcat read %q; want %q", got, strings.Join(want, "\n"))
	}
	for p := range 2 {
		if end := fmt.Sprintf("Reached end of topic kc [%d]", p); !strings.Contains(stderr.String(), end) {
			t.Errorf("kcat did not log %q: %s", end, tail(stderr.String(), 2000))
		}
	}
	for _, bad := range []string{"parse failure", "MessageSetSize", "Protocol read buffer underflow"} {
		if strings.Contains(stderr.String(), bad) {
			t.Errorf("kcat logged %q: %s", bad, tail(stderr.String(), 2000))
		}
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
