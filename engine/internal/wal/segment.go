// This file holds segment files: the 32-byte header (magic, format
// version, segment index, base, header checksum) and file naming.

package wal

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// FormatVersion is the segment format this package writes and the newest
// it reads.
const FormatVersion = 1

// HeaderBytes is the size of a segment header.
const HeaderBytes = 32

// magic opens every segment file. The CR LF catches a file mangled by
// text-mode transfers, the NUL one read as text.
var magic = [8]byte{'S', 'B', 'W', 'A', 'L', 0, '\r', '\n'}

const segmentExt = ".wal"

// Segment errors.
var (
	// ErrNotSegment: a file in a log directory is not a sharebench segment.
	ErrNotSegment = errors.New("engine: not a sharebench log segment")
	// ErrVersion: a segment was written by a newer format version.
	ErrVersion = errors.New("engine: segment written by a newer format version")
)

type header struct {
	version uint16
	index   uint64
	base    uint64
}

func (h header) encode() []byte {
	b := make([]byte, HeaderBytes)
	copy(b, magic[:])
	binary.LittleEndian.PutUint16(b[8:], h.version)
	binary.LittleEndian.PutUint64(b[12:], h.index)
	binary.LittleEndian.PutUint64(b[20:], h.base)
	binary.LittleEndian.PutUint32(b[28:], crc32.Checksum(b[:28], castagnoli))
	return b
}

// decodeHeader parses a segment header; b must hold at least HeaderBytes.
func decodeHeader(b []byte) (header, error) {
	if !bytes.Equal(b[:8], magic[:]) {
		return header{}, ErrNotSegment
	}
	if got, want := crc32.Checksum(b[:28], castagnoli), binary.LittleEndian.Uint32(b[28:]); got != want {
		return header{}, fmt.Errorf("%w: segment header checksum %08x, header says %08x", ErrCorrupt, got, want)
	}
	h := header{
		version: binary.LittleEndian.Uint16(b[8:]),
		index:   binary.LittleEndian.Uint64(b[12:]),
		base:    binary.LittleEndian.Uint64(b[20:]),
	}
	if h.version == 0 {
		return header{}, fmt.Errorf("%w: format version 0", ErrCorrupt)
	}
	if h.version > FormatVersion {
		return header{}, fmt.Errorf("%w: version %d, this build reads up to %d", ErrVersion, h.version, FormatVersion)
	}
	return h, nil
}

func segmentName(index uint64) string { return fmt.Sprintf("%020d%s", index, segmentExt) }

// listSegments returns the segment indexes in dir, ascending. A file that is
// not named like a segment is an error: the directory is the log's alone.
func listSegments(dir string) ([]uint64, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []uint64
	for _, e := range ents {
		name := e.Name()
		if e.IsDir() {
			return nil, fmt.Errorf("%w: unexpected directory %s", ErrNotSegment, filepath.Join(dir, name))
		}
		idx, err := strconv.ParseUint(strings.TrimSuffix(name, segmentExt), 10, 64)
		if !strings.HasSuffix(name, segmentExt) || err != nil || segmentName(idx) != name || idx == 0 {
			return nil, fmt.Errorf("%w: unexpected file %s", ErrNotSegment, filepath.Join(dir, name))
		}
		out = append(out, idx)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out, nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// Records counts the whole records the log in dir holds, reading its
// segments without opening, repairing or changing anything: a torn or
// corrupt frame ends a segment's count. A missing directory holds none.
// Recovery uses it on a log it will not open (one no other log refers to)
// to tell an orphan that never held a record from one that did.
func Records(dir string) (int64, error) {
	idx, err := listSegments(dir)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	var n int64
	for _, i := range idx {
		b, err := os.ReadFile(filepath.Join(dir, segmentName(i)))
		if err != nil {
			return n, err
		}
		if len(b) < HeaderBytes {
			continue // a segment whose header was never fully written
		}
		if _, err := decodeHeader(b); err != nil {
			return n, fmt.Errorf("%s: %w", filepath.Join(dir, segmentName(i)), err)
		}
		for pos := HeaderBytes; pos < len(b); {
			_, k, err := DecodeFrame(b[pos:])
			if err != nil {
				break
			}
			n++
			pos += k
		}
	}
	return n, nil
}
