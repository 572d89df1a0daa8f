// This file holds the input producers: open loop on a per-producer schedule
// of intended send times (constant or Poisson), or closed loop with a
// bounded backlog. Latency is measured from the intended time, so a stalled
// target shows up as latency, not as a lower send rate (coordinated
// omission corrected).

package loadgen

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"time"

	"github.com/sharebench/sharebench/loadgen/ledger"
	"github.com/sharebench/sharebench/loadgen/result"
	"github.com/sharebench/sharebench/loadgen/targets"
	"github.com/sharebench/sharebench/workloads"
)

// maxProduceBatch bounds one produce call.
const maxProduceBatch = 500

// closedBatch is the closed loop's produce batch. Each batch wakes a
// worker; with batches of 100 the single producer spent more time handing
// its core to the workers it woke than producing.
const closedBatch = 250

// Schedule yields intended send times for one producer.
type Schedule struct {
	start    time.Time
	end      time.Time
	interval float64 // mean ns between sends; 0: closed loop
	poisson  bool
	rng      *rand.Rand
	next     float64 // ns since start of the next intended send
}

// NewSchedule returns the schedule of one of n producers sharing rate
// records/s from start to end. rate 0 is a closed loop: Next returns the
// current time. Producer i's constant schedule is offset by i/n of an
// interval so the producers interleave.
func NewSchedule(start, end time.Time, rate float64, n, i int, dist string, rng *rand.Rand) *Schedule {
	s := &Schedule{start: start, end: end, poisson: dist == workloads.RatePoisson, rng: rng}
	if rate > 0 && n > 0 {
		s.interval = 1e9 * float64(n) / rate
		if s.poisson {
			s.next = s.gap()
		} else {
			s.next = s.interval * float64(i) / float64(n)
		}
	}
	return s
}

func (s *Schedule) gap() float64 {
	if s.poisson {
		return s.rng.ExpFloat64() * s.interval
	}
	return s.interval
}

// Closed reports whether the schedule is a closed loop.
func (s *Schedule) Closed() bool { return s.interval == 0 }

// Peek returns the next intended time without consuming it; ok is false
// past the end.
func (s *Schedule) Peek() (time.Time, bool) {
	if s.Closed() {
		// A closed loop's intended time is the current time.
		now := time.Now()
		return now, now.Before(s.end)
	}
	t := s.start.Add(time.Duration(s.next))
	return t, t.Before(s.end)
}

// Next consumes and returns the next intended time.
func (s *Schedule) Next() (time.Time, bool) {
	t, ok := s.Peek()
	if ok {
		s.next += s.gap()
	}
	return t, ok
}

