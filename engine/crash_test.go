// This file tests crash recovery at the crash points of KIP-1289's test
// plan (docs/design.md §4 invariants 9 and 12): a whole-engine crash ("broker
// failure during PREPARE") and a coordinator-only crash ("coordinator
// crash before/after prepare") after PREPARE_* is logged, after each
// marker, after all markers before COMPLETE_*, and after COMPLETE_*, for
// commits and aborts, with outputs and acknowledgements in one transaction
// and with acknowledgement-only transactions; a crash inside an ONGOING
// transaction ("consumer crash during transaction"); torn tails cut at
// every byte of a log's last record and flipped bits in the data
// directory.

package engine_test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sharebench/sharebench/engine"
)

// crashHook returns a hook that fails with err at the n-th matching call
// once armed.
type crashHook struct {
	armed  atomic.Bool
	point  engine.HookPoint
	marker int
	err    error
	struck atomic.Int32
}

func (h *crashHook) hook(pt engine.HookPoint, info engine.HookInfo) error {
	if !h.armed.Load() || pt != h.point || (pt == engine.HookTxnMarker && info.Marker != h.marker) {
		return nil
	}
	h.armed.Store(false)
	h.struck.Add(1)
	return fmt.Errorf("test: %w", h.err)
}

// ctpSetup runs the transaction up to its end: 2 input partitions of 5
// records, a transactional member that polled them all, a producer "tx"
// that produced one output per input (withOutputs) and staged ACCEPT for
// all of them.
func ctpSetup(t testing.TB, e *engine.Engine, withOutputs bool) (*engine.ShareMember, *engine.Producer) {
	t.Helper()
	durOK(t, e.CreateTopic("in", 2))
	durOK(t, e.CreateTopic("out", 1))
	durProduce(t, e, "in", 0, 5, "a")
	durProduce(t, e, "in", 1, 5, "b")
	m := durGet[*engine.ShareMember](t)(e.JoinShareGroup("g", []string{"in"}, engine.AckTransactional))
	recs := durGet[[]engine.Record](t)(m.Poll(100))
	if len(recs) != 10 {
		t.Fatalf("polled %d records, want 10", len(recs))
	}
	p := durGet[*engine.Producer](t)(e.NewProducer(engine.ProducerConfig{TransactionalID: "tx"}))
	durOK(t, p.Begin())
	if withOutputs {
		outs := make([]engine.ProduceRecord, len(recs))
		for i, r := range recs {
			outs[i] = engine.ProduceRecord{Value: append([]byte("out-"), r.Value...)}
		}
		durGet[int64](t)(p.Produce("out", 0, outs))
	}
	durOK(t, p.SendShareAcksToTransaction(durAcks(recs, engine.AckAccept), m.Metadata()))
	return m, p
}

func endTxn(p *engine.Producer, commit bool) error {
	if commit {
		return p.Commit()
	}
	return p.Abort()
}

// referenceView runs the same transaction on an in-memory engine to the
// end: the state a crash must recover to (docs/design.md §4: 9 and 12).
func referenceView(t *testing.T, withOutputs, commit bool) durableView {
	clk := engine.NewManualClock()
	ref := durGet[*engine.Engine](t)(engine.New(durableOpts("", clk)[1:]...))
	defer ref.Close()
	_, p := ctpSetup(t, ref, withOutputs)
	durOK(t, endTxn(p, commit))
	return viewOf(t, ref, []string{"tx"}, nil)
}

type crashCase struct {
	name   string
	point  engine.HookPoint
	marker int
}

func crashCases(markers int) []crashCase {
	cs := []crashCase{{"after-prepare-before-markers", engine.HookTxnPrepared, 0}}
	for k := 1; k < markers; k++ {
		cs = append(cs, crashCase{fmt.Sprintf("after-%d-of-%d-markers", k, markers), engine.HookTxnMarker, k})
	}
	cs = append(cs, crashCase{"after-all-markers-before-complete", engine.HookTxnMarker, markers},
		crashCase{"after-complete", engine.HookTxnCompleted, 0})
	return cs
}

// TestCrashPoints: at every crash point, for commits and aborts, with and
// without outputs, for a whole-engine crash and a coordinator-only crash,
// recovery reaches exactly the state of the transaction completed with its
// decision (invariant 9: a PREPARE_COMMIT completes and nothing it staged
// is redelivered; invariant 12: the durable state equals the state before
// the crash minus acquisitions).
func TestCrashPoints(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"engine", "coordinator"} {
		for _, withOutputs := range []bool{true, false} {
			markers := 2 // the two share partitions
			if withOutputs {
				markers = 3 // and the output partition
			}
			for _, commit := range []bool{true, false} {
				want := referenceView(t, withOutputs, commit)
				for _, cc := range crashCases(markers) {
					name := fmt.Sprintf("%s/outputs=%v/commit=%v/%s", kind, withOutputs, commit, cc.name)
					t.Run(name, func(t *testing.T) {
						t.Parallel()
						crashPointCase(t, kind, withOutputs, commit, cc, want)
					})
				}
			}
		}
	}
}

