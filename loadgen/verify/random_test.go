// This file holds the randomized tests. Each prints its seed; a failure
// prints the command that replays it (-seed N). TestRandomInjected builds
// ledgers with anomalies of known counts injected into clean traffic;
// TestRandomModel compares the verifier with a deliberately simple model on
// chaotic ledgers.

package verify_test

import (
	"flag"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/sharebench/sharebench/loadgen/result"
	"github.com/sharebench/sharebench/loadgen/verify"
	"github.com/sharebench/sharebench/vocab"
)

var seedFlag = flag.Int64("seed", 0, "seed for the randomized tests (0 picks one from the clock)")

// testSeed returns the seed for t, logs it, and on failure logs the repro
// command.
func testSeed(t *testing.T) int64 {
	t.Helper()
	seed := *seedFlag
	if seed == 0 {
		seed = time.Now().UnixNano()
	}
	t.Logf("seed %d", seed)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("repro: go test ./loadgen/verify -run '^%s$' -seed %d", t.Name(), seed)
		}
	})
	return seed
}

// ledger is a generated pair of ledgers and the counts they should give.
type ledger struct {
	ins   []verify.Input
	outs  []verify.Output
	opens []verify.OpenTransaction
	dlqs  []verify.DLQRecord
	want  map[vocab.Finding]int64
}

// injector builds a ledger of clean traffic with injected findings.
type injector struct {
	r      *rand.Rand
	l      ledger
	nextID uint64
	sparse bool
	seq    int64 // transaction sequence, unique per generated transaction
	off    int64 // next output offset
	dlq    bool  // the group has a dead-letter queue
	dlqOff int64 // next dead-letter offset
}

// deadLetter appends n dead-letter records naming in.
func (g *injector) deadLetter(in *verify.Input, n int) {
	for range n {
		g.dlqOff++
		g.l.dlqs = append(g.l.dlqs, verify.DLQRecord{Partition: in.Partition, Offset: in.Offset, DLQPartition: in.Partition, DLQOffset: g.dlqOff})
	}
}

func (g *injector) id() uint64 {
	if g.sparse {
		g.nextID += 1 + g.r.Uint64N(1<<20)
	} else {
		g.nextID++
	}
	return g.nextID
}

func (g *injector) input(id uint64, state vocab.RecordState, deliveries int) *verify.Input {
	g.l.ins = append(g.l.ins, verify.Input{ID: id, Partition: int32(id % 3), Offset: int64(id), FinalState: state, DeliveryCount: deliveries})
	return &g.l.ins[len(g.l.ins)-1]
}

// output appends an output of id; tid "" makes it non-transactional.
func (g *injector) output(id uint64, tid string, seq int64, size int, committed, aborted bool) {
	g.off++
	epoch := int16(-1)
	if tid != "" {
		epoch = int16(seq % 3)
	}
	g.l.outs = append(g.l.outs, verify.Output{InputID: id, Partition: int32(g.off % 4), Offset: g.off, TransactionalID: tid,
		Epoch: epoch, TxnSeq: seq, TxnSize: size, Committed: committed, Aborted: aborted, VisibleNs: g.off * 10})
}

func (g *injector) txn() (string, int64) {
	g.seq++
	return fmt.Sprintf("w-%d", g.r.IntN(4)), g.seq
}

// accepted appends an accepted input: ACKNOWLEDGED, or below SPSO with no
// state.
func (g *injector) accepted(id uint64, deliveries int) {
	if g.r.IntN(2) == 0 {
		g.input(id, vocab.StateAcknowledged, deliveries)
		return
	}
	g.input(id, vocab.StateUnknown, deliveries).BelowSPSO = true
}

