// Package enginetarget is the load generator's target for the in-process
// reference engine: it maps the target primitives (poll, produce, ack,
// stage, commit) onto the engine's public API, one share member and one
// producer per worker, exactly as a client library would.
package enginetarget

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"sync"
	"time"

	eng "github.com/sharebench/sharebench/engine"
	"github.com/sharebench/sharebench/loadgen/targets"
	"github.com/sharebench/sharebench/vocab"
)

// Options configures the engine target.
type Options struct {
	// Shards is the engine's lock shard count (0: the engine's default).
	Shards int
	// Knobs selects the KIP-1289 decision knobs (zero: all safe).
	Knobs eng.Knobs
	// RetentionBytes bounds each partition log (0: the engine default).
	RetentionBytes int64
	// SessionTimeout is how long a silent member keeps its session
	// (0: 10s). Kafka's default is 45s; a shorter one lets a run recover
	// from crashed workers within its drain.
	SessionTimeout time.Duration
	// DataDir makes the engine durable (engine.WithDataDir) and enables
	// the target-side faults (FaultRunner). "": in memory.
	DataDir string
	// Flush is the data directory's flush policy (default: always).
	Flush eng.FlushPolicy
	// Clock, when set, is a manual clock the caller advances and whose
	// timers it fires (Engine().FireTimers), one step at a time: the
	// simulator drives the target so. A poll or a reader then returns at
	// once with what is there, since nothing can arrive while a
	// single-threaded caller waits.
	Clock *eng.ManualClock
	// Hook is the caller's engine hook (engine.Hook), composed with the
	// fault runner's: see New.
	Hook eng.Hook
	// Extra engine options, applied last. A hook belongs in Hook: one
	// given here as engine.WithHook replaces the target's, and the fault
	// runner's armed crashes never strike.
	Extra []eng.Option
}

// Target drives an in-process engine.
type Target struct {
	opts   Options
	e      *eng.Engine // replaced only by Setup, between modes (crash.go)
	faults *FaultRunner
	crash  crashState

	mu struct {
		sync.Mutex
		groups map[string]eng.GroupConfig // share group configs not yet applied
		cfg    targets.Config             // of the last Setup (the running mode)
	}
}

// New starts an engine and returns a target over it.
func New(opts Options) (*Target, error) {
	if opts.SessionTimeout <= 0 {
		opts.SessionTimeout = 10 * time.Second
	}
	t := &Target{opts: opts, faults: newFaultRunner(opts.DataDir != "", opts.Clock != nil)}
	t.faults.t = t
	e, err := t.startEngine(opts.DataDir)
	if err != nil {
		return nil, err
	}
	t.e = e
	t.mu.groups = map[string]eng.GroupConfig{}
	return t, nil
}

// startEngine starts an engine with the target's options, durable in dir
// when dir is set.
func (t *Target) startEngine(dir string) (*eng.Engine, error) {
	opts, fr := t.opts, t.faults
	eo := []eng.Option{eng.WithHistory(true)}
	if opts.Shards > 0 {
		eo = append(eo, eng.WithShards(opts.Shards))
	}
	if opts.RetentionBytes > 0 {
		eo = append(eo, eng.WithRetentionBytes(opts.RetentionBytes))
	}
	eo = append(eo, eng.WithKnobs(opts.Knobs))
	eo = append(eo, eng.WithSessionTimeout(opts.SessionTimeout))
	if opts.Clock != nil {
		eo = append(eo, eng.WithClock(opts.Clock))
	}
	if dir != "" {
		eo = append(eo, eng.WithDataDir(dir), eng.WithFlushPolicy(opts.Flush))
	}
	// The engine has one hook. The target's calls the fault runner's
	// first and then, when the runner's armed crash did not strike there,
	// the caller's (Options.Hook): a crash the runner armed is the fault
	// the caller asked for, and the caller's hook still sees every other
	// call (a staging write it fails, for one). Without a data directory
	// the runner arms nothing, so only the caller's hook is installed.
	switch {
	case dir != "" && opts.Hook != nil:
		caller := opts.Hook
		eo = append(eo, eng.WithHook(func(pt eng.HookPoint, info eng.HookInfo) error {
			if err := fr.hook(pt, info); err != nil {
				return err
			}
			return caller(pt, info)
		}))
	case dir != "":
		eo = append(eo, eng.WithHook(fr.hook))
	case opts.Hook != nil:
		eo = append(eo, eng.WithHook(opts.Hook))
	}
	eo = append(eo, opts.Extra...)
	e, err := eng.New(eo...)
	if err != nil {
		return nil, fmt.Errorf("engine target: %w", err)
	}
	return e, nil
}

