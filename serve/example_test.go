package serve_test

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sharebench/sharebench/engine"
	"github.com/sharebench/sharebench/serve"
)

// A Go test embeds the reference engine behind a Kafka listener, as it
// would kfake: any Kafka client then drives it on an ephemeral loopback
// port.
func Example() {
	e, err := engine.New()
	if err != nil {
		panic(err)
	}
	defer e.Close()
	s, err := serve.New(e, serve.WithListen("127.0.0.1:0"), serve.WithDefaultPartitions(1))
	if err != nil {
		panic(err)
	}
	go s.Serve()
	defer s.Close()

	cl, err := kgo.NewClient(kgo.SeedBrokers(s.Addr()), kgo.DefaultProduceTopic("orders"),
		kgo.AllowAutoTopicCreation(), kgo.ConsumeTopics("orders"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		panic(err)
	}
	defer cl.Close()
	ctx := context.Background()
	if err := cl.ProduceSync(ctx, kgo.StringRecord("first order")).FirstErr(); err != nil {
		panic(err)
	}
	fetches := cl.PollRecords(ctx, 1)
	fetches.EachRecord(func(r *kgo.Record) { fmt.Println(string(r.Value)) })
	// Output: first order
}