func crashPointCase(t *testing.T, kind string, withOutputs, commit bool, cc crashCase, want durableView) {
	h := &crashHook{point: cc.point, marker: cc.marker, err: engine.ErrInjectedCrash}
	if kind == "coordinator" {
		h.err = engine.ErrInjectedCoordinatorCrash
	}
	clk := engine.NewManualClock()
	e := durGet[*engine.Engine](t)(engine.New(durableOpts(t.TempDir(), clk, engine.WithHook(h.hook))...))
	defer e.Close()
	m, p := ctpSetup(t, e, withOutputs)
	oldEpoch := p.Epoch()
	h.armed.Store(true)
	err := endTxn(p, commit)
	if h.struck.Load() != 1 {
		t.Fatalf("the crash point was not reached (end: %v)", err)
	}
	switch kind {
	case "engine":
		if !errors.Is(err, engine.ErrCrashed) {
			t.Fatalf("end of the transaction at the crash: %v, want ErrCrashed", err)
		}
		if _, err := m.Poll(1); !errors.Is(err, engine.ErrCrashed) {
			t.Fatalf("poll while crashed: %v, want ErrCrashed", err)
		}
		rep := durGet[engine.RecoveryReport](t)(e.Restart())
		wantCompleted := 1
		if cc.point == engine.HookTxnCompleted {
			wantCompleted = 0
		}
		if rep.Completed != wantCompleted || len(rep.Truncated) != 0 {
			t.Fatalf("recovery %v: want %d completed, nothing truncated", rep, wantCompleted)
		}
		// Sessions are not durable.
		if _, err := m.Poll(1); !errors.Is(err, engine.ErrUnknownMember) {
			t.Fatalf("old member's poll after restart: %v, want ErrUnknownMember", err)
		}
		// The producer's end was cut short; its retry succeeds, as
		// KIP-890 lets a client retry EndTxn, and it takes the new
		// epoch.
		durOK(t, endTxn(p, commit))
	default:
		// The coordinator crashed and reloaded; the call succeeds.
		durOK(t, err)
	}
	if got := p.Epoch(); got != oldEpoch+1 {
		t.Fatalf("producer epoch after the transaction = %d, want %d", got, oldEpoch+1)
	}
	// Invariant 12 (and 9 with the reference completed by its decision).
	diffViews(t, viewOf(t, e, []string{"tx"}, nil), want)
	// Invariant 9 from a consumer's side: a commit's staged records are
	// never redelivered and its outputs are visible to read_committed; an
	// abort's records come back and its outputs never become visible.
	m2 := durGet[*engine.ShareMember](t)(e.JoinShareGroup("g", []string{"in"}, engine.AckExplicit))
	redelivered := durGet[[]engine.Record](t)(m2.Poll(100))
	out, _, err := e.Fetch(engine.TopicPartition{Topic: "out"}, 0, 100, engine.ReadCommitted)
	durOK(t, err)
	if commit {
		if len(redelivered) != 0 {
			t.Fatalf("commit: %d staged records redelivered", len(redelivered))
		}
		if withOutputs && len(out) != 10 {
			t.Fatalf("commit: %d outputs visible to read_committed, want 10", len(out))
		}
	} else {
		if len(redelivered) != 10 || redelivered[0].DeliveryCount != 2 {
			t.Fatalf("abort: %d records redelivered (first count %d), want 10 at count 2", len(redelivered), redelivered[0].DeliveryCount)
		}
		if len(out) != 0 {
			t.Fatalf("abort: %d outputs visible to read_committed", len(out))
		}
	}
	// The producer keeps working.
	durOK(t, p.Begin())
	durOK(t, p.Commit())
}

