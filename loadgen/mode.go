// This file holds one mode's run: set-up, the producers, workers and tail
// reader on one timeline (warm-up, measured load, drain), then the figures,
// the ledger and the verifier's verdict.

package loadgen

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/sharebench/sharebench/loadgen/ledger"
	"github.com/sharebench/sharebench/loadgen/result"
	"github.com/sharebench/sharebench/loadgen/targets"
	"github.com/sharebench/sharebench/loadgen/verify"
	"github.com/sharebench/sharebench/vocab"
	"github.com/sharebench/sharebench/workloads"
)

// Drainer is implemented by targets that can count input records not yet
// terminal exactly; the drain then also waits for that count to reach zero
// once every input has an output (an ack lost to a crash leaves its record
// to be redelivered).
type Drainer interface {
	Pending(ctx context.Context, cfg targets.Config) (int64, error)
}

// PendingBounder is implemented by targets that can bound the input
// records not yet terminal from above, zero exactly when all are (a real
// broker's share-partition start offset, which may lag behind records
// already terminal). The drain uses it only to end once inputs without an
// output (archived at the delivery limit) are terminal; it never holds a
// drain whose inputs all have outputs, since a lagging bound would hold it
// to its timeout.
type PendingBounder interface {
	PendingBound(ctx context.Context, cfg targets.Config) (int64, error)
}

// DownReporter is implemented by targets that can tell that the system
// under test crashed and will not come back (an engine whose restart from
// its data directory failed): Down returns why, nil while it runs. The run
// then stops the mode at once and ends it FAIL (target-down) with the
// error as the witness, instead of waiting on calls that can only fail.
type DownReporter interface {
	Down() error
}

// downPoll is how often a run asks a DownReporter target whether it is down.
const downPoll = 20 * time.Millisecond

// SweepReporter is implemented by targets that know how often their
// transaction coordinator aborts the transactions past their timeout
// (Kafka's transaction.abort.timed.out.transaction.cleanup.interval.ms,
// 10s by default; the engine's WithAbortSweepInterval).
type SweepReporter interface {
	AbortSweepInterval() time.Duration
}

// StatsReporter is implemented by targets that can count lock expiries.
type StatsReporter interface {
	LockExpiries() int64
}

// modeRun is one mode's run, made of parts that each own their fields
// (moderun.go): the goroutines write through the methods of the part that
// owns what they change.
type modeRun struct {
	// What runs: fixed once newModeRun returns.
	cfg  *Config
	spec *workloads.Spec
	mode vocab.Mode
	rep  int
	tcfg targets.Config
	name string // mode, with the repeat when repeating
	// topicIndex numbers the input topics when there are several
	// (inputPartition); nil for one.
	topicIndex map[string]int32

	window  // the timeline and the measurement window
	counts  // what the workers, producers and faults count
	books   // what the verifier reads: the ledger, the checkpoint model
	figures // histograms, interval logs, series, fault events
	crew    // the workers, and how faults reach them

	// down is the error of a target that went down during the run (see
	// DownReporter); set once, by watchDown, read after runCtx ends.
	down atomic.Pointer[error]
}

