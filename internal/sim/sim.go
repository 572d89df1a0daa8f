// This file holds the simulator's entry points (Config, Run, Execute), the
// world it builds over the engine's public API, and the loop that executes
// one step at a time and checks every invariant after each.

package sim

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/sharebench/sharebench/engine"
	"github.com/sharebench/sharebench/loadgen/ledger"
	"github.com/sharebench/sharebench/loadgen/result"
	"github.com/sharebench/sharebench/loadgen/targets"
	"github.com/sharebench/sharebench/loadgen/targets/enginetarget"
	"github.com/sharebench/sharebench/vocab"
	"github.com/sharebench/sharebench/workloads"
)

// Config is one simulation.
type Config struct {
	// Seed decides the world (params) and the step list.
	Seed int64
	// Steps is how many scheduled steps run before the drain.
	Steps int
	// Draft runs the engine with the draft-compatible knobs
	// (docs/design.md §3.4), which are expected to break invariants.
	Draft bool
	// Only keeps these indexes of the generated step list, in order (a
	// shrunk trace); nil keeps every step.
	Only []int
	// Log, when non-nil, receives the step log as it is written.
	Log io.Writer
	// check is an extra invariant for tests of the shrinker.
	check func(*sim) *Violation
	// verifierOnly mutes the per-step checks: only the verifier judges
	// (the mutant test shows what the step checks add).
	verifierOnly bool
}

// Violation is a broken invariant: which check, after which step, why.
type Violation struct {
	// Step is the index in the generated step list of the step after
	// which the check failed, or -1 when it failed in the drain or the
	// verifier.
	Step   int
	Check  vocab.Invariant
	Detail string
}

func (v *Violation) Error() string {
	where := "in the drain"
	if v.Step >= 0 {
		where = fmt.Sprintf("after step #%d", v.Step)
	}
	return fmt.Sprintf("%s %s: %s", v.Check, where, v.Detail)
}

// Outcome is what a simulation did.
type Outcome struct {
	Seed   int64
	Params string
	// Executed is how many steps ran (scheduled and drain).
	Executed int
	// Log is the step log, one line per step, deterministic for a seed.
	Log []string
	// Violation is the first broken invariant, or nil.
	Violation *Violation
	// Verdicts are the verifier's per mode (set when the drain ran).
	Verdicts map[string]*result.Verification
}

// Hash returns a digest of the step log: equal for equal histories.
func (o *Outcome) Hash() [32]byte {
	h := sha256.New()
	for _, l := range o.Log {
		var n [4]byte
		binary.BigEndian.PutUint32(n[:], uint32(len(l)))
		h.Write(n[:])
		io.WriteString(h, l)
	}
	var out [32]byte
	copy(out[:], h.Sum(nil))
	return out
}

// Run generates cfg's steps and executes them.
func Run(cfg Config) *Outcome {
	steps := Generate(cfg.Seed, cfg.Steps)
	idx := make([]int, 0, len(steps))
	if cfg.Only != nil {
		for _, i := range cfg.Only {
			if i >= 0 && i < len(steps) {
				idx = append(idx, i)
			}
		}
	} else {
		for i := range steps {
			idx = append(idx, i)
		}
	}
	return execute(cfg, steps, idx)
}

// knobsFor returns the engine knobs of a run: all safe, or the draft's.
func knobsFor(draft bool) engine.Knobs {
	if !draft {
		return engine.Knobs{}
	}
	return engine.DraftKnobs()
}

// errStageWrite is what the hook returns for a KindFailStage fault.
var errStageWrite = errors.New("sim: injected staging write failure")

// errViolation stops a run once a check failed.
var errViolation = errors.New("sim: invariant violated")

const (
	inTopic = "in"
	inTxnID = "tx-input"
)

