package serve_test

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sharebench/sharebench/engine"
	"github.com/sharebench/sharebench/serve"
)

// start runs a server over a fresh engine on a free loopback port.
func start(t testing.TB, opts ...serve.Option) (*serve.Server, *engine.Engine) {
	t.Helper()
	e, err := engine.New()
	if err != nil {
		t.Fatal(err)
	}
	first := []serve.Option{serve.WithListen("127.0.0.1:0")}
	if testing.Verbose() {
		// First, so that a test's own logger wins.
		first = append(first, serve.WithLogger(os.Stderr))
	}
	opts = append(first, opts...)
	s, err := serve.New(e, opts...)
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve()
	t.Cleanup(func() { s.Close(); e.Close() })
	return s, e
}

func client(t testing.TB, s *serve.Server, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(s.Addr())}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

func ctx(t testing.TB) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}

func produceN(t testing.TB, cl *kgo.Client, topic string, n int) {
	t.Helper()
	for i := range n {
		if err := cl.ProduceSync(ctx(t), &kgo.Record{Topic: topic, Value: []byte(strconv.Itoa(i))}).FirstErr(); err != nil {
			t.Fatalf("produce %d: %v", i, err)
		}
	}
}

func TestClassicGroupTransactSession(t *testing.T) {
	s, e := start(t)
	if err := e.CreateTopic("in", 2); err != nil {
		t.Fatal(err)
	}
	if err := e.CreateTopic("out", 1); err != nil {
		t.Fatal(err)
	}
	produceN(t, client(t, s), "in", 20)
	sess, err := kgo.NewGroupTransactSession(
		kgo.SeedBrokers(s.Addr()), kgo.TransactionalID("eos-1"), kgo.ConsumerGroup("g"),
		kgo.ConsumeTopics("in"), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.DefaultProduceTopic("out"),
	)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	got := 0
	for got < 20 {
		fs := sess.PollFetches(ctx(t))
		if err := fs.Err(); err != nil {
			t.Fatalf("poll: %v", err)
		}
		if err := sess.Begin(); err != nil {
			t.Fatalf("begin: %v", err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			got++
			sess.Produce(ctx(t), &kgo.Record{Value: r.Value}, nil)
		})
		committed, err := sess.End(ctx(t), kgo.TryCommit)
		if err != nil || !committed {
			t.Fatalf("end: committed %v, %v", committed, err)
		}
	}
	// Markers are asynchronous: End returns once the commit is decided, and
	// the offsets become committed when the marker reaches the group.
	e.DeliverMarkers()
	var sum int64
	for _, off := range e.CommittedOffsets("g") {
		sum += off
	}
	if sum != 20 {
		t.Fatalf("committed offsets %v, want 20 in all", e.CommittedOffsets("g"))
	}
}

func serveKey(k string) serve.Option {
	switch k {
	case "93":
		return serve.WithTxnShareAck(93)
	case "off":
		return serve.WithTxnShareAck(0)
	}
	return serve.WithTxnShareAck(95)
}

func engineTP(topic string) engine.TopicPartition {
	return engine.TopicPartition{Topic: topic, Partition: 0}
}

func shortCtx(t testing.TB) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	t.Cleanup(cancel)
	return c
}
