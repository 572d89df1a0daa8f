// This file holds the gathering of a mode's evidence after its workers
// stopped — what the verifier reads besides the ledger's own books: the
// outputs read back read_committed and read_uncommitted (with the
// markers, where the target returns them), the transactions left open,
// the final share state, the dead letters and the checkpoint model's
// sink — and the feeding of it all to the verifier. Both drivers of the
// workers use it: a run on a real clock, which waits for a target still
// settling (Patience), and the simulator on a manual clock, which has
// nothing to wait for (Ledger.Judge).

package ledger

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sort"
	"time"

	"github.com/sharebench/sharebench/loadgen/result"
	"github.com/sharebench/sharebench/loadgen/targets"
	"github.com/sharebench/sharebench/loadgen/verify"
	"github.com/sharebench/sharebench/vocab"
)

// Patience says how long gathering waits for a target that is still
// settling. The zero value waits for nothing: every read stops at the
// first poll that moves no position and every question is asked once, as
// on a manual clock.
type Patience struct {
	// Settle bounds the wait for the transactions still open on the
	// output topic to end (markers are asynchronous; a crashed worker's
	// transaction ends at the coordinator's timeout sweep).
	Settle time.Duration
	// Stall bounds a read to known end offsets: a reader short of them
	// whose position has not moved for this long gives up (ReadTo).
	Stall time.Duration
	// SPSO says whether a share state that reports only start offsets
	// is read again while they still move, for up to spsoSettle and until
	// they stand still for spsoQuiet.
	SPSO bool
	// DLQ bounds the rereads of the dead-letter topic while it holds
	// fewer records than the rejects (a broker writes them
	// asynchronously).
	DLQ time.Duration
	// Now reads the time in ns since the mode's start, the visibility
	// stamp of outputs first seen by the gathering (nil: 0).
	Now func() int64
}

// Gatherer gathers one mode's evidence from its target into its ledger
// and feeds it all to the verifier, in three steps a driver may interleave
// with its own work: ReadSink, Gather, then Options and Feed.
type Gatherer struct {
	t    targets.Target
	cfg  targets.Config
	mode vocab.Mode
	l    *Ledger
	cp   *Checkpoints // the checkpoint model's books (nil: none)
	wait Patience
}

// Gatherer returns the gathering of the evidence of mode, run on t with
// cfg, into l; cp holds the checkpoint model's books when the mode ran it
// (nil: it did not), and wait says how long to wait for a target still
// settling.
func (l *Ledger) Gatherer(t targets.Target, cfg targets.Config, mode vocab.Mode, cp *Checkpoints, wait Patience) *Gatherer {
	return &Gatherer{t: t, cfg: cfg, mode: mode, l: l, cp: cp, wait: wait}
}

// Evidence is what the gathering found besides what it booked in the
// ledger.
type Evidence struct {
	// Open are the transactions left open on the output topic.
	Open []verify.OpenTransaction
	// Markers says whether the target's readers returned the
	// transaction markers.
	Markers bool
	// State is the target's final share state (nil: it reports none).
	State *targets.ShareState
	// DLQ are the records of the mode's dead-letter topic.
	DLQ []verify.DLQRecord
	// sinkPending maps the inputs whose outputs sit in a sink transaction
	// left pre-committed to its id (checkpoint model).
	sinkPending map[uint64]string
	// Incomplete names each read that stopped short of its end offsets:
	// the verdict cannot be PASS.
	Incomplete []string
	// Notes say what the verdict rests on, for its notes.
	Notes []string
}

func (g *Gatherer) now() int64 {
	if g.wait.Now == nil {
		return 0
	}
	return g.wait.Now()
}

// ReadSink books the checkpoint model's sink: its committed entries are
// the mode's outputs (what a reader of the external system sees). It
// comes first, so the outputs a run reports include them.
func (g *Gatherer) ReadSink(ctx context.Context, ev *Evidence) error {
	if g.cp == nil {
		return nil
	}
	pending, notes, err := g.cp.readBack(ctx, g.l, g.t, g.now())
	if err != nil {
		return err
	}
	ev.sinkPending = pending
	ev.Notes = append(ev.Notes, notes...)
	return nil
}

