// EndTxn: v0-4.
//
// Commit or Abort of the engine transaction: they return once the decision
// is durable; the markers follow asynchronously, as Kafka's coordinator
// sends them after PREPARE_* (offsets still pending answer OffsetFetch with
// RequireStable as UNSTABLE_OFFSET_COMMIT meanwhile). A retried EndTxn with the same
// outcome as the one that ended the last transaction succeeds; a commit
// with no transaction open is INVALID_TXN_STATE; an abort with none open
// succeeds. v5 (KIP-890's epoch bump in the response) is not served:
// clients keep the epoch InitProducerId gave them.

package serve

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(int16(kmsg.EndTxn), 0, 4, (*Server).handleEndTxn) }

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
	resp.ErrorCode = p.endLocked(req.Commit)
	return resp, nil
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
