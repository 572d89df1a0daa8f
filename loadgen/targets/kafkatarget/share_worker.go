// This file holds the share-group worker of the implicit, explicit and
// deferred modes: a kgo share consumer, plus a producer client for outputs
// (transactional in deferred mode), both dialing through one dialer so Crash
// cuts them together.

package kafkatarget

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sharebench/sharebench/loadgen/targets"
	"github.com/sharebench/sharebench/vocab"
)

// shareFetchMaxWait is how long a ShareFetch may wait at the broker for
// records. While one is in flight kgo cannot send acks (kgo's documented
// limit), so it bounds the added latency of an explicit ack; kgo's own share
// default is 500ms.
const shareFetchMaxWait = 100 * time.Millisecond

// minConnIdle is the least idle time before kgo closes a connection. A share
// session lives on its connection and the broker releases every record the
// session holds when the connection closes, so an idle reap must never come
// before the lock expires on its own (kgo's default is 30s).
const minConnIdle = 60 * time.Second

// epochTimeout bounds the producer-epoch lookup after a transaction ends.
const epochTimeout = 2 * time.Second

// NewWorker returns a worker of mode m. Deferred and classic-eos workers own a
// transactional producer with id cfg.TransactionalIDPrefix+id, initialised
// here so that a replacement fences its crashed predecessor at once.
// Transactional mode returns the error of Supports.
func (t *Target) NewWorker(ctx context.Context, cfg targets.Config, m vocab.Mode, id int) (targets.Worker, error) {
	if err := validateConfig(cfg); err != nil {
		return nil, err
	}
	switch m {
	case vocab.Implicit, vocab.Explicit, vocab.Deferred:
		return classified(t.newShareWorker(ctx, cfg, m, id))
	case vocab.ClassicEOS:
		return classified(t.newEOSWorker(ctx, cfg, id))
	case vocab.Transactional:
		if err := t.Supports(ctx, m); err != nil {
			return nil, err
		}
		if n := len(cfg.Inputs()); n > 1 {
			return nil, fmt.Errorf("kafka: %w: the transactional mode's own share fetch reads one input topic, not %d; run it with topics: 1, or on the engine target", targets.ErrUnsupported, n)
		}
		resp := t.versions
		if resp == nil {
			var err error
			if resp, err = t.apiVersions(ctx); err != nil {
				return nil, err
			}
		}
		return classified(t.newTxnWorker(ctx, cfg, id, txnShareAckKey(resp)))
	}
	return nil, fmt.Errorf("kafka: unknown mode %q (valid: implicit, explicit, deferred, transactional, classic-eos)", m)
}

// defaultMaxPoll is the poll size when Config.MaxPollRecords is unset
// (kgo's and Kafka's default share fetch size).
const defaultMaxPoll = 500

func maxPoll(cfg targets.Config) int {
	if cfg.MaxPollRecords > 0 {
		return cfg.MaxPollRecords
	}
	return defaultMaxPoll
}

// transactionalID is the id a worker's transactional producer uses.
func transactionalID(cfg targets.Config, id int) string {
	prefix := cfg.TransactionalIDPrefix
	if prefix == "" {
		prefix = cfg.Group + "-"
	}
	return prefix + strconv.Itoa(id)
}

// shareWorker implements targets.Worker for the share-group modes. Its
// methods run on one goroutine (the targets.Worker contract); lifecycle
// says how it ends.
type shareWorker struct {
	lifecycle
	mode vocab.Mode
	cfg  targets.Config
	d    *dialer
	cons *kgo.Client
	prod *kgo.Client
	pb   produceBuf

	txnID string // deferred only
	epoch int16
	pid   int64
	inTxn bool

	// pending holds the records of the last poll that have not had a
	// terminal ack. In explicit and deferred mode, Poll releases them
	// before polling again, so kgo's auto-accept of the previous poll
	// never marks a record done that the caller did not ack.
	pending      map[*kgo.Record]struct{}
	releaseNoted bool

	// ackErrs collects the per-partition errors the broker reports for
	// acks (kgo's ShareAckCallback runs on a kgo goroutine).
	ackMu   sync.Mutex
	ackErrs []kgo.ShareAckResult
}

