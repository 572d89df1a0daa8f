// Produce: v3-13 (v13 names topics by id).
//
// Plain batches (producer id -1) append through Engine.Produce. Batches of
// a producer id go through its engine Producer: transactional ones only
// inside the transaction AddPartitionsToTxn opened, idempotent ones
// checked against the producer's sequence numbers, so a retried batch gets
// its first offset back and a gap gets OUT_OF_ORDER_SEQUENCE_NUMBER. A
// partition's request is all or nothing. Record headers and client
// timestamps are not kept (the engine stores keys and values); a batch
// written compressed has its codec and offsets kept (batches.go), so
// fetches return it compressed as written. acks=0 requests get no
// response.

package serve

import (
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sharebench/sharebench/engine"
)

func init() { register(int16(kmsg.Produce), 3, 13, (*Server).handleProduce) }

func (s *Server) handleProduce(c *conn, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.ProduceRequest)
	resp := req.ResponseKind().(*kmsg.ProduceResponse)
	for _, t := range req.Topics {
		name := t.Topic
		if req.Version >= 13 {
			name, _ = s.topicName(t.TopicID)
		}
		rt := kmsg.NewProduceResponseTopic()
		rt.Topic, rt.TopicID = t.Topic, t.TopicID
		n, known := s.partitions(name)
		for _, pt := range t.Partitions {
			rp := kmsg.NewProduceResponseTopicPartition()
			rp.Partition = pt.Partition
			rp.BaseOffset, rp.LogAppendTime, rp.LogStartOffset = -1, -1, -1
			if !known && req.Version >= 13 {
				// An id no live topic has: a deleted incarnation's, as
				// Kafka answers it.
				rp.ErrorCode = kerr.UnknownTopicID.Code
			} else if !known || pt.Partition < 0 || pt.Partition >= n {
				rp.ErrorCode = kerr.UnknownTopicOrPartition.Code
			} else {
				tp := engine.TopicPartition{Topic: name, Partition: pt.Partition}
				implicitAdd := req.Version >= 12 && s.cfg.txnVersion >= 2
				base, err := s.producePartition(c, tp, req.TransactionID, pt.Records, implicitAdd)
				if errors.Is(err, engine.ErrCrashed) && s.awaitEngine(c) {
					// A batch the crash failed runs again once the
					// engine is back, as the client's retry of the
					// same batch would, without sending the client
					// through a metadata refresh.
					base, err = s.producePartition(c, tp, req.TransactionID, pt.Records, implicitAdd)
				}
				rp.ErrorCode = partErrCode(err)
				if err == nil {
					rp.BaseOffset = base
					rp.LogStartOffset, _, _, _ = s.e.Offsets(tp)
				} else if req.Version >= 8 {
					rp.ErrorMessage = msg(err)
				}
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	if req.Acks == 0 {
		return nil, nil
	}
	return resp, nil
}

var (
	errCodeOnly = errors.New("serve: produce refused")
)

// codeErr carries a Kafka error code as an error.
type codeErr struct{ code int16 }

func (e codeErr) Error() string {
	if ke := kerr.ErrorForCode(e.code); ke != nil {
		return ke.Error()
	}
	return errCodeOnly.Error()
}

func (e codeErr) Unwrap() error { return kerr.ErrorForCode(e.code) }

// producePartition appends one partition's batches. implicitAdd (KIP-890
// part 2) lets a transactional batch open the transaction and add its
// partition, as AddPartitionsToTxn would.
// The records are decoded into c's buffer, reused from partition to
// partition (the engine copies what it keeps).
func (s *Server) producePartition(c *conn, tp engine.TopicPartition, txnID *string, records []byte, implicitAdd bool) (int64, error) {
	batches, buf, err := decodeBatches(records, c.recBuf[:0])
	defer func() {
		if cap(buf) <= maxRecBuf {
			clear(buf) // keeps no request bytes alive
			c.recBuf = buf[:0]
		}
	}()
	if err != nil {
		return 0, codeErr{kerr.CorruptMessage.Code}
	}
	if len(batches) == 0 {
		return 0, codeErr{kerr.InvalidRecord.Code}
	}
	first := int64(-1)
	for i := range batches {
		b := &batches[i]
		if b.control || len(b.recs) == 0 {
			return 0, codeErr{kerr.InvalidRecord.Code}
		}
		var base int64
		if b.producerID < 0 {
			if b.transactional {
				return 0, codeErr{kerr.InvalidRecord.Code}
			}
			base, err = s.e.Produce(tp.Topic, tp.Partition, b.recs)
		} else {
			base, err = s.produceAs(tp, txnID, b, implicitAdd)
		}
		if err != nil {
			return 0, err
		}
		if b.codec != 0 {
			logStart, _, _, _ := s.e.Offsets(tp)
			s.state.stored.keep(tp, base, base+int64(len(b.recs))-1, b.codec, logStart)
		} else {
			s.state.stored.keep(tp, base, base+int64(len(b.recs))-1, 0, 0)
		}
		if first < 0 {
			first = base
		}
	}
	return first, nil
}

func (s *Server) produceAs(tp engine.TopicPartition, txnID *string, b *batch, implicitAdd bool) (int64, error) {
	p, code := s.lookupProducer(b.producerID, b.epoch)
	if code != 0 {
		if code == kerr.ProducerFenced.Code {
			code = kerr.InvalidProducerEpoch.Code
		}
		return 0, codeErr{code}
	}
	if b.transactional != (p.txnID != "") || (b.transactional && (txnID == nil || *txnID != p.txnID)) {
		return 0, codeErr{kerr.InvalidTxnState.Code}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if b.transactional && implicitAdd && (!p.inTxn || !p.addedTPs[tp]) {
		if err := p.beginLocked(); err != nil {
			return 0, err
		}
		p.addedTPs[tp] = true
	}
	if b.transactional && (!p.inTxn || !p.addedTPs[tp]) {
		return 0, codeErr{kerr.InvalidTxnState.Code}
	}
	st := p.seqs[tp]
	if st == nil {
		st = &seqState{}
		p.seqs[tp] = st
	}
	count := int32(len(b.recs))
	if dup, isDup, ok := st.check(b.baseSequence, count); isDup {
		return dup, nil
	} else if !ok {
		return 0, codeErr{kerr.OutOfOrderSequenceNumber.Code}
	}
	base, err := p.p.Produce(tp.Topic, tp.Partition, b.recs)
	if err != nil {
		return 0, err
	}
	st.appended(b.baseSequence, count, base)
	p.wroteLocked(tp, b.baseSequence+count-1, st.lastMs)
	return base, nil
}