// TestCrashDuringOngoingTransaction is KIP-1289's "consumer crash during
// transaction" with the engine crashing too: staged acknowledgements and
// outputs of an ONGOING transaction survive the restart as TX_PENDING and
// an open transaction; the old producer can still commit them, or the
// timeout aborts them.
func TestCrashDuringOngoingTransaction(t *testing.T) {
	t.Parallel()
	for _, end := range []string{"producer-commits", "timeout-aborts", "successor-fences"} {
		for _, kind := range []string{"engine", "coordinator"} {
			t.Run(end+"/"+kind, func(t *testing.T) {
				t.Parallel()
				h := &crashHook{point: engine.HookTxnOngoing, err: engine.ErrInjectedCrash}
				if kind == "coordinator" {
					h.err = engine.ErrInjectedCoordinatorCrash
				}
				clk := engine.NewManualClock()
				e := durGet[*engine.Engine](t)(engine.New(durableOpts(t.TempDir(), clk, engine.WithHook(h.hook), engine.WithTransactionTimeout(time.Minute))...))
				defer e.Close()
				durOK(t, e.CreateTopic("in", 1))
				durOK(t, e.CreateTopic("out", 1))
				durProduce(t, e, "in", 0, 6, "a")
				m := durGet[*engine.ShareMember](t)(e.JoinShareGroup("g", []string{"in"}, engine.AckTransactional))
				recs := durGet[[]engine.Record](t)(m.Poll(6))
				p := durGet[*engine.Producer](t)(e.NewProducer(engine.ProducerConfig{TransactionalID: "tx"}))
				durOK(t, p.Begin())
				durGet[int64](t)(p.Produce("out", 0, []engine.ProduceRecord{{Value: []byte("o")}}))
				h.armed.Store(true)
				err := p.SendShareAcksToTransaction(durAcks(recs[:4], engine.AckAccept), m.Metadata())
				if kind == "engine" {
					if !errors.Is(err, engine.ErrCrashed) {
						t.Fatalf("staging at the crash: %v", err)
					}
					rep := durGet[engine.RecoveryReport](t)(e.Restart())
					if rep.Ongoing != 1 {
						t.Fatalf("recovery %v: want one ongoing transaction", rep)
					}
				} else {
					durOK(t, err)
				}
				in := engine.TopicPartition{Topic: "in"}
				for o := int64(0); o < 6; o++ {
					ri := durGet[engine.RecordInfo](t)(e.ShareRecord("g", in, o))
					wantState := engine.StateTxPending
					if o >= 4 {
						wantState = engine.StateAvailable // acquired: not durable
						if kind == "coordinator" {
							wantState = engine.StateAcquired // the partition stayed up
						}
					}
					if ri.State != wantState {
						t.Fatalf("record %d after the crash: %v, want %v", o, ri.State, wantState)
					}
				}
				if info, _ := e.Transaction("tx"); info.State != engine.TxnOngoing || len(info.SharePartitions) != 1 || len(info.Partitions) != 1 {
					t.Fatalf("transaction after the crash: %+v, want ONGOING with its participants", info)
				}
				wantAfter := engine.StateAcknowledged
				switch end {
				case "producer-commits":
					durOK(t, p.Commit())
				case "timeout-aborts":
					clk.Advance(2 * time.Minute)
					if n := e.AbortTimedOutTransactions(); n != 1 {
						t.Fatalf("sweep aborted %d transactions, want 1", n)
					}
					wantAfter = engine.StateAvailable
				case "successor-fences":
					durGet[*engine.Producer](t)(e.NewProducer(engine.ProducerConfig{TransactionalID: "tx"}))
					if err := p.Commit(); !errors.Is(err, engine.ErrProducerFenced) {
						t.Fatalf("zombie commit after re-init: %v, want ErrProducerFenced", err)
					}
					wantAfter = engine.StateAvailable
				}
				for o := int64(0); o < 4; o++ {
					if ri := durGet[engine.RecordInfo](t)(e.ShareRecord("g", in, o)); ri.State != wantAfter || ri.DeliveryCount != 1 {
						t.Fatalf("record %d at the end: %v c%d, want %v c1", o, ri.State, ri.DeliveryCount, wantAfter)
					}
				}
				out, _, _ := e.Fetch(engine.TopicPartition{Topic: "out"}, 0, 10, engine.ReadCommitted)
				if (wantAfter == engine.StateAcknowledged) != (len(out) == 1) {
					t.Fatalf("%d outputs visible with records %v", len(out), wantAfter)
				}
				durOK(t, e.CheckInvariants())
			})
		}
	}
}

// TestProducerFencedAcrossRestart: a producer whose transactional id was
// re-initialised before the crash is fenced after it; one that was not
// keeps working.
func TestProducerFencedAcrossRestart(t *testing.T) {
	t.Parallel()
	clk := engine.NewManualClock()
	e := durGet[*engine.Engine](t)(engine.New(durableOpts(t.TempDir(), clk)...))
	defer e.Close()
	durOK(t, e.CreateTopic("out", 1))
	zombie := durGet[*engine.Producer](t)(e.NewProducer(engine.ProducerConfig{TransactionalID: "a"}))
	durGet[*engine.Producer](t)(e.NewProducer(engine.ProducerConfig{TransactionalID: "a"}))
	alive := durGet[*engine.Producer](t)(e.NewProducer(engine.ProducerConfig{TransactionalID: "b"}))
	idem := durGet[*engine.Producer](t)(e.NewProducer(engine.ProducerConfig{Idempotent: true}))
	durGet[int64](t)(idem.Produce("out", 0, []engine.ProduceRecord{{Value: []byte("x")}}))
	durGet[engine.RecoveryReport](t)(e.Restart())
	if err := zombie.Begin(); !errors.Is(err, engine.ErrProducerFenced) {
		t.Fatalf("re-initialised producer after restart: %v, want ErrProducerFenced", err)
	}
	durOK(t, alive.Begin())
	durGet[int64](t)(alive.Produce("out", 0, []engine.ProduceRecord{{Value: []byte("y")}}))
	durOK(t, alive.Commit())
	durGet[int64](t)(idem.Produce("out", 0, []engine.ProduceRecord{{Value: []byte("z")}}))
	recs, _, _ := e.Fetch(engine.TopicPartition{Topic: "out"}, 0, 10, engine.ReadCommitted)
	if len(recs) != 3 {
		t.Fatalf("%d records visible, want 3", len(recs))
	}
	// A producer begun but not yet joined by a participant when the crash
	// struck resumes its transaction.
	durOK(t, alive.Begin())
	durGet[engine.RecoveryReport](t)(e.Restart())
	durGet[int64](t)(alive.Produce("out", 0, []engine.ProduceRecord{{Value: []byte("w")}}))
	durOK(t, alive.Commit())
}

