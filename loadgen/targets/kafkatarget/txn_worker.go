// This file holds the worker of the transactional mode (KIP-1289), for
// brokers that advertise the draft's TxnShareAcknowledge (key 93 or 95):
// a share-group member driven with ShareGroupHeartbeat, ShareFetch and
// ShareAcknowledge requests of its own (kgo's share consumer hides the
// member id and epoch that staging needs, and acknowledges by itself), a
// kgo transactional producer for the outputs, and TxnShareAcknowledge
// requests on a connection of their own to the transaction coordinator
// (kgo refuses keys it does not know).
//
// Fencing: the member epoch of the last heartbeat travels with every
// staging; a stale one is refused by the broker (FENCED_MEMBER_EPOCH): the
// staging error wraps targets.ErrAbortable and targets.ErrStaleMemberEpoch,
// the worker heartbeats at once to learn the new epoch, and the caller
// aborts and goes on. Abortable transactions: once a staging fails,
// Produce, StageAcks and Commit refuse until Abort, as Kafka's producer
// does after a failed TxnOffsetCommit. A transaction that carries
// only acknowledgements ends with an EndTxn of its own, because kgo skips
// EndTxn for a transaction it produced nothing in.

package kafkatarget

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sharebench/sharebench/internal/txnshareack"
	"github.com/sharebench/sharebench/loadgen/targets"
	"github.com/sharebench/sharebench/vocab"
)

// fetchMargin is how long before the caller's deadline a share fetch's
// wait at the broker ends, and requestTimeout how long past its wait a
// share request may take.
const (
	fetchMargin    = 20 * time.Millisecond
	requestTimeout = 10 * time.Second
)

// errAbortable is wrapped by every call refused because an earlier staging
// failed in the open transaction.
var errAbortable = errors.New("kafka: the transaction can only abort (a share acknowledgement failed to stage)")

// txnRecord is what a transactional worker keeps of a polled record.
type txnRecord struct {
	topicID [16]byte
}

type txnWorker struct {
	lifecycle
	cfg   targets.Config
	d     *dialer
	cl    *kgo.Client // share-group requests
	prod  *kgo.Client // transactional outputs
	pb    produceBuf
	key   int16 // TxnShareAcknowledge key
	txnID string
	pid   int64
	epoch int16

	memberID string
	mu       sync.Mutex // guards memberEpoch and hbErr
	memberEp int32
	hbErr    error
	stopHB   chan struct{}
	hbDone   chan struct{}

	session int32 // next share session epoch
	topicID [16]byte
	pending map[int64]*targets.Record // offsets of the input topic, from the last poll, not yet staged or acked

	inTxn     bool
	produced  bool
	staged    bool
	abortable error

	raw  net.Conn
	corr int32
}

func (t *Target) newTxnWorker(ctx context.Context, cfg targets.Config, id int, key int16) (*txnWorker, error) {
	w := &txnWorker{lifecycle: lifecycle{t: t}, cfg: cfg, d: t.conn.newDialer(), key: key, txnID: transactionalID(cfg, id),
		stopHB: make(chan struct{}), hbDone: make(chan struct{}), pending: map[int64]*targets.Record{}}
	w.worker = w
	name := "transactional-worker-" + strconv.Itoa(id)
	cl, err := kgo.NewClient(append(t.conn.clientOpts(w.d, name),
		kgo.ConnIdleTimeout(max(minConnIdle, 2*cfg.LockDuration)))...)
	if err != nil {
		return nil, wrapNewClient("share member", err)
	}
	popts := append(t.conn.clientOpts(w.d, name+"-out"),
		kgo.DefaultProduceTopic(cfg.OutputTopic), kgo.ProducerLinger(0), kgo.TransactionalID(w.txnID))
	if cfg.TransactionTimeout > 0 {
		popts = append(popts, kgo.TransactionTimeout(cfg.TransactionTimeout))
	}
	prod, err := kgo.NewClient(popts...)
	if err != nil {
		cl.Close()
		return nil, wrapNewClient("output producer", err)
	}
	w.cl, w.prod = cl, prod
	fail := func(err error) (*txnWorker, error) {
		close(w.hbDone)
		w.shutdown(ctx, true)
		return nil, err
	}
	if w.pid, w.epoch, err = t.initProducerID(ctx, prod); err != nil {
		return fail(fmt.Errorf("kafka: initializing transactional id %s: %w", w.txnID, err))
	}
	meta, err := kadmTopicID(ctx, cl, cfg.InputTopic)
	if err != nil {
		return fail(err)
	}
	w.topicID = meta
	w.memberID = fmt.Sprintf("%s-%d-%d", w.txnID, time.Now().UnixNano(), id)
	if err := w.heartbeat(ctx, 0); err != nil {
		return fail(fmt.Errorf("kafka: joining share group %s: %w", cfg.Group, err))
	}
	go w.heartbeatLoop()
	if err := w.register(); err != nil {
		w.shutdown(ctx, true)
		return nil, err
	}
	return w, nil
}