func (g *injector) clean(n int) {
	for n > 0 {
		size := min(1+g.r.IntN(5), n)
		n -= size
		ids := make([]uint64, size)
		for i := range ids {
			ids[i] = g.id()
			g.accepted(ids[i], 1+g.r.IntN(limit))
		}
		if g.r.IntN(5) == 0 { // a non-transactional batch
			for _, id := range ids {
				g.output(id, "", 0, 0, true, false)
			}
			continue
		}
		if g.r.IntN(4) == 0 { // an aborted attempt, read back only uncommitted
			tid, seq := g.txn()
			for _, id := range ids {
				g.output(id, tid, seq, size, false, g.r.IntN(2) == 0)
			}
		}
		tid, seq := g.txn()
		txnSize := size
		if g.r.IntN(2) == 0 {
			txnSize = 0 // unknown
		}
		for _, id := range ids {
			g.output(id, tid, seq, txnSize, true, false)
		}
	}
}

func (g *injector) inject(kind vocab.Finding) {
	g.l.want[kind]++
	switch kind {
	case vocab.KindLost:
		id := g.id()
		g.accepted(id, 1)
		switch g.r.IntN(3) {
		case 1:
			g.output(id, "", 0, 0, false, false)
		case 2:
			tid, seq := g.txn()
			g.output(id, tid, seq, 1, false, true)
		}
	case vocab.KindDuplicate:
		id := g.id()
		g.accepted(id, 2)
		for range 2 + g.r.IntN(2) {
			g.output(id, "", 0, 0, true, false)
		}
	case vocab.KindAbortedRead:
		id := g.id()
		g.accepted(id, 2)
		tid, seq := g.txn()
		g.output(id, tid, seq, 1, true, true)
		g.output(id, "", 0, 0, true, false)
	case vocab.KindTornTransaction:
		tid, seq := g.txn()
		n := 1 + g.r.IntN(3)
		if g.r.IntN(2) == 0 { // fewer committed than written
			for range n {
				id := g.id()
				g.accepted(id, 1)
				g.output(id, tid, seq, n+1, true, false)
			}
			return
		}
		// Part committed, part seen only uncommitted; the uncommitted
		// record's input was committed again by a later transaction.
		for range n {
			id := g.id()
			g.accepted(id, 1)
			g.output(id, tid, seq, 0, true, false)
		}
		id := g.id()
		g.accepted(id, 2)
		g.output(id, tid, seq, 0, false, false)
		tid2, seq2 := g.txn()
		g.output(id, tid2, seq2, 1, true, false)
	case vocab.KindUnresolved:
		id := g.id()
		switch g.r.IntN(4) {
		case 0:
			g.input(id, vocab.StateAvailable, 1)
		case 1:
			g.input(id, vocab.StateAcquired, 1)
		case 2:
			g.input(id, vocab.StateTxPending, 1)
			tid, seq := g.txn()
			g.output(id, tid, seq, 1, false, false)
		default:
			g.input(id, "PENDING", 1) // a state the verifier does not know
			g.output(id, "", 0, 0, true, false)
		}
	case vocab.KindOverDelivered:
		id := g.id()
		g.accepted(id, limit+1+g.r.IntN(3))
		g.output(id, "", 0, 0, true, false)
	case vocab.KindArchivedUnprocessed:
		g.input(g.id(), vocab.StateArchived, 1+g.r.IntN(limit-1))
	case vocab.KindArchivedAtLimit:
		in := g.input(g.id(), vocab.StateArchived, limit)
		if g.dlq {
			g.deadLetter(in, 1)
		}
	case vocab.KindRejected:
		in := g.input(g.id(), vocab.StateArchived, 1+g.r.IntN(limit))
		in.Rejected = true
		if g.dlq {
			g.deadLetter(in, 1)
		}
	case vocab.KindDLQMissing:
		// Archived at the limit or rejected, with no dead letter.
		in := g.input(g.id(), vocab.StateArchived, limit)
		if g.r.IntN(2) == 0 {
			g.l.want[vocab.KindRejected]++
			in.Rejected = true
		} else {
			g.l.want[vocab.KindArchivedAtLimit]++
		}
	case vocab.KindDLQDuplicate:
		switch g.r.IntN(3) {
		case 0: // archived, written twice or more
			g.l.want[vocab.KindRejected]++
			in := g.input(g.id(), vocab.StateArchived, 1+g.r.IntN(limit))
			in.Rejected = true
			g.deadLetter(in, 2+g.r.IntN(2))
		case 1: // accepted and output, yet dead-lettered
			id := g.id()
			g.accepted(id, 1+g.r.IntN(limit))
			g.output(id, "", 0, 0, true, false)
			g.deadLetter(&g.l.ins[len(g.l.ins)-1], 1)
		default: // a dead letter naming an offset with no input
			g.dlqOff++
			g.l.dlqs = append(g.l.dlqs, verify.DLQRecord{Partition: 3, Offset: 1<<40 + g.dlqOff, DLQOffset: g.dlqOff})
		}
	case vocab.KindHangingTransaction:
		g.seq++
		g.l.opens = append(g.l.opens, verify.OpenTransaction{Partition: int32(g.seq % 4), ProducerID: 1000 + g.seq, Epoch: 1, FirstOffset: g.seq, Source: "target"})
	case vocab.KindPhantom:
		id := g.id()
		tid, seq := g.txn()
		if g.r.IntN(2) == 0 {
			tid, seq = "", 0
		}
		g.output(id, tid, seq, 1, true, false)
	}
}