// walFrames returns the frame boundaries of a segment file (after its
// 32-byte header).
func walFrames(t testing.TB, b []byte) []int {
	t.Helper()
	var out []int
	for pos := 32; pos+8 <= len(b); {
		n := int(b[pos]) | int(b[pos+1])<<8 | int(b[pos+2])<<16 | int(b[pos+3])<<24
		out = append(out, pos)
		pos += 8 + n
	}
	return out
}

// lastSegments lists, for every log in a data directory, its newest
// segment file.
func lastSegments(t testing.TB, dir string) []string {
	t.Helper()
	last := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".wal") && path > last[filepath.Dir(path)] {
			last[filepath.Dir(path)] = path
		}
		return err
	})
	durOK(t, err)
	var out []string
	for _, p := range last {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

func copyTree(t testing.TB, src string) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	durOK(t, err)
	return dst
}

// recoverView recovers a copy of dir after edit changed one file, and
// returns its view and report, or the recovery error.
func recoverView(t testing.TB, dir, file string, edit func([]byte) []byte) (durableView, engine.RecoveryReport, error) {
	t.Helper()
	cp := copyTree(t, dir)
	if file != "" {
		rel, _ := filepath.Rel(dir, file)
		path := filepath.Join(cp, rel)
		b, err := os.ReadFile(path)
		durOK(t, err)
		durOK(t, os.WriteFile(path, edit(b), 0o644))
	}
	e, err := engine.New(durableOpts(cp, engine.NewManualClock())...)
	if err != nil {
		return durableView{}, engine.RecoveryReport{}, err
	}
	defer e.Close()
	return viewOf(t, e, durTxnIDs, durClassic), e.Recovery(), nil
}

// tornSource writes the durability workload into a data directory.
func tornSource(t *testing.T) string {
	dir := t.TempDir()
	clk := engine.NewManualClock()
	e := durGet[*engine.Engine](t)(engine.New(durableOpts(dir, clk)...))
	durWorkload(t, e, clk)
	durOK(t, e.Close())
	return dir
}

// tornAckSource writes a workload whose share-state log ends in a
// snapshot just as the history log gets the record that left the window:
// records acknowledged one at a time, a delta each, until a snapshot is due.
// A torn tail of that snapshot leaves the history log ahead of the
// recovered window, which recovery once refused ("history run [n,n]
// ACKNOWLEDGED outside [0, n)").
func tornAckSource(t *testing.T) string {
	dir := t.TempDir()
	clk := engine.NewManualClock()
	e := durGet[*engine.Engine](t)(engine.New(durableOpts(dir, clk)...))
	durOK(t, e.CreateTopic("in", 1))
	const n = 70 // a multiple of durableOpts' snapshot interval (7)
	for i := 0; i < n; i++ {
		_ = durGet[int64](t)(e.Produce("in", 0, []engine.ProduceRecord{{Value: []byte(fmt.Sprint(i))}}))
	}
	m := durGet[*engine.ShareMember](t)(e.JoinShareGroup("g", []string{"in"}, engine.AckExplicit))
	for i := 0; i < n; i++ {
		recs := durGet[[]engine.Record](t)(m.Poll(1))
		durOK(t, m.Acknowledge([]engine.Acknowledgement{{Topic: "in", First: recs[0].Offset, Last: recs[0].Offset, Type: engine.AckAccept}}))
	}
	durOK(t, e.Close())
	return dir
}

// TestTornTailEveryByte cuts the last record of every log in a data
// directory at every byte, one log at a time, for two workloads (the
// durability workload, and one whose share-state log ends in a snapshot):
// recovery drops exactly the torn bytes, reports them, and reaches the same
// state as if the record had never been written — it invents nothing and
// loses nothing before the tear. A torn COMPLETE_COMMIT loses no committed
// record: the PREPARE_COMMIT before it completes the transaction again.
func TestTornTailEveryByte(t *testing.T) {
	t.Parallel()
	for _, source := range []struct {
		name string
		dir  func(*testing.T) string
	}{{"durability", tornSource}, {"acks", tornAckSource}} {
		t.Run(source.name, func(t *testing.T) {
			t.Parallel()
			tornTailEveryByte(t, source.dir(t))
		})
	}
}

func tornTailEveryByte(t *testing.T, src string) {
	full, _, err := recoverView(t, src, "", nil)
	durOK(t, err)
	logs := 0
	for _, seg := range lastSegments(t, src) {
		b, err := os.ReadFile(seg)
		durOK(t, err)
		frames := walFrames(t, b)
		if len(frames) == 0 {
			continue
		}
		start := frames[len(frames)-1]
		rel, _ := filepath.Rel(src, seg)
		logs++
		t.Run(rel, func(t *testing.T) {
			if strings.HasPrefix(rel, "meta") {
				// Every topic of these workloads holds records, which
				// were written after the topic was durable: a cut of the
				// meta log's last record is below a point it synced, not a
				// torn tail, and the directory is refused
				// (TestMetaCutBelowSyncedPoint).
				for _, cut := range []int{start, start + 1, len(b) - 1} {
					_, _, err := recoverView(t, src, seg, func(b []byte) []byte { return b[:cut] })
					if !errors.Is(err, engine.ErrCorruptLog) || !strings.Contains(err.Error(), "partitions") {
						t.Fatalf("meta cut at %d: %v, want ErrCorruptLog naming the partition log it would drop", cut, err)
					}
				}
				return
			}
			base, rep, err := recoverView(t, src, seg, func(b []byte) []byte { return b[:start] })
			durOK(t, err)
			if len(rep.Truncated) != 0 {
				t.Fatalf("cut at a record boundary: truncated %+v", rep.Truncated)
			}
			if strings.HasPrefix(rel, "txn") {
				// The last transaction record is a COMPLETE_COMMIT.
				diffViews(t, base, full)
			}
			step := 1
			if testing.Short() || raceEnabled {
				step = 7
			}
			for cut := start + 1; cut < len(b); cut += step {
				got, rep, err := recoverView(t, src, seg, func(b []byte) []byte { return b[:cut] })
				if err != nil {
					t.Fatalf("cut at %d: recovery failed: %v", cut, err)
				}
				if len(rep.Truncated) != 1 || rep.Truncated[0].Bytes != int64(cut-start) || !strings.HasSuffix(rep.Truncated[0].File, rel) {
					t.Fatalf("cut at %d: truncated %+v, want %d bytes of %s", cut, rep.Truncated, cut-start, rel)
				}
				diffViews(t, got, base)
			}
		})
	}
	if logs < 3 {
		t.Fatalf("only %d logs had a record to tear", logs)
	}
}

