// This file holds the classic-eos worker: a classic consumer group member
// that fetches read_committed and writes its outputs and consumed offsets in
// one producer transaction (sendOffsetsToTransaction), through kgo's
// GroupTransactSession.

package kafkatarget

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sharebench/sharebench/loadgen/targets"
	"github.com/sharebench/sharebench/vocab"
)

// eosSessionTimeout is the classic group session timeout: Kafka's least
// (group.min.session.timeout.ms, 6s; kfake's too). A crashed worker holds
// its group's rebalance up for its session, so every crash costs the whole
// group about this long; kgo's default (45s) would cost that much.
const eosSessionTimeout = 6 * time.Second

// eosHeartbeat is the classic group heartbeat interval (a third of kgo's 3s
// default, in step with the shorter session).
const eosHeartbeat = time.Second

// ErrTxnAborted is wrapped by a classic-eos Commit whose transaction was
// aborted instead (the group rebalanced, or the offset commit was refused):
// its outputs are invisible and its records will be consumed again.
var ErrTxnAborted = errors.New("kafka: transaction aborted instead of committed")

// tpo names one consumed record.
type tpo struct {
	topic     string
	partition int32
	offset    int64
}

// eosWorker implements targets.Worker for classic-eos. Like shareWorker, its
// methods run on one goroutine; lifecycle says how it ends.
type eosWorker struct {
	lifecycle
	cfg   targets.Config
	d     *dialer
	sess  *kgo.GroupTransactSession
	pb    produceBuf
	txnID string
	epoch int16
	pid   int64
	inTxn bool

	// unstaged holds the records polled since the last transaction end
	// that StageAcks has not covered. kgo commits the consumer position,
	// which covers every polled record, so Commit refuses while any is
	// unstaged.
	unstaged map[tpo]struct{}
}

func (t *Target) newEOSWorker(ctx context.Context, cfg targets.Config, id int) (*eosWorker, error) {
	w := &eosWorker{lifecycle: lifecycle{t: t}, cfg: cfg, d: t.conn.newDialer(), txnID: transactionalID(cfg, id), epoch: -1, unstaged: make(map[tpo]struct{})}
	w.worker = w
	opts := append(t.conn.clientOpts(w.d, "classic-eos-worker-"+strconv.Itoa(id)),
		kgo.ConsumerGroup(cfg.Group),
		kgo.ConsumeTopics(cfg.Inputs()...),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.SessionTimeout(eosSessionTimeout),
		kgo.HeartbeatInterval(eosHeartbeat),
		// While a classic group rebalances, the coordinator waits up to
		// the rebalance timeout (kgo's default 60s) for a crashed member
		// to rejoin: it must be as short as the session, or a crash
		// stalls the whole group that long.
		kgo.RebalanceTimeout(eosSessionTimeout),
		kgo.TransactionalID(w.txnID),
		kgo.DefaultProduceTopic(cfg.OutputTopic),
		kgo.ProducerLinger(0),
	)
	if cfg.TransactionTimeout > 0 {
		opts = append(opts, kgo.TransactionTimeout(cfg.TransactionTimeout))
	}
	if t.fetch > 0 {
		opts = append(opts, kgo.FetchMaxPartitionBytes(t.fetch))
	}
	sess, err := kgo.NewGroupTransactSession(opts...)
	if err != nil {
		return nil, wrapNewClient("classic-eos", err)
	}
	w.sess = sess
	pid, epoch, err := t.initProducerID(ctx, sess.Client())
	if err != nil {
		w.shutdown(ctx, true)
		return nil, fmt.Errorf("kafka: initializing transactional id %s: %w", w.txnID, err)
	}
	w.epoch, w.pid = epoch, pid
	if err := w.register(); err != nil {
		w.shutdown(ctx, true)
		return nil, err
	}
	return w, nil
}

// Poll fetches up to max committed records (cfg.MaxPollRecords when max <= 0).
func (w *eosWorker) Poll(ctx context.Context, max int) ([]*targets.Record, error) {
	if w.done.Load() {
		return nil, errWorkerClosed
	}
	if max <= 0 {
		max = w.cfg.MaxPollRecords
	}
	if max <= 0 {
		max = -1
	}
	fetches := w.sess.PollRecords(ctx, max)
	n := fetches.NumRecords()
	var recs []*targets.Record
	if n > 0 {
		recs = make([]*targets.Record, 0, n)
	}
	var slab recordSlab
	fetches.EachRecord(func(r *kgo.Record) {
		recs = append(recs, slab.fromKgo(r, n))
		w.unstaged[tpo{r.Topic, r.Partition, r.Offset}] = struct{}{}
	})
	if len(recs) == 0 {
		if err := pollErr(ctx, fetches); err != nil {
			return nil, err
		}
	}
	return recs, nil
}

// Produce writes output records inside the open transaction.
func (w *eosWorker) Produce(ctx context.Context, recs []*targets.Record) error {
	if w.done.Load() {
		return errWorkerClosed
	}
	if !w.inTxn {
		return errors.New("kafka: a classic-eos worker produces inside a transaction: call Begin first")
	}
	return produceSync(ctx, w.sess.Client(), &w.pb, recs, w.cfg.OutputTopic)
}

