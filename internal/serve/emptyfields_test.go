package serve_test

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
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