// Gather reads the rest of the evidence (after ReadSink): the open
// transactions, every output at both isolation levels, the final share
// state, the dead letters.
func (g *Gatherer) Gather(ctx context.Context, ev *Evidence) error {
	open, note := g.settleTransactions(ctx)
	if note != "" {
		ev.Notes = append(ev.Notes, note)
	}
	short, err := g.readOutputs(ctx, true)
	if err != nil {
		return fmt.Errorf("reading outputs read_committed: %w", err)
	}
	if short != "" {
		ev.Incomplete = append(ev.Incomplete, "the read_committed read of "+g.cfg.OutputTopic+" "+short)
	}
	markers, short, err := g.readUncommitted(ctx)
	if err != nil {
		return fmt.Errorf("reading outputs read_uncommitted: %w", err)
	}
	if short != "" {
		ev.Incomplete = append(ev.Incomplete, "the read_uncommitted read of "+g.cfg.OutputTopic+" "+short)
	}
	byMarkers := g.l.finishMarkers()
	if markers {
		open = mergeOpen(open, byMarkers)
	}
	g.l.nameOpen(g.cfg.TransactionalIDPrefix, open)
	ev.Open, ev.Markers = open, markers
	if ev.State, err = g.inspectSettled(ctx); err != nil {
		return fmt.Errorf("inspecting the final share state: %w", err)
	}
	if g.cfg.DLQTopic != "" {
		ev.DLQ, short, err = g.readDLQ(ctx, g.l.nRej.Load())
		if err != nil {
			return fmt.Errorf("reading the dead-letter topic %s read_committed: %w", g.cfg.DLQTopic, err)
		}
		if short != "" {
			ev.Incomplete = append(ev.Incomplete, "the read_committed read of the dead-letter topic "+g.cfg.DLQTopic+" "+short)
		}
	}
	return nil
}

// Options completes the verifier's options with what the evidence says
// of itself: what is missing, what cannot be seen, the dead-letter and
// sink books.
func (g *Gatherer) Options(ev *Evidence, opts verify.Options) verify.Options {
	opts.Incomplete = append(opts.Incomplete, ev.Incomplete...)
	if !ev.Markers {
		opts.Unobserved = append(opts.Unobserved, unobservedMarkers)
	}
	opts.DLQ = g.cfg.DLQTopic != ""
	opts.DLQAtLeastOnce = opts.DLQ && g.t.Info().DLQAtLeastOnce
	if ev.sinkPending != nil {
		opts.SinkPending = ev.sinkPending
	}
	return opts
}

// Feed hands the ledger and the evidence to v; tee, when not nil, sees
// each input, output and delivery too.
func (g *Gatherer) Feed(v *verify.Verifier, ev *Evidence, tee *Dump) {
	g.l.each(g.mode, g.cfg.TransactionalIDPrefix, ev.State, func(in verify.Input) {
		v.AddInput(in)
		tee.input(in)
	}, func(o verify.Output) {
		v.AddOutput(o)
		tee.output(o)
	}, func(d verify.Delivery) {
		v.AddDelivery(d)
		tee.delivery(d)
	})
	for _, t := range ev.Open {
		v.AddOpenTransaction(t)
	}
	for _, d := range ev.DLQ {
		v.AddDLQ(d)
	}
}

// readTo reads rd up to topic's end offsets at its isolation level (see
// ReadTo), within the gathering's stall bound.
func (g *Gatherer) readTo(ctx context.Context, topic string, readCommitted bool, rd targets.Reader, take func([]*targets.Record)) (string, error) {
	return readToEndOf(ctx, g.t, g.cfg, topic, readCommitted, rd, g.wait.Stall, take)
}

