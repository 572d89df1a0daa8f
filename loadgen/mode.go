// This file holds one mode's run: set-up, the producers, workers and tail
// reader on one timeline (warm-up, measured load, drain), then the figures,
// the ledger and the verifier's verdict.

package loadgen

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sharebench/sharebench/loadgen/result"
	"github.com/sharebench/sharebench/loadgen/target"
	"github.com/sharebench/sharebench/loadgen/verify"
	"github.com/sharebench/sharebench/workloads"
)

// Drainer is implemented by targets that can count input records not yet
// terminal; the drain then also waits for that count to reach zero.
type Drainer interface {
	Pending(ctx context.Context, cfg target.Config) (int64, error)
}

// StatsReporter is implemented by targets that can count lock expiries.
type StatsReporter interface {
	LockExpiries() int64
}

type modeRun struct {
	cfg  *Config
	spec *workloads.Spec
	mode target.Mode
	rep  int
	tcfg target.Config
	name string // mode, with the repeat when repeating

	start   time.Time
	warmEnd time.Time
	loadEnd time.Time
	seconds int

	nextID   atomic.Uint64
	produced atomic.Int64 // inputs produced (all phases)
	ledger   *ledger
	series   *series

	// inWindowInputs counts inputs sent inside the measured window. Fix
	// (issue 4 tests): InputsProduced summed whole seconds of the series,
	// which gave 0 for a window under a second and miscounted any window
	// not on whole seconds.
	inWindowInputs atomic.Int64

	processed   atomic.Int64
	redelivered atomic.Int64
	commits     atomic.Int64
	aborts      atomic.Int64
	crashes     atomic.Int64
	ackErrors   atomic.Int64

	// Per-second interval histograms (for the .hlog files and series).
	ivE2E, ivLag, ivProduce, ivCommit, ivP2C *intervals

	histMu sync.Mutex
	hists  map[string]*Hist // merged per-goroutine histograms

	faultsMu   sync.Mutex
	faults     []result.FaultEvent
	ctl        []*workerCtl
	abortBoost atomic.Uint64 // float64 bits: extra abort ratio from an abort-ratio fault
	abortUntil atomic.Int64

	expiriesAtStart int64
	stopWorkers     chan struct{}
	workersWG       sync.WaitGroup
}

func newModeRun(cfg *Config, m target.Mode, rep int) (*modeRun, error) {
	spec := cfg.Workload
	name := string(m)
	if cfg.Repeats > 1 {
		name = fmt.Sprintf("%s-r%d", m, rep)
	}
	prefix := fmt.Sprintf("%s-%s", cfg.RunID, name)
	mr := &modeRun{
		cfg: cfg, spec: spec, mode: m, rep: rep, name: name,
		tcfg: target.Config{
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
		},
		hists:       map[string]*Hist{},
		stopWorkers: make(chan struct{}),
	}
	if mr.tcfg.OutputPartitions == 0 {
		mr.tcfg.OutputPartitions = mr.tcfg.InputPartitions
	}
	for _, f := range spec.Faults {
		if !clientFault(f.Kind) {
			if cfg.FaultRunner == nil {
				return nil, fmt.Errorf("loadgen: fault %q needs control of the %s target, which this run does not have (for kafka pass --broker-control; for the engine run with --data-dir)", f.Kind, cfg.Target.Info().Target)
			}
			if err := cfg.FaultRunner.Supports(f.Kind); err != nil {
				return nil, err
			}
		}
	}
	return mr, nil
}

// seed derives a stream's seed from the run's seed, the mode and a
// stream id, so each goroutine's choices are reproducible on their own.
func (mr *modeRun) rng(stream uint64) *rand.Rand {
	h := uint64(mr.cfg.Seed)
	for _, c := range mr.name {
		h = h*1099511628211 + uint64(c)
	}
	return rand.New(rand.NewPCG(h, stream))
}

func (mr *modeRun) mergeHist(name string, h *Hist) {
	mr.histMu.Lock()
	defer mr.histMu.Unlock()
	if mr.hists[name] == nil {
		mr.hists[name] = NewHist()
	}
	mr.hists[name].Merge(h)
}

func (mr *modeRun) inWindow(t time.Time) bool {
	return !t.Before(mr.warmEnd) && t.Before(mr.loadEnd)
}