// TestFlippedBit flips bits across a data directory's logs: recovery
// either refuses with ErrCorruptLog naming the file, or (for a bit in a
// log's last record, indistinguishable from a torn write) drops that
// record, reports it, and reaches the state without it. It never invents
// a record.
func TestFlippedBit(t *testing.T) {
	t.Parallel()
	src := tornSource(t)
	var files []string
	durOK(t, filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(path, ".wal") {
			files = append(files, path)
		}
		return err
	}))
	lastOf := map[string]bool{}
	for _, s := range lastSegments(t, src) {
		lastOf[s] = true
	}
	var corrupt, dropped int
	for _, f := range files {
		b, err := os.ReadFile(f)
		durOK(t, err)
		frames := walFrames(t, b)
		rel, _ := filepath.Rel(src, f)
		// Bits to flip: the header, and in every record the length, the
		// checksum and the first payload byte; every bit of the last
		// record.
		every := 5 // bits of the last record
		if testing.Short() || raceEnabled {
			every = 37
		}
		var bits []int
		for _, by := range []int{0, 9, 13, 21, 29} {
			bits = append(bits, 8*by+3)
		}
		for i, fr := range frames {
			bits = append(bits, 8*fr+1, 8*(fr+5)+6, 8*(fr+8))
			if i == len(frames)-1 {
				for bit := 8 * fr; bit < 8*len(b); bit += every {
					bits = append(bits, bit)
				}
			}
		}
		var base *durableView
		for _, bit := range bits {
			got, rep, err := recoverView(t, src, f, func(b []byte) []byte {
				b = append([]byte(nil), b...)
				b[bit/8] ^= 1 << (bit % 8)
				return b
			})
			if err != nil {
				if !errors.Is(err, engine.ErrCorruptLog) || !strings.Contains(err.Error(), rel) {
					t.Fatalf("%s bit %d: error %v, want ErrCorruptLog naming the file", rel, bit, err)
				}
				corrupt++
				continue
			}
			last := frames[len(frames)-1]
			if !lastOf[f] || bit/8 < last {
				t.Fatalf("%s bit %d: recovered (%v) from a flip before the last record", rel, bit, rep)
			}
			if len(rep.Truncated) != 1 || !strings.HasSuffix(rep.Truncated[0].File, rel) {
				t.Fatalf("%s bit %d: recovered without reporting the dropped record: %+v", rel, bit, rep.Truncated)
			}
			if base == nil {
				v, _, err := recoverView(t, src, f, func(b []byte) []byte { return b[:last] })
				durOK(t, err)
				base = &v
			}
			diffViews(t, got, *base)
			dropped++
		}
	}
	t.Logf("%d corruption errors, %d torn last records dropped", corrupt, dropped)
}

// TestBadDataDir: a directory sharebench did not write, or one written by
// a newer format, is refused with a clear error; so is a corrupt segment
// header.
func TestBadDataDir(t *testing.T) {
	t.Parallel()
	foreign := t.TempDir()
	durOK(t, os.WriteFile(filepath.Join(foreign, "postgresql.conf"), []byte("x"), 0o644))
	if _, err := engine.New(engine.WithDataDir(foreign)); !errors.Is(err, engine.ErrNotDataDir) || !strings.Contains(err.Error(), foreign) {
		t.Fatalf("foreign directory: %v, want ErrNotDataDir naming it", err)
	}
	newer := t.TempDir()
	durOK(t, os.WriteFile(filepath.Join(newer, "SHAREBENCH"), []byte("sharebench data directory\nformat 99\n"), 0o644))
	if _, err := engine.New(engine.WithDataDir(newer)); !errors.Is(err, engine.ErrDataDirVersion) {
		t.Fatalf("newer format: %v, want ErrDataDirVersion", err)
	}
	garbled := t.TempDir()
	durOK(t, os.WriteFile(filepath.Join(garbled, "SHAREBENCH"), []byte("hello\n"), 0o644))
	if _, err := engine.New(engine.WithDataDir(garbled)); !errors.Is(err, engine.ErrNotDataDir) {
		t.Fatalf("garbled marker: %v, want ErrNotDataDir", err)
	}
	// A segment written by a newer format.
	dir := tornSource(t)
	seg := lastSegments(t, dir)[0]
	b, _ := os.ReadFile(seg)
	b[8] = 9 // format version, with a valid header checksum
	binary.LittleEndian.PutUint32(b[28:], crc32.Checksum(b[:28], crc32.MakeTable(crc32.Castagnoli)))
	durOK(t, os.WriteFile(seg, b, 0o644))
	if _, err := engine.New(engine.WithDataDir(dir)); !errors.Is(err, engine.ErrDataDirVersion) {
		t.Fatalf("newer segment: %v, want ErrDataDirVersion", err)
	}
	// Without a data directory the durability calls refuse.
	e := durGet[*engine.Engine](t)(engine.New())
	defer e.Close()
	if err := e.Crash(); !errors.Is(err, engine.ErrNoDataDir) {
		t.Fatalf("Crash in memory: %v", err)
	}
}