// kadmTopicID returns a topic's id from the metadata.
func kadmTopicID(ctx context.Context, cl *kgo.Client, topic string) ([16]byte, error) {
	req := kmsg.NewPtrMetadataRequest()
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr(topic)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return [16]byte{}, fmt.Errorf("kafka: metadata of %s: %w", topic, err)
	}
	for _, t := range resp.Topics {
		if t.Topic != nil && *t.Topic == topic {
			if err := kerr.ErrorForCode(t.ErrorCode); err != nil {
				return [16]byte{}, fmt.Errorf("kafka: metadata of %s: %w", topic, err)
			}
			return t.TopicID, nil
		}
	}
	return [16]byte{}, fmt.Errorf("kafka: metadata of %s: %w", topic, kerr.UnknownTopicOrPartition)
}

// heartbeat sends one ShareGroupHeartbeat with epoch (0 joins, -1 leaves).
func (w *txnWorker) heartbeat(ctx context.Context, epoch int32) error {
	req := kmsg.NewPtrShareGroupHeartbeatRequest()
	req.GroupID, req.MemberID, req.MemberEpoch = w.cfg.Group, w.memberID, epoch
	if epoch == 0 {
		req.SubscribedTopicNames = []string{w.cfg.InputTopic}
	}
	resp, err := req.RequestWith(ctx, w.cl)
	if err == nil {
		err = kerr.ErrorForCode(resp.ErrorCode)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if err != nil {
		w.hbErr = err
		return err
	}
	w.memberEp = resp.MemberEpoch
	return nil
}

// heartbeatLoop heartbeats every second until the worker stops.
func (w *txnWorker) heartbeatLoop() {
	defer close(w.hbDone)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-w.stopHB:
			return
		case <-tick.C:
		}
		w.mu.Lock()
		ep, failed := w.memberEp, w.hbErr != nil
		w.mu.Unlock()
		if failed {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		w.heartbeat(ctx, ep)
		cancel()
	}
}

func (w *txnWorker) member() (int32, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.memberEp, w.hbErr
}

// ackBatches turns offsets with types into wire batches (runs of
// consecutive offsets of one type).
func ackBatches(offs []int64, types map[int64]int8) (first, last []int64, ty []int8) {
	sort.Slice(offs, func(i, j int) bool { return offs[i] < offs[j] })
	for _, o := range offs {
		n := len(first)
		if n > 0 && last[n-1]+1 == o && ty[n-1] == types[o] {
			last[n-1] = o
			continue
		}
		first, last, ty = append(first, o), append(last, o), append(ty, types[o])
	}
	return
}

