// This file tests the write-ahead log: the frame codec, replay across
// segments, torn tails cut at every byte of the last frame, flipped bits,
// bad headers, group commit, crashes, rolling and deleting segments.

package wal

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

func TestFrameRoundTrip(t *testing.T) {
	t.Parallel()
	for _, p := range [][]byte{{1}, []byte("hello"), bytes.Repeat([]byte{0xab}, 70000)} {
		f := AppendFrame(nil, p)
		if len(f) != FrameBytes(len(p)) {
			t.Fatalf("frame of %d bytes is %d long, want %d", len(p), len(f), FrameBytes(len(p)))
		}
		got, n, err := DecodeFrame(append(f, 9, 9, 9))
		if err != nil || n != len(f) || !bytes.Equal(got, p) {
			t.Fatalf("DecodeFrame = %d bytes, n %d, %v; want %d bytes, n %d", len(got), n, err, len(p), len(f))
		}
	}
}

func TestFrameErrors(t *testing.T) {
	t.Parallel()
	good := AppendFrame(nil, []byte("payload"))
	flip := append([]byte(nil), good...)
	flip[10] ^= 1
	badLen := append([]byte(nil), good...)
	badLen[0]++ // longer than the data: torn
	tests := []struct {
		name string
		b    []byte
		want error
	}{
		{"empty", nil, ErrTorn},
		{"short header", good[:5], ErrTorn},
		{"short payload", good[:len(good)-1], ErrTorn},
		{"flipped payload bit", flip, ErrCorrupt},
		{"length beyond data", badLen, ErrTorn},
		{"zero length", make([]byte, 16), ErrCorrupt},
		{"huge length", []byte{0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0}, ErrCorrupt},
	}
	for _, tc := range tests {
		if _, _, err := DecodeFrame(tc.b); !errors.Is(err, tc.want) {
			t.Errorf("%s: DecodeFrame err = %v, want %v", tc.name, err, tc.want)
		}
	}
}

func newGroup(t testing.TB, mode Mode, segBytes int64) *Group {
	t.Helper()
	g, err := NewGroup(Options{Mode: mode, Interval: 5e6, SegmentBytes: segBytes})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Crash() })
	return g
}