// sim is one simulation's world. Everything runs on one goroutine.
type sim struct {
	cfg   Config
	p     params
	knobs engine.Knobs
	clk   *engine.ManualClock
	t     *enginetarget.Target // the load generator's adapter: every worker call goes through it
	e     *engine.Engine       // the engine under t, which the checks observe
	tcfg  [len(modes)]targets.Config
	// workerTxnPrefixes are the modes' transactional id prefixes, comma
	// separated: every worker's transaction, not the input producer's.
	workerTxnPrefixes string
	// ledgers are the load generator's ledgers, one per mode: the workers
	// book their calls in them as a run's do, and the verifier judges
	// each mode from them.
	ledgers [len(modes)]*ledger.Ledger
	// cps are the checkpoint model's books of the lane that runs it
	// (params.checkpoint; nil elsewhere): its sink, read back as that
	// mode's outputs.
	cps [len(modes)]*ledger.Checkpoints

	slots   []*slot
	members map[string]*memberInfo // every share member ever, by id

	plainIn *engine.Producer // idempotent input producer
	txnIn   *engine.Producer // transactional input producer
	inOpen  *txnTrack        // its open transaction
	nextID  uint64

	in     []*inPart              // input partitions
	outs   [len(modes)][]*outPart // output partitions per mode
	groups [len(modes)]string
	share  [len(modes) - 1][]*spModel // share groups' models, per input partition
	// classic: the committed offset the model expects per input partition
	// (-1: none).
	classicWant []int64

	dir          string // data directory of a durable seed
	crashArm     *crashArm
	crashFired   string // the armed crash struck (where)
	restarted    bool   // this step restarted the engine
	coordCrashed bool   // this step reloaded the coordinator
	failover     map[[2]int]bool

	tracks    map[string]*txnTrack // open transaction per transactional id
	retired   []*txnTrack          // ended transactions replaced in tracks before they were judged
	decisions int                  // transactions decided so far (txnTrack.decided)
	txnIDs    []string             // every transactional id, sorted
	before    map[string]engine.TxnInfo
	ended     map[pidEpoch]*txnTrack
	failStage bool
	churned   [len(modes) - 1]targets.Worker // KindChurn's extra member per share group
	churns    int                            // extra members so far (their worker ids follow the slots')
	dlq       [len(modes) - 1]dlqModel       // dead-letter copies per share group
	lastSweep time.Duration
	fired     bool // this step fired timers

	ev        map[evKey][]event
	step      int // index of the step being executed (-1 in the drain)
	stepNo    int
	drain     bool
	log       []string
	line      strings.Builder
	viol      *Violation
	verifying bool // the verifier is judging (verifierOnly lets it fail the run)
	results   map[string]*result.Verification
}

type memberInfo struct {
	lastSeen time.Duration
	left     bool // left cleanly, in the step that set leftStep
	leftStep int
}

type pidEpoch struct {
	pid   int64
	epoch int16
}

// execute runs the steps idx of steps, then the drain and the verifier.
func execute(cfg Config, steps []Step, idx []int) *Outcome {
	s := newSim(cfg)
	s.logf("seed %d params %s knobs %s", cfg.Seed, s.p, knobName(cfg.Draft))
	err := s.runAll(steps, idx)
	if err != nil && s.viol == nil {
		s.viol = &Violation{Step: s.step, Check: "sim", Detail: err.Error()}
	}
	if s.t != nil {
		s.t.Close()
	}
	for _, cp := range s.cps {
		if cp != nil {
			cp.Close()
		}
	}
	if s.dir != "" {
		os.RemoveAll(s.dir)
	}
	return &Outcome{Seed: cfg.Seed, Params: s.p.String(), Executed: s.stepNo, Log: s.log,
		Violation: s.viol, Verdicts: s.results}
}

// runAll sets up, runs the steps, drains and verifies. A panic (an engine
// bug, or a mutant that breaks its own assertions) becomes a violation
// with the step that caused it, so it is shrunk and reported like any.
func (s *sim) runAll(steps []Step, idx []int) (err error) {
	defer func() {
		if r := recover(); r != nil {
			s.emit(s.line.String() + " !! panic")
			if s.viol == nil {
				s.viol = &Violation{Step: s.step, Check: "panic", Detail: fmt.Sprint(r)}
			}
			err = errViolation
		}
	}()
	if err := s.setup(); err != nil {
		return err
	}
	for _, i := range idx {
		if err := s.run(i, steps[i]); err != nil {
			return err
		}
	}
	s.step = -1
	return s.drainAndVerify()
}