// readOutputs reads the whole output topic once at the given isolation
// level, up to its end offsets, and adds what it sees to the ledger: with
// read_committed, the outputs the tail reader had not seen yet. short
// says what it could not read (see ReadTo).
func (g *Gatherer) readOutputs(ctx context.Context, readCommitted bool) (short string, err error) {
	rd, err := g.t.NewReader(ctx, g.cfg, g.cfg.OutputTopic, readCommitted)
	if err != nil {
		return "", err
	}
	defer rd.Close()
	return g.readTo(ctx, g.cfg.OutputTopic, readCommitted, rd, func(recs []*targets.Record) {
		vis := g.now()
		for _, r := range recs {
			if !readCommitted {
				g.l.addUncommitted(r)
				continue
			}
			if oh, err := ReadOutput(r.Value); err == nil {
				g.l.addCommitted(outputRec{id: oh.InputID, partition: r.Partition, offset: r.Offset,
					visible: vis, txnSeq: oh.TxnSeq, epoch: oh.Epoch, worker: oh.Worker})
			}
		}
	})
}

// readUncommitted reads the whole output topic with read_uncommitted, up
// to its high watermarks, and adds every output to the ledger, with the
// transaction marker that followed it where the target's reader returns
// markers (it reports whether it did). short says what it could not read.
func (g *Gatherer) readUncommitted(ctx context.Context) (markers bool, short string, err error) {
	mrd, ok := g.t.(targets.MarkerReader)
	if !ok {
		short, err = g.readOutputs(ctx, false)
		return false, short, err
	}
	rd, err := mrd.NewMarkerReader(ctx, g.cfg, g.cfg.OutputTopic)
	if err != nil {
		return false, "", err
	}
	defer rd.Close()
	short, err = g.readTo(ctx, g.cfg.OutputTopic, false, rd, func(recs []*targets.Record) {
		for _, r := range recs {
			g.l.addUncommitted(r)
		}
	})
	return true, short, err
}

// settleTransactions waits (at most the settle patience) until no
// transaction is open on the output topic, and returns those still open,
// with a note when the target cannot list them.
func (g *Gatherer) settleTransactions(ctx context.Context) ([]verify.OpenTransaction, string) {
	ti, ok := g.t.(targets.TransactionInspector)
	if !ok || !g.mode.Transactional() {
		return nil, ""
	}
	deadline := time.Now().Add(g.wait.Settle)
	for {
		open, err := ti.OpenTransactions(ctx, g.cfg, g.cfg.OutputTopic)
		if err != nil {
			// After a broker fault a partition's leader may still be
			// moving: ask again until the grace runs out, so a fault does
			// not hide the hanging transactions it caused.
			if time.Now().Before(deadline) && ctx.Err() == nil {
				sleepCtx(ctx, 200*time.Millisecond)
				continue
			}
			return nil, fmt.Sprintf("the target could not list open transactions (%v): hanging transactions judged from the markers only", err)
		}
		if len(open) == 0 || !time.Now().Before(deadline) || ctx.Err() != nil {
			return openFromTarget(open), ""
		}
		sleepCtx(ctx, 20*time.Millisecond)
	}
}

// spsoSettle bounds how long the final share state is read again while a
// target that reports only share-partition start offsets (Kafka, whose
// persisted start offset trails the acknowledgements) is still moving
// them; spsoQuiet is how long they must stand still to be final.
const (
	spsoSettle = 10 * time.Second
	spsoQuiet  = 2 * time.Second
)

// inspectSettled reads the final share state. When the target reports only
// start offsets and the gathering may wait, it reads again until every
// input partition's start offset has passed its last input, or they stop
// moving: records above a start offset are then judged from what it says,
// not from a snapshot taken while it was still catching up.
func (g *Gatherer) inspectSettled(ctx context.Context) (*targets.ShareState, error) {
	state, err := g.t.Inspect(ctx, g.cfg)
	if errors.Is(err, targets.ErrUnsupported) {
		return nil, nil
	}
	if err != nil || len(state.Records) > 0 || !g.wait.SPSO {
		return state, err
	}
	ends := g.l.inputEnds()
	done := func(st *targets.ShareState) bool {
		for p, end := range ends {
			if st.SPSO[p] < end {
				return false
			}
		}
		return true
	}
	deadline, still := time.Now().Add(spsoSettle), time.Now()
	for !done(state) && time.Now().Before(deadline) && time.Since(still) < spsoQuiet && ctx.Err() == nil {
		sleepCtx(ctx, 200*time.Millisecond)
		next, err := g.t.Inspect(ctx, g.cfg)
		if err != nil {
			return state, nil // keep what was read
		}
		if !maps.Equal(next.SPSO, state.SPSO) {
			still = time.Now()
		}
		state = next
	}
	return state, nil
}

