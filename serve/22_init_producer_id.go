// InitProducerId: v0-5.
//
// Without a transactional id: a new idempotent engine producer. With one:
// a new transactional engine producer for the id, which fences the previous
// one and aborts its open transaction. A client that names its current
// producer id and epoch (KIP-360, v3+) and holds an older epoch than the
// id's current one is fenced.

package serve

import (
	"errors"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sharebench/sharebench/engine"
)

func init() { register(int16(kmsg.InitProducerID), 0, 5, (*Server).handleInitProducerID) }

func (s *Server) handleInitProducerID(_ *conn, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.InitProducerIDRequest)
	resp := req.ResponseKind().(*kmsg.InitProducerIDResponse)
	resp.ProducerID, resp.ProducerEpoch = -1, -1
	id := ""
	if req.TransactionalID != nil {
		id = *req.TransactionalID
	}
	cfg := engine.ProducerConfig{TransactionalID: id, Idempotent: id == ""}
	if id != "" {
		if req.TransactionTimeoutMillis <= 0 {
			resp.ErrorCode = kerr.InvalidTransactionTimeout.Code
			return resp, nil
		}
		cfg.TransactionTimeout = time.Duration(req.TransactionTimeoutMillis) * time.Millisecond
		if req.ProducerID >= 0 {
			s.state.mu.Lock()
			cur := s.state.mu.producers[s.state.mu.txnIDs[id]]
			s.state.mu.Unlock()
			if cur != nil && cur.wirePID == req.ProducerID {
				cur.mu.Lock()
				stale := req.ProducerEpoch < cur.epoch
				cur.mu.Unlock()
				if stale {
					resp.ErrorCode = kerr.ProducerFenced.Code
					return resp, nil
				}
			}
		}
	}
	ep, err := s.e.NewProducer(cfg)
	if err != nil {
		if errors.Is(err, engine.ErrInvalidConfig) {
			resp.ErrorCode = kerr.InvalidTransactionTimeout.Code
		} else {
			resp.ErrorCode = errCode(err)
		}
		return resp, nil
	}
	p := &producer{
		p: ep, txnID: id, epoch: ep.Epoch(), timeout: req.TransactionTimeoutMillis,
		seqs: map[engine.TopicPartition]*seqState{}, addedTPs: map[engine.TopicPartition]bool{}, addedGrps: map[string]bool{},
	}
	pid := ep.ProducerID()
	p.wirePID = pid
	// The producer this one replaces keeps what the partitions know of
	// it: under the same producer id its entries carry over to p (a
	// partition keeps one entry per producer id), under another it is
	// retired with them. Its entries are copied before p is published,
	// with state.mu released (lock order); the engine has fenced it, so
	// it writes no more.
	if id != "" {
		s.state.mu.Lock()
		same := s.state.mu.producers[pid]
		s.state.mu.Unlock()
		if same != nil {
			same.mu.Lock()
			p.entries = make(map[entryKey]*producerEntry, len(same.entries))
			for k, e := range same.entries {
				c := *e
				p.entries[k] = &c
			}
			same.mu.Unlock()
		}
	}
	s.state.mu.Lock()
	if id != "" {
		if old, ok := s.state.mu.txnIDs[id]; ok && old != pid {
			if op := s.state.mu.producers[old]; op != nil {
				s.retireLocked(op, time.Now())
			}
			delete(s.state.mu.producers, old)
		}
		s.state.mu.txnIDs[id] = pid
	}
	s.state.mu.producers[pid] = p
	s.state.mu.Unlock()
	resp.ProducerID, resp.ProducerEpoch = pid, p.epoch
	return resp, nil
}