func (mr *modeRun) sinceStart(t time.Time) int64 { return int64(t.Sub(mr.start)) }

// run executes the mode and returns its result.
func (mr *modeRun) run(ctx context.Context) (result.ModeResult, error) {
	out := result.ModeResult{Mode: string(mr.mode), Repeat: mr.rep, Histograms: map[string]result.Histogram{}}
	if err := mr.cfg.Target.Setup(ctx, mr.tcfg); err != nil {
		return out, fmt.Errorf("setting up topics: %w", err)
	}
	spec := mr.spec
	mr.start = time.Now()
	mr.warmEnd = mr.start.Add(spec.Warmup())
	mr.loadEnd = mr.warmEnd.Add(spec.TestDuration())
	mr.seconds = int((spec.Warmup()+spec.TestDuration()+spec.DrainTimeout)/time.Second) + 3
	mr.series = newSeries(mr.seconds)
	mr.ledger = newLedger()
	mr.ivE2E, mr.ivLag = newIntervals(mr.start), newIntervals(mr.start)
	mr.ivProduce, mr.ivCommit, mr.ivP2C = newIntervals(mr.start), newIntervals(mr.start), newIntervals(mr.start)
	if sr, ok := mr.cfg.Target.(StatsReporter); ok {
		mr.expiriesAtStart = sr.LockExpiries()
	}

	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()

	// Tail reader first, so no output is missed.
	rd, err := mr.cfg.Target.NewReader(runCtx, mr.tcfg, mr.tcfg.OutputTopic, true)
	if err != nil {
		return out, fmt.Errorf("starting the read_committed reader: %w", err)
	}
	readerStop := make(chan struct{})
	readerDone := make(chan error, 1)
	go func() { readerDone <- mr.readLoop(runCtx, rd, readerStop) }()

	// Workers.
	mr.ctl = make([]*workerCtl, spec.Consumers)
	for i := range mr.ctl {
		mr.ctl[i] = &workerCtl{}
	}
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

	// Progress, faults and producers.
	progressDone := make(chan struct{})
	go mr.progressLoop(progressDone)
	faultsDone := make(chan struct{})
	// Fix (issue 7, found with a broker restart through --broker-control):
	// a target-side fault can take longer than the load (a broker restart
	// takes 15-30s), and the fault loop was never waited for, so finish
	// read the faults before the running one was recorded, and a zombie
	// fault could start a worker after the workers were stopped.
	faultsExited := make(chan struct{})
	go func() {
		defer close(faultsExited)
		mr.faultLoop(runCtx, faultsDone)
	}()
	prodErr := mr.runProducers(runCtx)

	// Drain: wait until every input has an output (or was rejected), or
	// the drain timeout passes.
	drainStart := time.Now()
	drained := mr.waitDrained(runCtx, spec.DrainTimeout)
	out.DrainNs = int64(time.Since(drainStart))
	out.DrainTimedOut = !drained
	close(faultsDone)
	<-faultsExited // a fault still being applied finishes first
	close(mr.stopWorkers)
	mr.workersWG.Wait()
	// The final read_committed pass in finish catches what the tail
	// reader had not seen yet.
	close(readerStop)
	readErr := <-readerDone
	close(progressDone)
	_ = rd.Close()
	if !drained {
		out.DrainNote = fmt.Sprintf("%d of %d inputs settled (a committed output or a reject that took effect) after %v",
			mr.ledger.settled(), mr.produced.Load(), spec.DrainTimeout)
	}

	if err := mr.finish(ctx, &out); err != nil {
		return out, err
	}
	return out, errors.Join(prodErr, readErr)
}

// drainQuiet is how long the drain waits, once the target reports nothing
// pending, for outputs still on their way to the tail reader (it polls at
// least every 100ms).
const drainQuiet = 500 * time.Millisecond