var errNoShareAcks = fmt.Errorf("kafka: a classic-eos worker has no share acknowledgements; StageAcks adds the consumed offsets to the transaction: %w", targets.ErrUnsupported)

// Ack is not part of classic-eos.
func (w *eosWorker) Ack(context.Context, []*targets.Record, vocab.AckType) error {
	return errNoShareAcks
}

// Renew is not part of classic-eos.
func (w *eosWorker) Renew(context.Context, []*targets.Record) error { return errNoShareAcks }

// Begin opens a transaction.
func (w *eosWorker) Begin(ctx context.Context) error {
	if w.done.Load() {
		return errWorkerClosed
	}
	if err := w.sess.Begin(); err != nil {
		return fmt.Errorf("kafka: beginning a transaction of %s: %w", w.txnID, err)
	}
	w.inTxn = true
	return nil
}

// StageAcks adds the consumed offsets of recs to the transaction (accept and
// reject both move the group past a record).
func (w *eosWorker) StageAcks(ctx context.Context, recs []*targets.Record, t vocab.AckType) error {
	if w.done.Load() {
		return errWorkerClosed
	}
	if t != vocab.AckAccept && t != vocab.AckReject {
		return fmt.Errorf("kafka: cannot stage %s in a transaction (valid: accept, reject)", t)
	}
	if !w.inTxn {
		return errors.New("kafka: StageAcks needs an open transaction: call Begin first")
	}
	for i, r := range recs {
		if r == nil {
			return fmt.Errorf("kafka: record %d of %d is nil", i, len(recs))
		}
		delete(w.unstaged, tpo{r.Topic, r.Partition, r.Offset})
	}
	return nil
}

// Commit commits the outputs and the consumed offsets together. If kgo had
// to abort instead, it returns an error wrapping ErrTxnAborted and the
// consumer has rewound to the last committed offsets.
func (w *eosWorker) Commit(ctx context.Context) error {
	if w.done.Load() {
		return errWorkerClosed
	}
	if !w.inTxn {
		return errors.New("kafka: commit without an open transaction: call Begin first")
	}
	if n := len(w.unstaged); n > 0 {
		return fmt.Errorf("kafka: classic-eos commits the consumer position, which covers every record polled in this transaction, but %d of them were not staged: stage them all or abort", n)
	}
	committed, err := w.sess.End(ctx, kgo.TryCommit)
	w.endTxn(ctx)
	if err != nil {
		return fmt.Errorf("kafka: committing the transaction of %s: %w", w.txnID, err)
	}
	if !committed {
		return fmt.Errorf("kafka: transaction of %s: the group rebalanced or refused the offsets, and the consumer rewound to the last committed offsets: %w", w.txnID, ErrTxnAborted)
	}
	return nil
}

// Abort aborts the transaction and rewinds the consumer to the last
// committed offsets, so the records polled since are consumed again.
func (w *eosWorker) Abort(ctx context.Context) error {
	if w.done.Load() {
		return errWorkerClosed
	}
	_, err := w.sess.End(ctx, kgo.TryAbort)
	w.endTxn(ctx)
	if err != nil {
		return fmt.Errorf("kafka: aborting the transaction of %s: %w", w.txnID, err)
	}
	return nil
}

// endTxn forgets the ended transaction and reads the bumped epoch.
func (w *eosWorker) endTxn(ctx context.Context) {
	w.inTxn = false
	clear(w.unstaged)
	ctx, cancel := context.WithTimeout(ctx, epochTimeout)
	defer cancel()
	if pid, epoch, err := w.sess.Client().ProducerID(ctx); err == nil {
		w.epoch, w.pid = epoch, pid
	} else {
		w.epoch = -1
	}
}

// ProducerID reports the transactional producer's id.
func (w *eosWorker) ProducerID() int64 { return w.pid }

// TxnInfo reports the transactional id and the producer epoch.
func (w *eosWorker) TxnInfo() (string, int16) { return w.txnID, w.epoch }

// crash closes the session after crashLeave: no leave, no end of the open
// transaction (the next worker with this id fences it).
func (w *eosWorker) crash() {
	crashLeave(w.d, w.sess.Client())
	w.sess.Close()
}

// leave aborts an open transaction and leaves the group.
func (w *eosWorker) leave(ctx context.Context) error {
	var errs []error
	if w.inTxn {
		if _, err := w.sess.End(ctx, kgo.TryAbort); err != nil {
			errs = append(errs, fmt.Errorf("kafka: aborting the transaction of %s: %w", w.txnID, err))
		}
	}
	// A transactional client never commits on revoke, so leaving
	// commits nothing the transactions did not.
	if err := w.sess.Client().LeaveGroupContext(ctx); err != nil {
		errs = append(errs, fmt.Errorf("kafka: leaving group %s: %w", w.cfg.Group, err))
	}
	w.sess.Close()
	return errors.Join(errs...)
}