// TestRestartUnderLoad restarts the engine three times while transactional
// workers run consume-transform-produce with the real clock, as the load
// generator's engine-restart fault does. Workers whose calls fail
// (crashed, unknown member, fenced) recreate their member and producer.
// At the end every input is ACKNOWLEDGED and has exactly one committed
// output (docs/design.md §4 invariant 8, exactly-once across restarts).
func TestRestartUnderLoad(t *testing.T) {
	t.Parallel()
	e := durGet[*engine.Engine](t)(engine.New(engine.WithDataDir(t.TempDir()), engine.WithSegmentBytes(64<<10),
		engine.WithShareSnapshotEvery(20), engine.WithTimerInterval(time.Millisecond),
		engine.WithGroupDefaults(engine.GroupConfig{LockDuration: 300 * time.Millisecond, DeliveryLimit: 100, MaxRecordLocks: 1000, AutoOffsetReset: engine.ResetEarliest})))
	defer e.Close()
	durOK(t, e.CreateTopic("in", 2))
	durOK(t, e.CreateTopic("out", 1))
	const perPartition = 300
	for p := int32(0); p < 2; p++ {
		durProduce(t, e, "in", p, perPartition, fmt.Sprintf("in%d", p))
	}
	stop := make(chan struct{})
	var committed atomic.Int64
	worker := func(w int) {
		var m *engine.ShareMember
		var p *engine.Producer
		for {
			select {
			case <-stop:
				return
			default:
			}
			var err error
			if m == nil {
				if m, err = e.JoinShareGroup("g", []string{"in"}, engine.AckTransactional); err != nil {
					m = nil
					time.Sleep(time.Millisecond)
					continue
				}
			}
			if p == nil {
				if p, err = e.NewProducer(engine.ProducerConfig{TransactionalID: fmt.Sprintf("w%d", w)}); err != nil {
					p = nil
					time.Sleep(time.Millisecond)
					continue
				}
			}
			recs, err := m.Poll(7)
			if err == nil && len(recs) == 0 {
				time.Sleep(time.Millisecond)
				continue
			}
			if err == nil {
				err = p.Begin()
			}
			if err == nil {
				outs := make([]engine.ProduceRecord, len(recs))
				for i, r := range recs {
					outs[i].Value = r.Value
				}
				_, err = p.Produce("out", 0, outs)
			}
			if err == nil {
				err = p.SendShareAcksToTransaction(durAcks(recs, engine.AckAccept), m.Metadata())
			}
			if err == nil {
				if err = p.Commit(); err == nil {
					committed.Add(int64(len(recs)))
					continue
				}
			}
			if engine.ErrorIsFenced(err) || errors.Is(err, engine.ErrCrashed) {
				m, p = nil, nil // replaced, as a crashed client is
				continue
			}
			_ = p.Abort()
		}
	}
	done := make(chan struct{})
	for w := 0; w < 4; w++ {
		go func() { worker(w); done <- struct{}{} }()
	}
	restarts := 0
	deadline := time.Now().Add(60 * time.Second)
	for {
		time.Sleep(15 * time.Millisecond)
		if restarts < 3 && committed.Load() > int64(restarts+1)*100 {
			rep, err := e.Restart()
			durOK(t, err)
			restarts++
			t.Logf("restart %d after %d committed: %v", restarts, committed.Load(), rep)
		}
		pending := int64(0)
		for p := int32(0); p < 2; p++ {
			info, err := e.SharePartition("g", engine.TopicPartition{Topic: "in", Partition: p})
			if err == nil {
				pending += int64(perPartition) - info.SPSO
			} else {
				pending += perPartition
			}
		}
		if pending == 0 && restarts == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not drained after 60s: %d pending, %d restarts", pending, restarts)
		}
	}
	close(stop)
	for w := 0; w < 4; w++ {
		<-done
	}
	outs, _, err := e.Fetch(engine.TopicPartition{Topic: "out"}, 0, 1<<20, engine.ReadCommitted)
	durOK(t, err)
	seen := map[string]int{}
	for _, r := range outs {
		seen[string(r.Value)]++
	}
	for p := int32(0); p < 2; p++ {
		for i := 0; i < perPartition; i++ {
			v := fmt.Sprintf("in%d-%d", p, i)
			if seen[v] != 1 {
				t.Errorf("input %s has %d committed outputs, want 1", v, seen[v])
			}
		}
	}
	if len(outs) != 2*perPartition {
		t.Fatalf("%d committed outputs, want %d", len(outs), 2*perPartition)
	}
	durOK(t, e.CheckInvariants())
}

