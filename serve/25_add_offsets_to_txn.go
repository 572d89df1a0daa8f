// AddOffsetsToTxn: v0-4.
//
// Opens the engine transaction if none is open and records the group; the
// offsets themselves come with TxnOffsetCommit.

package serve

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(int16(kmsg.AddOffsetsToTxn), 0, 4, (*Server).handleAddOffsetsToTxn) }

func (s *Server) handleAddOffsetsToTxn(_ *conn, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.AddOffsetsToTxnRequest)
	resp := req.ResponseKind().(*kmsg.AddOffsetsToTxnResponse)
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
	if err := p.beginLocked(); err != nil {
		resp.ErrorCode = errCode(err)
		return resp, nil
	}
	p.addedGrps[req.Group] = true
	return resp, nil
}