func knobName(draft bool) string {
	if draft {
		return "draft"
	}
	return "safe"
}

func newSim(cfg Config) *sim {
	s := &sim{cfg: cfg, p: paramsFor(cfg.Seed), knobs: knobsFor(cfg.Draft), clk: engine.NewManualClock(),
		members: map[string]*memberInfo{}, tracks: map[string]*txnTrack{}, step: -1}
	return s
}

// setup creates the engine target on the manual clock, the topics, the
// groups and the first workers.
func (s *sim) setup() error {
	p := s.p
	gc := engine.GroupConfig{LockDuration: p.lock, DeliveryLimit: p.limit, MaxRecordLocks: p.maxLocks,
		AutoOffsetReset: engine.ResetEarliest, Isolation: engine.ReadCommitted}
	opts := enginetarget.Options{Shards: p.shards, Knobs: s.knobs, SessionTimeout: p.session, Clock: s.clk,
		Hook: s.hook, Extra: []engine.Option{engine.WithGroupDefaults(gc), engine.WithAbortSweepInterval(p.sweep),
			engine.WithTransactionTimeout(p.txnTimeout)}}
	if p.durable {
		dir, err := os.MkdirTemp("", "sharebench-sim-")
		if err != nil {
			return err
		}
		// Written to the OS at every call, never fsynced: a simulated
		// process crash loses nothing acknowledged, and no fsync slows
		// the simulation.
		s.dir = dir
		opts.DataDir, opts.Flush = dir, engine.FlushNever
	}
	t, err := enginetarget.New(opts)
	if err != nil {
		return err
	}
	s.t, s.e = t, t.Engine()
	e := s.e
	if err := e.CreateTopic(inTopic, p.inParts); err != nil {
		return err
	}
	s.in = make([]*inPart, p.inParts)
	for i := range s.in {
		s.in[i] = &inPart{tp: engine.TopicPartition{Topic: inTopic, Partition: int32(i)}}
	}
	for m, mode := range modes {
		name := string(mode)
		s.groups[m] = "g-" + name
		topic := "out-" + name
		if err := e.CreateTopic(topic, p.outParts); err != nil {
			return err
		}
		for q := int32(0); q < p.outParts; q++ {
			s.outs[m] = append(s.outs[m], &outPart{tp: engine.TopicPartition{Topic: topic, Partition: q}})
		}
		if !mode.UsesShareGroup() {
			continue
		}
		// Every share group has a dead-letter queue (KIP-1191, invariant 14).
		dlq := "dlq-" + name
		if err := e.CreateTopic(dlq, 1); err != nil {
			return err
		}
		gcm := gc
		gcm.DLQTopic = dlq
		if err := e.SetShareGroupConfig(s.groups[m], gcm); err != nil {
			return err
		}
		for q := int32(0); q < p.inParts; q++ {
			s.share[m] = append(s.share[m], &spModel{g: m, group: s.groups[m], tp: s.in[q].tp})
		}
	}
	for m, mode := range modes {
		// What the adapter needs of a mode: the topics above, the group,
		// the transactional ids tx-<mode>-<slot>.
		s.tcfg[m] = targets.Config{InputTopic: inTopic, InputPartitions: p.inParts, OutputTopic: "out-" + string(mode),
			OutputPartitions: p.outParts, Group: s.groups[m], TransactionalIDPrefix: "tx-" + string(mode) + "-",
			TransactionTimeout: p.txnTimeout, LockDuration: p.lock, DeliveryLimit: p.limit, MaxRecordLocks: p.maxLocks}
		if mode.UsesShareGroup() {
			s.tcfg[m].DLQTopic = "dlq-" + string(mode)
		}
		s.ledgers[m] = ledger.New(nil)
		if m == p.checkpoint {
			cp, err := ledger.NewCheckpoints(nil, "sim-"+string(mode), mode, p.cp.SinkFirst)
			if err != nil {
				return err
			}
			s.cps[m] = cp
		}
	}
	prefixes := make([]string, len(modes))
	for m := range modes {
		prefixes[m] = s.tcfg[m].TransactionalIDPrefix
	}
	s.workerTxnPrefixes = strings.Join(prefixes, ",")
	s.classicWant = make([]int64, p.inParts)
	for i := range s.classicWant {
		s.classicWant[i] = -1
	}
	if s.plainIn, err = e.NewProducer(engine.ProducerConfig{Idempotent: true}); err != nil {
		return err
	}
	if s.txnIn, err = e.NewProducer(engine.ProducerConfig{TransactionalID: inTxnID, TransactionTimeout: p.txnTimeout}); err != nil {
		return err
	}
	s.txnIDs = append(s.txnIDs, inTxnID)
	for i := 0; i < numSlots; i++ {
		sl := &slot{s: s, idx: i, mode: i / slotsPerMode, n: i % slotsPerMode}
		if modes[sl.mode].Transactional() {
			sl.tid = s.tcfg[sl.mode].TransactionalIDPrefix + strconv.Itoa(sl.n)
			s.txnIDs = append(s.txnIDs, sl.tid)
		}
		s.slots = append(s.slots, sl)
	}
	sort.Strings(s.txnIDs)
	for _, sl := range s.slots {
		w, err := sl.newWorker()
		if err != nil {
			return err
		}
		sl.cur = w
	}
	return nil
}

