// This file tests the pure partition log: plain, idempotent and
// transactional appends, sequence and epoch checks, markers and the LSO,
// read_committed and read_uncommitted fetches, retention, delete-records and
// IsGap.

package plog_test

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/sharebench/sharebench/engine/internal/plog"
)

func vals(prefix string, n int) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		out[i] = []byte(fmt.Sprintf("%s%d", prefix, i))
	}
	return out
}

func plain(values ...string) *plog.Batch {
	b := &plog.Batch{ProducerID: plog.NoProducer}
	for _, v := range values {
		b.Values = append(b.Values, []byte(v))
	}
	return b
}

func idem(pid int64, epoch int16, seq int32, values ...string) *plog.Batch {
	b := plain(values...)
	b.ProducerID, b.Epoch, b.BaseSequence = pid, epoch, seq
	return b
}

func txn(pid int64, epoch int16, seq int32, values ...string) *plog.Batch {
	b := idem(pid, epoch, seq, values...)
	b.Transactional = true
	return b
}

// fetch renders what a reader sees from offset: "0:a 1:b next=2".
func fetch(t *testing.T, l *plog.Log, offset int64, max int, rc bool) string {
	t.Helper()
	recs, next, err := l.Fetch(offset, max, rc, nil)
	if err != nil {
		t.Fatalf("Fetch(%d, rc=%v): %v", offset, rc, err)
	}
	var s []string
	for _, r := range recs {
		if r.Control {
			t.Fatalf("Fetch returned control record at %d", r.Offset)
		}
		s = append(s, fmt.Sprintf("%d:%s", r.Offset, r.Value))
	}
	s = append(s, fmt.Sprintf("next=%d", next))
	return strings.Join(s, " ")
}

func mustAppend(t *testing.T, l *plog.Log, b *plog.Batch) int64 {
	t.Helper()
	base, dup, err := l.Append(b)
	if err != nil || dup {
		t.Fatalf("Append: base %d dup %v err %v", base, dup, err)
	}
	return base
}

func TestAppend(t *testing.T) {
	t.Parallel()
	type appendCase struct {
		b        *plog.Batch
		wantBase int64
		wantDup  bool
		wantErr  error
	}
	cases := []struct {
		name    string
		appends []appendCase
		wantHW  int64
	}{
		{
			name: "plain records get consecutive offsets",
			appends: []appendCase{
				{b: plain("a", "b"), wantBase: 0},
				{b: plain("c"), wantBase: 2},
			},
			wantHW: 3,
		},
		{
			name: "invalid batches",
			appends: []appendCase{
				{b: plain(), wantErr: plog.ErrInvalidRecord},
				{b: &plog.Batch{ProducerID: plog.NoProducer, Keys: [][]byte{nil}, Values: vals("v", 2)}, wantErr: plog.ErrInvalidRecord},
				{b: func() *plog.Batch { b := plain("x"); b.Transactional = true; return b }(), wantErr: plog.ErrInvalidRecord},
			},
			wantHW: 0,
		},
		{
			name: "idempotent: in-order sequences append, a repeated batch is a duplicate",
			appends: []appendCase{
				{b: idem(5, 0, 0, "a", "b"), wantBase: 0},
				{b: idem(5, 0, 2, "c"), wantBase: 2},
				{b: idem(5, 0, 2, "c"), wantDup: true},
				{b: idem(5, 0, 0, "a", "b"), wantDup: true},
				{b: idem(5, 0, 3, "d"), wantBase: 3},
			},
			wantHW: 4,
		},
		{
			name: "idempotent: a gap in the sequence is out of order",
			appends: []appendCase{
				{b: idem(5, 0, 0, "a"), wantBase: 0},
				{b: idem(5, 0, 5, "b"), wantErr: plog.ErrOutOfOrderSequence},
				{b: idem(5, 0, 1, "b"), wantBase: 1},
			},
			wantHW: 2,
		},
		{
			name: "producers have independent sequences",
			appends: []appendCase{
				{b: idem(5, 0, 0, "a"), wantBase: 0},
				{b: idem(6, 0, 0, "b"), wantBase: 1},
				{b: idem(5, 0, 1, "c"), wantBase: 2},
			},
			wantHW: 3,
		},
		{
			name: "a newer epoch resets the sequence; an older epoch is fenced",
			appends: []appendCase{
				{b: idem(5, 0, 0, "a", "b"), wantBase: 0},
				{b: idem(5, 1, 0, "c"), wantBase: 2},
				{b: idem(5, 0, 2, "d"), wantErr: plog.ErrProducerFenced},
				{b: idem(5, 1, 1, "d"), wantBase: 3},
			},
			wantHW: 4,
		},
		{
			name: "the sequence wraps after MaxInt32",
			appends: []appendCase{
				{b: idem(5, 0, math.MaxInt32, "a"), wantBase: 0},
				{b: idem(5, 0, 0, "b"), wantBase: 1},
			},
			wantHW: 2,
		},
		{
			name: "transactional records",
			appends: []appendCase{
				{b: txn(7, 0, 0, "t0", "t1"), wantBase: 0},
				{b: txn(7, 0, 2, "t2"), wantBase: 2},
				{b: txn(7, 0, 2, "t2"), wantDup: true},
				{b: txn(7, 0, 9, "t9"), wantErr: plog.ErrOutOfOrderSequence},
			},
			wantHW: 3,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			l := plog.New(0)
			for i, a := range c.appends {
				base, dup, err := l.Append(a.b)
				if !errors.Is(err, a.wantErr) || (a.wantErr == nil && err != nil) {
					t.Fatalf("append %d: err %v, want %v", i, err, a.wantErr)
				}
				if err != nil {
					continue
				}
				if dup != a.wantDup || (!dup && base != a.wantBase) {
					t.Fatalf("append %d: base %d dup %v, want base %d dup %v", i, base, dup, a.wantBase, a.wantDup)
				}
			}
			if got := l.HighWatermark(); got != c.wantHW {
				t.Errorf("HighWatermark = %d, want %d", got, c.wantHW)
			}
			if got := l.LSO(); got != c.wantHW && l.OpenTransactions() == 0 {
				t.Errorf("LSO = %d without open transactions, want the high watermark %d", got, c.wantHW)
			}
		})
	}
}