// Poll releases what the last poll left unstaged and fetches up to max
// records.
func (w *txnWorker) Poll(ctx context.Context, maxRecs int) ([]*targets.Record, error) {
	if w.done.Load() {
		return nil, errWorkerClosed
	}
	if _, err := w.member(); err != nil {
		return nil, err
	}
	if maxRecs <= 0 {
		maxRecs = maxPoll(w.cfg)
	}
	req := kmsg.NewPtrShareFetchRequest()
	req.Version = 2
	req.GroupID, req.MemberID = kmsg.StringPtr(w.cfg.Group), kmsg.StringPtr(w.memberID)
	req.ShareSessionEpoch = w.session
	// The broker holds a fetch up to its wait; the wait ends well before
	// ctx does, and the request itself does not die with ctx: a request
	// cut off in flight closes its connection, and with it the share
	// session, which gives back what the session holds.
	wait := shareFetchMaxWait
	if dl, ok := ctx.Deadline(); ok {
		wait = min(wait, max(time.Until(dl)-fetchMargin, 0))
	}
	req.MaxWaitMillis, req.MinBytes, req.MaxBytes = int32(wait/time.Millisecond), 1, 50<<20
	req.MaxRecords, req.BatchSize, req.ShareAcquireMode = int32(maxRecs), int32(maxRecs), 1
	parts := w.releasesByPartition()
	if w.session == 0 {
		for p := int32(0); p < w.cfg.InputPartitions; p++ {
			if _, ok := parts[p]; !ok {
				parts[p] = nil
			}
		}
	}
	if len(parts) > 0 {
		rt := kmsg.NewShareFetchRequestTopic()
		rt.TopicID = w.topicID
		for p, offs := range parts {
			rp := kmsg.NewShareFetchRequestTopicPartition()
			rp.Partition, rp.PartitionMaxBytes = p, w.partitionMaxBytes()
			types := map[int64]int8{}
			for _, o := range offs {
				types[o] = int8(vocab.AckRelease)
			}
			first, last, ty := ackBatches(offs, types)
			for i := range first {
				b := kmsg.NewShareFetchRequestTopicPartitionAcknowledgementBatch()
				b.FirstOffset, b.LastOffset, b.AcknowledgeTypes = first[i], last[i], []int8{ty[i]}
				rp.AcknowledgementBatches = append(rp.AcknowledgementBatches, b)
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		req.Topics = append(req.Topics, rt)
	}
	clear(w.pending)
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), wait+requestTimeout)
	defer cancel()
	resp, err := req.RequestWith(rctx, w.cl)
	if err != nil {
		return nil, fmt.Errorf("kafka: share fetch: %w", err)
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		if errors.Is(err, kerr.ShareSessionNotFound) || errors.Is(err, kerr.InvalidShareSessionEpoch) {
			w.session = 0
		}
		return nil, fmt.Errorf("kafka: share fetch: %w", err)
	}
	w.session++
	var out []*targets.Record
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
				return out, fmt.Errorf("kafka: share fetch %s/%d: %w", w.cfg.InputTopic, p.Partition, err)
			}
			counts := map[int64]int{}
			for _, a := range p.AcquiredRecords {
				for o := a.FirstOffset; o <= a.LastOffset; o++ {
					counts[o] = int(a.DeliveryCount)
				}
			}
			recs, err := decodeShareRecords(p.Records)
			if err != nil {
				return out, err
			}
			for _, r := range recs {
				n, ok := counts[r.Offset]
				if !ok {
					continue
				}
				r.Topic, r.Partition, r.DeliveryCount = w.cfg.InputTopic, p.Partition, n
				out = append(out, r)
				w.pending[pendingKey(p.Partition, r.Offset)] = r
			}
		}
	}
	return out, nil
}

// pendingKey packs a partition and an offset into one map key.
func pendingKey(p int32, o int64) int64 { return int64(p)<<48 | o }

// releasesByPartition lists the offsets of the last poll that were
// neither staged nor acked; the next fetch releases them.
func (w *txnWorker) releasesByPartition() map[int32][]int64 {
	out := map[int32][]int64{}
	for _, r := range w.pending {
		out[r.Partition] = append(out[r.Partition], r.Offset)
	}
	return out
}