func newModeRun(cfg *Config, m vocab.Mode, rep int) (*modeRun, error) {
	spec := cfg.Workload
	name := result.ModeRunName(m, rep, cfg.Repeats)
	prefix := fmt.Sprintf("%s-%s", cfg.RunID, name)
	mr := &modeRun{
		cfg: cfg, spec: spec, mode: m, rep: rep, name: name,
		tcfg: targets.Config{
			InputTopic:            prefix + "-in",
			OutputTopic:           prefix + "-out",
			InputPartitions:       int32(spec.PartitionsPerTopic),
			OutputPartitions:      int32(spec.OutputPartitionsPerTopic),
			Group:                 prefix + "-group",
			TransactionalIDPrefix: prefix + "-worker-",
			LockDuration:          spec.LockDuration,
			DeliveryLimit:         spec.DeliveryLimit,
			MaxRecordLocks:        spec.MaxRecordLocks,
			TransactionTimeout:    spec.TransactionTimeout,
			MaxPollRecords:        spec.MaxPollRecords,
			ReplicationFactor:     spec.ReplicationFactor,
			MinInsyncReplicas:     spec.MinInsyncReplicas,
			AcquireMode:           spec.AcquireMode,
			DLQTopic:              dlqTopic(spec, m, prefix),
			DLQCopyRecord:         spec.DLQCopyRecord,
		},
	}
	if spec.Topics > 1 {
		// Topic 0 keeps the one-topic name, which broker-control
		// commands derive the run's prefix from.
		mr.tcfg.InputTopics = []string{mr.tcfg.InputTopic}
		for i := 1; i < spec.Topics; i++ {
			mr.tcfg.InputTopics = append(mr.tcfg.InputTopics, fmt.Sprintf("%s-in-%d", prefix, i))
		}
		mr.topicIndex = make(map[string]int32, spec.Topics)
		for i, t := range mr.tcfg.InputTopics {
			mr.topicIndex[t] = int32(i)
		}
	}
	mr.stopWorkers = make(chan struct{})
	if mr.tcfg.OutputPartitions == 0 {
		mr.tcfg.OutputPartitions = mr.tcfg.InputPartitions
	}
	for _, f := range spec.Faults {
		if !f.ClientSide() {
			if cfg.FaultRunner == nil {
				return nil, fmt.Errorf("%w: fault %q needs control of the %s target, which this run does not have (the kafka target needs a broker-control command, the engine target a data directory)", ErrNoFaultControl, f.Kind, cfg.Target.Info().Target)
			}
			if err := cfg.FaultRunner.Supports(f.Kind); err != nil {
				return nil, err
			}
		}
	}
	if err := mr.initCheckpoint(); err != nil {
		return nil, err
	}
	return mr, nil
}

// inputPartition numbers partition p of input topic topic across the
// input topics (targets.Config.GlobalPartition), as the ledger and the
// verifier count input partitions.
func (mr *modeRun) inputPartition(topic string, p int32) int32 {
	if mr.topicIndex == nil {
		return p
	}
	return mr.topicIndex[topic]*mr.tcfg.InputPartitions + p
}

// rng returns the random stream named label ("fault",
// "worker/3/incarnation/7", "producer/0"), derived from the run's seed and
// the mode: each stream is reproducible on its own, and distinct labels
// never share a stream.
func (mr *modeRun) rng(label string) *rand.Rand {
	h := uint64(mr.cfg.Seed)
	for _, c := range mr.name {
		h = h*1099511628211 + uint64(c)
	}
	f := fnv.New64a()
	f.Write([]byte(label))
	return rand.New(rand.NewPCG(h, f.Sum64()))
}

// formationLimit bounds how long after the warm-up the window waits for
// every worker to receive records (a share group on a real cluster forms
// in about a second, sometimes several) and for the consumers to catch up;
// past it the window opens anyway, with a note.
const formationLimit = 10 * time.Second

// windowLead is how far ahead of the moment it is decided the measurement
// window starts (see openWindowLoop).
const windowLead = 50 * time.Millisecond

// expectedReceivers is how many workers must receive records before the
// window opens: every worker, except that a consumer group (classic-eos)
// leaves the workers beyond the partition count without a partition.
func (mr *modeRun) expectedReceivers() int32 {
	n := int32(mr.spec.Consumers)
	if parts := mr.tcfg.InputPartitions * int32(len(mr.tcfg.Inputs())); mr.mode == vocab.ClassicEOS && parts < n {
		n = parts
	}
	return max(n, 1)
}

// backlogBuilt reports whether the producers have built the workload's
// consumer backlog (OMB's consumerBacklogSizeGB); true without one.
func (mr *modeRun) backlogBuilt() bool {
	return mr.produced.Load() >= mr.spec.BacklogRecords()
}

