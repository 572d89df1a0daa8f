// This file runs the engine under real concurrency: share members and
// producers on many goroutines over shared partitions, with a real clock,
// short locks and random aborts; after draining, every input must be
// ACKNOWLEDGED exactly once and (in transactional mode) have exactly one
// read_committed output. Run it with -race:
//
//	go test -race -count=1 -run Race ./engine/

package engine_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sharebench/sharebench/engine"
)

type raceConfig struct {
	mode       engine.AckMode
	inputs     int // records produced into the input topic
	partitions int32
	workers    int
	batch      int
	abortPct   int // percent of batches aborted (transactional) or released (explicit)
	stallPct   int // percent of batches that stall past the lock duration before acking
	reinitPct  int // percent of transactions whose producer is replaced before commit (zombie fencing)
	lock       time.Duration
	seed       uint64
}

// raceCounts are what the workers observed, to compare with Stats.
type raceCounts struct {
	finished  atomic.Bool  // every input is ACKNOWLEDGED
	done      atomic.Int64 // inputs committed (transactional) or acknowledged (explicit, may overcount)
	outputs   atomic.Int64 // output records produced
	commits   atomic.Int64
	aborts    atomic.Int64
	stageFail atomic.Int64
	reinits   atomic.Int64
}

func encodeID(part int32, off int64) []byte {
	b := make([]byte, 12)
	binary.BigEndian.PutUint32(b, uint32(part))
	binary.BigEndian.PutUint64(b[4:], uint64(off))
	return b
}

func decodeID(b []byte) (int32, int64) {
	return int32(binary.BigEndian.Uint32(b)), int64(binary.BigEndian.Uint64(b[4:]))
}

func TestRaceTransactional(t *testing.T) {
	t.Parallel()
	runRace(t, raceConfig{mode: engine.AckTransactional, inputs: 20000, partitions: 4, workers: 8, batch: 50,
		abortPct: 3, stallPct: 2, reinitPct: 1, lock: 20 * time.Millisecond, seed: 1})
}

func TestRaceExplicit(t *testing.T) {
	t.Parallel()
	runRace(t, raceConfig{mode: engine.AckExplicit, inputs: 20000, partitions: 4, workers: 8, batch: 50,
		abortPct: 3, stallPct: 2, lock: 20 * time.Millisecond, seed: 2})
}