// decodeShareRecords decodes uncompressed record batches.
func decodeShareRecords(b []byte) ([]*targets.Record, error) {
	var out []*targets.Record
	for len(b) > 0 {
		var rb kmsg.RecordBatch
		if len(b) < 12 {
			break
		}
		n := int(int32(binary.BigEndian.Uint32(b[8:]))) + 12
		if n > len(b) {
			break // a partial batch at the end of a response
		}
		if err := rb.ReadFrom(b[:n]); err != nil {
			return out, fmt.Errorf("kafka: decoding a share fetch batch: %w", err)
		}
		b = b[n:]
		if rb.Attributes&0x20 != 0 {
			continue // control batch
		}
		if rb.Attributes&0x7 != 0 {
			return out, fmt.Errorf("kafka: the broker sent a compressed batch, which the transactional worker does not decode; produce the input uncompressed")
		}
		r := kbin.Reader{Src: rb.Records}
		for range rb.NumRecords {
			l := r.Varint()
			rr := kbin.Reader{Src: r.Span(int(l))}
			rr.Int8()
			rr.Varlong()
			od := rr.Varint()
			kl := rr.Varint()
			var key []byte
			if kl >= 0 {
				key = rr.Span(int(kl))
			}
			vl := rr.Varint()
			var val []byte
			if vl >= 0 {
				val = rr.Span(int(vl))
			}
			if !rr.Ok() || !r.Ok() {
				return out, errors.New("kafka: a truncated record in a share fetch")
			}
			out = append(out, &targets.Record{Offset: rb.FirstOffset + int64(od), Key: key, Value: val})
		}
	}
	return out, nil
}

// Produce writes outputs inside the open transaction.
func (w *txnWorker) Produce(ctx context.Context, recs []*targets.Record) error {
	if w.done.Load() {
		return errWorkerClosed
	}
	if !w.inTxn {
		return errors.New("kafka: a transactional worker produces inside a transaction: call Begin first")
	}
	if w.abortable != nil {
		return fmt.Errorf("%w: %w", errAbortable, w.abortable)
	}
	w.produced = true
	return produceSync(ctx, w.prod, &w.pb, recs, w.cfg.OutputTopic)
}

// Ack acknowledges recs outside a transaction (ShareAcknowledge); RENEW
// extends their locks.
func (w *txnWorker) Ack(ctx context.Context, recs []*targets.Record, t vocab.AckType) error {
	if w.done.Load() {
		return errWorkerClosed
	}
	if len(recs) == 0 {
		return nil
	}
	req := kmsg.NewPtrShareAcknowledgeRequest()
	req.Version = 2
	req.GroupID, req.MemberID = kmsg.StringPtr(w.cfg.Group), kmsg.StringPtr(w.memberID)
	req.ShareSessionEpoch = w.session
	req.IsRenewAck = t == vocab.AckRenew
	rt := kmsg.NewShareAcknowledgeRequestTopic()
	rt.TopicID = w.topicID
	for p, offs := range byPart(recs) {
		rp := kmsg.NewShareAcknowledgeRequestTopicPartition()
		rp.Partition = p
		types := map[int64]int8{}
		for _, o := range offs {
			types[o] = int8(t)
		}
		first, last, ty := ackBatches(offs, types)
		for i := range first {
			b := kmsg.NewShareAcknowledgeRequestTopicPartitionAcknowledgementBatch()
			b.FirstOffset, b.LastOffset, b.AcknowledgeTypes = first[i], last[i], []int8{ty[i]}
			rp.AcknowledgementBatches = append(rp.AcknowledgementBatches, b)
		}
		rt.Partitions = append(rt.Partitions, rp)
	}
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, w.cl)
	if err != nil {
		return fmt.Errorf("kafka: share acknowledge: %w", err)
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return fmt.Errorf("kafka: share acknowledge: %w", err)
	}
	w.session++
	var errs []error
	bad := map[int32]bool{}
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
				bad[p.Partition] = true
				errs = append(errs, fmt.Errorf("%s/%d: %w", w.cfg.InputTopic, p.Partition, err))
			}
		}
	}
	if t != vocab.AckRenew {
		for _, r := range recs {
			delete(w.pending, pendingKey(r.Partition, r.Offset))
		}
	}
	if len(errs) > 0 {
		// Each partition applies all or nothing: the records of the
		// partitions answered with an error did not take effect.
		var idx []int
		for i, r := range recs {
			if bad[r.Partition] {
				idx = append(idx, i)
			}
		}
		return &targets.RefusedError{Refused: idx, Err: fmt.Errorf("kafka: the broker refused %s of %d records: %w", t, len(recs), errors.Join(errs...))}
	}
	return nil
}

func byPart(recs []*targets.Record) map[int32][]int64 {
	out := map[int32][]int64{}
	for _, r := range recs {
		out[r.Partition] = append(out[r.Partition], r.Offset)
	}
	return out
}

// Renew extends the acquisition locks of recs.
func (w *txnWorker) Renew(ctx context.Context, recs []*targets.Record) error {
	return w.Ack(ctx, recs, vocab.AckRenew)
}