// openLog opens and replays the log in dir, returning the payloads.
func openLog(t testing.TB, g *Group, dir string) (*Log, [][]byte, ReplayStats) {
	t.Helper()
	l, err := g.Open(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	var got [][]byte
	st, err := l.Replay(func(_ uint64, p []byte) error {
		got = append(got, append([]byte(nil), p...))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return l, got, st
}

func payload(i int) []byte {
	return []byte(fmt.Sprintf("record-%04d-%s", i, bytes.Repeat([]byte{'x'}, i%37)))
}

// writeLog appends n records (waiting for each) and closes the group.
func writeLog(t testing.TB, dir string, n int, segBytes int64) {
	t.Helper()
	g := newGroup(t, SyncAlways, segBytes)
	l, _, _ := openLog(t, g, dir)
	for i := 0; i < n; i++ {
		pos, err := g.Append(l, payload(i), uint64(i))
		if err != nil {
			t.Fatal(err)
		}
		if err := g.Wait(pos.Ticket); err != nil {
			t.Fatal(err)
		}
	}
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
}

func checkPrefix(t *testing.T, got [][]byte, n int) {
	t.Helper()
	if len(got) != n {
		t.Fatalf("replayed %d records, want %d", len(got), n)
	}
	for i, p := range got {
		if !bytes.Equal(p, payload(i)) {
			t.Fatalf("record %d = %q, want %q", i, p, payload(i))
		}
	}
}

func TestReplayAcrossSegments(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeLog(t, dir, 200, 512)
	segs, err := listSegments(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(segs) < 5 {
		t.Fatalf("%d segments, want several at 512 bytes each", len(segs))
	}
	g := newGroup(t, SyncAlways, 512)
	l, got, st := openLog(t, g, dir)
	checkPrefix(t, got, 200)
	if st.Frames != 200 || len(st.Truncated) != 0 {
		t.Fatalf("stats = %+v, want 200 frames and no truncation", st)
	}
	// Appends continue where the log ended.
	pos, err := g.Append(l, payload(200), 200)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Wait(pos.Ticket); err != nil {
		t.Fatal(err)
	}
	g.Close()
	_, got, _ = openLog(t, newGroup(t, SyncAlways, 512), dir)
	checkPrefix(t, got, 201)
}

func lastSegment(t *testing.T, dir string) string {
	t.Helper()
	segs, err := listSegments(dir)
	if err != nil || len(segs) == 0 {
		t.Fatalf("segments: %v %v", segs, err)
	}
	return filepath.Join(dir, segmentName(segs[len(segs)-1]))
}

func copyDir(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// TestTornTailEveryByte cuts the last frame at every byte boundary: replay
// keeps every earlier record, drops exactly the cut frame's bytes, reports
// them, and the log accepts appends again.
func TestTornTailEveryByte(t *testing.T) {
	t.Parallel()
	src := t.TempDir()
	const n = 30
	writeLog(t, src, n, 1<<20)
	last := lastSegment(t, src)
	full, err := os.ReadFile(last)
	if err != nil {
		t.Fatal(err)
	}
	frameStart := len(full) - FrameBytes(len(payload(n-1)))
	for cut := frameStart; cut < len(full); cut++ {
		dir := copyDir(t, src)
		seg := lastSegment(t, dir)
		if err := os.Truncate(seg, int64(cut)); err != nil {
			t.Fatal(err)
		}
		g := newGroup(t, SyncAlways, 1<<20)
		l, got, st := openLog(t, g, dir)
		checkPrefix(t, got, n-1)
		wantDrop := int64(cut - frameStart)
		switch {
		case wantDrop == 0 && len(st.Truncated) != 0:
			t.Fatalf("cut at a frame boundary: truncated %+v, want nothing", st.Truncated)
		case wantDrop > 0 && (len(st.Truncated) != 1 || st.Truncated[0].Bytes != wantDrop || st.Truncated[0].Offset != int64(frameStart)):
			t.Fatalf("cut at %d: truncated %+v, want %d bytes at %d", cut, st.Truncated, wantDrop, frameStart)
		}
		pos, err := g.Append(l, payload(n-1), 0)
		if err != nil {
			t.Fatal(err)
		}
		if err := g.Wait(pos.Ticket); err != nil {
			t.Fatal(err)
		}
		g.Close()
		_, got, st = openLog(t, newGroup(t, SyncAlways, 1<<20), dir)
		checkPrefix(t, got, n)
		if len(st.Truncated) != 0 {
			t.Fatalf("second replay truncated %+v", st.Truncated)
		}
	}
}

// TestFlippedBit flips every bit of the last segment's frames (and a
// sample in a sealed segment): replay either fails with a CorruptError
// naming the file and an offset, or succeeds with a prefix of the records
// and reports what it dropped. It never invents a record and never loses
// one without saying so.
func TestFlippedBit(t *testing.T) {
	t.Parallel()
	src := t.TempDir()
	const n = 12
	writeLog(t, src, n, 1<<20)
	last := lastSegment(t, src)
	full, err := os.ReadFile(last)
	if err != nil {
		t.Fatal(err)
	}
	var corrupt, truncated int
	for bit := 0; bit < 8*len(full); bit++ {
		b := append([]byte(nil), full...)
		b[bit/8] ^= 1 << (bit % 8)
		dir := t.TempDir()
		path := filepath.Join(dir, filepath.Base(last))
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		g := newGroup(t, SyncAlways, 1<<20)
		l, err := g.Open(dir, 0)
		if err != nil {
			t.Fatal(err)
		}
		var got [][]byte
		st, err := l.Replay(func(_ uint64, p []byte) error {
			got = append(got, append([]byte(nil), p...))
			return nil
		})
		if err != nil {
			var ce *CorruptError
			if !errors.As(err, &ce) || ce.File != path {
				t.Fatalf("bit %d: error %v, want a CorruptError naming %s", bit, err, path)
			}
			if len(got) > n {
				t.Fatalf("bit %d: replayed %d records of %d", bit, len(got), n)
			}
			corrupt++
			continue
		}
		// Success: a prefix, and anything missing is reported.
		for i, p := range got {
			if !bytes.Equal(p, payload(i)) {
				t.Fatalf("bit %d: record %d = %q, want %q (invented)", bit, i, p, payload(i))
			}
		}
		if len(got) < n {
			if len(st.Truncated) != 1 || st.Truncated[0].Bytes == 0 {
				t.Fatalf("bit %d: %d of %d records replayed and no truncation reported", bit, len(got), n)
			}
			truncated++
		} else if len(st.Truncated) != 0 {
			t.Fatalf("bit %d: all records replayed but truncation %+v", bit, st.Truncated)
		}
		g.Crash()
	}
	if corrupt == 0 || truncated == 0 {
		t.Fatalf("corrupt %d, truncated %d: want both kinds of outcome", corrupt, truncated)
	}
	t.Logf("%d bits: %d corruption errors, %d torn-tail truncations (bits in the last frame)", 8*len(full), corrupt, truncated)
}

func TestCorruptSealedSegment(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeLog(t, dir, 100, 512)
	segs, _ := listSegments(dir)
	first := filepath.Join(dir, segmentName(segs[0]))
	b, _ := os.ReadFile(first)
	// Cut the sealed segment's last frame: in a sealed segment that is
	// corruption, not a torn tail.
	if err := os.WriteFile(first, b[:len(b)-3], 0o644); err != nil {
		t.Fatal(err)
	}
	g := newGroup(t, SyncAlways, 512)
	l, _ := g.Open(dir, 0)
	_, err := l.Replay(func(uint64, []byte) error { return nil })
	var ce *CorruptError
	if !errors.As(err, &ce) || ce.File != first {
		t.Fatalf("replay err = %v, want a CorruptError naming %s", err, first)
	}
}

func TestBadHeaders(t *testing.T) {
	t.Parallel()
	src := t.TempDir()
	writeLog(t, src, 3, 1<<20)
	seg := lastSegment(t, src)
	good, _ := os.ReadFile(seg)
	newer := append([]byte(nil), good...)
	copy(newer, header{version: FormatVersion + 1, index: 1}.encode())
	tests := []struct {
		name string
		b    []byte
		want error
	}{
		{"newer version", newer, ErrVersion},
		{"not a segment", append([]byte("PK\x03\x04 this is a zip file, honest......"), good[HeaderBytes:]...), ErrNotSegment},
		{"flipped header", func() []byte { b := append([]byte(nil), good...); b[15] ^= 4; return b }(), ErrCorrupt},
	}
	for _, tc := range tests {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(seg)), tc.b, 0o644); err != nil {
			t.Fatal(err)
		}
		l, err := newGroup(t, SyncAlways, 1<<20).Open(dir, 0)
		if err != nil {
			t.Fatal(err)
		}
		_, err = l.Replay(func(uint64, []byte) error { return nil })
		if !errors.Is(err, tc.want) {
			t.Errorf("%s: replay err = %v, want %v", tc.name, err, tc.want)
		}
	}
	// A stray file in a log directory is refused by name.
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("hi"), 0o644)
	if _, err := newGroup(t, SyncAlways, 1<<20).Open(dir, 0); !errors.Is(err, ErrNotSegment) {
		t.Errorf("stray file: Open err = %v, want ErrNotSegment", err)
	}
	// A segment whose header was cut is dropped as a torn tail.
	dir = t.TempDir()
	os.WriteFile(filepath.Join(dir, segmentName(1)), good[:HeaderBytes-5], 0o644)
	_, got, st := openLog(t, newGroup(t, SyncAlways, 1<<20), dir)
	if len(got) != 0 || len(st.Truncated) != 1 {
		t.Errorf("torn header: %d records, truncated %+v; want none and one truncation", len(got), st.Truncated)
	}
}

// TestGroupCommit: many appends, one Wait, one fsync.
func TestGroupCommit(t *testing.T) {
	t.Parallel()
	g := newGroup(t, SyncAlways, 1<<20)
	logs := make([]*Log, 3)
	for i := range logs {
		logs[i], _, _ = openLog(t, g, filepath.Join(t.TempDir(), "l"))
	}
	var last Ticket
	for i := 0; i < 100; i++ {
		pos, err := g.Append(logs[i%3], payload(i), 0)
		if err != nil {
			t.Fatal(err)
		}
		last = pos.Ticket
	}
	before := g.Stats().Fsyncs.Load()
	if err := g.Wait(last); err != nil {
		t.Fatal(err)
	}
	if got := g.Stats().Fsyncs.Load() - before; got != 3 {
		t.Fatalf("one Wait over 100 appends to 3 logs did %d fsyncs, want 3 (one per file)", got)
	}
	if err := g.Wait(last); err != nil {
		t.Fatal(err)
	}
	if got := g.Stats().Fsyncs.Load() - before; got != 3 {
		t.Fatalf("a second Wait for a durable ticket fsynced again (%d)", got)
	}
}

// TestConcurrentWaiters: concurrent appenders all see their records
// durable; the fsync count never exceeds the append count.
func TestConcurrentWaiters(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	g := newGroup(t, SyncAlways, 4096)
	l, _, _ := openLog(t, g, dir)
	var wg sync.WaitGroup
	const workers, each = 8, 50
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				pos, err := g.Append(l, payload(w*each+i), 0)
				if err == nil {
					err = g.Wait(pos.Ticket)
				}
				if err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	st := g.Stats()
	if st.Fsyncs.Load() > st.Appends.Load()+st.SegmentsCreated.Load() {
		t.Fatalf("%d fsyncs for %d appends", st.Fsyncs.Load(), st.Appends.Load())
	}
	t.Logf("%d appends, %d flushes, %d fsyncs", st.Appends.Load(), st.Flushes.Load(), st.Fsyncs.Load())
	g.Close()
	_, got, _ := openLog(t, newGroup(t, SyncAlways, 4096), dir)
	if len(got) != workers*each {
		t.Fatalf("replayed %d, want %d", len(got), workers*each)
	}
}

// TestCrashDropsUnwritten: a crash keeps what was written and drops what
// was only appended.
func TestCrashDropsUnwritten(t *testing.T) {
	t.Parallel()
	for _, mode := range []Mode{SyncAlways, SyncInterval, SyncNever} {
		dir := t.TempDir()
		g := newGroup(t, mode, 1<<20)
		l, _, _ := openLog(t, g, dir)
		for i := 0; i < 5; i++ {
			pos, _ := g.Append(l, payload(i), 0)
			if err := g.Wait(pos.Ticket); err != nil {
				t.Fatal(err)
			}
		}
		g.Append(l, []byte("never waited for"), 0)
		g.Crash()
		if _, err := g.Append(l, []byte("after"), 0); !errors.Is(err, ErrCrashed) {
			t.Fatalf("mode %d: append after crash err = %v", mode, err)
		}
		_, got, _ := openLog(t, newGroup(t, SyncAlways, 1<<20), dir)
		checkPrefix(t, got, 5)
	}
}

func TestRollDeleteScan(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	g := newGroup(t, SyncAlways, 1<<20)
	l, _, _ := openLog(t, g, dir)
	appendN := func(from, to int) {
		for i := from; i < to; i++ {
			pos, err := g.Append(l, payload(i), uint64(i))
			if err == nil {
				err = g.Wait(pos.Ticket)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	appendN(0, 10)
	k := l.RollNext()
	appendN(10, 20)
	if oldest, next := l.Segments(); oldest != 1 || next != k || k != 2 {
		t.Fatalf("segments = %d..%d, RollNext = %d; want 1..2, 2", oldest, next, k)
	}
	k3 := l.RollNext()
	appendN(20, 30)
	// Bases: segment 2 starts at record 10, segment 3 at 20.
	if err := l.DeleteBelowBase(15); err != nil {
		t.Fatal(err)
	}
	if oldest, _ := l.Segments(); oldest != 2 {
		t.Fatalf("after DeleteBelowBase(15) oldest = %d, want 2", oldest)
	}
	var seen []string
	if err := l.Scan(func(_ uint64, p []byte) error { seen = append(seen, string(p)); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(seen) != 20 || seen[0] != string(payload(10)) {
		t.Fatalf("scan saw %d records from %q, want 20 from %q", len(seen), seen[0], payload(10))
	}
	if err := l.DeleteBefore(k3); err != nil {
		t.Fatal(err)
	}
	g.Close()
	l2, got, _ := openLog(t, newGroup(t, SyncAlways, 1<<20), dir)
	if len(got) != 10 || !bytes.Equal(got[0], payload(20)) || l2.FirstBase(0) != 20 {
		t.Fatalf("after DeleteBefore: %d records, first base %d; want 10 from record 20", len(got), l2.FirstBase(0))
	}
}

// TestCrashDuringFlushWaitsForIt: a Wait that comes in while a flush
// holding its record is in progress, after a crash was called, returns
// only once that flush ends, and then succeeds, since the flush writes the
// record. An error from Wait means the record is not in the log: a caller
// that retries on ErrCrashed (an idempotent producer across a restart)
// must not find it written twice.
func TestCrashDuringFlushWaitsForIt(t *testing.T) {
	t.Parallel()
	for _, mode := range []Mode{SyncAlways, SyncInterval, SyncNever} {
		dir := t.TempDir()
		g := newGroup(t, mode, 1<<20)
		l, _, _ := openLog(t, g, dir)
		pos, err := g.Append(l, payload(0), 0)
		if err != nil {
			t.Fatal(err)
		}
		l.fmu.Lock() // the flush leader blocks in writeOut, holding the record
		leader := make(chan error, 1)
		go func() { leader <- g.Wait(pos.Ticket) }()
		waitFor(t, g, func() bool { return g.flushing })
		crashed := make(chan struct{})
		go func() { g.Crash(); close(crashed) }()
		waitFor(t, g, func() bool { return g.err != nil })
		// The flush ends only after this Wait has looked at the group;
		// if the clock fires first the Wait sees the record written and
		// the test proves nothing, but cannot fail wrongly.
		unblock := time.AfterFunc(50*time.Millisecond, l.fmu.Unlock)
		late := g.Wait(pos.Ticket)
		if unblock.Stop() {
			l.fmu.Unlock()
		}
		if err := <-leader; err != nil {
			t.Fatalf("mode %d: leader Wait = %v, want nil (its flush wrote the record)", mode, err)
		}
		<-crashed
		_, got, _ := openLog(t, newGroup(t, SyncAlways, 1<<20), dir)
		checkPrefix(t, got, 1)
		if late != nil {
			t.Fatalf("mode %d: Wait during the crashed flush = %v, but the flush wrote the record", mode, late)
		}
	}
}

// waitFor polls cond under g.mu until it holds.
func waitFor(t *testing.T, g *Group, cond func() bool) {
	t.Helper()
	for i := 0; ; i++ {
		g.mu.Lock()
		ok := cond()
		g.mu.Unlock()
		if ok {
			return
		}
		if i > 100000 {
			t.Fatal("condition never held")
		}
		time.Sleep(10 * time.Microsecond)
	}
}