// hook is the simulator's engine hook, which the engine target calls after
// its fault runner's (enginetarget.Options.Hook): it fails one staging
// write on demand (KindFailStage). It runs with engine locks held and
// touches only simulator fields.
func (s *sim) hook(pt engine.HookPoint, _ engine.HookInfo) error {
	if pt == engine.HookStageWrite && s.failStage {
		s.failStage = false
		return errStageWrite
	}
	return nil
}

// run executes one scheduled step and checks every invariant after it.
func (s *sim) run(i int, st Step) error {
	s.step = i
	s.begin(fmt.Sprintf("#%d", i))
	s.exec(st)
	return s.end()
}

// begin starts a step: the line of the log, the snapshot the checks
// compare with.
func (s *sim) begin(label string) {
	s.stepNo++
	s.line.Reset()
	fmt.Fprintf(&s.line, "%s t=%s", label, fmtDur(s.clk.Now()))
	s.ev = map[evKey][]event{}
	s.fired = false
	s.restarted, s.coordCrashed = false, false
	s.failover = map[[2]int]bool{}
	s.before = make(map[string]engine.TxnInfo, len(s.txnIDs))
	for _, id := range s.txnIDs {
		if info, ok := s.e.Transaction(id); ok {
			s.before[id] = info
		}
	}
}

// end finishes a step: log it, then run the checks.
func (s *sim) end() error {
	if s.viol == nil {
		s.checkAll()
	}
	if s.viol != nil {
		fmt.Fprintf(&s.line, " !! %s", s.viol.Check)
	}
	s.emit(s.line.String())
	if s.viol != nil {
		return errViolation
	}
	return nil
}

func (s *sim) emit(l string) {
	s.log = append(s.log, l)
	if s.cfg.Log != nil {
		fmt.Fprintln(s.cfg.Log, l)
	}
}

func (s *sim) logf(format string, args ...any) { s.emit(fmt.Sprintf(format, args...)) }

// say appends to the current step's log line.
func (s *sim) say(format string, args ...any) {
	s.line.WriteByte(' ')
	fmt.Fprintf(&s.line, format, args...)
}

// fail records the first violation of the run.
func (s *sim) fail(check vocab.Invariant, format string, args ...any) {
	if s.viol != nil || s.cfg.verifierOnly && !s.verifying {
		return
	}
	s.viol = &Violation{Step: s.step, Check: check, Detail: fmt.Sprintf(format, args...)}
}