// AbortSweepInterval returns how often the engine aborts the transactions
// past their timeout: how long one a crashed worker left open may last
// beyond its timeout.
func (t *Target) AbortSweepInterval() time.Duration { return t.e.AbortSweepInterval() }

// Engine returns the engine under the target (for faults and tests).
func (t *Target) Engine() *eng.Engine { return t.e }

// Info describes the target.
func (t *Target) Info() targets.Info {
	notes := []string{fmt.Sprintf("reference engine, %d lock shards", t.e.Shards())}
	if t.opts.DataDir != "" {
		notes = append(notes, fmt.Sprintf("data directory %s, flush %v; %v", t.dataDir(), t.opts.Flush, t.e.Recovery()))
	}
	notes = append(notes, t.crash.notes()...)
	return targets.Info{Target: vocab.TargetEngine, Embedded: true, ReportsAborted: true, DLQAtLeastOnce: t.opts.Knobs.DLQAfterMarker, StoresRecords: true, Notes: notes}
}

// Supports reports that the engine runs every mode.
func (t *Target) Supports(_ context.Context, m vocab.Mode) error {
	if _, err := vocab.ParseMode(string(m)); err != nil {
		return err
	}
	return nil
}

// Setup creates the topics and the share group's configuration.
func (t *Target) Setup(_ context.Context, cfg targets.Config) error {
	if err := t.replaceDown(); err != nil {
		return err
	}
	for _, in := range cfg.Inputs() {
		if err := t.e.CreateTopic(in, cfg.InputPartitions); err != nil {
			return fmt.Errorf("engine target: %w", err)
		}
	}
	if err := t.e.CreateTopic(cfg.OutputTopic, cfg.OutputPartitions); err != nil {
		return fmt.Errorf("engine target: %w", err)
	}
	gc := eng.DefaultGroupConfig()
	if cfg.LockDuration > 0 {
		gc.LockDuration = cfg.LockDuration
	}
	if cfg.DeliveryLimit > 0 {
		gc.DeliveryLimit = cfg.DeliveryLimit
	}
	if cfg.MaxRecordLocks > 0 {
		gc.MaxRecordLocks = cfg.MaxRecordLocks
	}
	gc.AutoOffsetReset = eng.ResetEarliest
	switch cfg.AcquireMode {
	case targets.AcquireRecordLimit:
		gc.AcquireMode = eng.AcquireRecordLimit
	case targets.AcquireBatchOptimized:
		gc.AcquireMode = eng.AcquireBatchOptimized
	case "":
	default:
		return fmt.Errorf("engine target: share.acquire.mode %q (valid: %s, %s)", cfg.AcquireMode, targets.AcquireBatchOptimized, targets.AcquireRecordLimit)
	}
	if cfg.DLQTopic != "" {
		// The dead-letter topic has as many partitions as the input, so
		// each copy lands on the partition of its source.
		if err := t.e.CreateTopic(cfg.DLQTopic, cfg.InputPartitions); err != nil {
			return fmt.Errorf("engine target: dead-letter topic: %w", err)
		}
		gc.DLQTopic, gc.DLQCopyRecord = cfg.DLQTopic, cfg.DLQCopyRecord
	}
	t.mu.Lock()
	t.mu.groups[cfg.Group] = gc
	t.mu.cfg = cfg
	t.mu.Unlock()
	t.faults.Disarm() // a crash armed in the previous mode never struck
	return nil
}

