// This file holds the offset lookups by time (ListOffsets with a
// timestamp, or -3 for the largest timestamp).

package engine

import "time"

// OffsetForTime returns the first offset of tp whose record (markers
// aside) has a timestamp at or after ts on the engine clock, and that
// record's timestamp, among the records a reader at iso sees (below the
// last stable offset for ReadCommitted, below the high watermark
// otherwise). ok is false when no such record is there.
func (e *Engine) OffsetForTime(tp TopicPartition, ts time.Duration, iso IsolationLevel) (offset int64, at time.Duration, ok bool, err error) {
	return e.timeLookup(tp, int64(ts), false, iso)
}

// MaxTimestamp returns the offset and timestamp of the record of tp with
// the largest timestamp (the first of them when several share it), among
// the records a reader at iso sees; ok is false for an empty partition.
func (e *Engine) MaxTimestamp(tp TopicPartition, iso IsolationLevel) (offset int64, at time.Duration, ok bool, err error) {
	return e.timeLookup(tp, 0, true, iso)
}

func (e *Engine) timeLookup(tp TopicPartition, ts int64, max bool, iso IsolationLevel) (offset int64, at time.Duration, ok bool, err error) {
	if err = e.enter(); err != nil {
		return
	}
	defer e.exit()
	err = e.withPartition(tp, func(p *partition) error {
		limit := e.hwLocked(p)
		if iso == ReadCommitted {
			limit = e.lsoLocked(p)
		}
		var t int64
		offset, t, ok = p.log.TimeLookup(ts, max, limit)
		at = time.Duration(t)
		return nil
	})
	return
}