func TestAppendCopies(t *testing.T) {
	t.Parallel()
	l := plog.New(0)
	k, v := []byte("key"), []byte("value")
	mustAppend(t, l, &plog.Batch{ProducerID: plog.NoProducer, Keys: [][]byte{k}, Values: [][]byte{v}, Timestamp: 42})
	k[0], v[0] = 'X', 'X'
	r, err := l.Read(0)
	if err != nil {
		t.Fatal(err)
	}
	if string(r.Key) != "key" || string(r.Value) != "value" || r.Timestamp != 42 {
		t.Errorf("Read(0) = %q/%q ts %d: the log must copy its input", r.Key, r.Value, r.Timestamp)
	}
}

// TestTransactions covers markers, the LSO and what each isolation level
// sees.
func TestTransactions(t *testing.T) {
	t.Parallel()
	l := plog.New(0)
	mustAppend(t, l, plain("p0"))        // 0
	mustAppend(t, l, txn(7, 0, 0, "a0")) // 1: txn of 7 opens
	mustAppend(t, l, plain("p2"))        // 2
	mustAppend(t, l, txn(8, 3, 0, "b0")) // 3: txn of 8 opens
	mustAppend(t, l, txn(7, 0, 1, "a1")) // 4
	mustAppend(t, l, plain("p5"))        // 5
	check := func(step, wantRC, wantRU string, wantLSO int64, open int) {
		t.Helper()
		if got := l.LSO(); got != wantLSO {
			t.Errorf("%s: LSO = %d, want %d", step, got, wantLSO)
		}
		if got := l.OpenTransactions(); got != open {
			t.Errorf("%s: OpenTransactions = %d, want %d", step, got, open)
		}
		if got := fetch(t, l, 0, 100, true); got != wantRC {
			t.Errorf("%s: read_committed sees %q, want %q", step, got, wantRC)
		}
		if got := fetch(t, l, 0, 100, false); got != wantRU {
			t.Errorf("%s: read_uncommitted sees %q, want %q", step, got, wantRU)
		}
	}
	check("two open", "0:p0 next=1", "0:p0 1:a0 2:p2 3:b0 4:a1 5:p5 next=6", 1, 2)

	// Abort 7: its records are aborted; the LSO moves to 8's first record.
	off, err := l.Marker(7, 1, false, 0)
	if err != nil || off != 6 {
		t.Fatalf("abort marker: %d %v, want 6", off, err)
	}
	check("7 aborted", "0:p0 2:p2 next=3", "0:p0 1:a0 2:p2 3:b0 4:a1 5:p5 next=7", 3, 1)
	if l.Aborts() != 1 {
		t.Errorf("Aborts = %d, want 1", l.Aborts())
	}

	// Commit 8: everything is stable; read_committed never sees 7's
	// aborted records nor the markers.
	if off, err := l.Marker(8, 4, true, 0); err != nil || off != 7 {
		t.Fatalf("commit marker: %d %v, want 7", off, err)
	}
	check("8 committed", "0:p0 2:p2 3:b0 5:p5 next=8", "0:p0 1:a0 2:p2 3:b0 4:a1 5:p5 next=8", 8, 0)

	for _, c := range []struct {
		off       int64
		gapRC     bool
		gapRU     bool
		control   bool
		commit    bool
		aborted   bool
		wantEpoch int16
	}{
		{off: 0},
		{off: 1, gapRC: true, aborted: true},
		{off: 3},
		{off: 4, gapRC: true, aborted: true},
		{off: 6, gapRC: true, gapRU: true, control: true, wantEpoch: 1},
		{off: 7, gapRC: true, gapRU: true, control: true, commit: true, wantEpoch: 4},
		{off: 8, gapRC: true, gapRU: true}, // beyond the high watermark
	} {
		if got := l.IsGap(c.off, true); got != c.gapRC {
			t.Errorf("IsGap(%d, read_committed) = %v, want %v", c.off, got, c.gapRC)
		}
		if got := l.IsGap(c.off, false); got != c.gapRU {
			t.Errorf("IsGap(%d, read_uncommitted) = %v, want %v", c.off, got, c.gapRU)
		}
		if c.off >= l.HighWatermark() {
			continue
		}
		r, err := l.Read(c.off)
		if err != nil {
			t.Fatal(err)
		}
		if r.Control != c.control || r.Commit != c.commit || r.Aborted != c.aborted || (c.control && r.Epoch != c.wantEpoch) {
			t.Errorf("Read(%d) = %+v", c.off, r)
		}
	}

	// Markers are idempotent: a replayed marker appends nothing.
	for _, commit := range []bool{true, false} {
		if off, err := l.Marker(8, 4, commit, 0); err != nil || off != -1 {
			t.Errorf("replayed marker: %d %v, want -1 nil", off, err)
		}
	}
	if got := l.HighWatermark(); got != 8 {
		t.Errorf("HighWatermark after replayed markers = %d, want 8", got)
	}
	// A marker from an epoch older than the partition has seen is fenced.
	if _, err := l.Marker(8, 3, true, 0); !errors.Is(err, plog.ErrProducerFenced) {
		t.Errorf("stale marker: %v, want ErrProducerFenced", err)
	}
	// The marker bumped 7's epoch: its old epoch is fenced, the new one
	// starts a new sequence.
	if _, _, err := l.Append(txn(7, 0, 2, "zombie")); !errors.Is(err, plog.ErrProducerFenced) {
		t.Errorf("append at the aborted epoch: %v, want ErrProducerFenced", err)
	}
	if base := mustAppend(t, l, txn(7, 1, 0, "a'0")); base != 8 {
		t.Errorf("append at the new epoch: base %d, want 8", base)
	}
	if got, ok := l.ProducerEpoch(7); !ok || got != 1 {
		t.Errorf("ProducerEpoch(7) = %d %v, want 1", got, ok)
	}
	check("7 again", "0:p0 2:p2 3:b0 5:p5 next=8", "0:p0 1:a0 2:p2 3:b0 4:a1 5:p5 8:a'0 next=9", 8, 1)
}