// shareGroup configures a share group on first use: Setup cannot, since the
// same group id serves a classic group in classic-eos mode.
func (t *Target) shareGroup(group string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	gc, pending := t.mu.groups[group]
	if !pending {
		return nil
	}
	delete(t.mu.groups, group)
	if err := t.e.SetShareGroupConfig(group, gc); err != nil {
		return fmt.Errorf("engine target: %w", err)
	}
	return nil
}

// Pending counts input records that are not yet terminal: in flight in the
// share group's window or never acquired (for a classic group: beyond the
// committed offset). The load generator drains until it is zero.
func (t *Target) Pending(ctx context.Context, cfg targets.Config) (int64, error) {
	return retryRestart(ctx, t, func() (int64, error) { return t.pending(cfg) })
}

func (t *Target) pending(cfg targets.Config) (int64, error) {
	var n int64
	for _, tp := range inputPartitions(cfg) {
		_, hw, _, err := t.e.Offsets(tp)
		if err != nil {
			return 0, err
		}
		info, err := t.e.SharePartition(cfg.Group, tp)
		switch {
		case errors.Is(err, eng.ErrUnknownGroup):
			committed, _ := t.e.CommittedOffset(cfg.Group, tp)
			n += hw - committed
		case err != nil:
			return 0, err
		default:
			n += int64(info.InFlight) + hw - info.End
		}
	}
	return n, nil
}

// Teardown deletes the mode's topics, freeing their records (durably with
// a data directory: the deletion is journaled).
func (t *Target) Teardown(_ context.Context, cfg targets.Config) error {
	err := t.e.DeleteTopic(cfg.OutputTopic)
	for _, in := range cfg.Inputs() {
		err = errors.Join(err, t.e.DeleteTopic(in))
	}
	if cfg.DLQTopic != "" {
		err = errors.Join(err, t.e.DeleteTopic(cfg.DLQTopic))
	}
	return err
}

// LockExpiries counts acquisition locks that expired, engine-wide.
func (t *Target) LockExpiries() int64 { return t.e.Stats().Share.LockExpiries }

// Close stops the engine.
func (t *Target) Close() error { return t.e.Close() }

// --- producers ---

type producer struct {
	t    *Target
	p    *eng.Producer
	next int32
}

// NewProducer returns an idempotent producer of input records.
func (t *Target) NewProducer(_ context.Context, cfg targets.Config, id int) (targets.Producer, error) {
	p, err := t.e.NewProducer(eng.ProducerConfig{Idempotent: true})
	if err != nil {
		return nil, err
	}
	return &producer{t: t, p: p, next: int32(id)}, nil
}

func (p *producer) Produce(_ context.Context, recs []*targets.Record) error {
	return produceGrouped(p.p, recs, &p.next, p.t)
}

func (p *producer) Close() error { return nil }

