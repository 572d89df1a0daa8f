// EndTxn: v0-5 (v5 only under transaction.version 2).
//
// Commit or Abort of the engine transaction: they return once the decision
// is durable; the markers follow asynchronously, as Kafka's coordinator
// sends them after PREPARE_* (offsets still pending answer OffsetFetch with
// RequireStable as UNSTABLE_OFFSET_COMMIT meanwhile). A retried EndTxn with the same
// outcome as the one that ended the last transaction succeeds; a commit
// with no transaction open is INVALID_TXN_STATE; an abort with none open
// succeeds. v5 (KIP-890 part 2) bumps the producer's epoch with every
// transaction end and answers it: the client's next transaction runs at
// the new epoch with sequence numbers from 0, so a zombie still at the old
// one is fenced. When the epoch would pass the largest int16 less one, the
// producer gets a new producer id at epoch 0 instead, as Kafka's
// coordinator does. v0-4 clients keep the epoch InitProducerId gave them.

package serve

import (
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(int16(kmsg.EndTxn), 0, 5, (*Server).handleEndTxn) }

func (s *Server) handleEndTxn(_ *conn, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.EndTxnRequest)
	resp := req.ResponseKind().(*kmsg.EndTxnResponse)
	p, code := s.lookupProducer(req.ProducerID, req.ProducerEpoch)
	if code != 0 {
		resp.ErrorCode = code
		return resp, nil
	}
	if p.txnID != req.TransactionalID {
		resp.ErrorCode = kerr.InvalidProducerIDMapping.Code
		return resp, nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	ended := p.inTxn
	resp.ErrorCode = p.endLocked(req.Commit)
	if req.Version >= 5 && resp.ErrorCode == 0 {
		if ended {
			s.bumpEpochLocked(p, req.ProducerID)
		}
		resp.ProducerID, resp.ProducerEpoch = p.wirePID, p.epoch
	}
	if ended && resp.ErrorCode == 0 {
		p.endedLocked(req.ProducerID, time.Now().UnixMilli())
	}
	return resp, nil
}

// bumpEpochLocked moves p to its next wire epoch after a transaction end
// (KIP-890 part 2): sequence numbers restart, and at the epoch's limit a
// new producer id takes over at epoch 0. p.mu is held.
func (s *Server) bumpEpochLocked(p *producer, pid int64) {
	clear(p.seqs)
	if p.epoch < s.cfg.maxEpoch {
		p.epoch++
		return
	}
	s.state.mu.Lock()
	s.state.mu.nextAlias++
	alias := s.state.mu.nextAlias
	delete(s.state.mu.producers, pid)
	s.state.mu.producers[alias] = p
	if p.txnID != "" {
		s.state.mu.txnIDs[p.txnID] = alias
	}
	s.state.mu.Unlock()
	p.wirePID, p.epoch = alias, 0
}

// endLocked ends the open transaction; p.mu is held.
func (p *producer) endLocked(commit bool) int16 {
	want := int8(2)
	if commit {
		want = 1
	}
	if !p.inTxn {
		if p.lastEnd == want || !commit {
			return 0
		}
		return kerr.InvalidTxnState.Code
	}
	var err error
	if commit {
		err = p.p.Commit()
	} else {
		err = p.p.Abort()
	}
	if err != nil {
		return errCode(err)
	}
	p.inTxn = false
	p.lastEnd = want
	return 0
}
