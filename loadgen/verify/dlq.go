// This file holds the dead-letter judgement (KIP-1191): with a DLQ
// configured, every input the share group archived by a reject or at the
// delivery limit must have exactly one dead-letter record (at least one
// when the target promises only that), and no other input may have one.
// The dead-letter records are read back from the DLQ topic with
// read_committed after the drain and matched to inputs by the source
// partition and offset their headers carry.

package verify

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"slices"

	"github.com/sharebench/sharebench/loadgen/result"
	"github.com/sharebench/sharebench/vocab"
)

// DLQFile is the dead-letter ledger of a ledger directory whose ledger.json
// names a DLQ topic.
const DLQFile = "dlq.jsonl"

// UnjudgedDLQProvenance: a dead-letter record whose headers do not say
// which source record it copies, so no input can be judged by it.
const UnjudgedDLQProvenance = "a dead-letter record without readable provenance headers"

// DLQRecord is one record read back from the dead-letter topic.
type DLQRecord struct {
	// SourceTopic, Partition and Offset are the source record's, from the
	// record's headers; Partition and Offset are -1 when the headers do
	// not carry them (see UnjudgedDLQProvenance), SourceTopic "".
	// Every field is written, empty or not, and required when read.
	SourceTopic string `json:"source_topic"`
	Partition   int32  `json:"partition"`
	Offset      int64  `json:"offset"`
	// DeliveryCount and Message are the delivery count and the reason the
	// headers give (0 and "" when absent).
	DeliveryCount int    `json:"delivery_count"`
	Message       string `json:"message"`
	// DLQPartition and DLQOffset locate the dead-letter record itself.
	DLQPartition int32 `json:"dlq_partition"`
	DLQOffset    int64 `json:"dlq_offset"`
}

var (
	dlqKeys = []string{"source_topic", "partition", "offset", "delivery_count", "message", "dlq_partition", "dlq_offset"}
	dlqNeed = dlqKeys
)

// dlqKey is a source record's position.
type dlqKey struct {
	partition int32
	offset    int64
}

// dlqEntry counts one source record's dead-letter records.
type dlqEntry struct {
	n     uint32
	first DLQRecord
}

// AddDLQ adds one record read back from the dead-letter topic. Calling it
// at all (or setting Options.DLQ) tells the verifier a DLQ was configured.
func (v *Verifier) AddDLQ(d DLQRecord) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.mu.done != nil {
		v.mu.late++
		return
	}
	v.mu.dlqRecords++
	if d.Partition < 0 || d.Offset < 0 {
		if v.mu.dlqBad == 0 {
			v.mu.dlqBadFirst = d
		}
		v.mu.dlqBad++
		return
	}
	if v.mu.dlq == nil {
		v.mu.dlq = make(map[dlqKey]*dlqEntry)
	}
	k := dlqKey{d.Partition, d.Offset}
	e := v.mu.dlq[k]
	if e == nil {
		e = &dlqEntry{first: d}
		v.mu.dlq[k] = e
	}
	e.n++
}

// dlqJudged reports whether the run's dead letters are judged.
func (j *judge) dlqJudged() bool { return j.v.opts.DLQ || j.v.mu.dlqRecords > 0 }

// dlqVisit judges input id's dead-letter records. archived says whether
// the input was archived by a reject or at the delivery limit (it must
// have a dead-letter record); known is false when its fate is not known
// well enough to say (it is unjudged or already an anomaly of its own).
func (j *judge) dlqVisit(id uint64, r *rec, archived, known bool) {
	if !j.dlqJudged() {
		return
	}
	k := dlqKey{r.partition, r.offset}
	e := j.v.mu.dlq[k]
	var n uint32
	if e != nil {
		n = e.n
		delete(j.v.mu.dlq, k)
	}
	if !known {
		return
	}
	switch {
	case archived && n == 0:
		if j.find(vocab.KindDLQMissing) {
			w := j.inputWitness(vocab.KindDLQMissing, id, r)
			w.Detail = "archived by a reject or at the delivery limit, but no dead-letter record names it"
			j.add(w)
		}
	case archived && n > 1 || !archived && n > 0:
		if j.find(vocab.KindDLQDuplicate) {
			w := j.inputWitness(vocab.KindDLQDuplicate, id, r)
			if archived {
				w.Detail = fmt.Sprintf("%d dead-letter records name it, want one", n)
			} else {
				w.Detail = fmt.Sprintf("%d dead-letter records name it, but it was not archived by a reject or at the delivery limit, so it should have none", n)
			}
			w.Detail += fmt.Sprintf(" (first at DLQ partition %d offset %d, message %q)", e.first.DLQPartition, e.first.DLQOffset, e.first.Message)
			j.add(w)
		}
	}
}

