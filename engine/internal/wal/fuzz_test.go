// This file holds the fuzz targets: the frame decoder, and replay of a log
// directory holding arbitrary bytes. Neither may panic; replay either fails
// with a clear error or yields frames that replay identically a second time.
//
//	go test -run x -fuzz FuzzDecodeFrame -fuzztime 5s ./engine/internal/wal/
//	go test -run x -fuzz FuzzReplay -fuzztime 5s ./engine/internal/wal/

package wal

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func FuzzDecodeFrame(f *testing.F) {
	f.Add(AppendFrame(nil, []byte("hello")))
	f.Add(AppendFrame(AppendFrame(nil, []byte{1}), []byte{2, 3}))
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 0})
	f.Add([]byte{5, 0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		p, n, err := DecodeFrame(b)
		if err != nil {
			if !errors.Is(err, ErrTorn) && !errors.Is(err, ErrCorrupt) {
				t.Fatalf("DecodeFrame error %v is neither torn nor corrupt", err)
			}
			return
		}
		if n != FrameBytes(len(p)) || n > len(b) {
			t.Fatalf("n = %d for a %d-byte payload in %d bytes", n, len(p), len(b))
		}
		if !bytes.Equal(AppendFrame(nil, p), b[:n]) {
			t.Fatal("re-encoding the payload does not give the frame back")
		}
	})
}

func FuzzReplay(f *testing.F) {
	seg := header{version: FormatVersion, index: 1}.encode()
	seg = AppendFrame(seg, []byte("one"))
	seg = AppendFrame(seg, []byte("two"))
	f.Add(seg, false)
	f.Add(seg[:len(seg)-2], false)
	f.Add(seg[HeaderBytes:], true)
	f.Add([]byte("garbage"), false)
	f.Fuzz(func(t *testing.T, b []byte, withHeader bool) {
		dir := t.TempDir()
		data := b
		if withHeader {
			data = append(header{version: FormatVersion, index: 1}.encode(), b...)
		}
		if err := os.WriteFile(filepath.Join(dir, segmentName(1)), data, 0o644); err != nil {
			t.Fatal(err)
		}
		replay := func() ([][]byte, error) {
			g, err := NewGroup(Options{SegmentBytes: 1 << 20})
			if err != nil {
				t.Fatal(err)
			}
			defer g.Crash()
			l, err := g.Open(dir, 0)
			if err != nil {
				t.Fatal(err)
			}
			var got [][]byte
			_, err = l.Replay(func(_ uint64, p []byte) error {
				got = append(got, append([]byte(nil), p...))
				return nil
			})
			return got, err
		}
		got, err := replay()
		if err != nil {
			var ce *CorruptError
			if !errors.As(err, &ce) {
				t.Fatalf("replay error %v is not a CorruptError", err)
			}
			return
		}
		again, err := replay()
		if err != nil || len(again) != len(got) {
			t.Fatalf("second replay: %d frames, %v; first had %d", len(again), err, len(got))
		}
		for i := range got {
			if !bytes.Equal(got[i], again[i]) {
				t.Fatalf("frame %d differs between replays", i)
			}
		}
	})
}