// produceGrouped produces recs partition by partition (round-robin for
// records without a partition), setting each record's offset.
func produceGrouped(p *eng.Producer, recs []*targets.Record, next *int32, t *Target) error {
	if len(recs) == 0 {
		return nil
	}
	topic := recs[0].Topic
	n, err := retryRestart(context.Background(), t, func() (int32, error) { return t.e.Partitions(topic) })
	if err != nil {
		return err
	}
	byPart := map[int32][]*targets.Record{}
	var order []int32
	for _, r := range recs {
		if r.Topic != topic {
			return fmt.Errorf("engine target: one produce call spans topics %q and %q", topic, r.Topic)
		}
		if r.Partition < 0 || r.Partition >= n {
			r.Partition = *next % n
			*next++
		}
		if _, ok := byPart[r.Partition]; !ok {
			order = append(order, r.Partition)
		}
		byPart[r.Partition] = append(byPart[r.Partition], r)
	}
	for _, part := range order {
		rs := byPart[part]
		batch := make([]eng.ProduceRecord, len(rs))
		for i, r := range rs {
			batch[i] = eng.ProduceRecord{Key: r.Key, Value: r.Value}
		}
		base, err := p.Produce(topic, part, batch)
		if errors.Is(err, eng.ErrCrashed) && p.TransactionalID() == "" {
			// An engine restart (a fault) struck: a produce that failed
			// with ErrCrashed did not become durable, so sending it again
			// after the restart writes it once. (A transactional producer's
			// transaction is aborted instead, by the worker.)
			base, err = retryRestart(context.Background(), t, func() (int64, error) { return p.Produce(topic, part, batch) })
		}
		if err != nil {
			return err
		}
		for i, r := range rs {
			r.Offset = base + int64(i)
		}
	}
	return nil
}

// --- workers ---

type worker struct {
	t    *Target
	cfg  targets.Config
	mode vocab.Mode
	id   int

	share   *eng.ShareMember
	classic *eng.ClassicMember
	txn     *eng.Producer // transactional modes
	plain   *eng.Producer // non-transactional outputs
	next    int32
}

// waitInputs waits until any input topic changes, at most pollWait. The
// engine signals each topic on its own channel, so with several topics
// the wait selects on all of them: a record on any wakes the worker at
// once.
func (w *worker) waitInputs(ctx context.Context) error {
	inputs := w.cfg.Inputs()
	if len(inputs) == 1 {
		return w.t.e.WaitTopic(ctx, inputs[0], pollWait)
	}
	cases := make([]reflect.SelectCase, 0, len(inputs)+2)
	for _, in := range inputs {
		ch, err := w.t.e.Notify(in)
		if err != nil {
			return err
		}
		cases = append(cases, reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(ch)})
	}
	timer := time.NewTimer(pollWait)
	defer timer.Stop()
	cases = append(cases,
		reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(timer.C)},
		reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(ctx.Done())})
	if i, _, _ := reflect.Select(cases); i == len(cases)-1 {
		return ctx.Err()
	}
	return nil
}

// NewWorker joins the group in the mode's acknowledgement mode and creates
// the worker's producer; a transactional producer's id is
// TransactionalIDPrefix+id, so a replacement fences its crashed predecessor.
func (t *Target) NewWorker(_ context.Context, cfg targets.Config, m vocab.Mode, id int) (targets.Worker, error) {
	w := &worker{t: t, cfg: cfg, mode: m, id: id, next: int32(id)}
	var err error
	if m.UsesShareGroup() {
		if err := t.shareGroup(cfg.Group); err != nil {
			return nil, err
		}
	}
	switch m {
	case vocab.Implicit:
		w.share, err = t.e.JoinShareGroup(cfg.Group, cfg.Inputs(), eng.AckImplicit)
	case vocab.Explicit, vocab.Deferred:
		w.share, err = t.e.JoinShareGroup(cfg.Group, cfg.Inputs(), eng.AckExplicit)
	case vocab.Transactional:
		w.share, err = t.e.JoinShareGroup(cfg.Group, cfg.Inputs(), eng.AckTransactional)
	case vocab.ClassicEOS:
		w.classic, err = t.e.JoinClassicGroup(cfg.Group, cfg.Inputs(), eng.ResetEarliest)
	default:
		return nil, fmt.Errorf("engine target: %w: mode %q", targets.ErrUnsupported, m)
	}
	if err != nil {
		return nil, err
	}
	if m.Transactional() {
		w.txn, err = t.e.NewProducer(eng.ProducerConfig{TransactionalID: cfg.TransactionalIDPrefix + strconv.Itoa(id), TransactionTimeout: cfg.TransactionTimeout})
	} else {
		w.plain, err = t.e.NewProducer(eng.ProducerConfig{Idempotent: true})
	}
	if err != nil {
		return nil, err
	}
	return w, nil
}

