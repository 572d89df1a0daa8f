// This file holds the reads that show a log as a read_uncommitted Kafka
// client with control records sees it: every record and every transaction
// marker, and the transactions still open.

package plog

import (
	"fmt"
	"slices"
)

// FetchWithMarkers returns up to max entries from offset on, transaction
// markers included (Record.Control), reading nothing at or beyond limit.
// next is the offset to fetch from next time.
func (l *Log) FetchWithMarkers(offset int64, max int, limit int64, dst []Record) (recs []Record, next int64, err error) {
	limit = min(limit, l.next)
	if offset < l.start || offset > limit {
		return dst, offset, fmt.Errorf("%w: %d not in [%d, %d]", ErrOffsetOutOfRange, offset, l.start, limit)
	}
	o := offset
	for ; o < limit && max > 0; o++ {
		s, e := l.at(o)
		dst = append(dst, record(o, s, e))
		max--
	}
	return dst, o, nil
}

// OpenTxn is a transaction open on the log.
type OpenTxn struct {
	ProducerID  int64
	Epoch       int16
	FirstOffset int64
}

// OpenTxns returns the open transactions, oldest first.
func (l *Log) OpenTxns() []OpenTxn {
	out := make([]OpenTxn, 0, len(l.ongoing))
	for pid, first := range l.ongoing {
		epoch, _ := l.ProducerEpoch(pid)
		out = append(out, OpenTxn{ProducerID: pid, Epoch: epoch, FirstOffset: first})
	}
	slices.SortFunc(out, func(a, b OpenTxn) int {
		if a.FirstOffset != b.FirstOffset {
			return int(a.FirstOffset - b.FirstOffset)
		}
		return int(a.ProducerID - b.ProducerID)
	})
	return out
}