// readDLQ reads the mode's dead-letter topic with read_committed (a copy
// written in an aborted transaction is not a dead letter) up to its end
// offsets, again while it holds fewer than want records, for at most the
// dlq patience. short says what it could not read (see ReadTo).
func (g *Gatherer) readDLQ(ctx context.Context, want int64) (out []verify.DLQRecord, short string, err error) {
	rd, err := g.t.NewReader(ctx, g.cfg, g.cfg.DLQTopic, true)
	if err != nil {
		return nil, "", err
	}
	defer rd.Close()
	take := func(recs []*targets.Record) {
		for _, r := range recs {
			out = append(out, dlqRecord(r))
		}
	}
	deadline := time.Now().Add(g.wait.DLQ)
	for {
		short, err = g.readTo(ctx, g.cfg.DLQTopic, true, rd, take)
		if err != nil || short != "" {
			return out, short, err
		}
		if int64(len(out)) >= want || !time.Now().Before(deadline) || ctx.Err() != nil {
			return out, "", nil
		}
		sleepCtx(ctx, readPoll)
	}
}

// openFromTarget is what the target lists as open transactions, in the
// verifier's terms.
func openFromTarget(ts []targets.OpenTransaction) []verify.OpenTransaction {
	out := make([]verify.OpenTransaction, 0, len(ts))
	for _, t := range ts {
		out = append(out, verify.OpenTransaction{Partition: t.Partition, ProducerID: t.ProducerID, Epoch: t.ProducerEpoch,
			FirstOffset: t.FirstOffset, TransactionalID: t.TransactionalID, Source: verify.OpenSourceTarget})
	}
	return out
}

// mergeOpen adds the transactions found open by the markers that the
// target did not list.
func mergeOpen(fromTarget, fromMarkers []verify.OpenTransaction) []verify.OpenTransaction {
	type key struct {
		p   int32
		pid int64
	}
	seen := map[key]bool{}
	for _, t := range fromTarget {
		seen[key{t.Partition, t.ProducerID}] = true
	}
	out := fromTarget
	for _, t := range fromMarkers {
		if !seen[key{t.Partition, t.ProducerID}] {
			out = append(out, t)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Partition != out[j].Partition {
			return out[i].Partition < out[j].Partition
		}
		return out[i].FirstOffset < out[j].FirstOffset
	})
	return out
}

// unobservedMarkers is what the verifier is told it cannot see when the
// target's readers do not return transaction markers.
const unobservedMarkers = "transaction markers (the target's readers do not return them)"

// Judge reads what the verifier needs from t after the drain (the
// gathering above, waiting for nothing: the caller drained, and the
// simulator's manual clock has nothing to wait for), adds it to the
// ledger and returns the verifier's verdict for mode. cp holds the
// checkpoint model's books when mode ran it (nil: it did not): its sink's
// committed entries are the mode's outputs.
func (l *Ledger) Judge(ctx context.Context, t targets.Target, cfg targets.Config, mode vocab.Mode, cp *Checkpoints, opts verify.Options) (*result.Verification, error) {
	g := l.Gatherer(t, cfg, mode, cp, Patience{})
	var ev Evidence
	if err := g.ReadSink(ctx, &ev); err != nil {
		return nil, err
	}
	if err := g.Gather(ctx, &ev); err != nil {
		return nil, err
	}
	v := verify.New(mode, g.Options(&ev, opts))
	g.Feed(v, &ev, nil)
	out := v.Finish()
	out.Notes = append(out.Notes, ev.Notes...)
	return out, nil
}