func (t *Target) newShareWorker(ctx context.Context, cfg targets.Config, m vocab.Mode, id int) (*shareWorker, error) {
	w := &shareWorker{lifecycle: lifecycle{t: t}, mode: m, cfg: cfg, d: t.conn.newDialer(), epoch: -1}
	w.worker = w
	name := string(m) + "-worker-" + strconv.Itoa(id)
	copts := append(t.conn.clientOpts(w.d, name),
		kgo.ShareGroup(cfg.Group),
		kgo.ConsumeTopics(cfg.Inputs()...),
		kgo.ShareAckCallback(w.onAcks),
		kgo.FetchMaxWait(shareFetchMaxWait),
		kgo.ConnIdleTimeout(max(minConnIdle, 2*cfg.LockDuration)),
		// Acquire only while Poll runs, at most one poll's worth: a
		// prefetched record would sit locked in this client, out of
		// reach of the group's other members, and its lock would run
		// before the caller ever saw it.
		kgo.ShareMaxRecords(int32(min(maxPoll(cfg), 1<<30))),
	)
	if t.fetch > 0 {
		copts = append(copts, kgo.FetchMaxPartitionBytes(t.fetch))
	}
	// record_limit (KIP-1206) unless the workload asks for Kafka's
	// default, batch_optimized, which may acquire whole batches past the
	// poll's max.
	if cfg.AcquireMode != targets.AcquireBatchOptimized {
		copts = append(copts, kgo.ShareMaxRecordsStrict())
	}
	cons, err := kgo.NewClient(copts...)
	if err != nil {
		return nil, wrapNewClient("share consumer", err)
	}
	popts := append(t.conn.clientOpts(w.d, name+"-out"),
		kgo.DefaultProduceTopic(cfg.OutputTopic),
		kgo.ProducerLinger(0),
	)
	if m == vocab.Deferred {
		w.txnID = transactionalID(cfg, id)
		popts = append(popts, kgo.TransactionalID(w.txnID))
		if cfg.TransactionTimeout > 0 {
			popts = append(popts, kgo.TransactionTimeout(cfg.TransactionTimeout))
		}
	}
	prod, err := kgo.NewClient(popts...)
	if err != nil {
		cons.Close()
		return nil, wrapNewClient("output producer", err)
	}
	w.cons, w.prod = cons, prod
	if m == vocab.Deferred {
		// InitProducerID now: it fences a crashed predecessor with the
		// same transactional id and aborts its open transaction.
		pid, epoch, err := t.initProducerID(ctx, prod)
		if err != nil {
			w.shutdown(ctx, true)
			return nil, fmt.Errorf("kafka: initializing transactional id %s: %w", w.txnID, err)
		}
		w.epoch, w.pid = epoch, pid
	}
	if err := w.register(); err != nil {
		w.shutdown(ctx, true)
		return nil, err
	}
	return w, nil
}

func (w *shareWorker) onAcks(_ *kgo.Client, rs kgo.ShareAckResults) {
	w.ackMu.Lock()
	defer w.ackMu.Unlock()
	for _, r := range rs {
		if r.Err != nil {
			w.ackErrs = append(w.ackErrs, r)
		}
	}
}

// ackTP names a partition of an acknowledgement.
type ackTP struct {
	t string
	p int32
}

// takeAckErrs returns and forgets the ack errors reported so far for the
// partitions of krs, with the set of those partitions (errors of other
// partitions belong to earlier background acks and are dropped).
func (w *shareWorker) takeAckErrs(krs []*kgo.Record) (map[ackTP]bool, []error) {
	w.ackMu.Lock()
	got := w.ackErrs
	w.ackErrs = nil
	w.ackMu.Unlock()
	if len(got) == 0 {
		return nil, nil
	}
	mine := make(map[ackTP]bool)
	for _, r := range krs {
		mine[ackTP{r.Topic, r.Partition}] = true
	}
	var errs []error
	bad := make(map[ackTP]bool)
	for _, r := range got {
		if mine[ackTP{r.Topic, r.Partition}] {
			bad[ackTP{r.Topic, r.Partition}] = true
			errs = append(errs, fmt.Errorf("%s/%d: %w", r.Topic, r.Partition, r.Err))
		}
	}
	return bad, dedupErrs(errs)
}