// Begin opens a transaction.
func (w *txnWorker) Begin(ctx context.Context) error {
	if w.done.Load() {
		return errWorkerClosed
	}
	if err := w.prod.BeginTransaction(); err != nil {
		return fmt.Errorf("kafka: beginning a transaction of %s: %w", w.txnID, err)
	}
	w.inTxn, w.produced, w.staged, w.abortable = true, false, false, nil
	return nil
}

// StageAcks sends recs' acknowledgements to the open transaction
// (TxnShareAcknowledge) with the member's current epoch.
func (w *txnWorker) StageAcks(ctx context.Context, recs []*targets.Record, t vocab.AckType) error {
	if w.done.Load() {
		return errWorkerClosed
	}
	if !w.inTxn {
		return errors.New("kafka: staging acknowledgements outside a transaction: call Begin first")
	}
	if w.abortable != nil {
		return fmt.Errorf("%w: %w", errAbortable, w.abortable)
	}
	if t != vocab.AckAccept && t != vocab.AckReject {
		return fmt.Errorf("kafka: cannot stage %s in a transaction (valid: accept, reject)", t)
	}
	if len(recs) == 0 {
		return nil
	}
	ep, err := w.member()
	if err != nil {
		return err
	}
	req := txnshareack.NewRequest(w.key)
	req.TransactionalID = &w.txnID
	req.GroupID, req.ProducerID, req.ProducerEpoch = w.cfg.Group, w.pid, w.epoch
	req.MemberID, req.MemberEpoch = w.memberID, ep
	topic := txnshareack.Topic{TopicID: w.topicID}
	for p, offs := range byPart(recs) {
		types := map[int64]int8{}
		for _, o := range offs {
			types[o] = int8(t)
		}
		first, last, ty := ackBatches(offs, types)
		part := txnshareack.Partition{Partition: p}
		for i := range first {
			part.Batches = append(part.Batches, txnshareack.Batch{FirstOffset: first[i], LastOffset: last[i], AcknowledgeTypes: []int8{ty[i]}})
		}
		topic.Partitions = append(topic.Partitions, part)
	}
	req.Topics = []txnshareack.Topic{topic}
	w.staged = true
	for _, r := range recs {
		delete(w.pending, pendingKey(r.Partition, r.Offset))
	}
	resp, err := w.rawRequest(ctx, req)
	failed := map[int32]bool{} // partitions whose records did not stage
	if err == nil {
		r := resp.(*txnshareack.Response)
		err = txnAckErr(r, w.cfg.InputTopic)
		for _, t := range r.Topics {
			for _, p := range t.Partitions {
				if p.ErrorCode != 0 || r.ErrorCode != 0 {
					failed[p.Partition] = true
				}
			}
		}
	}
	if err != nil {
		// Records that did not stage are still held (ACQUIRED): the next
		// poll releases them, so they are not stuck until their locks
		// expire. Without per-partition results, none staged.
		for _, r := range recs {
			if len(failed) == 0 || failed[r.Partition] {
				w.pending[pendingKey(r.Partition, r.Offset)] = r
			}
		}
		w.abortable = err
		err = fmt.Errorf("kafka: staging %d acknowledgements in the transaction of %s: %w", len(recs), w.txnID, err)
		if errors.Is(err, kerr.FencedMemberEpoch) {
			// The group moved the member's epoch on (another member
			// joined or left) since the last heartbeat: learn it now, so
			// the next transaction stages with it.
			hctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			if cur, herr := w.member(); herr == nil && cur > 0 {
				w.heartbeat(hctx, cur)
			}
			cancel()
			return targets.Abortable(err, true)
		}
		return targets.Abortable(err, false)
	}
	return nil
}

func txnAckErr(resp *txnshareack.Response, topic string) error {
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return err
	}
	var errs []error
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
				if p.ErrorMessage != nil {
					err = fmt.Errorf("%s: %w", *p.ErrorMessage, err)
				}
				errs = append(errs, fmt.Errorf("%s/%d: %w", topic, p.Partition, err))
			}
		}
	}
	return errors.Join(errs...)
}