// exec performs one step.
func (s *sim) exec(st Step) {
	r := stepRand(st)
	sl := s.slots[st.Slot%numSlots]
	switch st.Kind {
	case KindWork:
		w := sl.cur
		if sl.zombie != nil && r.IntN(3) == 0 {
			w = sl.zombie
		}
		s.say("work %s", w.name)
		w.work(r)
	case KindProduce:
		s.produceInputs(r)
	case KindAdvance:
		s.advance(s.p.advanceBy(r))
	case KindCrash:
		s.say("crash %s at %s", sl.cur.name, sl.cur.phaseName())
		sl.replace(false)
	case KindZombie:
		if !modes[sl.mode].Transactional() {
			s.say("zombie %s: not transactional, nothing to fence", sl.cur.name)
			return
		}
		old := sl.cur
		if sl.zombie != nil {
			sl.zombie.abandon()
		}
		sl.zombie = old
		old.zombie = true
		s.say("zombie %s at %s", old.name, old.phaseName())
		sl.replace(true)
	case KindStall:
		w := sl.cur
		w.stallUntil = s.clk.Now() + s.p.txnTimeout + s.p.sweep + time.Duration(r.Int64N(int64(s.p.lock)))
		s.say("stall %s until %s", w.name, fmtDur(w.stallUntil))
	case KindLeave:
		s.say("leave %s at %s", sl.cur.name, sl.cur.phaseName())
		sl.cur.close()
		sl.replace(false)
	case KindChurn:
		s.churn(sl.mode % (len(modes) - 1))
	case KindPartition:
		s.partition(r)
	case KindFailStage:
		s.failStage = true
		s.say("fail-stage: the next staging write fails")
	case KindRestart, KindCrashEnd, KindCoordinatorCrash, KindFailover:
		s.execDurable(st, r)
	}
}

// advance moves the clock by d and fires due timers.
func (s *sim) advance(d time.Duration) {
	s.clk.Advance(d)
	now := s.clk.Now()
	if now-s.lastSweep >= s.p.sweep {
		s.lastSweep = now
	}
	s.fired = true
	armed := s.armCrash(true)
	s.e.FireTimers()
	if armed {
		s.settleCrash()
	}
	s.say("advance %s", fmtDur(d))
	if s.crashFired != "" {
		// An armed crash struck while the timers delivered markers: the
		// client's end had returned once PREPARE_* was durable, and
		// recovery completes the transaction with that decision.
		where := s.crashFired
		s.crashFired = ""
		s.restart("crash " + where + ", restart")
	}
}

// produceInputs appends input records, plainly or in the input
// transaction.
func (s *sim) produceInputs(r *rand.Rand) {
	part := int32(r.IntN(int(s.p.inParts)))
	n := 1 + r.IntN(4)
	if r.IntN(4) != 0 {
		base, err := s.plainIn.Produce(inTopic, part, s.inputValues(n))
		if err != nil {
			s.fail("sim", "plain input produce failed: %v", err)
			return
		}
		s.in[part].add(base, s.lastIDs(n), nil)
		s.say("produce p%d[%d..%d]", part, base, base+int64(n)-1)
		return
	}
	if s.inOpen != nil && r.IntN(2) == 0 {
		commit := r.IntN(10) < 7
		var err error
		if commit {
			err = s.producerCall(s.txnIn, inTxnID, "commit", s.txnIn.Commit)
		} else {
			err = s.producerCall(s.txnIn, inTxnID, "abort", s.txnIn.Abort)
		}
		s.inOpen.clientEnd(commit, err)
		s.say("input-txn %s: %s", map[bool]string{true: "commit", false: "abort"}[commit], errName(err))
		if engine.ErrorIsFenced(err) {
			s.renewInputProducer()
		}
		return
	}
	if s.inOpen == nil {
		if err := s.producerCall(s.txnIn, inTxnID, "begin", s.txnIn.Begin); err != nil {
			s.say("input-txn begin: %s", errName(err))
			if engine.ErrorIsFenced(err) {
				s.renewInputProducer()
			}
			return
		}
		s.inOpen = s.newTrack(inTxnID, -1)
	}
	var base int64
	err := s.producerCall(s.txnIn, inTxnID, "produce", func() error {
		var err error
		base, err = s.txnIn.Produce(inTopic, part, s.inputValues(n))
		return err
	})
	if err != nil {
		s.say("input-txn produce p%d: %s", part, errName(err))
		if engine.ErrorIsFenced(err) {
			s.renewInputProducer()
		}
		return
	}
	s.inOpen.wrote(s.in[part].tp, base, n)
	s.in[part].add(base, s.lastIDs(n), s.inOpen)
	s.say("input-txn produce p%d[%d..%d]", part, base, base+int64(n)-1)
}