// dlqFate says whether input r was archived by a reject or at the delivery
// limit, by the same reading of the evidence as visit; known is false where
// visit leaves the input unjudged or finds an anomaly that already says
// its fate is wrong (lost, unresolved, archived-unprocessed).
func (j *judge) dlqFate(r *rec, rejected bool, committed int64, deliveries int, accepted, unknownAck bool) (archived, known bool) {
	switch r.state {
	case codeArchived:
		if !rejected && j.limit > 0 && deliveries < j.limit {
			return false, false // archived-unprocessed
		}
		return true, true
	case codeAcknowledged:
		return false, !rejected
	case codeUnknown:
		ackedTerminal := j.withDeliveries && r.flags&(flagAcceptCommitted|flagRejectCommitted) != 0
		switch {
		case r.flags&flagBelowSPSO == 0 && !ackedTerminal:
			return false, false // not known to be terminal
		case rejected:
			return committed == 0, committed == 0
		case committed > 0 || accepted:
			return false, true
		case unknownAck:
			return false, false
		case j.limit == 0 || deliveries >= j.limit:
			return true, true // archived-at-limit
		}
		return false, false // archived-unprocessed
	}
	return false, false // not terminal: unresolved or unfinished
}

// dlqFinish reports the dead-letter records that name no input (a
// dead-letter record nothing should have written) and those without
// provenance (unjudged).
func (j *judge) dlqFinish() {
	left := slices.SortedFunc(maps.Keys(j.v.mu.dlq), func(a, b dlqKey) int {
		return cmp.Or(cmp.Compare(a.partition, b.partition), cmp.Compare(a.offset, b.offset))
	})
	for _, k := range left {
		e := j.v.mu.dlq[k]
		if j.find(vocab.KindDLQDuplicate) {
			j.add(result.Witness{Kind: vocab.KindDLQDuplicate, Partition: k.partition, Offset: k.offset,
				Detail: fmt.Sprintf("%d dead-letter records name input partition %d offset %d, which holds no input record of the ledger (first at DLQ partition %d offset %d)",
					e.n, k.partition, k.offset, e.first.DLQPartition, e.first.DLQOffset)})
		}
	}
	if n := j.v.mu.dlqBad; n > 0 {
		j.unjudged[UnjudgedDLQProvenance] += n
		d := j.v.mu.dlqBadFirst
		j.v.notes = append(j.v.notes, fmt.Sprintf("verify: %d dead-letter records carry no source partition and offset (first at DLQ partition %d offset %d); the inputs they copy cannot be judged", n, d.DLQPartition, d.DLQOffset))
	}
}

// readDLQ reads dir's dead-letter ledger into v.
func readDLQ(dir string, v *Verifier) error {
	var (
		cur  []byte
		d    DLQRecord
		slow = func() error { d = DLQRecord{}; return json.Unmarshal(cur, &d) }
		fast = func(*uint64) bool { return false }
	)
	return readLines(filepath.Join(dir, DLQFile), func(line []byte) (string, error) {
		cur = line
		if _, reason, err := decodeChecked(line, dlqKeys, dlqNeed, fast, slow); reason != "" {
			return reason, err
		}
		switch {
		case d.DLQPartition < 0 || d.DLQOffset < 0:
			return fmt.Sprintf("dlq_partition %d / dlq_offset %d is negative", d.DLQPartition, d.DLQOffset), nil
		case d.DeliveryCount < 0:
			return fmt.Sprintf("delivery_count %d is negative", d.DeliveryCount), nil
		}
		v.AddDLQ(d)
		return "", nil
	})
}

// EncodeDLQ writes one dead-letter record as a JSON line.
func (e *Encoder) EncodeDLQ(d DLQRecord) error {
	if e.err != nil {
		return e.err
	}
	b, err := json.Marshal(d)
	if err != nil {
		e.err = err
		return err
	}
	e.buf = append(append(e.buf[:0], b...), '\n')
	return e.write()
}