func runRace(t *testing.T, cfg raceConfig) {
	if testing.Short() {
		cfg.inputs /= 4
	}
	t.Logf("seed %d (random aborts only; the schedule is the Go scheduler's)", cfg.seed)
	group := engine.GroupConfig{
		LockDuration: cfg.lock,
		// High enough that lock expiries under -race never archive a
		// record: every input must end ACKNOWLEDGED.
		DeliveryLimit:   1000,
		MaxRecordLocks:  2000,
		AutoOffsetReset: engine.ResetEarliest,
	}
	e, err := engine.New(engine.WithGroupDefaults(group), engine.WithHistory(true), engine.WithTimerInterval(5*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	for _, name := range []string{"in", "out"} {
		if err := e.CreateTopic(name, cfg.partitions); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()

	var wg sync.WaitGroup
	var failMu sync.Mutex
	var failed error // first error of any goroutine
	fail := func(err error) {
		failMu.Lock()
		if failed == nil {
			failed = err
		}
		failMu.Unlock()
		cancel()
	}

	// Input producers: two goroutines, chunks round-robin over partitions.
	const inputProducers, chunk = 2, 25
	for ip := 0; ip < inputProducers; ip++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n := cfg.inputs / inputProducers
			for i := 0; i < n; i += chunk {
				part := int32((i/chunk + ip) % int(cfg.partitions))
				recs := make([]engine.ProduceRecord, min(chunk, n-i))
				for j := range recs {
					recs[j].Value = []byte(fmt.Sprintf("in-%d-%d", ip, i+j))
				}
				if _, err := e.Produce("in", part, recs); err != nil {
					fail(fmt.Errorf("input produce: %w", err))
					return
				}
			}
		}()
	}

	var counts raceCounts
	var members []*engine.ShareMember
	for w := 0; w < cfg.workers; w++ {
		m, err := e.JoinShareGroup("g", []string{"in"}, cfg.mode)
		if err != nil {
			t.Fatal(err)
		}
		members = append(members, m)
		var p *engine.Producer
		if cfg.mode == engine.AckTransactional {
			p, err = e.NewProducer(engine.ProducerConfig{TransactionalID: fmt.Sprintf("copier-%d", w)})
		} else {
			p, err = e.NewProducer(engine.ProducerConfig{})
		}
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(cfg.seed, uint64(w)))
			if err := raceWorker(ctx, e, m, p, cfg, rng, &counts); err != nil {
				fail(fmt.Errorf("worker %d: %w", w, err))
			}
		}()
	}

	// An observer checks, while everything runs, that the structural
	// invariants hold and that no input ever has two visible outputs.
	obsDone := make(chan struct{})
	go func() {
		defer close(obsDone)
		next := make([]int64, cfg.partitions)
		seen := map[[2]int64]bool{}
		for ctx.Err() == nil {
			if err := e.CheckInvariants(); err != nil {
				fail(err)
				return
			}
			_ = e.Stats()
			if cfg.mode == engine.AckTransactional {
				for part := int32(0); part < cfg.partitions; part++ {
					recs, n, err := e.Fetch(engine.TopicPartition{Topic: "out", Partition: part}, next[part], 1000, engine.ReadCommitted)
					if err != nil {
						fail(err)
						return
					}
					next[part] = n
					for _, r := range recs {
						ip, off := decodeID(r.Value)
						k := [2]int64{int64(ip), off}
						if seen[k] {
							fail(fmt.Errorf("input %d@%d has two committed outputs (observer)", ip, off))
							return
						}
						seen[k] = true
					}
				}
			}
			time.Sleep(2 * time.Millisecond)
		}
	}()

	wg.Wait()
	cancel()
	<-obsDone
	if failed != nil {
		t.Fatal(failed)
	}
	if !counts.finished.Load() {
		t.Fatalf("deadline hit: stats %+v", e.Stats())
	}
	if got := counts.done.Load(); cfg.mode == engine.AckTransactional && got != int64(cfg.inputs) {
		t.Fatalf("committed transactions carried %d inputs, want exactly %d", got, cfg.inputs)
	}
	for _, m := range members {
		if err := m.Leave(); err != nil {
			t.Fatal(err)
		}
	}
	checkRaceEnd(t, e, cfg, &counts)
}