// backlogDrained reports whether the consumers have drained the backlog
// to the workload's drain ratio: at most (1 - ratio) of it is left
// unsettled. As OMB, a few records in flight count as drained (at most
// 1000, a tenth of a small backlog), since an open loop always has some.
func (mr *modeRun) backlogDrained() bool {
	b := mr.spec.BacklogRecords()
	if b == 0 {
		return true
	}
	produced := mr.produced.Load()
	if produced < b {
		return false
	}
	left := max(int64((1-mr.spec.DrainRatio())*float64(b)), min(1000, b/10))
	return produced-mr.ledger.Settled() <= left
}

// backlogLimit bounds the build and drain of the consumer backlog: twice
// the time the producers take to build it at their rate, plus the drain
// timeout. Past formationLimit and it after the warm-up the window opens
// anyway, with a note. 0 without a backlog.
func (mr *modeRun) backlogLimit() time.Duration {
	b := mr.spec.BacklogRecords()
	if b == 0 || mr.spec.ProducerRate <= 0 {
		return 0
	}
	return 2*time.Duration(float64(b)/float64(mr.spec.ProducerRate)*float64(time.Second)) + mr.spec.DrainTimeout
}

// waitBacklog holds a worker before its first poll until the backlog is
// built, as OMB pauses its consumers; it returns at once without a
// backlog, and when the run stops or ctx ends.
func (mr *modeRun) waitBacklog(ctx context.Context) {
	for !mr.backlogBuilt() && ctx.Err() == nil && !mr.stopping() {
		sleepCtx(ctx, time.Millisecond)
	}
}

// catchUp decides when the consumers of an open loop have caught up with
// the backlog the producers built while the group formed. It works in
// rounds: a round notes how many inputs had been produced when it began,
// and ends once as many inputs are settled (output, or rejected). A round
// that took no longer than the warm-up means the consumers keep up: what
// was produced by its start was through within one warm-up, as in steady
// state. A longer round was a backlog draining, and the next round starts
// at its end, so the window opens only once what arrived during the drain
// is through too; the backlog then falls before the window and an open
// loop's outputs/s inside it read as its input rate. A closed loop has no
// input rate and always a queue, and a zero warm-up asks for no wait, so
// neither waits.
type catchUp struct {
	tolerance time.Duration // the warm-up: the longest a caught-up round takes
	started   bool
	start     time.Time
	target    int64 // inputs produced when the round started
	rounds    int   // rounds ended
}

// caughtUp reports whether the consumers have caught up at now, given the
// inputs produced and settled so far.
func (c *catchUp) caughtUp(now time.Time, produced, settled int64) bool {
	if c.tolerance <= 0 {
		return true
	}
	if !c.started {
		c.started, c.start, c.target = true, now, produced
	}
	if settled < c.target {
		return false
	}
	c.rounds++
	if now.Sub(c.start) <= c.tolerance {
		return true
	}
	c.start, c.target = now, produced
	return false
}