// Poll acquires up to max records (cfg.MaxPollRecords when max <= 0). In
// implicit mode kgo first accepts the previous poll's records; in explicit
// and deferred mode the records of the previous poll that were not acked
// are released first (see pending).
func (w *shareWorker) Poll(ctx context.Context, max int) ([]*targets.Record, error) {
	if w.done.Load() {
		return nil, errWorkerClosed
	}
	if w.mode != vocab.Implicit {
		w.releasePending()
	}
	if max <= 0 {
		max = maxPoll(w.cfg)
	}
	fetches := w.cons.PollRecords(ctx, max)
	n := fetches.NumRecords()
	var recs []*targets.Record
	if n > 0 {
		recs = make([]*targets.Record, 0, n)
	}
	var slab recordSlab
	clear(w.pending)
	fetches.EachRecord(func(r *kgo.Record) {
		recs = append(recs, slab.fromKgo(r, n))
		if w.pending == nil {
			w.pending = make(map[*kgo.Record]struct{})
		}
		w.pending[r] = struct{}{}
	})
	if len(recs) == 0 {
		if err := pollErr(ctx, fetches); err != nil {
			return nil, err
		}
	}
	return recs, nil
}

// releasePending releases the records of the last poll that have no terminal
// ack; the release rides on the next ShareFetch.
func (w *shareWorker) releasePending() {
	if len(w.pending) == 0 {
		return
	}
	krs := make([]*kgo.Record, 0, len(w.pending))
	for r := range w.pending {
		krs = append(krs, r)
	}
	w.cons.MarkAcks(kgo.AckRelease, krs...)
	clear(w.pending)
	if !w.releaseNoted {
		w.releaseNoted = true
		w.t.note(fmt.Sprintf("a %s worker polled again without acknowledging every record of its previous poll: the target released them (kgo would otherwise accept them)", w.mode))
	}
}

// Produce writes output records (to cfg.OutputTopic unless a record names its
// topic). In deferred mode it must run inside a transaction.
func (w *shareWorker) Produce(ctx context.Context, recs []*targets.Record) error {
	if w.done.Load() {
		return errWorkerClosed
	}
	if w.mode == vocab.Deferred && !w.inTxn {
		return errors.New("kafka: a deferred worker produces inside a transaction: call Begin first")
	}
	return produceSync(ctx, w.prod, &w.pb, recs, w.cfg.OutputTopic)
}

// Ack acknowledges recs with type t and waits until the broker answered,
// returning the errors it reported for their partitions.
func (w *shareWorker) Ack(ctx context.Context, recs []*targets.Record, t vocab.AckType) error {
	var status kgo.AckStatus
	switch t {
	case vocab.AckAccept:
		status = kgo.AckAccept
	case vocab.AckRelease:
		status = kgo.AckRelease
	case vocab.AckReject:
		status = kgo.AckReject
	case vocab.AckRenew:
		return w.Renew(ctx, recs)
	default:
		return fmt.Errorf("kafka: cannot ack with type %s (valid: accept, release, reject, renew)", t)
	}
	return w.ack(ctx, recs, status)
}

// Renew extends the acquisition locks of recs (KIP-1222, Kafka 4.2+).
func (w *shareWorker) Renew(ctx context.Context, recs []*targets.Record) error {
	return w.ack(ctx, recs, kgo.AckRenew)
}

func (w *shareWorker) ack(ctx context.Context, recs []*targets.Record, status kgo.AckStatus) error {
	if w.done.Load() {
		return errWorkerClosed
	}
	if len(recs) == 0 {
		return nil
	}
	krs, err := handles(recs)
	if err != nil {
		return err
	}
	for _, r := range krs {
		if _, ok := w.pending[r]; !ok {
			return fmt.Errorf("kafka: cannot %s record %s/%d@%d: it is not held from this worker's last poll (already acknowledged, released by a later poll, or polled by another worker)", status, r.Topic, r.Partition, r.Offset)
		}
	}
	_, _ = w.takeAckErrs(nil) // drop errors of earlier background acks
	w.cons.MarkAcks(status, krs...)
	if status != kgo.AckRenew {
		for _, r := range krs {
			delete(w.pending, r)
		}
	}
	if err := w.cons.FlushAcks(ctx); err != nil {
		return fmt.Errorf("kafka: waiting for the broker to take %d %s acks: %w", len(krs), status, err)
	}
	bad, errs := w.takeAckErrs(krs)
	if len(errs) == 0 {
		return nil
	}
	err = fmt.Errorf("kafka: the broker refused %s of %d records: %w", status, len(krs), errors.Join(errs...))
	// The broker answers per partition (all or nothing each): the records
	// of a partition it answered with an error did not take effect, the
	// others did.
	var idx []int
	for i, r := range krs {
		if bad[ackTP{r.Topic, r.Partition}] {
			idx = append(idx, i)
		}
	}
	return &targets.RefusedError{Refused: idx, Err: err}
}

// errNoTxn is wrapped by Begin, Commit and Abort outside deferred mode.
func (w *shareWorker) errNoTxn(op string) error {
	return fmt.Errorf("kafka: a %s worker has no transactions (%s): %w", w.mode, op, targets.ErrUnsupported)
}