// pollWait bounds one wait for new records, so lock expiries driven by the
// timer goroutine are seen even when no topic change is signalled.
const pollWait = 20 * time.Millisecond

func (w *worker) pollRaw(ctx context.Context, max int) ([]*targets.Record, error) {
	for {
		var recs []eng.Record
		var err error
		if w.share != nil {
			recs, err = w.share.Poll(max)
		} else {
			recs, err = w.classic.Poll(max)
		}
		if err != nil {
			return nil, err
		}
		if len(recs) > 0 {
			out := make([]*targets.Record, len(recs))
			backing := make([]targets.Record, len(recs))
			for i := range recs {
				r := &recs[i]
				backing[i] = targets.Record{Topic: r.Topic, Partition: r.Partition, Offset: r.Offset, Key: r.Key, Value: r.Value, DeliveryCount: r.DeliveryCount}
				out[i] = &backing[i]
			}
			return out, nil
		}
		if w.t.opts.Clock != nil {
			return nil, nil
		}
		if err := w.waitInputs(ctx); err != nil {
			return nil, nil // ctx done: an empty poll, as a consumer's would be
		}
	}
}

func (w *worker) produceRaw(_ context.Context, recs []*targets.Record) error {
	p := w.plain
	if w.txn != nil {
		p = w.txn
	}
	return produceGrouped(p, recs, &w.next, w.t)
}

// acks turns records into per-partition ranges of consecutive offsets.
func acks(recs []*targets.Record, t eng.AckType) []eng.Acknowledgement {
	return eng.AckRanges(recs, func(r *targets.Record) (string, int32, int64) { return r.Topic, r.Partition, r.Offset }, t)
}

func ackType(t vocab.AckType) (eng.AckType, error) {
	switch t {
	case vocab.AckAccept:
		return eng.AckAccept, nil
	case vocab.AckReject:
		return eng.AckReject, nil
	case vocab.AckRelease:
		return eng.AckRelease, nil
	case vocab.AckGap:
		return eng.AckGap, nil
	case vocab.AckRenew:
		return eng.AckRenew, nil
	}
	return 0, fmt.Errorf("engine target: unknown ack type %d", t)
}

func (w *worker) ackRaw(_ context.Context, recs []*targets.Record, t vocab.AckType) error {
	if w.share == nil {
		return fmt.Errorf("engine target: %w: ack in mode %s", targets.ErrUnsupported, w.mode)
	}
	at, err := ackType(t)
	if err != nil {
		return err
	}
	noop, err := w.share.AcknowledgeReport(acks(recs, at))
	return refused(recs, noop, err)
}

// errNoOp is the cause of a refusal of acknowledgements the engine answered
// as no-op successes (records below the share-partition start offset,
// terminal before the call).
var errNoOp = fmt.Errorf("engine target: %w: below the share-partition start offset, terminal already (a no-op)", eng.ErrInvalidRecordState)

// refused turns what AcknowledgeReport said into the per-record answer
// targets.Worker.Ack gives: the records of the partitions that failed and
// those the engine answered with a no-op are refused (a
// *targets.RefusedError wrapping err); any other error fails the call.
func refused(recs []*targets.Record, noop []eng.Acknowledgement, err error) error {
	var ae *eng.AckError
	if err != nil && !errors.As(err, &ae) {
		return err
	}
	if err == nil && len(noop) == 0 {
		return nil
	}
	var idx []int
	for i, r := range recs {
		tp := eng.TopicPartition{Topic: r.Topic, Partition: r.Partition}
		if ae != nil && ae.Partitions[tp] != nil {
			idx = append(idx, i)
			continue
		}
		for _, a := range noop {
			if a.Topic == r.Topic && a.Partition == r.Partition && a.First <= r.Offset && r.Offset <= a.Last {
				idx = append(idx, i)
				break
			}
		}
	}
	cause := err
	if cause == nil {
		cause = errNoOp
	} else if len(noop) > 0 {
		cause = errors.Join(err, errNoOp)
	}
	return &targets.RefusedError{Refused: idx, Err: cause}
}