// raceWorker is one consume-transform-produce loop. It returns when every
// input is done or ctx ends.
func raceWorker(ctx context.Context, e *engine.Engine, m *engine.ShareMember, p *engine.Producer, cfg raceConfig, rng *rand.Rand, c *raceCounts) error {
	for !c.finished.Load() {
		if ctx.Err() != nil {
			return nil
		}
		recs, err := m.Poll(cfg.batch)
		if err != nil {
			return fmt.Errorf("poll: %w", err)
		}
		if len(recs) == 0 {
			// Done when every input is ACKNOWLEDGED. The workers' own
			// counts cannot tell: in explicit mode an ack below SPSO is
			// a no-op success, so a slow worker may count records another
			// worker acknowledged.
			if e.Stats().Share.Accepted >= int64(cfg.inputs) {
				c.finished.Store(true)
				return nil
			}
			_ = e.WaitTopic(ctx, "in", 2*time.Millisecond)
			continue
		}
		// Outputs per partition, acks per contiguous range.
		outs := make([][]engine.ProduceRecord, cfg.partitions)
		var acks []engine.Acknowledgement
		for _, r := range recs {
			outs[r.Partition] = append(outs[r.Partition], engine.ProduceRecord{Value: encodeID(r.Partition, r.Offset)})
			if n := len(acks); n > 0 && acks[n-1].Partition == r.Partition && acks[n-1].Last+1 == r.Offset {
				acks[n-1].Last = r.Offset
				continue
			}
			acks = append(acks, engine.Acknowledgement{Topic: "in", Partition: r.Partition, First: r.Offset, Last: r.Offset, Type: engine.AckAccept})
		}
		unlucky := rng.IntN(100) < cfg.abortPct
		if rng.IntN(100) < cfg.stallPct {
			// Slow processing: the locks expire and the timer goroutine
			// hands the records to other members.
			time.Sleep(cfg.lock + cfg.lock/2)
		}

		if cfg.mode == engine.AckExplicit {
			for part, o := range outs {
				if len(o) == 0 {
					continue
				}
				if _, err := p.Produce("out", int32(part), o); err != nil {
					return fmt.Errorf("produce: %w", err)
				}
				c.outputs.Add(int64(len(o)))
			}
			if unlucky {
				for i := range acks {
					acks[i].Type = engine.AckRelease
				}
			}
			err := m.Acknowledge(acks)
			var ae *engine.AckError
			if err != nil && !errors.As(err, &ae) {
				return fmt.Errorf("acknowledge: %w", err)
			}
			if unlucky {
				continue
			}
			// Partitions whose locks expired failed as a whole; the rest
			// were acknowledged.
			for _, a := range acks {
				if ae != nil && ae.Partitions[engine.TopicPartition{Topic: a.Topic, Partition: a.Partition}] != nil {
					continue
				}
				c.done.Add(a.Last - a.First + 1)
			}
			continue
		}

		if err := p.Begin(); err != nil {
			return fmt.Errorf("begin: %w", err)
		}
		for part, o := range outs {
			if len(o) == 0 {
				continue
			}
			if _, err := p.Produce("out", int32(part), o); err != nil {
				return fmt.Errorf("produce: %w", err)
			}
			c.outputs.Add(int64(len(o)))
		}
		err = p.SendShareAcksToTransaction(acks, m.Metadata())
		if err != nil {
			var ae *engine.AckError
			if !errors.As(err, &ae) && !errors.Is(err, engine.ErrFencedMemberEpoch) {
				return fmt.Errorf("stage: %w", err)
			}
			// A lock expired before staging: some records are gone to
			// another member. Or a member joining since the poll (the
			// workers start as their members join) bumped this member's
			// epoch, which fences its staging until its next poll learns
			// the new one. Abort; the records return to AVAILABLE.
			c.stageFail.Add(1)
			unlucky = true
		}
		if unlucky {
			if err := p.Abort(); err != nil {
				return fmt.Errorf("abort: %w", err)
			}
			c.aborts.Add(1)
			continue
		}
		if rng.IntN(100) < cfg.reinitPct {
			// The worker restarts: a new producer for the same id fences
			// the old one and aborts its transaction.
			zombie := p
			p, err = e.NewProducer(engine.ProducerConfig{TransactionalID: zombie.TransactionalID()})
			if err != nil {
				return fmt.Errorf("re-init: %w", err)
			}
			c.reinits.Add(1)
			if err := zombie.Commit(); !errors.Is(err, engine.ErrProducerFenced) {
				return fmt.Errorf("zombie commit: got %v, want ErrProducerFenced", err)
			}
			continue
		}
		if err := p.Commit(); err != nil {
			return fmt.Errorf("commit: %w", err)
		}
		c.commits.Add(1)
		c.done.Add(int64(len(recs)))
	}
	return nil
}

