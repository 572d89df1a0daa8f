// ListTransactions: v0-2.
//
// Every transactional id the engine coordinator holds, filtered by state
// (Kafka's state names), producer id, the time an open transaction has
// run (v1) and an id pattern (v2, a Go regular expression here, as Java's
// is a Java one). Unknown state names come back in UnknownStateFilters.

package serve

import (
	"regexp"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sharebench/sharebench/engine"
)

func init() { register(int16(kmsg.ListTransactions), 0, 2, (*Server).handleListTransactions) }

var txnStateNames = []string{"Empty", "Ongoing", "PrepareCommit", "PrepareAbort", "CompleteCommit", "CompleteAbort", "PrepareEpochFence", "Dead"}

func (s *Server) handleListTransactions(_ *conn, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.ListTransactionsRequest)
	resp := req.ResponseKind().(*kmsg.ListTransactionsResponse)
	var states []string
	for _, f := range req.StateFilters {
		if slices.Contains(txnStateNames, f) {
			states = append(states, f)
		} else {
			resp.UnknownStateFilters = append(resp.UnknownStateFilters, f)
		}
	}
	var re *regexp.Regexp
	if req.TransactionalIDPattern != nil && *req.TransactionalIDPattern != "" {
		var err error
		if re, err = regexp.Compile(*req.TransactionalIDPattern); err != nil {
			resp.ErrorCode = kerr.InvalidRegularExpression.Code
			return resp, nil
		}
	}
	now := s.e.Now()
	wire := s.wireIDs()
	for _, id := range s.e.TransactionalIDs() {
		info, ok := s.e.Transaction(id)
		if !ok {
			continue
		}
		name := txnStateName(info.State)
		pid := info.ProducerID
		if w, ok := wire[pid]; ok {
			pid = w.pid
		}
		switch {
		case len(req.StateFilters) > 0 && !slices.Contains(states, name):
			continue
		case len(req.ProducerIDFilters) > 0 && !slices.Contains(req.ProducerIDFilters, pid):
			continue
		case re != nil && !re.MatchString(id):
			continue
		case req.DurationFilterMillis > 0 && (info.State != engine.TxnOngoing || now-info.Started < time.Duration(req.DurationFilterMillis)*time.Millisecond):
			continue
		}
		ts := kmsg.NewListTransactionsResponseTransactionState()
		ts.TransactionalID, ts.ProducerID, ts.TransactionState = id, pid, name
		resp.TransactionStates = append(resp.TransactionStates, ts)
	}
	return resp, nil
}