// runProducers runs every producer until the load ends and returns the
// first error.
func (mr *modeRun) runProducers(ctx context.Context) error {
	spec := mr.spec
	// producersPerTopic producers on each input topic; the rate is over
	// them all.
	n := spec.ProducersPerTopic * max(spec.Topics, 1)
	bodies, err := newInputBodies(spec, mr.rng("payloads"))
	if err != nil {
		return err
	}
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := 0; i < n; i++ {
		p, err := mr.cfg.Target.NewProducer(ctx, mr.tcfg, i)
		if err != nil {
			return fmt.Errorf("starting producer %d: %w", i, err)
		}
		// The schedule runs until the window closes (loadOver); its own
		// end only bounds a window that waits its longest to open.
		end := mr.start.Add(spec.Warmup() + formationLimit + mr.backlogLimit() + spec.TestDuration() + time.Second)
		sched := NewSchedule(mr.start, end, float64(spec.ProducerRate), n, i, spec.RateDistribution, mr.rng("producer/"+strconv.Itoa(i)))
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer p.Close()
			k := &keyer{b: bodies, rng: mr.rng("keys/" + strconv.Itoa(i))}
			errs[i] = mr.produceLoop(ctx, p, sched, i, bodies, k)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// backlogBound is the closed loop's bound on inputs produced but not yet
// output: enough to keep every worker busy, small enough to measure the
// pipeline rather than a queue.
func (mr *modeRun) backlogBound() int64 {
	b := int64(mr.spec.Consumers) * int64(mr.spec.MaxPollRecords) * 4
	return max(b, 1000)
}

func (mr *modeRun) produceLoop(ctx context.Context, p targets.Producer, sched *Schedule, idx int, bodies *inputBodies, keys *keyer) error {
	size := mr.spec.MessageSizeBytes
	lag, svc := NewHist(), NewHist()
	defer func() {
		mr.mergeHist(result.HistSendLag, lag)
		mr.mergeHist(result.HistProduce, svc)
	}()
	nparts := int32(mr.spec.PartitionsPerTopic)
	inputs := mr.tcfg.Inputs()
	topic := inputs[(idx/mr.spec.ProducersPerTopic)%len(inputs)]
	nextPart := int32(idx) % nparts
	intended := make([]time.Time, 0, maxProduceBatch)
	// Buffers reused from batch to batch: Produce is synchronous and a
	// target keeps nothing of a record after it returns (targets.Producer),
	// so the generator allocates nothing per record.
	var (
		payload []byte
		built   uint64 // inputs this producer built, for the payload pool
		backing []targets.Record
		recs    []*targets.Record
		lags    []time.Duration
		batch   []ledger.Input
		ids     []uint64
	)
	for ctx.Err() == nil {
		intended = intended[:0]
		now := time.Now()
		if sched.Closed() {
			if mr.loadOver(now) {
				return nil
			}
			if mr.produced.Load()-mr.settledInputs() > mr.backlogBound() {
				time.Sleep(200 * time.Microsecond)
				continue
			}
			for len(intended) < closedBatch {
				intended = append(intended, now)
			}
		} else {
			t, ok := sched.Peek()
			if !ok || mr.loadOver(t) {
				return nil
			}
			if mr.loadOver(now.Add(-lateSendLimit)) {
				mr.unsent.Add(dueInWindow(sched, &mr.window))
				return nil
			}
			if wait := t.Sub(now); wait > 0 {
				sleepCtx(ctx, wait)
				continue
			}
			// Everything due now goes in one batch.
			for len(intended) < maxProduceBatch {
				t, ok := sched.Peek()
				if !ok || t.After(now) || mr.loadOver(t) {
					break
				}
				sched.Next()
				intended = append(intended, t)
			}
		}
		n := len(intended)
		if cap(payload) < size*n {
			payload = make([]byte, size*maxProduceBatch)
			backing = make([]targets.Record, maxProduceBatch)
			recs = make([]*targets.Record, maxProduceBatch)
			// A fixed body is written once per buffer: each record
			// rewrites only its header.
			for i := range maxProduceBatch {
				bodies.fill(payload[i*size:(i+1)*size], 0)
			}
		}
		recs = recs[:n]
		for i, t := range intended {
			v := payload[i*size : (i+1)*size : (i+1)*size]
			if len(bodies.pool) > 0 {
				bodies.fill(v, built)
			}
			built++
			id := mr.nextID.Add(1)
			ledger.PutInputHeader(v, id, mr.sinceStart(t))
			part := nextPart
			key := keys.key()
			if key != nil {
				part = keyPartition(key, nparts)
			} else {
				nextPart = (nextPart + 1) % nparts
			}
			backing[i] = targets.Record{Topic: topic, Partition: part, Key: key, Value: v}
			recs[i] = &backing[i]
		}
		sent := time.Now()
		if !sched.Closed() {
			mr.behindNs.Store(int64(sent.Sub(intended[0])))
		}
		err := p.Produce(ctx, recs)
		done := time.Now()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("producing inputs: %w", err)
		}
		// One send-lag and one produce sample per input intended inside
		// the window.
		lags, batch, ids = lags[:0], batch[:0], ids[:0]
		for i, r := range recs {
			h, _ := ledger.ReadInput(r.Value)
			ids = append(ids, h.ID)
			batch = append(batch, ledger.Input{Partition: mr.inputPartition(r.Topic, r.Partition), Offset: r.Offset, IntendedNs: h.IntendedNs})
			if mr.inWindow(intended[i]) {
				lags = append(lags, sent.Sub(intended[i]))
				lag.Record(sent.Sub(intended[i]))
			}
		}
		if w := int64(len(lags)); w > 0 {
			svc.RecordN(done.Sub(sent), w)
			mr.ivLag.record(sent, lags...)
			mr.ivProduce.recordN(done, done.Sub(sent), w)
			mr.inWindowInputs.Add(w)
		}
		mr.ledger.AddInputs(ids, batch)
		mr.produced.Add(int64(len(recs)))
		mr.series.add(mr.series.inputs, mr.secondOf(sent), int64(len(recs)))
	}
	return nil
}

// lateSendLimit is how long after the window's end an open loop's
// producer still sends the inputs the schedule placed inside it: a
// producer on schedule sends its last ones a timer's slack after the end;
// one further behind stops, and what it never sent is counted (unsent), so
// a rate the system cannot reach cannot stretch the run.
const lateSendLimit = time.Second

// dueInWindow consumes what is left of sched up to the window's end and
// returns how many records that was: the inputs a producer that fell
// behind its schedule never sent.
func dueInWindow(sched *Schedule, w *window) int64 {
	var n int64
	for {
		t, ok := sched.Peek()
		if !ok || w.loadOver(t) {
			return n
		}
		sched.Next()
		n++
	}
}

// sleepCtx sleeps d or until ctx is done.
func sleepCtx(ctx context.Context, d time.Duration) { sleepOrStop(ctx, d, nil) }

// sleepOrStop sleeps d, or until ctx is done or stop is closed (a nil stop
// never is).
func sleepOrStop(ctx context.Context, d time.Duration, stop <-chan struct{}) {
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	case <-stop:
	}
}