// renewInputProducer replaces the input producer after it was fenced (its
// transaction timed out).
func (s *sim) renewInputProducer() {
	p, err := s.e.NewProducer(engine.ProducerConfig{TransactionalID: inTxnID, TransactionTimeout: s.p.txnTimeout})
	if errors.Is(err, engine.ErrConcurrentTransactions) {
		// The fenced producer's last transaction waits for a marker: the
		// old handle stays, fenced, and the next input step renews again.
		s.say("new input producer waits: %s", errName(err))
		return
	}
	if err != nil {
		s.fail("sim", "new input producer: %v", err)
		return
	}
	s.txnIn = p
}

func (s *sim) inputValues(n int) []engine.ProduceRecord {
	out := make([]engine.ProduceRecord, n)
	for i := range out {
		s.nextID++
		v := make([]byte, ledger.HeaderBytes)
		ledger.PutInputHeader(v, s.nextID, int64(s.clk.Now()))
		out[i] = engine.ProduceRecord{Value: v}
	}
	return out
}

func (s *sim) lastIDs(n int) []uint64 {
	ids := make([]uint64, n)
	for i := range ids {
		ids[i] = s.nextID - uint64(n) + uint64(i) + 1
	}
	return ids
}

// producerCall runs one call of a transactional producer and checks
// invariant 10: a fenced producer is refused, as fenced.
func (s *sim) producerCall(p *engine.Producer, tid, what string, f func() error) error {
	fenced := s.fenced(p, tid)
	err := f()
	switch {
	case fenced && err == nil:
		s.fail(vocab.InvFencing, "%s by fenced producer %s (producer %d epoch %d) succeeded", what, tid, p.ProducerID(), p.Epoch())
	case fenced && !errors.Is(err, engine.ErrProducerFenced):
		s.fail(vocab.InvFencing, "%s by fenced producer %s (producer %d epoch %d) failed, but not as fenced: %v", what, tid, p.ProducerID(), p.Epoch(), err)
	}
	return err
}

// fenced reports whether p is no longer its transactional id's current
// producer.
func (s *sim) fenced(p *engine.Producer, tid string) bool {
	info, ok := s.e.Transaction(tid)
	// While its last transaction's markers are on their way, the producer
	// already holds the epoch the id gets once they are applied.
	return !ok || info.NextProducerID != p.ProducerID() || info.NextEpoch != p.Epoch()
}

// partition cuts the transaction coordinator off from one input or output
// partition's leader for a while (KindPartition), by the engine target's
// network-partition fault naming that one partition: markers for it wait, the
// transactions they belong to stay PREPARE_*, and their producers' next
// transactions wait too, until the clock passes the end.
func (s *sim) partition(r *rand.Rand) {
	var tps []engine.TopicPartition
	for _, ip := range s.in {
		tps = append(tps, ip.tp)
	}
	for m := range s.outs {
		for _, op := range s.outs[m] {
			tps = append(tps, op.tp)
		}
	}
	tp := tps[r.IntN(len(tps))]
	d := s.p.lock/2 + time.Duration(r.IntN(4))*s.p.lock/2
	_, err := s.t.FaultRunner().Apply(vocab.FaultNetworkPartition, map[string]string{"for": d.String(),
		"between": workloads.BetweenCoordinatorParticipant, enginetarget.ParamTopic: tp.Topic, "partition": strconv.Itoa(int(tp.Partition))})
	if err != nil {
		s.fail("sim", "network partition of %s: %v", tp, err)
		return
	}
	s.say("partition: coordinator cut off from %s for %s", tp, fmtDur(d))
}