func (w *worker) renewRaw(ctx context.Context, recs []*targets.Record) error {
	return w.ackRaw(ctx, recs, vocab.AckRenew)
}

func (w *worker) beginRaw(context.Context) error {
	if w.txn == nil {
		return fmt.Errorf("engine target: %w: transactions in mode %s", targets.ErrUnsupported, w.mode)
	}
	return w.txn.Begin()
}

func (w *worker) stageAcksRaw(_ context.Context, recs []*targets.Record, t vocab.AckType) error {
	switch {
	case w.txn == nil:
		return fmt.Errorf("engine target: %w: staging in mode %s", targets.ErrUnsupported, w.mode)
	case w.classic != nil:
		offsets := map[eng.TopicPartition]int64{}
		for _, r := range recs {
			tp := eng.TopicPartition{Topic: r.Topic, Partition: r.Partition}
			if r.Offset+1 > offsets[tp] {
				offsets[tp] = r.Offset + 1
			}
		}
		return w.txn.SendOffsetsToTransaction(offsets, w.classic.Metadata())
	default:
		at, err := ackType(t)
		if err != nil {
			return err
		}
		return w.txn.SendShareAcksToTransaction(acks(recs, at), w.share.Metadata())
	}
}

func (w *worker) commitRaw(context.Context) error {
	if w.txn == nil {
		return fmt.Errorf("engine target: %w: commit in mode %s", targets.ErrUnsupported, w.mode)
	}
	return w.txn.Commit()
}

func (w *worker) abortRaw(context.Context) error {
	if w.txn == nil {
		return fmt.Errorf("engine target: %w: abort in mode %s", targets.ErrUnsupported, w.mode)
	}
	err := w.txn.Abort()
	if err == nil && w.classic != nil {
		// A classic consumer rewinds to the committed offsets after an
		// abort so the aborted records are consumed again.
		err = w.classic.Rewind()
	}
	return err
}

// classify marks the engine errors after which a worker must be replaced
// (a fenced or timed-out producer, a member no longer in its group) as
// targets.ErrFenced, and a share-group staging failure that left the
// transaction abortable (the worker aborts and goes on; a stale member
// epoch is learned on the next poll) as targets.ErrAbortable.
func classify(err error) error {
	if errors.Is(err, eng.ErrAbortableTransaction) && !errors.Is(err, eng.ErrProducerFenced) &&
		!errors.Is(err, eng.ErrUnknownMember) && !errors.Is(err, eng.ErrIllegalGeneration) {
		return targets.Abortable(err, errors.Is(err, eng.ErrFencedMemberEpoch))
	}
	if eng.ErrorIsFenced(err) || errors.Is(err, eng.ErrTransactionTimedOut) {
		return targets.Fenced(err)
	}
	return err
}

func (w *worker) Poll(ctx context.Context, max int) ([]*targets.Record, error) {
	recs, err := w.pollRaw(ctx, max)
	return recs, classify(err)
}

func (w *worker) Produce(ctx context.Context, recs []*targets.Record) error {
	return classify(w.produceRaw(ctx, recs))
}

func (w *worker) Ack(ctx context.Context, recs []*targets.Record, t vocab.AckType) error {
	return classify(w.ackRaw(ctx, recs, t))
}

func (w *worker) Renew(ctx context.Context, recs []*targets.Record) error {
	return classify(w.renewRaw(ctx, recs))
}

func (w *worker) Begin(ctx context.Context) error { return classify(w.beginRaw(ctx)) }

func (w *worker) StageAcks(ctx context.Context, recs []*targets.Record, t vocab.AckType) error {
	return classify(w.stageAcksRaw(ctx, recs, t))
}

func (w *worker) Commit(ctx context.Context) error { return classify(w.commitRaw(ctx)) }