func TestFetchBounds(t *testing.T) {
	t.Parallel()
	l := plog.New(0)
	mustAppend(t, l, plain("a", "b", "c"))
	if got := fetch(t, l, 1, 1, false); got != "1:b next=2" {
		t.Errorf("Fetch(1, max 1) = %q", got)
	}
	if got := fetch(t, l, 3, 10, false); got != "next=3" {
		t.Errorf("Fetch at the high watermark = %q", got)
	}
	if _, _, err := l.Fetch(4, 10, false, nil); !errors.Is(err, plog.ErrOffsetOutOfRange) {
		t.Errorf("Fetch beyond the high watermark: %v", err)
	}
	if _, err := l.Read(3); !errors.Is(err, plog.ErrOffsetOutOfRange) {
		t.Errorf("Read beyond the high watermark: %v", err)
	}
	// A transaction holds read_committed at its first offset.
	mustAppend(t, l, txn(9, 0, 0, "t"))
	mustAppend(t, l, plain("d"))
	if got := fetch(t, l, 2, 10, true); got != "2:c next=3" {
		t.Errorf("read_committed below an open transaction = %q", got)
	}
}

func TestFenceProducer(t *testing.T) {
	t.Parallel()
	l := plog.New(0)
	l.FenceProducer(3, 2)
	if _, _, err := l.Append(idem(3, 1, 0, "a")); !errors.Is(err, plog.ErrProducerFenced) {
		t.Errorf("append below the fenced epoch: %v", err)
	}
	mustAppend(t, l, idem(3, 2, 0, "a"))
	l.FenceProducer(3, 1) // never lowers
	mustAppend(t, l, idem(3, 2, 1, "b"))
	l.FenceProducer(3, 3)
	if _, _, err := l.Append(idem(3, 2, 2, "c")); !errors.Is(err, plog.ErrProducerFenced) {
		t.Errorf("append after fencing: %v", err)
	}
	if _, ok := l.ProducerEpoch(99); ok {
		t.Error("ProducerEpoch of an unknown producer reported ok")
	}
}

