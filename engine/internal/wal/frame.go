// This file holds the frame codec: a 4-byte little-endian payload length, a
// 4-byte CRC32C (Castagnoli) over the length and the payload, then the
// payload.

package wal

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
)

// FrameHeaderBytes is the size of a frame's header.
const FrameHeaderBytes = 8

// MaxFrameBytes bounds one frame's payload. A larger length field is
// corruption, never an allocation.
const MaxFrameBytes = 64 << 20

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Frame errors. Check them with errors.Is.
var (
	// ErrTorn: the data ends inside a frame (a write cut short).
	ErrTorn = errors.New("engine: torn frame")
	// ErrCorrupt: a frame (or a segment header) fails its checksum or has
	// an impossible length.
	ErrCorrupt = errors.New("engine: corrupt frame")
)

// AppendFrame appends the frame of payload to dst and returns the result.
// The payload must not be empty and at most MaxFrameBytes long.
func AppendFrame(dst, payload []byte) []byte {
	var h [FrameHeaderBytes]byte
	binary.LittleEndian.PutUint32(h[0:4], uint32(len(payload)))
	crc := crc32.Update(crc32.Checksum(h[0:4], castagnoli), castagnoli, payload)
	binary.LittleEndian.PutUint32(h[4:8], crc)
	dst = append(dst, h[:]...)
	return append(dst, payload...)
}

// FrameBytes returns the size of the frame of a payload of n bytes.
func FrameBytes(n int) int { return FrameHeaderBytes + n }

// DecodeFrame decodes the frame at the start of b. It returns the payload
// (aliasing b) and the frame's total size. A frame the data ends inside is
// ErrTorn; a zero or oversized length or a checksum mismatch is ErrCorrupt.
func DecodeFrame(b []byte) (payload []byte, n int, err error) {
	if len(b) < FrameHeaderBytes {
		return nil, 0, fmt.Errorf("%w: %d header bytes of %d", ErrTorn, len(b), FrameHeaderBytes)
	}
	size := binary.LittleEndian.Uint32(b[0:4])
	if size == 0 || size > MaxFrameBytes {
		return nil, 0, fmt.Errorf("%w: length %d", ErrCorrupt, size)
	}
	end := FrameHeaderBytes + int(size)
	if len(b) < end {
		return nil, 0, fmt.Errorf("%w: %d of %d bytes", ErrTorn, len(b), end)
	}
	want := binary.LittleEndian.Uint32(b[4:8])
	got := crc32.Update(crc32.Checksum(b[0:4], castagnoli), castagnoli, b[FrameHeaderBytes:end])
	if got != want {
		return nil, 0, fmt.Errorf("%w: checksum %08x, frame says %08x", ErrCorrupt, got, want)
	}
	return b[FrameHeaderBytes:end], end, nil
}

// resyncBudget bounds the bytes checksummed while looking for valid frames
// after a bad one, so a hostile file cannot make recovery quadratic.
const resyncBudget = 256 << 20

// validAfter reports whether some position after pos in b starts a chain of
// valid frames that runs to the end of b (or to a torn frame at the end).
// A bad frame followed by such a chain is corruption in the middle of a
// log; a bad frame followed by nothing valid is a torn tail. The chain rule
// keeps a frame embedded in a torn record's payload from passing as data.
// When the budget runs out it answers true: an error is safer than
// truncating data that might be valid.
func validAfter(b []byte, pos int) bool {
	budget := resyncBudget
	for q := pos + 1; q+FrameHeaderBytes <= len(b); q++ {
		size := binary.LittleEndian.Uint32(b[q : q+4])
		if size == 0 || size > MaxFrameBytes || q+FrameHeaderBytes+int(size) > len(b) {
			continue
		}
		budget -= int(size)
		if budget < 0 {
			return true
		}
		if _, _, err := DecodeFrame(b[q:]); err != nil {
			continue
		}
		if chainToEnd(b, q) {
			return true
		}
	}
	return false
}

// chainToEnd reports whether valid frames from q reach the end of b, or a
// torn frame that the end of b cuts.
func chainToEnd(b []byte, q int) bool {
	for q < len(b) {
		_, n, err := DecodeFrame(b[q:])
		if errors.Is(err, ErrTorn) {
			return true
		}
		if err != nil {
			return false
		}
		q += n
	}
	return true
}