func (w *worker) Abort(ctx context.Context) error { return classify(w.abortRaw(ctx)) }

// Handles are the engine clients behind a worker of this target: what an
// observer that checks the engine's rules beside the worker (the
// simulator) reads, never calls through.
type Handles struct {
	Share   *eng.ShareMember   // share-group modes
	Classic *eng.ClassicMember // classic-eos
	Txn     *eng.Producer      // transactional modes
}

// HandlesOf returns the engine clients of w, a worker of an engine
// target (false for any other worker).
func HandlesOf(w targets.Worker) (Handles, bool) {
	ew, ok := w.(*worker)
	if !ok {
		return Handles{}, false
	}
	return Handles{Share: ew.share, Classic: ew.classic, Txn: ew.txn}, true
}

func (w *worker) TxnInfo() (string, int16) {
	if w.txn == nil {
		return "", -1
	}
	return w.txn.TransactionalID(), w.txn.Epoch()
}

// Crash abandons the member and producer without a word: the member's
// locks expire (or its session times out) and the next producer with the
// same transactional id fences this one and aborts its transaction.
func (w *worker) Crash() {}

func (w *worker) Close(context.Context) error {
	var err error
	if w.mode == vocab.Implicit && w.share != nil {
		// Closing an implicit consumer commits the acknowledgements of its
		// last poll, as Kafka's close does; a zero-record poll does that.
		_, err = w.share.Poll(0)
	}
	if w.txn != nil {
		err = w.txn.Abort()
	}
	if w.share != nil {
		err = errors.Join(err, w.share.Leave())
	}
	if w.classic != nil {
		err = errors.Join(err, w.classic.Leave())
	}
	if eng.ErrorIsFenced(err) {
		return nil // replaced already: nothing left to close
	}
	return err
}

// --- readers ---

type reader struct {
	t     *Target
	topic string
	iso   eng.IsolationLevel
	// markers: a marker reader (NewMarkerReader) keeps transaction
	// markers and reads read_uncommitted.
	markers bool
	mu      sync.Mutex
	pos     []int64
}

// NewReader tails a topic from its start.
func (t *Target) NewReader(_ context.Context, _ targets.Config, topic string, readCommitted bool) (targets.Reader, error) {
	n, err := t.e.Partitions(topic)
	if err != nil {
		return nil, err
	}
	r := &reader{t: t, topic: topic, pos: make([]int64, n)}
	if readCommitted {
		r.iso = eng.ReadCommitted
	}
	return r, nil
}

const readerBatch = 4096

func (r *reader) Poll(ctx context.Context) ([]*targets.Record, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for attempt := 0; ; attempt++ {
		var out []*targets.Record
		for p := range r.pos {
			tp := eng.TopicPartition{Topic: r.topic, Partition: int32(p)}
			var recs []eng.Record
			var next int64
			var err error
			if r.markers {
				recs, next, err = r.fetchMarkers(tp)
			} else {
				recs, next, err = r.t.e.Fetch(tp, r.pos[p], readerBatch, r.iso)
			}
			if errors.Is(err, eng.ErrCrashed) {
				// The engine is restarting (a fault): what is committed is
				// durable and will be read after the restart.
				r.t.awaitRestart(ctx)
				return out, nil
			}
			if err != nil {
				return out, err
			}
			r.pos[p] = next
			for i := range recs {
				rec := &recs[i]
				out = append(out, toTarget(r.topic, rec))
			}
		}
		if len(out) > 0 || attempt > 0 || r.t.opts.Clock != nil {
			return out, nil
		}
		if err := r.t.e.WaitTopic(ctx, r.topic, pollWait); err != nil {
			return nil, nil
		}
	}
}

// Positions returns the offset each partition's next fetch starts from:
// the engine's fetch moves past aborted records and markers it does not
// return.
func (r *reader) Positions() map[int32]int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[int32]int64, len(r.pos))
	for p, o := range r.pos {
		out[int32(p)] = o
	}
	return out
}

