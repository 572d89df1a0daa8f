// This file is the randomized crash test: a seeded operation log (produce,
// members joining, polling, acknowledging and leaving, transactions with
// outputs and staged acknowledgements, commits, aborts, re-inits, lock
// expiry and timeouts, delete-records) runs against a durable engine and
// against an in-memory engine, the model. At random points the durable
// engine crashes — between operations, at a random transaction hook point
// (whole engine or coordinator only), inside a transaction — and
// restarts; the model instead loses what a crash loses, its members'
// acquisitions (they leave, releasing them). Every operation's result must
// match, and after every restart the durable state must equal the
// model's (docs/design.md §4 invariant 12).
//
//	go test ./engine -run TestRandomCrash -crash.seed N [-crash.ops 400]

package engine_test

import (
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/sharebench/sharebench/engine"
)

var (
	crashSeed = flag.Uint64("crash.seed", 0, "TestRandomCrash: run this seed only")
	crashOps  = flag.Int("crash.ops", 400, "TestRandomCrash: operations per seed")
	crashEach = flag.Int("crash.compare", 25, "TestRandomCrash: compare the states every N operations")
)

func TestRandomCrash(t *testing.T) {
	t.Parallel()
	seeds := []uint64{*crashSeed}
	if *crashSeed == 0 {
		seeds = nil
		n := 12
		if testing.Short() {
			n = 4
		}
		for i := 0; i < n; i++ {
			seeds = append(seeds, uint64(time.Now().UnixNano())%1_000_000+uint64(i))
		}
	}
	for _, seed := range seeds {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			t.Parallel()
			t.Logf("seed %d", seed)
			t.Cleanup(func() {
				if t.Failed() {
					t.Logf("repro: go test ./engine -run TestRandomCrash -crash.seed %d -crash.ops %d -v", seed, *crashOps)
				}
			})
			randomCrash(t, seed, *crashOps)
		})
	}
}

// errClass names the sentinel an error wraps, so results compare across
// engines whose member ids differ.
func errClass(err error) string {
	if err == nil {
		return "ok"
	}
	for _, s := range []struct {
		name string
		err  error
	}{
		{"crashed", engine.ErrCrashed}, {"invalid-record-state", engine.ErrInvalidRecordState}, {"not-owner", engine.ErrNotOwner},
		{"offset-out-of-range", engine.ErrOffsetOutOfRange}, {"invalid-request", engine.ErrInvalidRequest},
		{"unknown-member", engine.ErrUnknownMember}, {"fenced-epoch", engine.ErrFencedMemberEpoch},
		{"producer-fenced", engine.ErrProducerFenced}, {"invalid-txn-state", engine.ErrInvalidTxnState},
		{"log-out-of-range", engine.ErrLogOffsetOutOfRange}, {"unknown-topic", engine.ErrUnknownTopicOrPartition},
	} {
		if errors.Is(err, s.err) {
			return s.name
		}
	}
	return "other: " + err.Error()
}

// side is one engine with its client handles.
type side struct {
	e       *engine.Engine
	clk     *engine.ManualClock
	members []*engine.ShareMember // nil: slot empty
	prods   []*engine.Producer
}

type rcMember struct {
	mode engine.AckMode
	held []engine.Record
}