// TestReadersSeeOnlyDurableRecords: a reader tailing a partition while a
// producer writes and the engine restarts never sees a record that the
// restart takes back (readers see records below the high watermark, which
// follows durability), so its position never passes the log end after a
// restart and every record it read is still there.
func TestReadersSeeOnlyDurableRecords(t *testing.T) {
	t.Parallel()
	for _, pol := range []engine.FlushPolicy{engine.FlushAlways, engine.FlushNever} {
		t.Run(pol.String(), func(t *testing.T) {
			t.Parallel()
			e := durGet[*engine.Engine](t)(engine.New(engine.WithDataDir(t.TempDir()), engine.WithFlushPolicy(pol)))
			defer e.Close()
			durOK(t, e.CreateTopic("t", 1))
			tp := engine.TopicPartition{Topic: "t"}
			stop := make(chan struct{})
			var wg sync.WaitGroup
			wg.Add(2)
			go func() { // the producer
				defer wg.Done()
				p, err := e.NewProducer(engine.ProducerConfig{Idempotent: true})
				for i := 0; err == nil || errors.Is(err, engine.ErrCrashed); i++ {
					select {
					case <-stop:
						return
					default:
					}
					if p == nil {
						p, err = e.NewProducer(engine.ProducerConfig{Idempotent: true})
						continue
					}
					_, err = p.Produce("t", 0, []engine.ProduceRecord{{Value: []byte(fmt.Sprint(i))}})
				}
				t.Errorf("producer: %v", err)
			}()
			seen := map[int64]string{}
			go func() { // the reader
				defer wg.Done()
				pos := int64(0)
				for {
					select {
					case <-stop:
						return
					default:
					}
					recs, next, err := e.Fetch(tp, pos, 100, engine.ReadUncommitted)
					if errors.Is(err, engine.ErrCrashed) {
						continue
					}
					if err != nil {
						t.Errorf("reader at %d: %v", pos, err)
						return
					}
					for _, r := range recs {
						seen[r.Offset] = string(r.Value)
					}
					pos = next
				}
			}()
			for i := 0; i < 20; i++ {
				time.Sleep(2 * time.Millisecond)
				durGet[engine.RecoveryReport](t)(e.Restart())
			}
			close(stop)
			wg.Wait()
			recs, _, err := e.Fetch(tp, 0, 1<<20, engine.ReadUncommitted)
			durOK(t, err)
			if len(seen) == 0 {
				t.Fatal("the reader read nothing")
			}
			for off, v := range seen {
				if off >= int64(len(recs)) || string(recs[off].Value) != v {
					t.Fatalf("the reader saw %q at %d; after the restarts the log has %d records", v, off, len(recs))
				}
			}
		})
	}
}

// TestTornTailLosesWholeRecords cuts each log of a data directory, one at
// a time, at every record boundary and 7 bytes into every record, so
// whole records are lost from its tail while the other logs keep what
// depended on them (share state of a partition record torn away, history
// ahead of the window): the directory still opens, the engine's invariants
// hold, and it opens again the same way after what the first recovery
// wrote. Every topic of these workloads holds records, so a cut of the meta
// log tears away the creation of a topic whose records were written after
// it was durable: that directory is refused, at every open
// (TestMetaCutBelowSyncedPoint).
func TestTornTailLosesWholeRecords(t *testing.T) {
	t.Parallel()
	step := 1
	if testing.Short() || raceEnabled {
		step = 5
	}
	for _, source := range []struct {
		name string
		dir  func(*testing.T) string
	}{{"durability", tornSource}, {"acks", tornAckSource}} {
		t.Run(source.name, func(t *testing.T) {
			t.Parallel()
			src := source.dir(t)
			for _, seg := range lastSegments(t, src) {
				b, err := os.ReadFile(seg)
				durOK(t, err)
				rel, _ := filepath.Rel(src, seg)
				frames := walFrames(t, b)
				for i := 0; i < len(frames); i += step {
					for _, d := range []int{0, 7} {
						cut := frames[i] + d
						if cut >= len(b) {
							continue
						}
						cp := copyTree(t, src)
						path := filepath.Join(cp, rel)
						durOK(t, os.WriteFile(path, b[:cut], 0o644))
						for open := 1; open <= 2; open++ {
							e, err := engine.New(durableOpts(cp, engine.NewManualClock())...)
							if strings.HasPrefix(rel, "meta") {
								if !errors.Is(err, engine.ErrCorruptLog) || !strings.Contains(err.Error(), "partitions") {
									t.Fatalf("%s cut at %d (record %d of %d), open %d: %v, want ErrCorruptLog naming the partition logs it would drop", rel, cut, i, len(frames), open, err)
								}
								continue
							}
							if err != nil {
								t.Fatalf("%s cut at %d (record %d of %d), open %d: %v", rel, cut, i, len(frames), open, err)
							}
							if err := e.CheckInvariants(); err != nil {
								t.Fatalf("%s cut at %d, open %d: %v", rel, cut, open, err)
							}
							durOK(t, e.Close())
						}
					}
				}
			}
		})
	}
}

