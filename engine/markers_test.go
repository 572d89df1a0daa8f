package engine_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/sharebench/sharebench/engine"
)

// asyncRig is a rig whose markers are asynchronous (the engine's default):
// on the manual clock they go out when the test fires timers.
func asyncRig(t *testing.T, opts ...engine.Option) *rig {
	t.Helper()
	return newRig(t, append([]engine.Option{engine.WithMarkerDelivery(engine.MarkersAsync)}, opts...)...)
}

// stagedTxn stages in-0 [0,1] and writes one output in an open
// transaction of p.
func stagedTxn(t *testing.T, r *rig, p *engine.Producer, m *engine.ShareMember) {
	t.Helper()
	wantErr(t, "begin", p.Begin(), nil)
	if _, err := p.Produce("out", 0, []engine.ProduceRecord{{Value: []byte("o")}}); err != nil {
		t.Fatal(err)
	}
	wantErr(t, "stage", p.SendShareAcksToTransaction([]engine.Acknowledgement{accept(0, 1)}, m.Metadata()), nil)
}

func txnState(t *testing.T, r *rig, id string) engine.TxnInfo {
	t.Helper()
	info, ok := r.e.Transaction(id)
	if !ok {
		t.Fatalf("no transaction %q", id)
	}
	return info
}

// TestAsyncMarkers: Commit returns once PREPARE_COMMIT is durable; the
// outputs and the staged records change only when the markers are
// delivered (FireTimers on a manual clock), then COMPLETE_COMMIT.
func TestAsyncMarkers(t *testing.T) {
	t.Parallel()
	for _, commit := range []bool{true, false} {
		t.Run(fmt.Sprintf("commit=%v", commit), func(t *testing.T) {
			t.Parallel()
			r := asyncRig(t)
			r.produce("in", 0, 2)
			m := r.join("g", engine.AckTransactional)
			r.poll(m, 2)
			p := r.producer("tx")
			stagedTxn(t, r, p, m)
			end, prepared, complete, final := p.Commit, engine.TxnPrepareCommit, engine.TxnCompleteCommit, engine.StateAcknowledged
			if !commit {
				end, prepared, complete, final = p.Abort, engine.TxnPrepareAbort, engine.TxnCompleteAbort, engine.StateAvailable
			}
			wantErr(t, "end", end(), nil)
			if info := txnState(t, r, "tx"); info.State != prepared || info.MarkersPending != 2 {
				t.Fatalf("after the end: %v with %d markers pending, want %v with 2", info.State, info.MarkersPending, prepared)
			}
			r.wantState("g", 0, 1, engine.StateTxPending, 1)
			if got := r.committed("out", 0); len(got) != 0 {
				t.Fatalf("%d outputs visible before the markers", len(got))
			}
			if n := r.e.DeliverMarkers(); n != 1 {
				t.Fatalf("DeliverMarkers completed %d transactions, want 1", n)
			}
			if info := txnState(t, r, "tx"); info.State != complete || info.MarkersPending != 0 || info.Epoch != p.Epoch() {
				t.Fatalf("after the markers: %+v, want %v at the producer's epoch %d", info, complete, p.Epoch())
			}
			r.wantState("g", 0, 1, final, 1)
			if got, want := len(r.committed("out", 0)), map[bool]int{true: 1, false: 0}[commit]; got != want {
				t.Fatalf("%d outputs visible after the markers, want %d", got, want)
			}
			r.check()
		})
	}
}

// TestNextTransactionCompletesThePrevious: the producer's next call sends
// the previous transaction's pending markers first (its retry of
// CONCURRENT_TRANSACTIONS succeeds at once when nothing is cut off).
func TestNextTransactionCompletesThePrevious(t *testing.T) {
	t.Parallel()
	r := asyncRig(t)
	r.produce("in", 0, 2)
	m := r.join("g", engine.AckTransactional)
	r.poll(m, 2)
	p := r.producer("tx")
	stagedTxn(t, r, p, m)
	wantErr(t, "commit", p.Commit(), nil)
	wantErr(t, "next begin", p.Begin(), nil)
	r.wantState("g", 0, 1, engine.StateAcknowledged, 1)
	if info := txnState(t, r, "tx"); info.State != engine.TxnOngoing {
		t.Fatalf("state %v, want ONGOING", info.State)
	}
}

// TestNetworkPartitionHoldsMarkers: with the coordinator cut off from
// out-0's leader, the share partition applies its marker but out-0 does
// not: the outputs stay invisible (LSO held), the transaction stays
// PREPARE_COMMIT, and the producer's next transaction waits
// (ErrConcurrentTransactions) until the partition heals; then the
// transaction completes with its decision (invariant 8 between markers).
func TestNetworkPartitionHoldsMarkers(t *testing.T) {
	t.Parallel()
	r := asyncRig(t)
	r.produce("in", 0, 2)
	m := r.join("g", engine.AckTransactional)
	r.poll(m, 2)
	p := r.producer("tx")
	stagedTxn(t, r, p, m)
	wantErr(t, "partition", r.e.PartitionMarkers(engine.TopicPartition{Topic: "out"}, 5*time.Second), nil)
	wantErr(t, "commit", p.Commit(), nil)
	r.e.FireTimers()
	r.wantState("g", 0, 1, engine.StateAcknowledged, 1) // in-0's marker landed
	if got := r.committed("out", 0); len(got) != 0 {
		t.Fatalf("%d outputs visible while out-0's marker is held", len(got))
	}
	if info := txnState(t, r, "tx"); info.State != engine.TxnPrepareCommit || info.MarkersPending != 1 {
		t.Fatalf("during the partition: %v with %d pending, want PREPARE_COMMIT with 1", info.State, info.MarkersPending)
	}
	wantErr(t, "begin during the partition", p.Begin(), engine.ErrConcurrentTransactions)
	_, err := r.e.NewProducer(engine.ProducerConfig{TransactionalID: "tx"})
	wantErr(t, "re-init during the partition", err, engine.ErrConcurrentTransactions)

	r.clk.Advance(5 * time.Second)
	r.e.FireTimers()
	if got := r.committed("out", 0); len(got) != 1 {
		t.Fatalf("%d outputs visible after the partition healed, want 1", len(got))
	}
	if info := txnState(t, r, "tx"); info.State != engine.TxnCompleteCommit {
		t.Fatalf("after the partition: %v, want COMPLETE_COMMIT", info.State)
	}
	wantErr(t, "begin after the partition", p.Begin(), nil)
	r.check()
}

