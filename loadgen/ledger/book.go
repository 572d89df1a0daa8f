// This file holds the booking of one worker's calls in the ledger (Book),
// which both drivers of the pipeline's machines share: the load generator's
// goroutine shell and the simulator, which steps the machine on a manual
// clock and judges each seed as a run is judged.

package ledger

import (
	"github.com/sharebench/sharebench/loadgen/pipeline"
	"github.com/sharebench/sharebench/loadgen/targets"
	"github.com/sharebench/sharebench/vocab"
)

// AddInput records an input written at partition and offset, with the
// id its header carries (PutInputHeader).
func (l *Ledger) AddInput(id uint64, partition int32, offset, intendedNs int64) {
	l.AddInputs([]uint64{id}, []Input{{Partition: partition, Offset: offset, IntendedNs: intendedNs}})
}

// Book books one worker incarnation's calls in the ledger: the deliveries
// its polls returned, the acknowledgements it sent and their fates, the
// transactions it opened and what it was told of them. Records carry
// their delivery's ledger tag (targets.Record.Tag) from the poll on.
type Book struct {
	l      *Ledger
	worker int
	inc    int64
	now    func() int64 // ns since the mode's start

	txnSeq int64 // transactions opened by this incarnation
	epoch  int16
	txnIdx int32 // the ledger's record of the open transaction
	// Deliveries whose acks are staged in the open transaction; rejects
	// settle their inputs once it commits.
	stagedRejects []int64
	tagBuf        []int64
}

// NewBook starts the book of incarnation inc of worker (its id, which
// names its transactional id); now reads the time in ns since the mode's
// start.
func (l *Ledger) NewBook(worker int, inc int64, now func() int64) *Book {
	return &Book{l: l, worker: worker, inc: inc, now: now}
}

// Polled books a poll that returned recs (tagging each) and, in implicit
// mode, accepted the deliveries tagged accepted (the previous poll's).
func (b *Book) Polled(accepted []int64, recs []*targets.Record) {
	if len(accepted) > 0 {
		b.l.setAck(accepted, ackAccept, fateCommitted)
	}
	if len(recs) > 0 {
		b.l.addDeliveries(b.worker, recs, b.now())
	}
}

// Began books a transaction w opened.
func (b *Book) Began(w targets.Worker) {
	b.txnSeq++
	_, b.epoch = w.TxnInfo()
	var pid int64
	if p, ok := w.(targets.ProducerIDer); ok {
		pid = p.ProducerID()
	}
	b.txnIdx = b.l.beginTxn(b.worker, b.inc<<32|b.txnSeq, pid, b.epoch)
	b.stagedRejects = b.stagedRejects[:0]
}

// OutputTxn is what an output's header names of the transaction that
// writes it (open: one is), or of the incarnation (deferred mode).
func (b *Book) OutputTxn(open bool, m vocab.Mode, epoch int16) (seq int64, ep int16) {
	if open || m == vocab.Deferred {
		return b.inc<<32 | b.txnSeq, b.epoch
	}
	return 0, epoch
}

// Produced books n outputs written in the open transaction.
func (b *Book) Produced(n int) { b.l.txnOutputs(b.txnIdx, n) }

// Staged books a staging of recs' acks (reject or accept) that returned
// err.
func (b *Book) Staged(recs []*targets.Record, reject bool, err error) {
	kind := ackAccept
	if reject {
		kind = ackReject
	}
	if err != nil {
		b.l.setAck(b.tags(recs), kind, fateFailed)
		return
	}
	b.l.stageAcks(b.tags(recs), kind, b.txnIdx)
	if reject {
		b.stagedRejects = AppendTags(b.stagedRejects, recs)
	}
}

// Acked books an acknowledgement of recs with t that returned err: where
// err names the records the target refused (*targets.RefusedError), those
// did not take effect and the others did; no error means all took effect.
func (b *Book) Acked(recs []*targets.Record, t vocab.AckType, err error) {
	kind := ackAccept
	switch t {
	case vocab.AckReject:
		kind = ackReject
	case vocab.AckRelease:
		kind = ackRelease
	}
	b.l.setAckResult(b.tags(recs), kind, err)
}

// CommitSent books that the worker asks to commit its open transaction.
func (b *Book) CommitSent() { b.l.commitSent(b.txnIdx) }

// Committed books the commit of the open transaction: its staged rejects
// took effect.
func (b *Book) Committed() {
	b.l.endTxn(b.txnIdx, outcomeCommitted)
	b.l.rejectStaged(b.stagedRejects)
	b.stagedRejects = b.stagedRejects[:0]
}

// Aborted books the abort of the open transaction.
func (b *Book) Aborted() { b.l.endTxn(b.txnIdx, outcomeAborted) }

// Unresolved books that the worker never learns how its open transaction
// ended.
func (b *Book) Unresolved() { b.l.endTxn(b.txnIdx, outcomeUnknown) }

// Closed books a close that may have accepted recs (the last poll's in
// implicit mode): whether it did, the close does not say.
func (b *Book) Closed(recs []*targets.Record) {
	if len(recs) > 0 {
		b.l.setAck(b.tags(recs), ackAccept, fateUnknown)
	}
}

// Done books the outcome res of action a, as the load generator's worker
// shell books each call: for a driver that makes the calls a machine
// names one at a time and keeps a poll's records until their next use
// (the simulator).
func (b *Book) Done(w targets.Worker, open bool, a pipeline.Action[*targets.Record], res pipeline.Result[*targets.Record]) {
	err := res.Err
	switch a.Op {
	case pipeline.OpPoll:
		if err == nil {
			b.Polled(AppendTags(nil, a.Recs), res.Recs)
		}
	case pipeline.OpBegin:
		if err == nil {
			b.Began(w)
		}
	case pipeline.OpProduce:
		if err == nil && open {
			b.Produced(len(a.Recs))
		}
	case pipeline.OpStageAccept, pipeline.OpStageReject:
		b.Staged(a.Recs, a.Op == pipeline.OpStageReject, err)
	case pipeline.OpAccept:
		b.Acked(a.Recs, vocab.AckAccept, err)
	case pipeline.OpReject:
		b.Acked(a.Recs, vocab.AckReject, err)
	case pipeline.OpRelease, pipeline.OpReleaseHeld:
		b.Acked(a.Recs, vocab.AckRelease, err)
	case pipeline.OpCommit:
		// (CommitSent before the call.)
		if err == nil {
			b.Committed()
		}
	case pipeline.OpAbort:
		if err == nil {
			b.Aborted()
		}
	case pipeline.OpClose:
		b.Closed(a.Recs)
	}
}

// AppendTags appends the ledger tags of recs (targets.Record.Tag, set when
// a Book books their poll) to dst: what a driver keeps of a poll's records
// whose memory the target may reuse at the next poll (Polled's accepted).
func AppendTags(dst []int64, recs []*targets.Record) []int64 {
	for _, r := range recs {
		dst = append(dst, r.Tag)
	}
	return dst
}

// tags returns the ledger tags of recs, in a buffer reused until the next
// call.
func (b *Book) tags(recs []*targets.Record) []int64 {
	b.tagBuf = AppendTags(b.tagBuf[:0], recs)
	return b.tagBuf
}