func TestDeleteRecords(t *testing.T) {
	t.Parallel()
	l := plog.New(0)
	mustAppend(t, l, plain("a", "b", "c", "d"))
	for _, c := range []struct {
		to        int64
		wantStart int64
		wantErr   error
	}{
		{to: 2, wantStart: 2},
		{to: 1, wantStart: 2}, // never moves back
		{to: 5, wantStart: 2, wantErr: plog.ErrOffsetOutOfRange},
		{to: 4, wantStart: 4}, // up to the high watermark
	} {
		start, err := l.DeleteRecords(c.to)
		if !errors.Is(err, c.wantErr) || (c.wantErr == nil && err != nil) || start != c.wantStart || l.StartOffset() != c.wantStart {
			t.Errorf("DeleteRecords(%d) = %d %v, want %d %v", c.to, start, err, c.wantStart, c.wantErr)
		}
	}
	if _, _, err := l.Fetch(3, 10, false, nil); !errors.Is(err, plog.ErrOffsetOutOfRange) {
		t.Errorf("Fetch below the log start: %v", err)
	}
	if _, err := l.Read(3); !errors.Is(err, plog.ErrOffsetOutOfRange) {
		t.Errorf("Read below the log start: %v", err)
	}
	if !l.IsGap(3, false) || !l.IsGap(0, true) {
		t.Error("offsets below the log start must be gaps")
	}
	mustAppend(t, l, plain("e"))
	if got := fetch(t, l, 4, 10, false); got != "4:e next=5" {
		t.Errorf("Fetch from the log start = %q", got)
	}
}

func TestAbortBelowLogStart(t *testing.T) {
	t.Parallel()
	l := plog.New(0)
	mustAppend(t, l, txn(7, 0, 0, "a", "b", "c"))
	if _, err := l.DeleteRecords(2); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Marker(7, 1, false, 0); err != nil {
		t.Fatal(err)
	}
	if got := fetch(t, l, 2, 10, true); got != "next=4" {
		t.Errorf("read_committed after abort = %q", got)
	}
}

func TestRetention(t *testing.T) {
	t.Parallel()
	const seg = 4096 // plog's segment size
	value := []byte("0123456789")
	l := plog.New(3 * seg * int64(len(value)))
	for i := 0; i < 5*seg; i++ {
		mustAppend(t, l, &plog.Batch{ProducerID: plog.NoProducer, Values: [][]byte{value}})
	}
	if got := l.Bytes(); got != 5*seg*int64(len(value)) {
		t.Fatalf("Bytes = %d before retention", got)
	}
	start := l.EnforceRetention()
	if start != 2*seg || l.StartOffset() != start {
		t.Errorf("EnforceRetention = %d (StartOffset %d), want %d: whole segments from the front", start, l.StartOffset(), 2*seg)
	}
	if got := l.Bytes(); got != 3*seg*int64(len(value)) {
		t.Errorf("Bytes = %d after retention, want %d", got, 3*seg*len(value))
	}
	if _, _, err := l.Fetch(start-1, 1, false, nil); !errors.Is(err, plog.ErrOffsetOutOfRange) {
		t.Errorf("Fetch below the retained log: %v", err)
	}
	if got := fetch(t, l, start, 1, false); got != fmt.Sprintf("%d:%s next=%d", start, value, start+1) {
		t.Errorf("Fetch at the new start = %q", got)
	}

	// An open transaction's segment is kept whatever the retention.
	l = plog.New(1)
	mustAppend(t, l, plain("x"))
	mustAppend(t, l, txn(7, 0, 0, "t"))
	for i := 0; i < 3*seg; i++ {
		mustAppend(t, l, plain("y"))
	}
	if start := l.EnforceRetention(); start != 0 {
		t.Errorf("retention dropped the segment of an open transaction: start %d", start)
	}
	if _, err := l.Marker(7, 1, true, 0); err != nil {
		t.Fatal(err)
	}
	if start := l.EnforceRetention(); start != 3*seg {
		t.Errorf("after commit: start %d, want %d (the segment being written stays)", start, 3*seg)
	}
	// Without a limit nothing is dropped.
	l = plog.New(0)
	for i := 0; i < 2*seg; i++ {
		mustAppend(t, l, plain("z"))
	}
	if start := l.EnforceRetention(); start != 0 {
		t.Errorf("unbounded retention dropped records: start %d", start)
	}
}