// TestAsyncMarkersRealClock: with real timers the marker goroutine
// completes the transaction, and the next Begin waits for it.
func TestAsyncMarkersRealClock(t *testing.T) {
	t.Parallel()
	e, err := engine.New(engine.WithGroupDefaults(rigGroup))
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	for _, name := range []string{"in", "out"} {
		if err := e.CreateTopic(name, 1); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.Produce("in", 0, []engine.ProduceRecord{{Value: []byte("x")}, {Value: []byte("y")}}); err != nil {
		t.Fatal(err)
	}
	m, _ := e.JoinShareGroup("g", []string{"in"}, engine.AckTransactional)
	p, _ := e.NewProducer(engine.ProducerConfig{TransactionalID: "tx"})
	for round := 0; round < 20; round++ {
		wantErr(t, "begin", p.Begin(), nil)
		if _, err := p.Produce("out", 0, []engine.ProduceRecord{{Value: []byte("o")}}); err != nil {
			t.Fatal(err)
		}
		wantErr(t, "commit", p.Commit(), nil)
	}
	wantErr(t, "begin", p.Begin(), nil) // waited for the last markers
	recs, _, err := e.Fetch(engine.TopicPartition{Topic: "out"}, 0, 100, engine.ReadCommitted)
	if err != nil || len(recs) != 20 {
		t.Fatalf("read_committed read %d outputs (%v), want 20", len(recs), err)
	}
	_ = m
}

// TestCrashWhileDeliveringMarkers: a crash after the first marker, struck
// while the timers deliver them (the client's Commit had returned at
// PREPARE_COMMIT), completes the commit on recovery (invariant 9).
func TestCrashWhileDeliveringMarkers(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	clk := engine.NewManualClock()
	arm := false
	hook := func(pt engine.HookPoint, info engine.HookInfo) error {
		if arm && pt == engine.HookTxnMarker && info.Marker == 1 {
			return fmt.Errorf("test: %w", engine.ErrInjectedCrash)
		}
		return nil
	}
	opts := append(durableOpts(dir, clk, engine.WithHook(hook)), engine.WithMarkerDelivery(engine.MarkersAsync))
	e := durGet[*engine.Engine](t)(engine.New(opts...))
	defer e.Close()
	durOK(t, e.CreateTopic("in", 1))
	durOK(t, e.CreateTopic("out", 1))
	_ = durGet[int64](t)(e.Produce("in", 0, []engine.ProduceRecord{{Value: []byte("x")}, {Value: []byte("y")}}))
	m := durGet[*engine.ShareMember](t)(e.JoinShareGroup("g", []string{"in"}, engine.AckTransactional))
	_ = durGet[[]engine.Record](t)(m.Poll(2))
	p := durGet[*engine.Producer](t)(e.NewProducer(engine.ProducerConfig{TransactionalID: "tx"}))
	durOK(t, p.Begin())
	_ = durGet[int64](t)(p.Produce("out", 0, []engine.ProduceRecord{{Value: []byte("o")}}))
	durOK(t, p.SendShareAcksToTransaction([]engine.Acknowledgement{{Topic: "in", First: 0, Last: 1, Type: engine.AckAccept}}, m.Metadata()))
	arm = true
	durOK(t, p.Commit())
	e.FireTimers()
	if !e.Crashed() {
		t.Fatal("the armed crash did not strike while delivering markers")
	}
	arm = false
	_ = durGet[engine.RecoveryReport](t)(e.Restart())
	info, _ := e.Transaction("tx")
	if info.State != engine.TxnCompleteCommit {
		t.Fatalf("after recovery: %v, want COMPLETE_COMMIT", info.State)
	}
	recs, _, err := e.Fetch(engine.TopicPartition{Topic: "out"}, 0, 10, engine.ReadCommitted)
	if err != nil || len(recs) != 1 {
		t.Fatalf("read_committed read %d outputs (%v), want 1", len(recs), err)
	}
	for o := int64(0); o <= 1; o++ {
		ri, _ := e.ShareRecord("g", engine.TopicPartition{Topic: "in"}, o)
		if ri.State != engine.StateAcknowledged {
			t.Fatalf("in-0@%d after recovery: %v, want ACKNOWLEDGED", o, ri.State)
		}
	}
	if err := p.Begin(); err != nil && !errors.Is(err, engine.ErrProducerFenced) {
		t.Fatalf("begin after recovery: %v", err)
	}
}