// openWindowLoop opens the measurement window once the warm-up has passed,
// every worker has received records, an OMB consumer backlog has been
// built and drained (backlogDrained), and (open loop) the consumers have
// caught up with the producers (catchUp), or formationLimit (and
// backlogLimit) after the warm-up; then it returns. The window lasts the workload's test
// duration, and the producers stop when it closes.
func (mr *modeRun) openWindowLoop(ctx context.Context) {
	warm := mr.start.Add(mr.spec.Warmup())
	note := ""
	cu := catchUp{}
	if mr.spec.ProducerRate > 0 {
		cu.tolerance = mr.spec.Warmup()
	}
	limit := formationLimit + mr.backlogLimit()
	for {
		now := time.Now()
		if !now.Before(warm) {
			joined := mr.receivedN.Load() >= mr.expectedReceivers()
			drained := mr.backlogDrained()
			if joined && drained && cu.caughtUp(now, mr.produced.Load(), mr.ledger.Settled()) {
				break
			}
			if now.Sub(warm) >= limit {
				switch {
				case !drained:
					note = fmt.Sprintf("the consumer backlog of %d records was not built and drained to %v within %v after the warm-up (%d inputs produced, %d settled); the measurement window opened with it",
						mr.spec.BacklogRecords(), mr.spec.DrainRatio(), limit, mr.produced.Load(), mr.ledger.Settled())
				case !joined:
					note = fmt.Sprintf("only %d of %d workers had received records %v after the warm-up; the measurement window opened without the others",
						mr.receivedN.Load(), mr.expectedReceivers(), limit)
				default:
					note = fmt.Sprintf("the consumers had not caught up with the producers %v after the warm-up (%d inputs produced, %d settled): the target cannot keep up at this rate, and the window's outputs/s include a backlog",
						limit, mr.produced.Load(), mr.ledger.Settled())
				}
				break
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(2 * time.Millisecond):
		}
	}
	// The window starts windowLead after it is decided: a producer tells
	// an input inside the window by reading the window once the input is
	// sent, so the window must be published before the first input
	// intended inside it can be sent, even when this goroutine is
	// descheduled between reading the clock and publishing.
	ws := mr.sinceStart(time.Now()) + int64(windowLead)
	we := ws + int64(mr.spec.TestDuration())
	for _, iv := range []*intervals{mr.ivE2E, mr.ivLag, mr.ivProduce, mr.ivCommit, mr.ivP2C} {
		iv.setWindow(ws, we)
	}
	mr.window.open(ws, we, note)
}

// recordCommit books one commit (or ack) call that took svc, done at done,
// whose records were polled p2c before: samples of the commit and
// poll-to-commit histograms when done falls inside the window.
func (wl *workerLoop) recordCommit(done time.Time, svc, p2c time.Duration) {
	mr := wl.mr
	if !mr.inWindow(done) {
		return
	}
	mr.inWindowCommits.Add(1)
	if svc >= 0 {
		wl.commitH.Record(svc)
		mr.ivCommit.record(done, svc)
	}
	wl.p2cH.Record(p2c)
	mr.ivP2C.record(done, p2c)
}

// run executes the mode and returns its result.
func (mr *modeRun) run(ctx context.Context) (result.ModeResult, error) {
	out := result.ModeResult{Mode: mr.mode, Repeat: mr.rep, Histograms: map[string]result.Histogram{}}
	if err := mr.cfg.Target.Setup(ctx, mr.tcfg); err != nil {
		return out, fmt.Errorf("setting up topics: %w", err)
	}
	spec := mr.spec
	seconds := int((spec.Warmup()+formationLimit+mr.backlogLimit()+spec.TestDuration()+spec.DrainTimeout)/time.Second) + 3
	mr.window.begin(time.Now(), spec.Consumers, seconds)
	mr.figures.begin(mr.start, seconds)
	mr.ledger = ledger.New(&mr.nextID)
	if sr, ok := mr.cfg.Target.(StatsReporter); ok {
		mr.expiriesAtStart = sr.LockExpiries()
	}

	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer mr.closeCheckpoint()
	if dr, ok := mr.cfg.Target.(DownReporter); ok {
		// The watcher has exited when run returns: the next mode's Setup
		// may replace what it watches.
		watchStop, watchExited := make(chan struct{}), make(chan struct{})
		go func() {
			defer close(watchExited)
			mr.watchDown(dr, cancel, watchStop)
		}()
		defer func() {
			close(watchStop)
			<-watchExited
		}()
	}

	// Tail reader first, so no output is missed.
	rd, err := mr.cfg.Target.NewReader(runCtx, mr.tcfg, mr.tcfg.OutputTopic, true)
	if err != nil {
		return out, fmt.Errorf("starting the read_committed reader: %w", err)
	}
	readerStop := make(chan struct{})
	type readerEnd struct {
		note string
		err  error
	}
	readerDone := make(chan readerEnd, 1)
	go func() {
		note, err := mr.readLoop(runCtx, rd, readerStop)
		readerDone <- readerEnd{note, err}
	}()

	// Workers.
	mr.crew.begin(spec.Consumers)
	for i := 0; i < spec.Consumers; i++ {
		w, err := mr.cfg.Target.NewWorker(runCtx, mr.tcfg, mr.mode, i)
		if err != nil {
			close(mr.stopWorkers)
			mr.workersWG.Wait()
			close(readerStop)
			<-readerDone
			return out, fmt.Errorf("starting worker %d: %w", i, err)
		}
		mr.startWorker(runCtx, i, w)
	}

	// The window, progress, faults and producers.
	windowExited := make(chan struct{})
	winCtx, winCancel := context.WithCancel(runCtx)
	defer winCancel()
	go func() {
		defer close(windowExited)
		mr.openWindowLoop(winCtx)
	}()
	progressDone := make(chan struct{})
	go mr.progressLoop(progressDone)
	faultsDone := make(chan struct{})
	// The fault loop is waited for: a target-side fault can take longer
	// than the load (a broker restart takes 15-30s), and finish must read
	// the faults after the running one is recorded, and no fault may start
	// a worker after the workers were stopped.
	faultsExited := make(chan struct{})
	go func() {
		defer close(faultsExited)
		mr.faultLoop(runCtx, faultsDone)
	}()
	prodErr := mr.runProducers(runCtx)
	// The producers stop once the window has closed, or on an error or
	// an interrupt: then the window may never have opened.
	winCancel()
	<-windowExited
	mr.window.closed()

	// Before the drain's timeout starts, a target under broker faults
	// gets back on its feet (bounded by settleLimit).
	if st, ok := mr.cfg.FaultRunner.(Settler); ok && len(spec.Faults) > 0 && runCtx.Err() == nil {
		t0 := time.Now()
		note, err := st.Settle(runCtx, mr.tcfg, settleLimit)
		out.SettleNs = int64(time.Since(t0))
		switch {
		case err != nil:
			out.Notes = append(out.Notes, "before the drain: "+err.Error())
		case note != "":
			out.Notes = append(out.Notes, note)
		}
	}

	// Drain: wait until every input has an output (or was rejected), or
	// the drain timeout passes.
	drainStart := time.Now()
	drained := mr.waitDrained(runCtx, spec.DrainTimeout)
	drainTook := time.Since(drainStart)
	out.DrainNs = int64(drainTook)
	out.DrainInterrupted = !drained && ctx.Err() != nil
	out.DrainTimedOut = !drained && !out.DrainInterrupted
	close(faultsDone)
	<-faultsExited // a fault still being applied finishes first
	close(mr.stopWorkers)
	mr.workersWG.Wait()
	// The tail reader reads on to the output's end offsets; the final
	// read_committed pass in finish catches anything it had not seen.
	close(readerStop)
	rEnd := <-readerDone
	readErr := rEnd.err
	if rEnd.note != "" {
		out.Notes = append(out.Notes, rEnd.note)
	}
	close(progressDone)
	_ = rd.Close()
	switch {
	case mr.down.Load() != nil:
		// The drain was cut short rather than timed out: the evidence
		// is incomplete (finish) and the verdict target-down.
		out.DrainTimedOut, out.DrainInterrupted = false, false
		out.DrainNote = fmt.Sprintf("%d of %d inputs settled when the target went down (%v) and the mode stopped", mr.settledInputs(), mr.produced.Load(), *mr.down.Load())
	case out.DrainInterrupted:
		out.DrainNote = fmt.Sprintf("interrupted %v into the drain: %d of %d inputs settled (a committed output or a reject that took effect)",
			drainTook.Round(time.Millisecond), mr.settledInputs(), mr.produced.Load())
	case !drained:
		out.DrainNote = fmt.Sprintf("%d of %d inputs settled (a committed output or a reject that took effect) after %v",
			mr.settledInputs(), mr.produced.Load(), spec.DrainTimeout)
	}
	if n := mr.unsent.Load(); n > 0 {
		out.Unsent = n
		out.Notes = append(out.Notes, fmt.Sprintf("%d inputs the schedule placed inside the window were never sent: the producers stop sending them %v after the window closes, and they were behind a schedule of %d records/s", n, lateSendLimit, spec.ProducerRate))
	}

	if err := mr.finish(ctx, &out); err != nil {
		return out, err
	}
	if mr.down.Load() != nil {
		// The load stopped because the target went down: the verdict
		// says so, and the errors of the calls it cut short add nothing.
		return out, nil
	}
	return out, errors.Join(prodErr, readErr)
}

// settleLimit bounds the wait for a target to be whole again after its
// faults before the drain: a Kafka node restart on a loaded machine takes
// 40-180 s, and a fault that started late in the window may have two.
const settleLimit = 5 * time.Minute

// watchDown asks dr every downPoll whether the target went down and, once
// it has, records why and stops the mode's load (stop cancels its
// context); it returns then, or when done is closed.
func (mr *modeRun) watchDown(dr DownReporter, stop context.CancelFunc, done <-chan struct{}) {
	tick := time.NewTicker(downPoll)
	defer tick.Stop()
	for {
		select {
		case <-done:
			return
		case <-tick.C:
		}
		if err := dr.Down(); err != nil {
			mr.down.Store(&err)
			stop()
			return
		}
	}
}

// drainQuiet is how long the drain waits, once the target reports nothing
// pending, for outputs still on their way to the tail reader (it polls at
// least every 100ms).
const drainQuiet = 500 * time.Millisecond

// waitDrained polls until every produced input has a committed output or
// was rejected on purpose (with a Drainer target, and no input is pending),
// or, with a Drainer or PendingBounder target, until no input is pending
// and no output arrives any more.
func (mr *modeRun) waitDrained(ctx context.Context, timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	dr, _ := mr.cfg.Target.(Drainer)
	var bound func(context.Context, targets.Config) (int64, error)
	if dr != nil {
		bound = dr.Pending
	} else if pb, ok := mr.cfg.Target.(PendingBounder); ok {
		bound = pb.PendingBound
	}
	lastSettled, quietSince := int64(-1), time.Time{}
	for {
		// An interrupted drain did not finish, whatever a target asked
		// under a cancelled context answers.
		if ctx.Err() != nil {
			return false
		}
		settled := mr.settledInputs()
		if settled >= mr.produced.Load() {
			if dr == nil {
				return true
			}
			// Outputs exist for everything; wait for the acks too (an ack
			// lost to a crash leaves its record to be redelivered).
			if n, err := dr.Pending(ctx, mr.tcfg); (err != nil || n == 0) && ctx.Err() == nil {
				return true
			}
		} else if bound != nil {
			// An input archived at the delivery limit never gets an
			// output, so settled stays below produced: once nothing is
			// pending and no output arrived for drainQuiet (the tail
			// reader has caught up), the drain is done.
			if n, err := bound(ctx, mr.tcfg); err == nil && n == 0 {
				if settled != lastSettled {
					lastSettled, quietSince = settled, time.Now()
				} else if time.Since(quietSince) >= drainQuiet {
					return true
				}
			} else {
				lastSettled = -1
			}
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// finish computes the mode's figures, verifies, and writes artifacts.
func (mr *modeRun) finish(ctx context.Context, out *result.ModeResult) error {
	spec := mr.spec
	g := mr.gatherer()
	var ev ledger.Evidence
	var down error
	if p := mr.down.Load(); p != nil {
		down = *p
		// Nothing can be read back from a target that is down: the verdict
		// rests on the ledgers as the run left them.
		ev.Incomplete = append(ev.Incomplete, "the target went down during the run, so neither the outputs, the open transactions, the share state nor the dead letters were read back")
	} else if err := g.ReadSink(ctx, &ev); err != nil {
		return err
	}
	out.TotalInputs = mr.produced.Load()
	out.TotalOutputs = mr.ledger.CommittedOutputs()
	if mr.winOpen.Load() {
		ws, we := mr.winStartNs.Load(), mr.winEndNs.Load()
		measured := time.Duration(we - ws)
		out.WindowStartNs, out.WindowEndNs = ws, we
		out.MeasuredNs = int64(measured)
		out.InputsProduced = mr.inWindowInputs.Load()
		out.WindowCommits = mr.inWindowCommits.Load()
		out.OutputsVisible = mr.ledger.VisibleBetween(ws, we)
		out.Throughput = float64(out.OutputsVisible) / measured.Seconds()
		out.InputRate = float64(out.InputsProduced) / measured.Seconds()
		if mr.cpuAtOpen >= 0 && mr.cpuAtClose >= mr.cpuAtOpen {
			out.CPUNs = mr.cpuAtClose - mr.cpuAtOpen
		}
		if !mr.noiseClose.at.IsZero() {
			out.Noise = noiseBetween(mr.noiseOpen, mr.noiseClose)
		}
	}
	if mr.windowNote != "" {
		out.Notes = append(out.Notes, mr.windowNote)
	}
	if n := mr.counts.wedged.Load(); n > 0 {
		out.Notes = append(out.Notes, fmt.Sprintf("%d worker(s) replaced after their begins failed for %v (transactionTimeout): a producer that could not open a transaction", n, mr.spec.TransactionTimeout))
	}
	out.Processed = mr.counts.processed.Load()
	out.Redeliveries = mr.counts.redelivered.Load()
	out.Commits = mr.counts.commits.Load()
	out.Aborts = mr.counts.aborts.Load()
	out.FencedAborts = mr.counts.fencedAbort.Load()
	out.Rebalances = mr.counts.rebalances.Load()
	out.WorkerCrashes = mr.counts.crashes.Load()
	if sr, ok := mr.cfg.Target.(StatsReporter); ok {
		out.LockExpiries = sr.LockExpiries() - mr.expiriesAtStart
	}
	out.Histograms = mr.summaries()
	// Only an open loop has a schedule to miss: a closed loop sends when
	// the previous record is done, so its send lag is no lateness.
	if lag := mr.hist(result.HistSendLag); spec.ProducerRate > 0 && lag != nil && lag.Count() > 0 {
		p99 := lag.Percentile(99)
		if p99 > 100*time.Millisecond {
			out.SendLagWarning = fmt.Sprintf("send lag p99 %v: the schedule of %d records/s was not met (the target or the load generator could not keep up; latencies are still measured from the intended times)", p99.Round(time.Millisecond), spec.ProducerRate)
		}
	}
	out.Series = mr.series.snapshot(mr)
	out.Faults = mr.faultEvents()
	// The interval logs hold the samples of the histograms above; they are
	// written before the verifier runs so an interrupted mode keeps them.
	if mr.cfg.OutDir != "" {
		if err := mr.writeHlogs(); err != nil {
			return err
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}

	if w := mr.cfg.Progress; w != nil {
		fmt.Fprintf(w, "%-13s verifying %d inputs and %d outputs\n", mr.name, out.TotalInputs, out.TotalOutputs)
	}
	// Each read goes to the end offsets; one that stops short leaves the
	// evidence incomplete, and the verdict cannot be PASS.
	if down == nil {
		if err := g.Gather(ctx, &ev); err != nil {
			return err
		}
	}
	out.DLQRecords = int64(len(ev.DLQ))
	info := mr.cfg.Target.Info()
	// The verifier's "drain timed out" is a drain that did not finish: an
	// interrupted one is judged as unfinished too, never PASS.
	unfinished := out.DrainTimedOut || out.DrainInterrupted
	opts := g.Options(&ev, verify.Options{DeliveryLimit: spec.DeliveryLimit, DrainTimedOut: unfinished, DrainNote: out.DrainNote})
	if down != nil {
		opts.TargetDown = down.Error()
	}
	meta := verify.Meta{
		Mode: mr.mode, Target: info.Target, Brokers: info.Brokers, OutputTopic: mr.tcfg.OutputTopic,
		DeliveryLimit: spec.DeliveryLimit, DrainTimedOut: unfinished, DrainNote: out.DrainNote,
		ShareState: ev.State != nil && len(ev.State.Records) > 0, DeliveryCounts: mr.mode.UsesShareGroup(), Markers: ev.Markers,
		OpenTransactions: ev.Open, DLQTopic: mr.tcfg.DLQTopic, DLQAtLeastOnce: opts.DLQAtLeastOnce,
		Incomplete: ev.Incomplete, TargetDown: opts.TargetDown, Notes: ev.Notes,
	}
	v := verify.New(mr.mode, opts)
	var dump *ledger.Dump
	if mr.cfg.OutDir != "" && mr.cfg.DumpLedgers {
		var err error
		if dump, err = ledger.NewDump(result.LedgerDir(mr.cfg.OutDir, mr.name), meta); err != nil {
			return err
		}
	}
	g.Feed(v, &ev, dump)
	if err := dump.Close(); err != nil {
		return err
	}
	if dump != nil && meta.DLQTopic != "" {
		if err := writeDLQLedger(result.LedgerDir(mr.cfg.OutDir, mr.name), ev.DLQ); err != nil {
			return err
		}
	}
	out.Verify = v.Finish()
	out.Verify.Notes = append(out.Verify.Notes, meta.Notes...)
	if note := out.FaultsNote(); note != "" && mr.cfg.RequireFaults && out.Verify.Pass {
		out.Verify.Pass, out.Verify.Verdict = false, verify.VerdictInconclusive
		out.Verify.Notes = append(out.Verify.Notes, "INCONCLUSIVE by --require-faults: "+note+"; the faults the run exists to test did not all happen")
	}
	if ev.State == nil {
		out.Verify.Notes = append(out.Verify.Notes, "the target reports no per-record share state: terminality judged from outputs only")
	}
	return nil
}

// gatherer is the gathering of this mode's evidence, with a run's
// patience: transactions get settleGrace to end, reads stall out after
// readStall, start offsets and dead letters are read again while they
// still move.
func (mr *modeRun) gatherer() *ledger.Gatherer {
	return mr.ledger.Gatherer(mr.cfg.Target, mr.tcfg, mr.mode, mr.cp,
		ledger.Patience{Settle: mr.settleGrace(), Stall: mr.stallBound(), SPSO: true, DLQ: dlqSettle,
			Now: func() int64 { return mr.sinceStart(time.Now()) }})
}

// settleGrace bounds the wait for transactions still open on the output
// topic after the drain: markers may still be on their way (they are
// asynchronous), and a transaction a crashed worker left behind is
// aborted only by the coordinator's timeout sweep (Kafka's runs every
// 10s by default, as the engine's does; a SweepReporter target says how
// often its runs). What is still open after it hangs.
func (mr *modeRun) settleGrace() time.Duration {
	const margin, most = time.Second, 30 * time.Second
	sweep := 10 * time.Second
	if sr, ok := mr.cfg.Target.(SweepReporter); ok && sr.AbortSweepInterval() > 0 {
		sweep = sr.AbortSweepInterval()
	}
	return min(mr.spec.TransactionTimeout+sweep+margin, most)
}

// addFault records a fault applied now.
func (mr *modeRun) addFault(kind, detail string) { mr.addFaultAt(time.Now(), kind, detail) }

// addFaultAt records a fault applied at now.
func (mr *modeRun) addFaultAt(now time.Time, kind, detail string) {
	mr.addFaultEvent(result.FaultEvent{AtNs: mr.sinceStart(now), Kind: kind, Detail: detail})
}