func checkRaceEnd(t *testing.T, e *engine.Engine, cfg raceConfig, c *raceCounts) {
	t.Helper()
	// Markers are sent asynchronously: a transaction the workers saw end
	// (the last re-init's fencing abort, say) may not have completed yet,
	// and Stats counts completions. Deliver what is pending first.
	e.DeliverMarkers()
	if err := e.CheckInvariants(); err != nil {
		t.Fatal(err)
	}
	total := 0
	for part := int32(0); part < cfg.partitions; part++ {
		tp := engine.TopicPartition{Topic: "in", Partition: part}
		_, hw, _, err := e.Offsets(tp)
		if err != nil {
			t.Fatal(err)
		}
		total += int(hw)
		info, err := e.SharePartition("g", tp)
		if err != nil {
			t.Fatal(err)
		}
		if info.SPSO != hw || info.InFlight != 0 {
			t.Fatalf("%v: SPSO %d in-flight %d, want SPSO at the high watermark %d and nothing in flight", tp, info.SPSO, info.InFlight, hw)
		}
		for o := int64(0); o < hw; o++ {
			ri, err := e.ShareRecord("g", tp, o)
			if err != nil {
				t.Fatal(err)
			}
			if ri.State != engine.StateAcknowledged || !ri.Known {
				t.Fatalf("%v@%d is %v/%v (known %v), want ACKNOWLEDGED", tp, o, ri.State, ri.Reason, ri.Known)
			}
		}
	}
	if total != cfg.inputs {
		t.Fatalf("input topic holds %d records, want %d", total, cfg.inputs)
	}

	// Outputs: exactly one committed output per input in transactional
	// mode; at least one (duplicates allowed) in explicit mode.
	iso := engine.ReadUncommitted
	if cfg.mode == engine.AckTransactional {
		iso = engine.ReadCommitted
	}
	outputs := map[[2]int64]int{}
	visible := 0
	for part := int32(0); part < cfg.partitions; part++ {
		recs, _, err := e.Fetch(engine.TopicPartition{Topic: "out", Partition: part}, 0, 1<<30, iso)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			ip, off := decodeID(r.Value)
			if ip != part {
				t.Fatalf("output of in-%d@%d on out-%d", ip, off, part)
			}
			outputs[[2]int64{int64(ip), off}]++
			visible++
		}
	}
	if len(outputs) != cfg.inputs {
		t.Fatalf("outputs cover %d inputs, want %d", len(outputs), cfg.inputs)
	}
	if cfg.mode == engine.AckTransactional {
		for k, n := range outputs {
			if n != 1 {
				t.Fatalf("input %d@%d has %d committed outputs, want 1", k[0], k[1], n)
			}
		}
	}

	s := e.Stats()
	t.Logf("stats %+v; workers: %d commits, %d aborts (%d after a failed staging), %d re-inits, %d outputs produced, %d visible",
		s, c.commits.Load(), c.aborts.Load(), c.stageFail.Load(), c.reinits.Load(), c.outputs.Load(), visible)
	want := []struct {
		name      string
		got, want int64
	}{
		{"produced", s.Produced, int64(cfg.inputs) + c.outputs.Load()},
		{"accepted", s.Share.Accepted, int64(cfg.inputs)},
		{"archived", s.Share.Archived, 0},
		{"first deliveries", s.Share.Acquired - s.Share.Redelivered, int64(cfg.inputs)},
		{"session releases", s.Share.SessionRel, 0},
		{"sessions ended", s.SessionsEnded, int64(cfg.workers)},
		{"timed out", s.TimedOut, 0},
	}
	if cfg.mode == engine.AckTransactional {
		want = append(want, []struct {
			name      string
			got, want int64
		}{
			{"committed", s.Committed, c.commits.Load()},
			{"aborted", s.Aborted, c.aborts.Load() + c.reinits.Load()},
			{"tx committed", s.Share.TxCommitted, int64(cfg.inputs)},
			{"staged", s.Share.Staged, s.Share.TxCommitted + s.Share.TxAborted},
			{"visible outputs", int64(visible), int64(cfg.inputs)},
		}...)
	} else {
		want = append(want, struct {
			name      string
			got, want int64
		}{"staged", s.Share.Staged, 0})
	}
	for _, w := range want {
		if w.got != w.want {
			t.Errorf("stats %s: %d, want %d", w.name, w.got, w.want)
		}
	}
}