// feed adds ins and outs to v, interleaved at random but each in its own
// order.
func feed(r *rand.Rand, v *verify.Verifier, ins []verify.Input, outs []verify.Output) {
	i, o := 0, 0
	for i < len(ins) || o < len(outs) {
		if o == len(outs) || (i < len(ins) && r.IntN(len(ins)+len(outs)-i-o) < len(ins)-i) {
			v.AddInput(ins[i])
			i++
		} else {
			v.AddOutput(outs[o])
			o++
		}
	}
}

func TestRandomInjected(t *testing.T) {
	t.Parallel()
	seed := testSeed(t)
	r := rand.New(rand.NewPCG(uint64(seed), 0))
	kinds := append(vocab.Anomalies(), vocab.Informational()...)
	for round := range 20 {
		g := &injector{r: r, l: ledger{want: map[vocab.Finding]int64{}}, sparse: r.IntN(4) == 0, dlq: r.IntN(2) == 0}
		if r.IntN(3) == 0 {
			g.nextID = r.Uint64N(1 << 50) // ids need not start at 1
		}
		plan := make([]vocab.Finding, 0)
		for _, k := range kinds {
			if !g.dlq && (k == vocab.KindDLQMissing || k == vocab.KindDLQDuplicate) {
				continue
			}
			if k == vocab.KindAckContradiction {
				continue // needs deliveries, which this generator does not write: ackoutcome_test.go
			}
			for range r.IntN(6) {
				plan = append(plan, k)
			}
		}
		r.Shuffle(len(plan), func(i, j int) { plan[i], plan[j] = plan[j], plan[i] })
		for _, k := range plan {
			g.clean(r.IntN(200))
			g.inject(k)
		}
		g.clean(r.IntN(2000))
		r.Shuffle(len(g.l.ins), func(i, j int) { g.l.ins[i], g.l.ins[j] = g.l.ins[j], g.l.ins[i] })
		r.Shuffle(len(g.l.outs), func(i, j int) { g.l.outs[i], g.l.outs[j] = g.l.outs[j], g.l.outs[i] })

		maxW := r.IntN(4)
		for _, mode := range verify.Modes() {
			v := verify.New(vocab.Mode(mode), verify.Options{DeliveryLimit: limit, MaxWitnesses: maxW, DLQ: g.dlq})
			feed(r, v, g.l.ins, g.l.outs)
			for _, d := range g.l.dlqs {
				v.AddDLQ(d)
			}
			for _, t := range g.l.opens {
				v.AddOpenTransaction(t)
			}
			got := v.Finish()
			if !maps.Equal(got.Counts, g.l.want) {
				t.Fatalf("round %d, %s: counts\n got %v\nwant %v", round, mode, got.Counts, g.l.want)
			}
			if pass := wantPass(t, mode, g.l.want); got.Pass != pass {
				t.Fatalf("round %d, %s: Pass = %v, want %v", round, mode, got.Pass, pass)
			}
			for k, n := range g.l.want {
				wantW := min(int(n), max(maxW, 0))
				if maxW == 0 {
					wantW = min(int(n), verify.DefaultMaxWitnesses)
				}
				if len(got.Witnesses[k]) != wantW {
					t.Fatalf("round %d, %s: %d %s witnesses, want %d", round, mode, len(got.Witnesses[k]), k, wantW)
				}
			}
		}
	}
}