func (r *reader) Close() error { return nil }

// EndOffsets returns each partition's last stable offset (read_committed)
// or high watermark.
func (t *Target) EndOffsets(ctx context.Context, _ targets.Config, topic string, readCommitted bool) (map[int32]int64, error) {
	return retryRestart(ctx, t, func() (map[int32]int64, error) {
		n, err := t.e.Partitions(topic)
		if err != nil {
			return nil, err
		}
		out := make(map[int32]int64, n)
		for p := range n {
			_, hw, lso, err := t.e.Offsets(eng.TopicPartition{Topic: topic, Partition: int32(p)})
			if err != nil {
				return nil, err
			}
			out[int32(p)] = hw
			if readCommitted {
				out[int32(p)] = lso
			}
		}
		return out, nil
	})
}

// Inspect reports every input record's final share state from the engine's
// introspection (the engine keeps history, so records below SPSO are
// known).
func (t *Target) Inspect(ctx context.Context, cfg targets.Config) (*targets.ShareState, error) {
	return retryRestart(ctx, t, func() (*targets.ShareState, error) { return t.inspect(cfg) })
}

func (t *Target) inspect(cfg targets.Config) (*targets.ShareState, error) {
	st := &targets.ShareState{SPSO: map[int32]int64{}}
	for _, tp := range inputPartitions(cfg) {
		// The ledger numbers partitions across the input topics.
		p := cfg.GlobalPartition(tp.Topic, tp.Partition)
		_, hw, _, err := t.e.Offsets(tp)
		if err != nil {
			return nil, err
		}
		info, err := t.e.SharePartition(cfg.Group, tp)
		if err != nil {
			if errors.Is(err, eng.ErrUnknownGroup) {
				// A classic group (classic-eos): records below the committed
				// offset are done, the rest are not.
				committed, _ := t.e.CommittedOffset(cfg.Group, tp)
				st.SPSO[p] = committed
				for o := int64(0); o < hw; o++ {
					state := vocab.StateAvailable
					if o < committed {
						state = vocab.StateAcknowledged
					}
					st.Records = append(st.Records, targets.RecordState{Partition: p, Offset: o, State: state})
				}
				continue
			}
			return nil, err
		}
		st.SPSO[p] = info.SPSO
		for o := int64(0); o < hw; o++ {
			ri, err := t.e.ShareRecord(cfg.Group, tp, o)
			if err != nil {
				return nil, err
			}
			st.Records = append(st.Records, targets.RecordState{
				Partition: p, Offset: o, State: recordState(ri.State), DeliveryCount: ri.DeliveryCount,
				Rejected: ri.State == eng.StateArchived && ri.Reason == eng.ReasonRejected,
			})
		}
	}
	return st, nil
}

// inputPartitions lists every partition of every input topic.
func inputPartitions(cfg targets.Config) []eng.TopicPartition {
	var out []eng.TopicPartition
	for _, in := range cfg.Inputs() {
		for p := int32(0); p < cfg.InputPartitions; p++ {
			out = append(out, eng.TopicPartition{Topic: in, Partition: p})
		}
	}
	return out
}

// ResumeTransaction finishes the transaction producer pid at epoch of
// transactional id tid left open (see targets.TxnResumer).
func (t *Target) ResumeTransaction(_ context.Context, cfg targets.Config, tid string, pid int64, epoch int16, commit bool) error {
	p, err := t.e.ResumeProducer(eng.ProducerConfig{TransactionalID: tid, TransactionTimeout: cfg.TransactionTimeout}, pid, epoch)
	if err != nil {
		return classify(err)
	}
	if commit {
		return classify(p.Commit())
	}
	return classify(p.Abort())
}

// recordState is the engine's record state in the ledgers' vocabulary,
// which spells every state as the engine prints it.
func recordState(s eng.RecordState) vocab.RecordState { return vocab.RecordState(s.String()) }