// metaSource writes a directory with topics "in" (records produced and
// acknowledged through a committed transaction into "out") and "out", then,
// when empty is set, a topic "empty" that never gets a record; it returns
// the directory and its meta log's only segment.
func metaSource(t *testing.T, empty bool) (string, string) {
	dir := t.TempDir()
	clk := engine.NewManualClock()
	e := durGet[*engine.Engine](t)(engine.New(durableOpts(dir, clk)...))
	durOK(t, e.CreateTopic("in", 1))
	durOK(t, e.CreateTopic("out", 1))
	durProduce(t, e, "in", 0, 4, "a")
	m := durGet[*engine.ShareMember](t)(e.JoinShareGroup("g", []string{"in"}, engine.AckTransactional))
	p := durGet[*engine.Producer](t)(e.NewProducer(engine.ProducerConfig{TransactionalID: "tx"}))
	recs := durGet[[]engine.Record](t)(m.Poll(4))
	durOK(t, p.Begin())
	durGet[int64](t)(p.Produce("out", 0, []engine.ProduceRecord{{Value: []byte("o")}}))
	durOK(t, p.SendShareAcksToTransaction(durAcks(recs, engine.AckAccept), m.Metadata()))
	durOK(t, p.Commit())
	if empty {
		durOK(t, e.CreateTopic("empty", 1))
	}
	durOK(t, e.Close())
	segs, err := filepath.Glob(filepath.Join(dir, "meta", "*.wal"))
	durOK(t, err)
	if len(segs) != 1 {
		t.Fatalf("meta log has %d segments, want 1", len(segs))
	}
	return dir, segs[0]
}

// TestMetaCutBelowSyncedPoint: a topic record is durable before any record
// of the topic is written, so a meta log that lost the record of a topic
// whose partition log holds records was cut below a point it had synced.
// Recovery refuses the directory with ErrCorruptLog, naming the partition
// logs it would drop and how many records they hold, wherever the cut
// falls (inside the last record, at its start, or below an earlier one),
// instead of recovering without the topic and its committed outputs. A
// torn tail of a topic that never got a record is a crash's torn tail:
// recovery drops the topic and the name can be created again.
func TestMetaCutBelowSyncedPoint(t *testing.T) {
	t.Parallel()
	src, seg := metaSource(t, false)
	b, err := os.ReadFile(seg)
	durOK(t, err)
	frames := walFrames(t, b)
	if len(frames) != 2 {
		t.Fatalf("meta log has %d records, want 2 (in, out)", len(frames))
	}
	for _, tc := range []struct {
		name string
		cut  int
		want []string // in the error
	}{
		// "in" holds one batch; "out" a batch and its commit marker.
		{"inside the last record", len(b) - 3, []string{"partitions/000002-0 (2 batches or markers", fmt.Sprintf("cut %d bytes off", len(b)-3-frames[1])}},
		{"at the last record", frames[1], []string{"partitions/000002-0 (2 batches or markers", "no torn tail"}},
		{"below both records", frames[0] + 5, []string{"partitions/000001-0 (1 batches or markers", "partitions/000002-0 (2 batches or markers"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, _, err := recoverView(t, src, seg, func(b []byte) []byte { return b[:tc.cut] })
			if !errors.Is(err, engine.ErrCorruptLog) {
				t.Fatalf("recovery: %v, want ErrCorruptLog", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}

	t.Run("a torn tail of a topic without records", func(t *testing.T) {
		t.Parallel()
		src, seg := metaSource(t, true)
		b, err := os.ReadFile(seg)
		durOK(t, err)
		frames := walFrames(t, b)
		last := frames[len(frames)-1]
		for _, cut := range []int{last, last + 1, len(b) - 1} {
			cp := copyTree(t, src)
			path := filepath.Join(cp, "meta", filepath.Base(seg))
			durOK(t, os.WriteFile(path, b[:cut], 0o644))
			e, err := engine.New(durableOpts(cp, engine.NewManualClock())...)
			if err != nil {
				t.Fatalf("cut at %d: recovery: %v", cut, err)
			}
			if got := e.Topics(); len(got) != 2 || got[0] != "in" || got[1] != "out" {
				t.Fatalf("cut at %d: topics %v, want [in out]", cut, got)
			}
			if got, _, err := e.Fetch(engine.TopicPartition{Topic: "out"}, 0, 10, engine.ReadCommitted); err != nil || len(got) != 1 {
				t.Fatalf("cut at %d: %d committed outputs (%v), want 1", cut, len(got), err)
			}
			durOK(t, e.CreateTopic("empty", 1))
			durProduce(t, e, "empty", 0, 2, "e")
			durOK(t, e.Close())
			e = durGet[*engine.Engine](t)(engine.New(durableOpts(cp, engine.NewManualClock())...))
			if got, _, err := e.Fetch(engine.TopicPartition{Topic: "empty"}, 0, 10, engine.ReadUncommitted); err != nil || len(got) != 2 {
				t.Fatalf("cut at %d: topic created again holds %d records (%v) after a restart, want 2", cut, len(got), err)
			}
			durOK(t, e.Close())
		}
	})
}
