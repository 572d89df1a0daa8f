// This file holds the package example: an explicit-mode round trip on the
// embedded kfake cluster.

package kafkatarget_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/sharebench/sharebench/loadgen/targets"
	"github.com/sharebench/sharebench/loadgen/targets/kafkatarget"
	"github.com/sharebench/sharebench/vocab"
)

// Example produces three records and reads them back through an explicit
// share-group worker, which accepts them. Without Brokers, New starts an
// embedded kfake cluster; with them, a failed ping is one error naming the
// brokers and the fix.
func Example() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	t, err := kafkatarget.New(ctx, kafkatarget.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer t.Close()
	// Supports wraps targets.ErrUnsupported for a mode the cluster cannot run.
	if err := t.Supports(ctx, vocab.Explicit); err != nil {
		log.Fatal(err)
	}
	cfg := targets.Config{
		InputTopic:      "example-in",
		OutputTopic:     "example-out",
		InputPartitions: 1,
		Group:           "example-group",
		LockDuration:    15 * time.Second,
		DeliveryLimit:   5,
	}
	if err := t.Setup(ctx, cfg); err != nil { // topics and share group configs
		log.Fatal(err)
	}

	p, err := t.NewProducer(ctx, cfg, 0)
	if err != nil {
		log.Fatal(err)
	}
	var in []*targets.Record
	for _, v := range []string{"a", "b", "c"} {
		in = append(in, &targets.Record{Value: []byte(v)})
	}
	if err := p.Produce(ctx, in); err != nil {
		log.Fatal(err)
	}
	p.Close()

	w, err := t.NewWorker(ctx, cfg, vocab.Explicit, 0)
	if err != nil {
		log.Fatal(err)
	}
	defer w.Close(ctx)
	for got := 0; got < len(in); {
		recs, err := w.Poll(ctx, 0)
		if err != nil {
			log.Fatal(err)
		}
		for _, r := range recs {
			fmt.Printf("%s@%d\n", r.Value, r.Offset)
		}
		if err := w.Ack(ctx, recs, vocab.AckAccept); err != nil {
			log.Fatal(err)
		}
		got += len(recs)
	}
	// Output:
	// a@0
	// b@1
	// c@2
}