// churn joins an extra member to share group g, or makes the one that
// joined leave (KindChurn), as the load generator's membership-churn
// fault does: a worker of the adapter's own, with an id past the slots',
// that never polls and leaves by Close. If it is not made to leave its
// session expires, which changes the membership too.
func (s *sim) churn(g int) {
	if w := s.churned[g]; w != nil {
		s.churned[g] = nil
		h, _ := enginetarget.HandlesOf(w)
		if mi := s.members[h.Share.ID()]; mi != nil {
			mi.left, mi.leftStep = true, s.stepNo
		}
		s.say("churn: %s leaves %s: %s", h.Share.ID(), s.groups[g], errName(w.Close(context.Background())))
		return
	}
	s.churns++
	w, err := s.t.NewWorker(context.Background(), s.tcfg[g], modes[g], numSlots+s.churns)
	if err != nil {
		s.say("churn: join %s: %s", s.groups[g], errName(err))
		return
	}
	h, _ := enginetarget.HandlesOf(w)
	s.members[h.Share.ID()] = &memberInfo{lastSeen: s.clk.Now(), leftStep: -2}
	s.churned[g] = w
	s.say("churn: %s joins %s", h.Share.ID(), s.groups[g])
}

// memberEpoch returns a share member's current epoch in group g's
// coordinator, and whether it is still a member.
func (s *sim) memberEpoch(g int, id string) (int32, bool) {
	ms, err := s.e.ShareMembers(s.groups[g])
	if err != nil {
		return 0, false
	}
	for _, m := range ms {
		if m.ID == id {
			return m.Epoch, true
		}
	}
	return 0, false
}

// touch records that a member was seen by the engine now.
func (s *sim) touch(id string) {
	if m := s.members[id]; m != nil {
		m.lastSeen = s.clk.Now()
	}
}

func (s *sim) addEvent(g int, part int32, off int64, ev event) {
	k := evKey{g, part, off}
	s.ev[k] = append(s.ev[k], ev)
}

func fmtDur(d time.Duration) string {
	return fmt.Sprintf("%d.%03ds", d/time.Second, d%time.Second/time.Millisecond)
}

// engineErr strips the adapter's classification (targets.Fenced,
// targets.Abortable) off err, leaving the engine's error it wraps.
func engineErr(err error) error {
	u, ok := err.(interface{ Unwrap() []error })
	if !ok {
		return err
	}
	errs := u.Unwrap()
	if len(errs) < 2 || errs[0] != targets.ErrFenced && errs[0] != targets.ErrAbortable {
		return err
	}
	return errs[len(errs)-1]
}

// errName names an error by its sentinel, so logs stay short and stable.
func errName(err error) string {
	if err == nil {
		return "ok"
	}
	err = engineErr(err)
	if errors.Is(err, engine.ErrAbortableTransaction) {
		if u, ok := err.(interface{ Unwrap() []error }); ok {
			for _, c := range u.Unwrap() {
				if c != engine.ErrAbortableTransaction {
					return "abortable(" + errName(c) + ")"
				}
			}
		}
	}
	var ae *engine.AckError
	if errors.As(err, &ae) {
		tps := make([]engine.TopicPartition, 0, len(ae.Partitions))
		for tp := range ae.Partitions {
			tps = append(tps, tp)
		}
		sort.Slice(tps, func(i, j int) bool { return tps[i].Partition < tps[j].Partition })
		parts := make([]string, len(tps))
		for i, tp := range tps {
			parts[i] = fmt.Sprintf("p%d:%s", tp.Partition, errName(ae.Partitions[tp]))
		}
		return "ack-error(" + strings.Join(parts, ",") + ")"
	}
	for _, x := range []struct {
		err  error
		name string
	}{
		{errStageWrite, "stage-write-failed"},
		{engine.ErrAbortableTransaction, "abortable"},
		{engine.ErrConcurrentTransactions, "concurrent-transactions"},
		{engine.ErrTransactionTimedOut, "timed-out"},
		{engine.ErrProducerFenced, "fenced"},
		{engine.ErrUnknownMember, "unknown-member"},
		{engine.ErrIllegalGeneration, "illegal-generation"},
		{engine.ErrFencedMemberEpoch, "fenced-member-epoch"},
		{engine.ErrNotOwner, "not-owner"},
		{engine.ErrInvalidRecordState, "invalid-record-state"},
		{engine.ErrInvalidRequest, "invalid-request"},
		{engine.ErrOffsetOutOfRange, "out-of-range"},
		{engine.ErrInvalidTxnState, "invalid-txn-state"},
		{engine.ErrUnknownGroup, "unknown-group"},
	} {
		if errors.Is(err, x.err) {
			return x.name
		}
	}
	return err.Error()
}