func randomCrash(t *testing.T, seed uint64, ops int) {
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	hook := &crashHook{}
	mkOpts := func(dir string, clk *engine.ManualClock, h engine.Hook) []engine.Option {
		o := durableOpts(dir, clk, engine.WithTransactionTimeout(40*time.Second), engine.WithAbortSweepInterval(5*time.Second),
			engine.WithRetentionBytes(0))
		if dir == "" {
			o = o[1:]
		}
		if h != nil {
			o = append(o, engine.WithHook(h))
		}
		return o
	}
	var d, m side
	d.clk, m.clk = engine.NewManualClock(), engine.NewManualClock()
	d.e = durGet[*engine.Engine](t)(engine.New(mkOpts(t.TempDir(), d.clk, hook.hook)...))
	m.e = durGet[*engine.Engine](t)(engine.New(mkOpts("", m.clk, nil)...))
	defer d.e.Close()
	defer m.e.Close()
	both := func(f func(s *side)) { f(&d); f(&m) }
	both(func(s *side) {
		durOK(t, s.e.CreateTopic("in", 2))
		durOK(t, s.e.CreateTopic("out", 1))
	})
	const nMembers, nProds = 4, 2
	members := make([]*rcMember, nMembers)
	d.members, m.members = make([]*engine.ShareMember, nMembers), make([]*engine.ShareMember, nMembers)
	d.prods, m.prods = make([]*engine.Producer, nProds), make([]*engine.Producer, nProds)
	open := make([]bool, nProds)
	txnIDs := []string{"t0", "t1"}
	joins := 0 // share group joins, on each side
	join := func(i int) {
		joins++
		mode := engine.AckExplicit
		if i < nProds {
			mode = engine.AckTransactional // member i feeds producer i
		}
		members[i] = &rcMember{mode: mode}
		both(func(s *side) {
			s.members[i] = durGet[*engine.ShareMember](t)(s.e.JoinShareGroup("g", []string{"in"}, mode))
		})
	}
	for i := 0; i < nMembers; i++ {
		join(i)
	}
	for i := range d.prods {
		both(func(s *side) {
			s.prods[i] = durGet[*engine.Producer](t)(s.e.NewProducer(engine.ProducerConfig{TransactionalID: txnIDs[i]}))
		})
	}
	var step int
	var op string
	check := func(dr, mr string) {
		t.Helper()
		if dr != mr {
			t.Fatalf("step %d %s: durable %s, model %s", step, op, dr, mr)
		}
	}
	compare := func(when string) {
		t.Helper()
		dv, mv := viewOf(t, d.e, txnIDs, nil), viewOf(t, m.e, txnIDs, nil)
		// A transaction begun with no participant yet is not durable (as
		// in Kafka, it is logged ONGOING when its first participant
		// joins; the producer's next call reopens it after a crash).
		for _, id := range txnIDs {
			if info, _ := m.e.Transaction(id); info.State == engine.TxnOngoing &&
				len(info.Partitions)+len(info.SharePartitions)+len(info.Groups) == 0 {
				mv.Txns[id], dv.Txns[id] = "begun", "begun"
			}
		}
		if t.Failed() {
			return
		}
		defer func() {
			if t.Failed() {
				t.Logf("step %d (%s) %s", step, op, when)
			}
		}()
		diffViews(t, dv, mv)
	}
	// afterCrash makes the model lose what the crash lost: its members'
	// acquisitions (they leave) and sessions (everyone re-joins).
	afterCrash := func() {
		for i := range members {
			if err := m.members[i].Leave(); err != nil && !errors.Is(err, engine.ErrUnknownMember) {
				t.Fatal(err)
			}
			if _, err := d.members[i].Poll(0); !errors.Is(err, engine.ErrUnknownMember) {
				t.Fatalf("step %d: old member after restart: %v", step, err)
			}
		}
		// Members are not durable, so the restarted group numbers its
		// members from 1 again, and a member's first poll starts at a
		// partition its number picks. Joins that leave at once bring the
		// durable group's numbering level with the model's, so the same
		// member polls the same partitions on both sides.
		for k := 0; k < joins; k++ {
			dummy := durGet[*engine.ShareMember](t)(d.e.JoinShareGroup("g", []string{"in"}, engine.AckExplicit))
			durOK(t, dummy.Leave())
		}
		for i := range members {
			join(i)
		}
		compare("after restart")
	}
	restart := func() {
		rep := durGet[engine.RecoveryReport](t)(d.e.Restart())
		if len(rep.Truncated) != 0 {
			t.Fatalf("step %d: recovery truncated %+v", step, rep.Truncated)
		}
	}
	pollFor := func(i int) {
		max := 1 + rng.IntN(6)
		op = fmt.Sprintf("member %d polls %d", i, max)
		dr, derr := d.members[i].Poll(max)
		mr, merr := m.members[i].Poll(max)
		check(errClass(derr), errClass(merr))
		check(fmt.Sprint(pollView(dr)), fmt.Sprint(pollView(mr)))
		members[i].held = append(members[i].held, mr...)
		if errors.Is(merr, engine.ErrUnknownMember) {
			join(i) // its session expired
		}
	}
	pickHeld := func(i int) []engine.Record {
		h := members[i].held
		if len(h) == 0 {
			return nil
		}
		a := rng.IntN(len(h))
		b := a + rng.IntN(min(4, len(h)-a))
		out := append([]engine.Record(nil), h[a:b+1]...)
		members[i].held = append(h[:a:a], h[b+1:]...)
		return out
	}
	for step = 0; step < ops && !t.Failed(); step++ {
		switch k := rng.IntN(100); {
		case k < 14:
			part, n := int32(rng.IntN(2)), 1+rng.IntN(5)
			op = fmt.Sprintf("produce %d to in-%d", n, part)
			both(func(s *side) { durProduce(t, s.e, "in", part, n, fmt.Sprintf("s%d", step)) })
		case k < 32:
			pollFor(rng.IntN(nMembers))
		case k < 42:
			i := nProds + rng.IntN(nMembers-nProds)
			recs := pickHeld(i)
			if recs == nil {
				continue
			}
			typ := []engine.AckType{engine.AckAccept, engine.AckRelease, engine.AckReject}[rng.IntN(3)]
			op = fmt.Sprintf("member %d acks %d records %v", i, len(recs), typ)
			check(errClass(d.members[i].Acknowledge(durAcks(recs, typ))), errClass(m.members[i].Acknowledge(durAcks(recs, typ))))
		case k < 72:
			j := rng.IntN(nProds)
			if !open[j] {
				op = fmt.Sprintf("producer %d begins", j)
				check(errClass(d.prods[j].Begin()), errClass(m.prods[j].Begin()))
				open[j] = true
				continue
			}
			switch k2 := rng.IntN(10); {
			case k2 < 3:
				n := 1 + rng.IntN(3)
				op = fmt.Sprintf("producer %d produces %d", j, n)
				recs := make([]engine.ProduceRecord, n)
				for x := range recs {
					recs[x].Value = []byte(fmt.Sprintf("o%d-%d", step, x))
				}
				_, derr := d.prods[j].Produce("out", 0, recs)
				_, merr := m.prods[j].Produce("out", 0, recs)
				check(errClass(derr), errClass(merr))
			case k2 < 6:
				recs := pickHeld(j)
				if recs == nil {
					continue
				}
				typ := []engine.AckType{engine.AckAccept, engine.AckReject}[rng.IntN(2)]
				op = fmt.Sprintf("producer %d stages %d records %v", j, len(recs), typ)
				armed := rng.IntN(8) == 0
				if armed {
					hook.point, hook.err = engine.HookTxnOngoing, engine.ErrInjectedCrash
					if rng.IntN(2) == 0 {
						hook.err = engine.ErrInjectedCoordinatorCrash
					}
					hook.armed.Store(true)
					op += fmt.Sprintf(" (crash: %v)", hook.err)
				}
				derr := d.prods[j].SendShareAcksToTransaction(durAcks(recs, typ), d.members[j].Metadata())
				merr := m.prods[j].SendShareAcksToTransaction(durAcks(recs, typ), m.members[j].Metadata())
				hook.armed.Store(false)
				if armed && hook.struck.Swap(0) == 1 && errors.Is(hook.err, engine.ErrInjectedCrash) {
					check(errClass(derr), "crashed")
					check("ok", errClass(merr))
					restart()
					afterCrash()
					continue
				}
				check(errClass(derr), errClass(merr))
			default:
				commit := k2 < 8
				op = fmt.Sprintf("producer %d ends commit=%v", j, commit)
				armed := rng.IntN(3) == 0
				if armed {
					hook.point = []engine.HookPoint{engine.HookTxnPrepared, engine.HookTxnMarker, engine.HookTxnCompleted}[rng.IntN(3)]
					hook.marker = 1 + rng.IntN(3)
					hook.err = engine.ErrInjectedCrash
					if rng.IntN(2) == 0 {
						hook.err = engine.ErrInjectedCoordinatorCrash
					}
					hook.armed.Store(true)
					op += fmt.Sprintf(" (crash at %s %d: %v)", hook.point, hook.marker, hook.err)
				}
				derr := endTxn(d.prods[j], commit)
				hook.armed.Store(false)
				merr := endTxn(m.prods[j], commit)
				open[j] = false
				if armed && hook.struck.Swap(0) == 1 && errors.Is(hook.err, engine.ErrInjectedCrash) {
					check(errClass(derr), "crashed")
					restart()
					derr = endTxn(d.prods[j], commit) // the client's retry
					check(errClass(derr), errClass(merr))
					afterCrash()
					continue
				}
				check(errClass(derr), errClass(merr))
			}
		case k < 76:
			i := rng.IntN(nMembers)
			op = fmt.Sprintf("member %d leaves and rejoins", i)
			check(errClass(d.members[i].Leave()), errClass(m.members[i].Leave()))
			join(i)
		case k < 79:
			j := rng.IntN(nProds)
			op = fmt.Sprintf("producer %d re-initialised", j)
			both(func(s *side) {
				s.prods[j] = durGet[*engine.Producer](t)(s.e.NewProducer(engine.ProducerConfig{TransactionalID: txnIDs[j]}))
			})
			open[j] = false
		case k < 90:
			adv := time.Duration(1+rng.IntN(20)) * time.Second
			op = fmt.Sprintf("clock +%v", adv)
			both(func(s *side) {
				s.clk.Advance(adv)
				s.e.FireTimers()
			})
		case k < 91:
			tp := engine.TopicPartition{Topic: "in", Partition: int32(rng.IntN(2))}
			_, hw, _, _ := m.e.Offsets(tp)
			to := hw / 2
			op = fmt.Sprintf("delete records of %s to %d", tp, to)
			check(errClass(d.e.DeleteRecords(tp, to)), errClass(m.e.DeleteRecords(tp, to)))
		case k < 96:
			op = "crash and restart"
			durOK(t, d.e.Crash())
			restart()
			afterCrash()
		default:
			op = "coordinator crash"
			durGet[engine.RecoveryReport](t)(d.e.CrashCoordinator())
			compare("after the coordinator crash")
		}
		if step%*crashEach == 0 {
			compare("periodic")
		}
	}
	compare("at the end")
	durOK(t, d.e.CheckInvariants())
}

func pollView(recs []engine.Record) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = fmt.Sprintf("%s-%d@%d c%d %s", r.Topic, r.Partition, r.Offset, r.DeliveryCount, r.Value)
	}
	return out
}
