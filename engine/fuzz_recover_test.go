// This file holds the fuzz target of recovery: one log of a real data
// directory is replaced by arbitrary records (each framed with a valid
// checksum, so the record decoders and the replay see the arbitrary bytes)
// and the engine recovers the directory. It must never panic: it either
// recovers (and its invariants hold) or fails with a clear error.
//
//	go test -run x -fuzz FuzzRecover -fuzztime 10s ./engine/

package engine_test

import (
	"errors"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/sharebench/sharebench/engine"
	"github.com/sharebench/sharebench/engine/internal/wal"
)

// fuzzStreams are the logs FuzzRecover replaces, by index.
var fuzzStreams = []string{"meta", "txn", "groups", "share", "history", "partitions/000001-0", "partitions/000002-0"}

// fuzzWorkload writes a small directory holding every kind of record, so
// each execution copies and recovers little.
func fuzzWorkload(t testing.TB, e *engine.Engine) {
	durOK(t, e.CreateTopic("in", 1))
	durOK(t, e.CreateTopic("out", 1))
	durProduce(t, e, "in", 0, 8, "a")
	m := durGet[*engine.ShareMember](t)(e.JoinShareGroup("g", []string{"in"}, engine.AckTransactional))
	p := durGet[*engine.Producer](t)(e.NewProducer(engine.ProducerConfig{TransactionalID: "tx"}))
	for i := 0; i < 3; i++ {
		recs := durGet[[]engine.Record](t)(m.Poll(2))
		durOK(t, p.Begin())
		durGet[int64](t)(p.Produce("out", 0, []engine.ProduceRecord{{Key: []byte("k"), Value: []byte("o")}}))
		durOK(t, p.SendShareAcksToTransaction(durAcks(recs, []engine.AckType{engine.AckAccept, engine.AckReject}[i%2]), m.Metadata()))
		if i == 1 {
			durOK(t, p.Abort())
		} else if i == 0 {
			durOK(t, p.Commit())
		}
	}
	cm := durGet[*engine.ClassicMember](t)(e.JoinClassicGroup("cg", []string{"out"}, engine.ResetEarliest))
	cp := durGet[*engine.Producer](t)(e.NewProducer(engine.ProducerConfig{TransactionalID: "c"}))
	durGet[[]engine.Record](t)(cm.Poll(1))
	durOK(t, cp.Begin())
	durOK(t, cp.SendOffsetsToTransaction(map[engine.TopicPartition]int64{{Topic: "out"}: 1}, cm.Metadata()))
	durOK(t, cp.Commit())
	durOK(t, e.DeleteRecords(engine.TopicPartition{Topic: "in"}, 1))
	// Topic and group administration: a topic with share state deleted,
	// a topic grown, a classic group deleted.
	durOK(t, e.CreateTopic("gone", 1))
	durProduce(t, e, "gone", 0, 2, "x")
	gm := durGet[*engine.ShareMember](t)(e.JoinShareGroup("g2", []string{"gone"}, engine.AckExplicit))
	durGet[[]engine.Record](t)(gm.Poll(2))
	durOK(t, gm.Leave())
	durOK(t, e.DeleteTopic("gone"))
	durOK(t, e.CreatePartitions("out", 2, false))
	durOK(t, e.CommitOffsets("dg", map[engine.TopicPartition]int64{{Topic: "out"}: 1}))
	durOK(t, e.DeleteGroup("dg"))
}

// fuzzRecords encodes payloads as the fuzz input: a length byte, then
// that many bytes, repeated.
func fuzzRecords(payloads [][]byte) []byte {
	var out []byte
	for _, p := range payloads {
		if len(p) > 255 {
			p = p[:255]
		}
		out = append(out, byte(len(p)))
		out = append(out, p...)
	}
	return out
}

func FuzzRecover(f *testing.F) {
	base := f.TempDir()
	clk := engine.NewManualClock()
	e, err := engine.New(durableOpts(base, clk, engine.WithFlushPolicy(engine.FlushNever))...)
	if err != nil {
		f.Fatal(err)
	}
	fuzzWorkload(f, e)
	if err := e.Close(); err != nil {
		f.Fatal(err)
	}
	// Seeds: each log's real records.
	for i, s := range fuzzStreams {
		segs, _ := filepath.Glob(filepath.Join(base, s, "*.wal"))
		sort.Strings(segs)
		var payloads [][]byte
		for _, seg := range segs {
			b, _ := os.ReadFile(seg)
			for pos := wal.HeaderBytes; pos < len(b); {
				p, n, err := wal.DecodeFrame(b[pos:])
				if err != nil {
					break
				}
				payloads = append(payloads, append([]byte(nil), p...))
				pos += n
			}
		}
		f.Add(uint8(i), fuzzRecords(payloads))
	}
	f.Fuzz(func(t *testing.T, which uint8, data []byte) {
		dir := copyTree(t, base)
		stream := filepath.Join(dir, fuzzStreams[int(which)%len(fuzzStreams)])
		segs, _ := filepath.Glob(filepath.Join(stream, "*.wal"))
		sort.Strings(segs)
		if len(segs) == 0 {
			return
		}
		hdr, err := os.ReadFile(segs[0])
		if err != nil || len(hdr) < wal.HeaderBytes {
			t.Fatal("no segment header to copy")
		}
		for _, s := range segs {
			os.Remove(s)
		}
		body := append([]byte(nil), hdr[:wal.HeaderBytes]...)
		for len(data) > 0 {
			n := int(data[0])
			data = data[1:]
			if n > len(data) {
				n = len(data)
			}
			if n > 0 {
				body = wal.AppendFrame(body, data[:n])
			}
			data = data[n:]
		}
		if err := os.WriteFile(segs[0], body, 0o644); err != nil {
			t.Fatal(err)
		}
		e, err := engine.New(engine.WithDataDir(dir), engine.WithClock(engine.NewManualClock()), engine.WithHistory(true),
			engine.WithFlushPolicy(engine.FlushNever), engine.WithShards(1))
		if err != nil {
			if !errors.Is(err, engine.ErrCorruptLog) && !errors.Is(err, engine.ErrDataDirVersion) && !errors.Is(err, engine.ErrNotDataDir) {
				t.Fatalf("recovery failed with an unclassified error: %v", err)
			}
			return
		}
		defer e.Close()
		if err := e.CheckInvariants(); err != nil {
			t.Fatalf("recovered state breaks an invariant: %v", err)
		}
		_ = e.Crash() // no flush: keep executions fast
	})
}