// rawRequest sends req on the worker's own connection to the transaction
// coordinator and reads its response.
func (w *txnWorker) rawRequest(ctx context.Context, req kmsg.Request) (kmsg.Response, error) {
	if w.raw == nil {
		fc := kmsg.NewPtrFindCoordinatorRequest()
		fc.CoordinatorType, fc.CoordinatorKey, fc.CoordinatorKeys = 1, w.txnID, []string{w.txnID}
		fr, err := fc.RequestWith(ctx, w.cl)
		if err != nil {
			return nil, fmt.Errorf("kafka: finding the transaction coordinator of %s: %w", w.txnID, err)
		}
		host, port := fr.Host, fr.Port
		if len(fr.Coordinators) > 0 {
			c := fr.Coordinators[0]
			if err := kerr.ErrorForCode(c.ErrorCode); err != nil {
				return nil, fmt.Errorf("kafka: finding the transaction coordinator of %s: %w", w.txnID, err)
			}
			host, port = c.Host, c.Port
		}
		nc, err := w.d.DialContext(ctx, "tcp", net.JoinHostPort(host, strconv.Itoa(int(port))))
		if err != nil {
			return nil, fmt.Errorf("kafka: dialing the transaction coordinator: %w", err)
		}
		w.raw = nc
	}
	if dl, ok := ctx.Deadline(); ok {
		w.raw.SetDeadline(dl)
	} else {
		w.raw.SetDeadline(time.Now().Add(30 * time.Second))
	}
	w.corr++
	buf := []byte{0, 0, 0, 0}
	buf = kbin.AppendInt16(buf, req.Key())
	buf = kbin.AppendInt16(buf, req.GetVersion())
	buf = kbin.AppendInt32(buf, w.corr)
	buf = kbin.AppendNullableString(buf, kmsg.StringPtr(w.txnID))
	buf = append(buf, 0) // header tags (flexible)
	buf = req.AppendTo(buf)
	binary.BigEndian.PutUint32(buf, uint32(len(buf)-4))
	fail := func(err error) (kmsg.Response, error) {
		w.raw.Close()
		w.raw = nil
		return nil, err
	}
	if _, err := w.raw.Write(buf); err != nil {
		return fail(fmt.Errorf("kafka: sending %s: %w", "TxnShareAcknowledge", err))
	}
	var size [4]byte
	if _, err := io.ReadFull(w.raw, size[:]); err != nil {
		return fail(fmt.Errorf("kafka: reading the TxnShareAcknowledge response: %w", err))
	}
	body := make([]byte, binary.BigEndian.Uint32(size[:]))
	if _, err := io.ReadFull(w.raw, body); err != nil {
		return fail(fmt.Errorf("kafka: reading the TxnShareAcknowledge response: %w", err))
	}
	if len(body) < 5 || int32(binary.BigEndian.Uint32(body)) != w.corr {
		return fail(errors.New("kafka: TxnShareAcknowledge response with a wrong correlation id"))
	}
	resp := req.ResponseKind()
	if err := resp.ReadFrom(body[5:]); err != nil {
		return fail(err)
	}
	return resp, nil
}

// Commit commits outputs and staged acknowledgements together.
func (w *txnWorker) Commit(ctx context.Context) error {
	if w.done.Load() {
		return errWorkerClosed
	}
	if !w.inTxn {
		return errors.New("kafka: commit without an open transaction: call Begin first")
	}
	if w.abortable != nil {
		return fmt.Errorf("%w: %w", errAbortable, w.abortable)
	}
	if err := w.end(ctx, true); err != nil {
		return fmt.Errorf("kafka: committing the transaction of %s: %w", w.txnID, err)
	}
	return nil
}

// Abort aborts the open transaction; without one it does nothing.
func (w *txnWorker) Abort(ctx context.Context) error {
	if w.done.Load() {
		return errWorkerClosed
	}
	if !w.inTxn {
		return nil
	}
	if err := w.prod.AbortBufferedRecords(ctx); err != nil {
		return fmt.Errorf("kafka: aborting the transaction of %s: %w", w.txnID, err)
	}
	if err := w.end(ctx, false); err != nil {
		return fmt.Errorf("kafka: aborting the transaction of %s: %w", w.txnID, err)
	}
	return nil
}