// TestRecordBytesRoundTrip reads back every shape of key, value and
// headers the log stores: a null key or value (nil) stays null and an
// empty one stays empty, which Kafka tells apart; headers survive the
// caller reusing its buffers; and records stay intact across arena and
// segment boundaries, with markers between them.
func TestRecordBytesRoundTrip(t *testing.T) {
	t.Parallel()
	big := []byte(strings.Repeat("b", 300<<10)) // forces a new arena often
	cases := []struct {
		name       string
		key, value []byte
		headers    []plog.Header
	}{
		{name: "null key, null value"},
		{name: "empty key, empty value", key: []byte{}, value: []byte{}},
		{name: "null key, value", value: []byte("v")},
		{name: "key, null value", key: []byte("k")},
		{name: "empty value with headers", value: []byte{}, headers: []plog.Header{{Key: "h", Value: []byte{}}, {Key: "n"}}},
		{name: "headers", key: []byte("k"), value: []byte("v"), headers: []plog.Header{{Key: "a", Value: []byte("1")}, {Key: "b", Value: []byte("22")}}},
		{name: "large value", key: []byte("k"), value: big},
	}
	l := plog.New(0)
	type want struct {
		off int64
		c   int
	}
	var wants []want
	// Enough rounds to fill several segments and many arenas.
	for round := range 2600 {
		for i, c := range cases {
			if c.value != nil && len(c.value) == len(big) && round%50 != 0 {
				continue
			}
			// bytes.Clone keeps nil nil and empty empty.
			k, v := bytes.Clone(c.key), bytes.Clone(c.value)
			var hs []plog.Header
			for _, h := range c.headers {
				hs = append(hs, plog.Header{Key: h.Key, Value: bytes.Clone(h.Value)})
			}
			b := &plog.Batch{ProducerID: plog.NoProducer, Keys: [][]byte{k}, Values: [][]byte{v}}
			if hs != nil {
				b.Headers = [][]plog.Header{hs}
			}
			wants = append(wants, want{mustAppend(t, l, b), i})
			// The caller's buffers are reused.
			for j := range k {
				k[j] = 'X'
			}
			for j := range v {
				v[j] = 'X'
			}
			for _, h := range hs {
				for j := range h.Value {
					h.Value[j] = 'X'
				}
			}
		}
		if round%3 == 0 {
			mustAppend(t, l, txn(9, 0, int32(round/3), "t"))
			if _, err := l.Marker(9, 0, true, 0); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, w := range wants {
		c := cases[w.c]
		r, err := l.Read(w.off)
		if err != nil {
			t.Fatalf("%s: Read(%d): %v", c.name, w.off, err)
		}
		if (r.Key == nil) != (c.key == nil) || string(r.Key) != string(c.key) {
			t.Fatalf("%s at %d: key %q (nil %v), want %q (nil %v)", c.name, w.off, r.Key, r.Key == nil, c.key, c.key == nil)
		}
		if (r.Value == nil) != (c.value == nil) || string(r.Value) != string(c.value) {
			t.Fatalf("%s at %d: value of %d bytes (nil %v), want %d (nil %v)", c.name, w.off, len(r.Value), r.Value == nil, len(c.value), c.value == nil)
		}
		if len(r.Headers) != len(c.headers) {
			t.Fatalf("%s at %d: %d headers, want %d", c.name, w.off, len(r.Headers), len(c.headers))
		}
		for i, h := range r.Headers {
			if h.Key != c.headers[i].Key || string(h.Value) != string(c.headers[i].Value) {
				t.Fatalf("%s at %d: header %d = %s=%q, want %s=%q", c.name, w.off, i, h.Key, h.Value, c.headers[i].Key, c.headers[i].Value)
			}
		}
		if cap(r.Value) != len(r.Value) || cap(r.Key) != len(r.Key) {
			t.Fatalf("%s at %d: key or value has spare capacity: a reader's append would write into the log", c.name, w.off)
		}
	}
	if got := l.HighWatermark(); got < 4*4096 {
		t.Fatalf("high watermark %d: the test must cross several segments", got)
	}
}
