// Fetch: v4-16 (v13+ names topics by id).
//
// Sessionless: every response has session id 0, so clients send full
// fetches. read_uncommitted reads through Engine.FetchWithMarkers: every
// record, aborted ones included, and each transaction marker as a control
// batch with the producer id and epoch it was written with, as Kafka's log
// holds them. read_committed reads through Engine.Fetch, which filters
// (records of aborted transactions and markers are never sent), so the
// aborted-transaction list is always empty; where the records sent end
// before the offset to fetch next, a commit control batch of producer -1
// at that offset minus one moves the reader past the hidden ones. With nothing to
// return the request waits up to MaxWaitMillis for a produce or a marker on
// one of its topics.

package serve

import (
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sharebench/sharebench/engine"
)

func init() { register(int16(kmsg.Fetch), 4, 16, (*Server).handleFetch) }

// maxFetchRecords bounds the records one partition's read asks the engine
// for; PartitionMaxBytes bounds what is sent.
const maxFetchRecords = 4096

// noRecords is the empty record set of a partition with nothing to send
// (shared, never written to; putBuf leaves it alone).
var noRecords = []byte{}

// noAborted is the aborted-transaction list of every read_committed
// partition (shared, never written to).
var noAborted = []kmsg.FetchResponseTopicPartitionAbortedTransaction{}

func (s *Server) handleFetch(c *conn, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.FetchRequest)
	var deadline time.Time
	if req.MaxWaitMillis > 0 {
		deadline = time.Now().Add(time.Duration(req.MaxWaitMillis) * time.Millisecond)
	}
	if req.SessionID != 0 {
		resp := req.ResponseKind().(*kmsg.FetchResponse)
		resp.ErrorCode = kerr.FetchSessionIDNotFound.Code
		return resp, nil
	}
	for {
		var waits []<-chan struct{}
		for _, t := range req.Topics {
			name := t.Topic
			if req.Version >= 13 {
				name, _ = s.topicName(t.TopicID)
			}
			if ch, err := s.e.Notify(name); err == nil {
				waits = append(waits, ch)
			}
		}
		resp, n := s.fetchOnce(c, req)
		if n >= int(max(req.MinBytes, 1)) || deadline.IsZero() || !time.Now().Before(deadline) {
			return resp, nil
		}
		if !waitAny(waits, deadline, c.gone) {
			return resp, nil
		}
	}
}

// waitAny waits until one of chans is closed (true), or until the deadline
// or done (false).
func waitAny(chans []<-chan struct{}, deadline time.Time, done <-chan struct{}) bool {
	d := time.Until(deadline)
	if d <= 0 {
		return false
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	if len(chans) == 0 {
		select {
		case <-timer.C:
		case <-done:
		}
		return false
	}
	// One goroutine per channel would leak on timeout; polling each in a
	// loop with a short tick keeps this bounded and cheap.
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		if len(chans) == 1 {
			select {
			case <-chans[0]:
				return true
			case <-timer.C:
				return false
			case <-done:
				return false
			}
		}
		for _, ch := range chans {
			select {
			case <-ch:
				return true
			default:
			}
		}
		select {
		case <-tick.C:
		case <-timer.C:
			return false
		case <-done:
			return false
		}
	}
}