func (w *txnWorker) end(ctx context.Context, commit bool) error {
	try := kgo.TryAbort
	if commit {
		try = kgo.TryCommit
	}
	if err := w.prod.EndTransaction(ctx, try); err != nil {
		return err
	}
	if !w.produced && w.staged {
		// kgo sent no EndTxn for a transaction it produced nothing in.
		// At most v4: v5 (KIP-890 part 2) would move the producer to a
		// new epoch behind kgo's back.
		req := endTxnV4{kmsg.NewPtrEndTxnRequest()}
		req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Commit = w.txnID, w.pid, w.epoch, commit
		var kresp kmsg.Response
		node, err := w.txnCoordinator(ctx)
		if err == nil {
			// Sent to the coordinator directly: kgo's own routing knows
			// EndTxn by its request type only.
			kresp, err = w.prod.Broker(int(node)).Request(ctx, req)
		}
		if err == nil {
			err = kerr.ErrorForCode(kresp.(*kmsg.EndTxnResponse).ErrorCode)
		}
		if err != nil {
			return err
		}
	}
	w.inTxn, w.produced, w.staged, w.abortable = false, false, false, nil
	// Under KIP-890 part 2 every transaction kgo ended moved the producer
	// to a new epoch (or id); the next staging must carry it.
	pid, epoch, err := w.prod.ProducerID(ctx)
	if err != nil {
		return err
	}
	w.pid, w.epoch = pid, epoch
	return nil
}

// txnCoordinator returns the node id of the transactional id's
// coordinator.
func (w *txnWorker) txnCoordinator(ctx context.Context) (int32, error) {
	req := kmsg.NewPtrFindCoordinatorRequest()
	req.CoordinatorType, req.CoordinatorKey, req.CoordinatorKeys = 1, w.txnID, []string{w.txnID}
	resp, err := req.RequestWith(ctx, w.prod)
	if err != nil {
		return 0, err
	}
	if len(resp.Coordinators) > 0 {
		c := resp.Coordinators[0]
		return c.NodeID, kerr.ErrorForCode(c.ErrorCode)
	}
	return resp.NodeID, kerr.ErrorForCode(resp.ErrorCode)
}

// endTxnV4 is an EndTxn request kgo sends at version 4 at most.
type endTxnV4 struct{ *kmsg.EndTxnRequest }

func (endTxnV4) MaxVersion() int16 { return 4 }

// TxnInfo reports the transactional id and producer epoch.
func (w *txnWorker) TxnInfo() (string, int16) { return w.txnID, w.epoch }

// crash stops the heartbeats and cuts every connection, the coordinator
// connection included.
func (w *txnWorker) crash() {
	w.stopHeartbeats()
	w.d.kill()
	w.closeClients()
}

// leave aborts an open transaction, releases what the last poll left and
// leaves the group.
func (w *txnWorker) leave(ctx context.Context) error {
	w.stopHeartbeats()
	var errs []error
	if w.inTxn {
		w.prod.AbortBufferedRecords(ctx)
		if err := w.end(ctx, false); err != nil {
			errs = append(errs, err)
		}
	}
	if w.memberID != "" {
		if err := w.heartbeat(ctx, -1); err != nil {
			errs = append(errs, fmt.Errorf("kafka: leaving share group %s: %w", w.cfg.Group, err))
		}
	}
	w.closeClients()
	return errors.Join(errs...)
}

// stopHeartbeats stops the heartbeat loop and waits until it returned.
func (w *txnWorker) stopHeartbeats() {
	close(w.stopHB)
	<-w.hbDone
}

func (w *txnWorker) closeClients() {
	if w.raw != nil {
		w.raw.Close()
	}
	w.cl.Close()
	w.prod.Close()
}

var _ targets.Worker = (*txnWorker)(nil)

// ProducerID reports the transactional producer's id.
func (w *txnWorker) ProducerID() int64 { return w.pid }

// partitionMaxBytes is a share fetch's PartitionMaxBytes: the target's
// max.partition.fetch.bytes when it has one, else 50 MiB.
func (w *txnWorker) partitionMaxBytes() int32 {
	if w.t.fetch > 0 {
		return w.t.fetch
	}
	return 50 << 20
}