// model is a deliberately simple reimplementation of the definitions: maps
// of whole records, no packing, no chains. It returns the counts and, per
// kind other than torn-transaction, the input ids of the findings in
// ascending order.
func model(ins []verify.Input, outs []verify.Output, deliveryLimit int) (map[vocab.Finding]int64, map[vocab.Finding][]uint64) {
	counts := map[vocab.Finding]int64{}
	ids := map[vocab.Finding][]uint64{}
	find := func(kind vocab.Finding, id uint64) {
		counts[kind]++
		ids[kind] = append(ids[kind], id)
	}
	first := map[uint64]verify.Input{}
	for _, in := range ins {
		if _, ok := first[in.ID]; !ok {
			first[in.ID] = in
		}
	}
	byID := map[uint64][]verify.Output{}
	type txnKey struct {
		tid   string
		epoch int16
		seq   int64
	}
	type txn struct{ committed, pending, total, size int }
	txns := map[txnKey]*txn{}
	for _, o := range outs {
		byID[o.InputID] = append(byID[o.InputID], o)
		if o.TransactionalID == "" {
			continue
		}
		k := txnKey{o.TransactionalID, o.Epoch, o.TxnSeq}
		if txns[k] == nil {
			txns[k] = &txn{}
		}
		x := txns[k]
		x.total++
		switch {
		case o.Committed && !o.Aborted:
			x.committed++
		case !o.Committed && !o.Aborted:
			x.pending++
		}
		x.size = max(x.size, o.TxnSize)
	}
	for _, x := range txns {
		// Torn: committed in part (outputs not visible or aborted beside
		// visible ones, or fewer visible than written).
		if x.committed > 0 && (x.committed < x.total || (x.size > 0 && x.committed != x.size)) {
			counts[vocab.KindTornTransaction]++
		}
	}
	all := map[uint64]bool{}
	for id := range first {
		all[id] = true
	}
	for id := range byID {
		all[id] = true
	}
	for _, id := range slices.Sorted(maps.Keys(all)) {
		committed := 0
		for _, o := range byID[id] {
			if o.Committed && !o.Aborted {
				committed++
				if _, ok := first[id]; !ok {
					find(vocab.KindPhantom, id)
				}
			}
			if o.Committed && o.Aborted {
				find(vocab.KindAbortedRead, id)
			}
		}
		in, ok := first[id]
		if !ok {
			continue
		}
		dc := max(in.DeliveryCount, 0)
		if in.Rejected {
			find(vocab.KindRejected, id)
		}
		if committed > 1 {
			find(vocab.KindDuplicate, id)
		}
		if deliveryLimit > 0 && dc > deliveryLimit {
			find(vocab.KindOverDelivered, id)
		}
		switch {
		case in.FinalState == vocab.StateAcknowledged || (in.FinalState == vocab.StateUnknown && in.BelowSPSO):
			if !in.Rejected && committed == 0 {
				find(vocab.KindLost, id)
			}
		case in.FinalState == vocab.StateUnknown:
			// not below SPSO: not judged
		case in.FinalState == vocab.StateArchived:
			switch {
			case in.Rejected:
			case dc < deliveryLimit:
				find(vocab.KindArchivedUnprocessed, id)
			default:
				find(vocab.KindArchivedAtLimit, id)
			}
		default:
			find(vocab.KindUnresolved, id)
		}
	}
	return counts, ids
}

