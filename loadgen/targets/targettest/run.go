// This file holds Run, the case table, and what the cases share: a
// per-case target and config, and bounded waits.

package targettest

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sharebench/sharebench/loadgen/targets"
	"github.com/sharebench/sharebench/vocab"
)

// Timeout bounds every wait of a case (a poll loop, a wait for markers)
// and the case's context. Generous: a real broker on a loaded 2-core
// machine can take seconds to answer.
const Timeout = 60 * time.Second

// cases are the contract's cases, by subtest name.
var cases = []struct {
	name string
	run  func(*testing.T, *env)
}{
	{"Supports", testSupports},
	{"ProduceAssignsOffsets", testProduceAssignsOffsets},
	{"ExplicitConsumesAndAcksAll", testExplicitConsumesAndAcksAll},
	{"NonTransactionalWorkerRefusesTransactions", testNonTransactionalWorkerRefusesTransactions},
	{"ClassicEOSWorker", testClassicEOSWorker},
	{"EndOffsetsAndPositions", testEndOffsetsAndPositions},
}

// Option tells Run what the target is allowed to do differently.
type Option func(*options)

type options struct {
	laggingStartOffsets bool
}

// LaggingStartOffsets allows Inspect to report share-partition start
// offsets behind the acknowledgements the target has answered, as a real
// Kafka broker does (it reports what its share coordinator persisted,
// which lags the last records acknowledged); Run then checks only that
// they never pass a partition's end. By default they must reach it.
func LaggingStartOffsets() Option {
	return func(o *options) { o.laggingStartOffsets = true }
}

// Run runs every case of the contract as a parallel subtest of t, each
// against the target open returns for it. open must make the target
// close when its test ends (t.Cleanup); a case closes every producer,
// worker and reader it opens.
func Run(t *testing.T, open func(t *testing.T) targets.Target, opts ...Option) {
	t.Helper()
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	// One nonce per Run: the names of two runs never meet on a cluster
	// that outlives them.
	nonce := strconv.FormatInt(time.Now().UnixNano(), 36)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), Timeout)
			t.Cleanup(cancel)
			c.run(t, &env{t: t, tg: open(t), ctx: ctx, nonce: nonce, opts: o})
		})
	}
}

// env is one case's target and context.
type env struct {
	t     *testing.T
	tg    targets.Target
	ctx   context.Context
	nonce string
	opts  options
}

// teardowner is implemented by targets that delete a mode's topics and
// group (as loadgen.Teardowner).
type teardowner interface {
	Teardown(ctx context.Context, cfg targets.Config) error
}

// setup returns a config with names of the case's own and runs Setup; the
// topics are deleted when the case ends, where the target can.
func (e *env) setup(inputPartitions int32) targets.Config {
	e.t.Helper()
	name := "tt-" + strings.Map(topicChar, e.t.Name()) + "-" + e.nonce
	cfg := targets.Config{
		InputTopic:            name + "-in",
		OutputTopic:           name + "-out",
		InputPartitions:       inputPartitions,
		OutputPartitions:      1,
		Group:                 name + "-group",
		TransactionalIDPrefix: name + "-txn-",
		// A real broker refuses a lock shorter than 15s
		// (group.share.min.record.lock.duration.ms); no case waits
		// for a lock to expire.
		LockDuration:       15 * time.Second,
		DeliveryLimit:      5,
		MaxRecordLocks:     1000,
		TransactionTimeout: 30 * time.Second,
		MaxPollRecords:     100,
	}
	if err := e.tg.Setup(e.ctx, cfg); err != nil {
		e.t.Fatalf("Setup: %v", err)
	}
	if td, ok := e.tg.(teardowner); ok {
		e.t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), Timeout)
			defer cancel()
			if err := td.Teardown(ctx, cfg); err != nil {
				e.t.Logf("Teardown: %v", err)
			}
		})
	}
	return cfg
}

// topicChar keeps the characters Kafka allows in a topic name and maps any
// other to '-'.
func topicChar(r rune) rune {
	switch {
	case 'a' <= r && r <= 'z', 'A' <= r && r <= 'Z', '0' <= r && r <= '9', r == '.', r == '_', r == '-':
		return r
	}
	return '-'
}

// produce writes n input records valued "<i>", round-robin over the input
// partitions (a target may place them by its own partitioner), and
// returns them as Produce filled them in.
func (e *env) produce(cfg targets.Config, n int) []*targets.Record {
	e.t.Helper()
	p, err := e.tg.NewProducer(e.ctx, cfg, 0)
	if err != nil {
		e.t.Fatalf("NewProducer: %v", err)
	}
	defer p.Close()
	recs := make([]*targets.Record, n)
	for i := range recs {
		recs[i] = &targets.Record{Topic: cfg.InputTopic, Partition: int32(i) % cfg.InputPartitions, Value: []byte(strconv.Itoa(i))}
	}
	if err := p.Produce(e.ctx, recs); err != nil {
		e.t.Fatalf("Produce: %v", err)
	}
	return recs
}

// worker returns a worker of mode m; it is closed when the case ends.
func (e *env) worker(cfg targets.Config, m vocab.Mode, id int) targets.Worker {
	e.t.Helper()
	w, err := e.tg.NewWorker(e.ctx, cfg, m, id)
	if err != nil {
		e.t.Fatalf("NewWorker(%s, %d): %v", m, id, err)
	}
	e.t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), Timeout)
		defer cancel()
		w.Close(ctx)
	})
	return w
}

// pollTick bounds one poll of a loop, so a loop checks its deadline.
const pollTick = 500 * time.Millisecond

// pollUntil polls w for up to cfg.MaxPollRecords records at a time,
// handing each batch to each, until done reports true; it fails the case
// after Timeout.
func (e *env) pollUntil(cfg targets.Config, w targets.Worker, each func([]*targets.Record), done func() bool) {
	e.t.Helper()
	deadline := time.Now().Add(Timeout)
	for !done() {
		if time.Now().After(deadline) {
			e.t.Fatalf("polled for %v without the records the case waits for", Timeout)
		}
		ctx, cancel := context.WithTimeout(e.ctx, pollTick)
		recs, err := w.Poll(ctx, cfg.MaxPollRecords)
		cancel()
		if err != nil {
			// A poll that waited until ctx is done returns what it has
			// and no error (the Worker contract).
			e.t.Fatalf("Poll: %v", err)
		}
		if len(recs) > 0 {
			each(recs)
		}
	}
}

// eventually calls check until it returns "" and fails the case after
// Timeout (or once the case's context is done) with its first and last
// answers.
func (e *env) eventually(check func() string) {
	e.t.Helper()
	deadline := time.Now().Add(Timeout)
	var first string
	for {
		msg := check()
		if msg == "" {
			return
		}
		if first == "" {
			first = msg
		}
		if time.Now().After(deadline) || e.ctx.Err() != nil {
			e.t.Fatalf("gave up waiting: first %s; last %s", first, msg)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