// fetchOnce reads every partition once and returns the response and the
// record bytes it holds.
func (s *Server) fetchOnce(c *conn, req *kmsg.FetchRequest) (*kmsg.FetchResponse, int) {
	resp := req.ResponseKind().(*kmsg.FetchResponse)
	iso := engine.ReadUncommitted
	if req.IsolationLevel == 1 {
		iso = engine.ReadCommitted
	}
	total := 0
	budget := int(req.MaxBytes)
	if budget <= 0 {
		budget = 50 << 20
	}
	var w batchWriter
	for _, t := range req.Topics {
		name, known := t.Topic, true
		if req.Version >= 13 {
			name, known = s.topicName(t.TopicID)
		}
		rt := kmsg.NewFetchResponseTopic()
		rt.Topic, rt.TopicID = t.Topic, t.TopicID
		for _, p := range t.Partitions {
			rp := kmsg.NewFetchResponseTopicPartition()
			rp.Partition = p.Partition
			rp.PreferredReadReplica = -1
			rp.HighWatermark, rp.LastStableOffset, rp.LogStartOffset = -1, -1, -1
			// Every partition, one with an error too, is answered with a
			// record set, empty until filled and never null: Kafka answers
			// MemoryRecords.EMPTY for a partition it read nothing from,
			// and clients such as librdkafka refuse a null record set
			// (MessageSetSize -1) and then never see the end of the
			// partition.
			rp.RecordBatches = noRecords
			if !known {
				rp.ErrorCode = kerr.UnknownTopicID.Code
				rt.Partitions = append(rt.Partitions, rp)
				continue
			}
			tp := engine.TopicPartition{Topic: name, Partition: p.Partition}
			start, hw, lso, err := s.e.Offsets(tp)
			if err != nil {
				rp.ErrorCode = partErrCode(err)
				rt.Partitions = append(rt.Partitions, rp)
				continue
			}
			rp.HighWatermark, rp.LastStableOffset, rp.LogStartOffset = hw, lso, start
			if p.FetchOffset < start || p.FetchOffset > hw {
				rp.ErrorCode = kerr.OffsetOutOfRange.Code
				rt.Partitions = append(rt.Partitions, rp)
				continue
			}
			// A partition read under read_committed carries an
			// aborted-transaction list, empty (the engine leaves aborted
			// records out) and not null, as Kafka's read answers one; a
			// partition with an error has none (null), as in Kafka.
			if iso == engine.ReadCommitted {
				rp.AbortedTransactions = noAborted
			}
			limit := min(int(p.PartitionMaxBytes), budget-total)
			if limit > 0 {
				if b := s.readPartition(c, &w, tp, p.FetchOffset, start, limit, iso); b != nil {
					rp.RecordBatches = b
					total += len(b)
				}
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp, total
}

// readPartition encodes up to limit bytes of records from offset (at least
// one record when there is one); start is the log start offset.
// The records are read into c's buffer, reused from read to read.
//
// A batch produced compressed goes out whole, as Kafka sends it: a fetch
// from inside one reads from its base offset (the client skips the records
// below the offset it asked for), a read that ends inside one reads on to
// its end, and the byte limit never cuts one short.
func (s *Server) readPartition(c *conn, w *batchWriter, tp engine.TopicPartition, offset, start int64, limit int, iso engine.IsolationLevel) []byte {
	n := min(max(limit/64, 1), maxFetchRecords)
	from := offset
	if b, ok := s.state.stored.at(tp, offset); ok {
		from = max(b.base, start)
	}
	recs, next, err := s.fetchRecords(c.pollBuf[:0], tp, from, n, iso)
	var coded []codedBatch
	if err == nil && len(recs) > 0 {
		lastRec := recs[len(recs)-1].Offset
		coded = s.state.stored.covering(nil, tp, recs[0].Offset, lastRec)
		if k := len(coded); k > 0 && coded[k-1].last > lastRec {
			// The read stopped inside a compressed batch: read its rest.
			var more int64
			recs, more, err = s.fetchRecords(recs, tp, lastRec+1, int(coded[k-1].last-lastRec), iso)
			next = max(next, more)
		}
	}
	if cap(recs) <= maxPollBuf {
		c.pollBuf = recs[:0]
	}
	if err != nil || (len(recs) == 0 && next <= offset) {
		return nil
	}
	// Encoding stops once past limit, so past limit only the last record
	// (or the rest of its compressed batch) and the batch headers need
	// room.
	w.reset(getBuf(min(encodedSize(recs), limit+64<<10)), s.tsBase)
	w.setCoded(coded)
	last := from - 1
	for i := range recs {
		if i > 0 && len(w.dst) >= limit && !w.inOpenCoded(recs[i].Offset) {
			return w.bytes()
		}
		w.add(&recs[i])
		last = recs[i].Offset
	}
	w.skipTo(w.shownThrough(last), next)
	return w.bytes()
}

// fetchRecords reads up to n records of tp from offset, appended to buf:
// read_committed through Engine.FetchAppend, read_uncommitted with the
// transaction markers (control batches at their offsets).
func (s *Server) fetchRecords(buf []engine.Record, tp engine.TopicPartition, offset int64, n int, iso engine.IsolationLevel) ([]engine.Record, int64, error) {
	if iso == engine.ReadCommitted {
		return s.e.FetchAppend(buf, tp, offset, n, iso)
	}
	return s.e.FetchWithMarkersAppend(buf, tp, offset, n)
}