// chaos returns a ledger with random fields over a small id space, so ids
// collide, repeat and go missing, plus a few sparse ids.
func chaos(r *rand.Rand) ([]verify.Input, []verify.Output) {
	n := 1 + r.IntN(300)
	// A few ids far apart, outside the dense range, each used many times.
	far := make([]uint64, 1+r.IntN(20))
	for i := range far {
		far[i] = r.Uint64() | 1<<63
	}
	id := func() uint64 {
		if r.IntN(10) == 0 {
			return far[r.IntN(len(far))]
		}
		return uint64(1 + r.IntN(n))
	}
	states := []vocab.RecordState{vocab.StateAvailable, vocab.StateAcquired, vocab.StateAcknowledged, vocab.StateArchived,
		vocab.StateTxPending, vocab.StateUnknown, "BOGUS"}
	tids := []string{"", "", "a", "b", "c"}
	var ins []verify.Input
	for range r.IntN(2 * n) {
		ins = append(ins, verify.Input{ID: id(), Partition: int32(r.IntN(3)), Offset: r.Int64N(1000),
			FinalState: states[r.IntN(len(states))], DeliveryCount: r.IntN(limit+3) - 1,
			Rejected: r.IntN(6) == 0, BelowSPSO: r.IntN(2) == 0})
	}
	var outs []verify.Output
	for range r.IntN(2 * n) {
		outs = append(outs, verify.Output{InputID: id(), Partition: int32(r.IntN(3)), Offset: r.Int64N(1000),
			TransactionalID: tids[r.IntN(len(tids))], Epoch: int16(r.IntN(2)), TxnSeq: int64(r.IntN(6)),
			TxnSize: r.IntN(5), Committed: r.IntN(4) != 0, Aborted: r.IntN(5) == 0, VisibleNs: r.Int64N(1e9)})
	}
	return ins, outs
}

// unjudgeable reports whether the model leaves an input unjudged: an id
// given twice, or (the first record of) an id with no final state that is
// not below SPSO. Such a verdict is never PASS.
func unjudgeable(ins []verify.Input) bool {
	seen := map[uint64]bool{}
	for _, in := range ins {
		if seen[in.ID] {
			return true
		}
		seen[in.ID] = true
		if (in.FinalState == "" || in.FinalState == vocab.StateUnknown) && !in.BelowSPSO {
			return true
		}
	}
	return false
}

func TestRandomModel(t *testing.T) {
	t.Parallel()
	seed := testSeed(t)
	r := rand.New(rand.NewPCG(uint64(seed), 1))
	for round := range 300 {
		ins, outs := chaos(r)
		deliveryLimit := []int{0, limit}[r.IntN(2)]
		maxW := 1 + r.IntN(5)
		wantCounts, wantIDs := model(ins, outs, deliveryLimit)
		mode := verify.Modes()[r.IntN(len(verify.Modes()))]
		v := verify.New(vocab.Mode(mode), verify.Options{DeliveryLimit: deliveryLimit, MaxWitnesses: maxW})
		feed(r, v, ins, outs)
		got := v.Finish()
		if !maps.Equal(got.Counts, wantCounts) {
			t.Fatalf("round %d (%d inputs, %d outputs, limit %d): counts\n got %v\nwant %v",
				round, len(ins), len(outs), deliveryLimit, got.Counts, wantCounts)
		}
		if pass := wantPass(t, mode, wantCounts) && !unjudgeable(ins); got.Pass != pass {
			t.Fatalf("round %d, %s: Pass = %v, want %v", round, mode, got.Pass, pass)
		}
		for kind, ids := range wantIDs {
			if gotIDs := witnessIDs(got.Witnesses[kind]); !slices.Equal(gotIDs, ids[:min(len(ids), maxW)]) {
				t.Fatalf("round %d: %s witness ids %v, want the first %d of %v", round, kind, gotIDs, maxW, ids)
			}
		}
		if n := len(got.Witnesses[vocab.KindTornTransaction]); int64(n) != min(wantCounts[vocab.KindTornTransaction], int64(maxW)) {
			t.Fatalf("round %d: %d torn witnesses, want %d", round, n, min(wantCounts[vocab.KindTornTransaction], int64(maxW)))
		}
	}
}

func witnessIDs(ws []result.Witness) []uint64 {
	ids := make([]uint64, 0, len(ws))
	for _, w := range ws {
		ids = append(ids, w.InputID)
	}
	return ids
}