// Begin opens a producer transaction (deferred mode).
func (w *shareWorker) Begin(ctx context.Context) error {
	if w.mode != vocab.Deferred {
		return w.errNoTxn("begin")
	}
	if w.done.Load() {
		return errWorkerClosed
	}
	if err := w.prod.BeginTransaction(); err != nil {
		return fmt.Errorf("kafka: beginning a transaction of %s: %w", w.txnID, err)
	}
	w.inTxn = true
	return nil
}

// StageAcks is KIP-1289's transactional acknowledgement, which a share
// worker on today's Kafka cannot do.
func (w *shareWorker) StageAcks(ctx context.Context, recs []*targets.Record, t vocab.AckType) error {
	return fmt.Errorf("kafka: a %s worker cannot add share acknowledgements to a transaction (that is KIP-1289's transactional mode); ack after the commit instead: %w", w.mode, targets.ErrUnsupported)
}

// Commit commits the open transaction. On error the transaction stays open
// for Abort, as kgo asks.
func (w *shareWorker) Commit(ctx context.Context) error {
	if w.mode != vocab.Deferred {
		return w.errNoTxn("commit")
	}
	if w.done.Load() {
		return errWorkerClosed
	}
	if !w.inTxn {
		return errors.New("kafka: commit without an open transaction: call Begin first")
	}
	if err := w.prod.EndTransaction(ctx, kgo.TryCommit); err != nil {
		return fmt.Errorf("kafka: committing the transaction of %s: %w", w.txnID, err)
	}
	w.inTxn = false
	w.refreshEpoch(ctx)
	return nil
}

// Abort aborts the open transaction; without one it does nothing.
func (w *shareWorker) Abort(ctx context.Context) error {
	if w.mode != vocab.Deferred {
		return w.errNoTxn("abort")
	}
	if w.done.Load() {
		return errWorkerClosed
	}
	if !w.inTxn {
		return nil
	}
	err := w.abort(ctx)
	w.refreshEpoch(ctx)
	return err
}

func (w *shareWorker) abort(ctx context.Context) error {
	if err := w.prod.AbortBufferedRecords(ctx); err != nil {
		return fmt.Errorf("kafka: aborting the transaction of %s: %w", w.txnID, err)
	}
	if err := w.prod.EndTransaction(ctx, kgo.TryAbort); err != nil {
		return fmt.Errorf("kafka: aborting the transaction of %s: %w", w.txnID, err)
	}
	w.inTxn = false
	return nil
}

// refreshEpoch reads the producer epoch kgo holds (ending a transaction
// bumps it under KIP-890).
func (w *shareWorker) refreshEpoch(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, epochTimeout)
	defer cancel()
	if pid, epoch, err := w.prod.ProducerID(ctx); err == nil {
		w.epoch, w.pid = epoch, pid
	} else {
		w.epoch = -1
	}
}

// ProducerID reports the transactional producer's id (deferred mode; 0
// otherwise).
func (w *shareWorker) ProducerID() int64 { return w.pid }

// TxnInfo reports the transactional id and epoch (deferred mode).
func (w *shareWorker) TxnInfo() (string, int16) {
	if w.mode != vocab.Deferred {
		return "", -1
	}
	return w.txnID, w.epoch
}

// crash closes the clients after crashLeave: the broker then releases what
// the share session held, and a deferred worker's open transaction stays
// open until a worker with the same id fences it or it times out.
func (w *shareWorker) crash() {
	crashLeave(w.d, w.cons)
	w.cons.Close()
	w.prod.Close()
}

// leave ends the worker cleanly: an implicit worker accepts its last poll
// (as kgo's next poll would have), an open transaction is aborted, records
// still held are released, and the member leaves the group.
func (w *shareWorker) leave(ctx context.Context) error {
	var errs []error
	if w.mode == vocab.Implicit {
		w.cons.MarkAcks(kgo.AckAccept)
		if err := w.cons.FlushAcks(ctx); err != nil {
			errs = append(errs, fmt.Errorf("kafka: accepting the last poll: %w", err))
		}
	}
	if w.inTxn {
		if err := w.abort(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	if err := w.cons.LeaveGroupContext(ctx); err != nil {
		errs = append(errs, fmt.Errorf("kafka: leaving share group %s: %w", w.cfg.Group, err))
	}
	w.cons.Close()
	w.prod.Close()
	return errors.Join(errs...)
}
