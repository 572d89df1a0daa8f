// DescribeTransactions: v0.
//
// The engine coordinator's state of each transactional id: state, timeout,
// start (Unix milliseconds; -1 when no transaction is open), producer id and
// epoch as the producer's client holds them (after an epoch overflow, the
// new producer id), and the output partitions of the open transaction. An unknown id is
// TRANSACTIONAL_ID_NOT_FOUND.

package serve

import (
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sharebench/sharebench/engine"
)

func init() { register(int16(kmsg.DescribeTransactions), 0, 0, (*Server).handleDescribeTransactions) }

func (s *Server) handleDescribeTransactions(_ *conn, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.DescribeTransactionsRequest)
	resp := req.ResponseKind().(*kmsg.DescribeTransactionsResponse)
	wire := s.wireIDs()
	for _, id := range req.TransactionalIDs {
		st := kmsg.NewDescribeTransactionsResponseTransactionState()
		st.TransactionalID = id
		info, ok := s.e.Transaction(id)
		if !ok {
			st.ErrorCode = kerr.TransactionalIDNotFound.Code
			resp.TransactionStates = append(resp.TransactionStates, st)
			continue
		}
		st.State = txnStateName(info.State)
		st.TimeoutMillis = int32(info.Timeout / time.Millisecond)
		st.StartTimestamp = -1
		if info.State == engine.TxnOngoing || info.State == engine.TxnPrepareCommit || info.State == engine.TxnPrepareAbort {
			st.StartTimestamp = s.tsBase + int64(info.Started/time.Millisecond)
			byTopic := map[string][]int32{}
			for _, tp := range info.Partitions {
				byTopic[tp.Topic] = append(byTopic[tp.Topic], tp.Partition)
			}
			for _, t := range sortedKeys(byTopic) {
				rt := kmsg.NewDescribeTransactionsResponseTransactionStateTopic()
				rt.Topic, rt.Partitions = t, byTopic[t]
				st.Topics = append(st.Topics, rt)
			}
		}
		st.ProducerID, st.ProducerEpoch = info.ProducerID, info.Epoch
		if w, ok := wire[info.ProducerID]; ok {
			st.ProducerID, st.ProducerEpoch = w.pid, w.epoch
		}
		resp.TransactionStates = append(resp.TransactionStates, st)
	}
	return resp, nil
}
