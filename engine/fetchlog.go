// This file holds the reads a Kafka client makes to judge transactions for
// itself: a read_uncommitted fetch that keeps the transaction markers, and
// the list of transactions open on a partition (Kafka's DescribeProducers).

package engine

// FetchWithMarkers reads up to max entries of one partition from offset
// like a read_uncommitted Fetch, but keeps the transaction markers: a
// marker is a Record with Control set (Commit says which), carrying the
// producer id and the epoch the marker was written with. next is the
// offset to fetch next.
func (e *Engine) FetchWithMarkers(tp TopicPartition, offset int64, max int) ([]Record, int64, error) {
	return e.FetchWithMarkersAppend(nil, tp, offset, max)
}

// FetchWithMarkersAppend is FetchWithMarkers appending to dst, so a caller
// that fetches in a loop reuses one buffer.
func (e *Engine) FetchWithMarkersAppend(dst []Record, tp TopicPartition, offset int64, max int) ([]Record, int64, error) {
	if err := e.enter(); err != nil {
		return dst, offset, err
	}
	defer e.exit()
	out := dst
	next := offset
	scratch := getLogRecords()
	defer putLogRecords(scratch)
	err := e.withPartition(tp, func(p *partition) error {
		recs, n, err := p.log.FetchWithMarkers(offset, max, e.hwLocked(p), (*scratch)[:0])
		*scratch = recs
		if err != nil {
			return err
		}
		next = n
		for i := range recs {
			r := toRecord(tp, &recs[i])
			r.Control, r.Commit = recs[i].Control, recs[i].Commit
			out = append(out, r)
		}
		return nil
	})
	return out, next, err
}

// OpenTransaction is a transaction open on a partition.
type OpenTransaction struct {
	ProducerID  int64
	Epoch       int16
	FirstOffset int64
}

// OpenTransactions lists the transactions open on a partition, oldest
// first: each holds the partition's last stable offset at its first offset.
func (e *Engine) OpenTransactions(tp TopicPartition) ([]OpenTransaction, error) {
	if err := e.enter(); err != nil {
		return nil, err
	}
	defer e.exit()
	var out []OpenTransaction
	err := e.withPartition(tp, func(p *partition) error {
		for _, t := range p.log.OpenTxns() {
			out = append(out, OpenTransaction{ProducerID: t.ProducerID, Epoch: t.Epoch, FirstOffset: t.FirstOffset})
		}
		return nil
	})
	return out, err
}