// waitDrained polls until every produced input has a committed output or
// was rejected on purpose (or, with a Drainer target, until no input is
// pending and no output arrives any more).
func (mr *modeRun) waitDrained(ctx context.Context, timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	dr, _ := mr.cfg.Target.(Drainer)
	lastSettled, quietSince := int64(-1), time.Time{}
	for {
		settled := mr.ledger.settled()
		if settled >= mr.produced.Load() {
			if dr == nil {
				return true
			}
			// Outputs exist for everything; wait for the acks too (an ack
			// lost to a crash leaves its record to be redelivered).
			if n, err := dr.Pending(ctx, mr.tcfg); err != nil || n == 0 {
				return true
			}
		} else if dr != nil {
			// An input archived at the delivery limit never gets an
			// output, so settled stays below produced: once nothing is
			// pending and no output arrived for drainQuiet (the tail
			// reader has caught up), the drain is done.
			if n, err := dr.Pending(ctx, mr.tcfg); err == nil && n == 0 {
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
	measured := spec.TestDuration()
	out.MeasuredNs = int64(measured)
	out.TotalInputs = mr.produced.Load()
	out.InputsProduced = mr.inWindowInputs.Load()
	out.OutputsVisible = mr.ledger.visibleBetween(mr.sinceStart(mr.warmEnd), mr.sinceStart(mr.loadEnd))
	out.TotalOutputs = mr.ledger.committedOutputs()
	out.Throughput = float64(out.OutputsVisible) / measured.Seconds()
	out.InputRate = float64(out.InputsProduced) / measured.Seconds()
	out.Processed = mr.processed.Load()
	out.Redeliveries = mr.redelivered.Load()
	out.Commits = mr.commits.Load()
	out.Aborts = mr.aborts.Load()
	out.WorkerCrashes = mr.crashes.Load()
	if sr, ok := mr.cfg.Target.(StatsReporter); ok {
		out.LockExpiries = sr.LockExpiries() - mr.expiriesAtStart
	}
	mr.histMu.Lock()
	for name, h := range mr.hists {
		out.Histograms[name] = h.Summary()
	}
	mr.histMu.Unlock()
	if lag, ok := mr.hists[result.HistSendLag]; ok && lag.Count() > 0 {
		p99 := lag.Percentile(99)
		if p99 > 100*time.Millisecond {
			out.SendLagWarning = fmt.Sprintf("send lag p99 %v: the schedule of %d records/s was not met (the target or the load generator could not keep up; latencies are still measured from the intended times)", p99.Round(time.Millisecond), spec.ProducerRate)
		}
	}
	out.Series = mr.series.snapshot(mr)
	mr.faultsMu.Lock()
	out.Faults = append([]result.FaultEvent(nil), mr.faults...)
	mr.faultsMu.Unlock()

	// What the verifier needs: the transactions settled, every output as
	// read_committed and read_uncommitted readers (with the markers) see
	// it, the transactions left open, the final share state.
	open, openNote := mr.settleTransactions(ctx)
	if err := mr.readAll(ctx, true); err != nil {
		return fmt.Errorf("reading outputs read_committed: %w", err)
	}
	markers, err := mr.readUncommitted(ctx)
	if err != nil {
		return fmt.Errorf("reading outputs read_uncommitted: %w", err)
	}
	byMarkers := mr.ledger.finishMarkers()
	if markers {
		open = mergeOpen(open, byMarkers)
	}
	mr.ledger.nameOpen(mr, open)
	state, err := mr.inspectSettled(ctx)
	if err != nil {
		return fmt.Errorf("inspecting the final share state: %w", err)
	}
	info := mr.cfg.Target.Info()
	meta := verify.Meta{
		Mode: string(mr.mode), Target: info.Target, Brokers: info.Brokers, OutputTopic: mr.tcfg.OutputTopic,
		DeliveryLimit: spec.DeliveryLimit, DrainTimedOut: out.DrainTimedOut, DrainNote: out.DrainNote,
		ShareState: state != nil && len(state.Records) > 0, DeliveryCounts: mr.mode.UsesShareGroup(), Markers: markers,
		OpenTransactions: open,
	}
	if openNote != "" {
		meta.Notes = append(meta.Notes, openNote)
	}
	opts := verify.Options{DeliveryLimit: spec.DeliveryLimit, DrainTimedOut: out.DrainTimedOut, DrainNote: out.DrainNote}
	if !meta.Markers {
		opts.Unobserved = append(opts.Unobserved, "transaction markers (the target's readers do not return them)")
	}
	v := verify.New(string(mr.mode), opts)
	var dump *ledgerDump
	if mr.cfg.OutDir != "" && mr.cfg.DumpLedgers {
		if dump, err = newLedgerDump(filepath.Join(mr.cfg.OutDir, "ledgers", mr.name), meta); err != nil {
			return err
		}
	}
	mr.ledger.each(mr, state, func(in verify.Input) {
		v.AddInput(in)
		dump.input(in)
	}, func(o verify.Output) {
		v.AddOutput(o)
		dump.output(o)
	}, func(d verify.Delivery) {
		v.AddDelivery(d)
		dump.delivery(d)
	})
	for _, t := range open {
		v.AddOpenTransaction(t)
	}
	if err := dump.close(); err != nil {
		return err
	}
	out.Verify = v.Finish()
	out.Verify.Notes = append(out.Verify.Notes, meta.Notes...)
	if state == nil {
		out.Verify.Notes = append(out.Verify.Notes, "the target reports no per-record share state: terminality judged from outputs only")
	}
	if mr.cfg.OutDir != "" {
		if err := mr.writeHlogs(); err != nil {
			return err
		}
	}
	return nil
}

func (mr *modeRun) secondOf(t time.Time) int { return int(t.Sub(mr.start) / time.Second) }

// settleGrace bounds the wait for transactions still open on the output
// topic after the drain: markers may still be on their way (they are
// asynchronous), and a transaction a crashed worker left behind is
// aborted only by the coordinator's timeout sweep (Kafka's runs every
// 10s, as the engine's does). What is still open after it hangs.
func (mr *modeRun) settleGrace() time.Duration {
	const sweep, margin, most = 10 * time.Second, time.Second, 30 * time.Second
	return min(mr.spec.TransactionTimeout+sweep+margin, most)
}

// settleTransactions waits (at most settleGrace) until no transaction is
// open on the output topic, and returns those still open, with a note when
// the target cannot list them.
func (mr *modeRun) settleTransactions(ctx context.Context) ([]verify.OpenTransaction, string) {
	ti, ok := mr.cfg.Target.(target.TransactionInspector)
	if !ok || !mr.mode.Transactional() {
		return nil, ""
	}
	deadline := time.Now().Add(mr.settleGrace())
	for {
		open, err := ti.OpenTransactions(ctx, mr.tcfg, mr.tcfg.OutputTopic)
		if err != nil {
			return nil, fmt.Sprintf("the target could not list open transactions (%v): hanging transactions judged from the markers only", err)
		}
		if len(open) == 0 || time.Now().After(deadline) || ctx.Err() != nil {
			out := make([]verify.OpenTransaction, 0, len(open))
			for _, t := range open {
				out = append(out, verify.OpenTransaction{Partition: t.Partition, ProducerID: t.ProducerID, Epoch: t.ProducerEpoch,
					FirstOffset: t.FirstOffset, TransactionalID: t.TransactionalID, Source: "target"})
			}
			return out, ""
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// spsoSettle bounds how long the final share state is read again while a
// target that reports only share-partition start offsets (Kafka, whose
// persisted start offset trails the acknowledgements) is still moving
// them; spsoQuiet is how long they must stand still to be final.
const (
	spsoSettle = 10 * time.Second
	spsoQuiet  = 2 * time.Second
)

// inspectSettled reads the final share state. When the target reports only
// start offsets, it reads again until every input partition's start offset
// has passed its last input, or they stop moving: records above a start
// offset are then judged from what it says, not from a snapshot taken
// while it was still catching up.
func (mr *modeRun) inspectSettled(ctx context.Context) (*target.ShareState, error) {
	state, err := mr.cfg.Target.Inspect(ctx, mr.tcfg)
	if errors.Is(err, target.ErrUnsupported) {
		return nil, nil
	}
	if err != nil || len(state.Records) > 0 {
		return state, err
	}
	ends := mr.ledger.inputEnds()
	done := func(st *target.ShareState) bool {
		for p, end := range ends {
			if st.SPSO[p] < end {
				return false
			}
		}
		return true
	}
	deadline, still := time.Now().Add(spsoSettle), time.Now()
	for !done(state) && time.Now().Before(deadline) && time.Since(still) < spsoQuiet && ctx.Err() == nil {
		time.Sleep(200 * time.Millisecond)
		next, err := mr.cfg.Target.Inspect(ctx, mr.tcfg)
		if err != nil {
			return state, nil // keep what was read
		}
		if !maps.Equal(next.SPSO, state.SPSO) {
			still = time.Now()
		}
		state = next
	}
	return state, nil
}

// mergeOpen adds the transactions found open by the markers that the
// target did not list.
func mergeOpen(fromTarget, fromMarkers []verify.OpenTransaction) []verify.OpenTransaction {
	type key struct {
		p   int32
		pid int64
	}
	seen := map[key]bool{}
	for _, t := range fromTarget {
		seen[key{t.Partition, t.ProducerID}] = true
	}
	out := fromTarget
	for _, t := range fromMarkers {
		if !seen[key{t.Partition, t.ProducerID}] {
			out = append(out, t)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Partition != out[j].Partition {
			return out[i].Partition < out[j].Partition
		}
		return out[i].FirstOffset < out[j].FirstOffset
	})
	return out
}

// readAll reads the whole output topic once at the given isolation level
// and adds what it sees to the ledger: with read_committed, the outputs
// the tail reader had not seen yet.
func (mr *modeRun) readAll(ctx context.Context, readCommitted bool) error {
	rd, err := mr.cfg.Target.NewReader(ctx, mr.tcfg, mr.tcfg.OutputTopic, readCommitted)
	if err != nil {
		return err
	}
	defer rd.Close()
	return drainReader(ctx, rd, func(r *target.Record) {
		if !readCommitted {
			mr.ledger.addUncommitted(r)
			return
		}
		if oh, err := readOutput(r.Value); err == nil {
			mr.ledger.addCommitted(outputRec{id: oh.InputID, partition: r.Partition, offset: r.Offset,
				visible: mr.sinceStart(time.Now()), txnSeq: oh.TxnSeq, epoch: oh.Epoch, worker: oh.Worker})
		}
	})
}

// drainReader polls rd until three polls in a row return nothing.
func drainReader(ctx context.Context, rd target.Reader, add func(*target.Record)) error {
	for empty := 0; empty < 3; {
		pctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		recs, err := rd.Poll(pctx)
		cancel()
		if err != nil {
			return err
		}
		if len(recs) == 0 {
			empty++
			continue
		}
		empty = 0
		for _, r := range recs {
			add(r)
		}
	}
	return nil
}

// readUncommitted reads the whole output topic with read_uncommitted and
// adds every output to the ledger, with the transaction marker that
// followed it where the target's reader returns markers (it reports
// whether it did).
func (mr *modeRun) readUncommitted(ctx context.Context) (markers bool, err error) {
	mrd, ok := mr.cfg.Target.(target.MarkerReader)
	if !ok {
		return false, mr.readAll(ctx, false)
	}
	rd, err := mrd.NewMarkerReader(ctx, mr.tcfg, mr.tcfg.OutputTopic)
	if err != nil {
		return false, err
	}
	defer rd.Close()
	return true, drainReader(ctx, rd, mr.ledger.addUncommitted)
}

// writeHlogs writes one HdrHistogram interval log per histogram.
func (mr *modeRun) writeHlogs() error {
	dir := mr.cfg.OutDir
	hlogs := map[string]*intervals{
		result.HistEndToEnd: mr.ivE2E, result.HistSendLag: mr.ivLag, result.HistProduce: mr.ivProduce,
		result.HistCommit: mr.ivCommit, result.HistPollCommit: mr.ivP2C,
	}
	names := make([]string, 0, len(hlogs))
	for n := range hlogs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		path := filepath.Join(dir, fmt.Sprintf("%s.%s.hlog", mr.name, n))
		f, err := os.Create(path)
		if err != nil {
			return fmt.Errorf("loadgen: %w", err)
		}
		werr := hlogs[n].writeHlog(f, fmt.Sprintf("sharebench mode=%s histogram=%s unit=ns", mr.name, n))
		if err := errors.Join(werr, f.Close()); err != nil {
			return fmt.Errorf("loadgen: writing %s: %w", path, err)
		}
	}
	return nil
}

// ledgerDump streams ledgers to inputs.jsonl and outputs.jsonl; a nil dump
// does nothing. The first write error is kept and reported by close.
type ledgerDump struct {
	files [3]*os.File
	encs  [3]*verify.Encoder // buffered
	err   error
}

func newLedgerDump(dir string, meta verify.Meta) (*ledgerDump, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("loadgen: %w", err)
	}
	if err := verify.WriteMeta(dir, meta); err != nil {
		return nil, err
	}
	d := &ledgerDump{}
	for i, name := range []string{verify.InputsFile, verify.OutputsFile, verify.DeliveriesFile} {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			d.close()
			return nil, fmt.Errorf("loadgen: %w", err)
		}
		d.files[i] = f
		d.encs[i] = verify.NewEncoder(f)
	}
	return d, nil
}

func (d *ledgerDump) input(in verify.Input) {
	if d != nil && d.err == nil {
		d.err = d.encs[0].EncodeInput(in)
	}
}

func (d *ledgerDump) output(o verify.Output) {
	if d != nil && d.err == nil {
		d.err = d.encs[1].EncodeOutput(o)
	}
}

func (d *ledgerDump) delivery(v verify.Delivery) {
	if d != nil && d.err == nil {
		d.err = d.encs[2].EncodeDelivery(v)
	}
}

func (d *ledgerDump) close() error {
	if d == nil {
		return nil
	}
	err := d.err
	for i := range d.files {
		if d.files[i] == nil {
			continue
		}
		if d.encs[i] != nil {
			err = errors.Join(err, d.encs[i].Flush())
		}
		err = errors.Join(err, d.files[i].Close())
	}
	if err != nil {
		return fmt.Errorf("loadgen: writing ledgers: %w", err)
	}
	return nil
}

// addFault records a fault applied now.
func (mr *modeRun) addFault(kind, detail string) { mr.addFaultAt(time.Now(), kind, detail) }

// addFaultAt records a fault applied at now.
func (mr *modeRun) addFaultAt(now time.Time, kind, detail string) {
	mr.faultsMu.Lock()
	mr.faults = append(mr.faults, result.FaultEvent{AtNs: mr.sinceStart(now), Kind: kind, Detail: detail})
	mr.faultsMu.Unlock()
	mr.series.fault(mr.secondOf(now), kind)
}

// progressLoop prints one line a second until done closes.
func (mr *modeRun) progressLoop(done chan struct{}) {
	w := mr.cfg.Progress
	if w == nil {
		<-done
		return
	}
	t := time.NewTicker(time.Second)
	defer t.Stop()
	total := mr.loadEnd.Sub(mr.start)
	var lastIn, lastOut int64
	for {
		select {
		case <-done:
			return
		case now := <-t.C:
			in, outN := mr.produced.Load(), mr.ledger.committedOutputs()
			phase := "load"
			switch {
			case now.Before(mr.warmEnd):
				phase = "warm-up"
			case now.After(mr.loadEnd):
				phase = "drain"
			}
			sec := mr.secondOf(now) - 1
			fmt.Fprintf(w, "%-14s %4.1fs/%.1fs %-7s in %7d/s  out %7d/s  e2e p99 %9s  redeliveries %d  aborts %d\n",
				mr.name, now.Sub(mr.start).Seconds(), total.Seconds(), phase, in-lastIn, outN-lastOut,
				fmtNs(mr.ivE2E.p99(sec)), mr.redelivered.Load(), mr.aborts.Load())
			lastIn, lastOut = in, outN
		}
	}
}

func fmtNs(ns int64) string {
	if ns == 0 {
		return "-"
	}
	return FormatDuration(time.Duration(ns))
}

// FormatDuration prints a latency with three significant figures.
func FormatDuration(d time.Duration) string {
	switch {
	case d >= time.Second:
		return fmt.Sprintf("%.3gs", d.Seconds())
	case d >= time.Millisecond:
		return fmt.Sprintf("%.3gms", float64(d)/1e6)
	case d >= time.Microsecond:
		return fmt.Sprintf("%.3gµs", float64(d)/1e3)
	}
	return fmt.Sprintf("%dns", int64(d))
}

// clientFault reports whether a fault kind is applied by the load
// generator's own clients (works on every target).
func clientFault(kind string) bool {
	switch kind {
	case "worker-crash", "abort-ratio", "stall-worker", "slow-processing", "zombie-producer":
		return true
	}
	return false
}
