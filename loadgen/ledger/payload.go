// This file holds the payload layout: every input carries its unique id and
// intended send time, every output the id of the input it was made from and
// the transaction that wrote it, so the verifier can match them.

package ledger

import (
	"encoding/binary"
	"errors"
)

// HeaderBytes is the size of the header at the start of every payload; the
// workload's messageSize must be at least this.
const HeaderBytes = 32

// ErrShortPayload is ReadInput's and ReadOutput's error for a payload
// shorter than the header.
var ErrShortPayload = errors.New("ledger: payload shorter than the 32-byte header")

// InputHeader is the header of an input record.
type InputHeader struct {
	ID         uint64
	IntendedNs int64 // ns since the mode's run start
}

func putInput(b []byte, h InputHeader) {
	binary.BigEndian.PutUint64(b[0:], h.ID)
	binary.BigEndian.PutUint64(b[8:], uint64(h.IntendedNs))
}

// ReadInput reads an input's header from the start of b.
func ReadInput(b []byte) (InputHeader, error) {
	if len(b) < HeaderBytes {
		return InputHeader{}, ErrShortPayload
	}
	return InputHeader{ID: binary.BigEndian.Uint64(b[0:]), IntendedNs: int64(binary.BigEndian.Uint64(b[8:]))}, nil
}

// OutputHeader is the header of an output record.
type OutputHeader struct {
	InputID    uint64
	IntendedNs int64
	TxnSeq     int64 // the worker's transaction number, 0 outside transactions
	Epoch      int16 // producer epoch, -1 outside transactions
	Worker     uint16
}

func putOutput(b []byte, h OutputHeader) {
	binary.BigEndian.PutUint64(b[0:], h.InputID)
	binary.BigEndian.PutUint64(b[8:], uint64(h.IntendedNs))
	binary.BigEndian.PutUint64(b[16:], uint64(h.TxnSeq))
	binary.BigEndian.PutUint16(b[24:], uint16(h.Epoch))
	binary.BigEndian.PutUint16(b[26:], h.Worker)
}

// ReadOutput reads an output's header from the start of b.
func ReadOutput(b []byte) (OutputHeader, error) {
	if len(b) < HeaderBytes {
		return OutputHeader{}, ErrShortPayload
	}
	return OutputHeader{
		InputID:    binary.BigEndian.Uint64(b[0:]),
		IntendedNs: int64(binary.BigEndian.Uint64(b[8:])),
		TxnSeq:     int64(binary.BigEndian.Uint64(b[16:])),
		Epoch:      int16(binary.BigEndian.Uint16(b[24:])),
		Worker:     binary.BigEndian.Uint16(b[26:]),
	}, nil
}

// PutInputHeader writes an input's header at the start of b (at least
// HeaderBytes long): its unique id and its intended send time, in ns since
// the mode's start. A driver other than the producer here (the simulator)
// writes inputs the ledger reads with it.
func PutInputHeader(b []byte, id uint64, intendedNs int64) {
	putInput(b, InputHeader{ID: id, IntendedNs: intendedNs})
}

// PutOutputHeader writes an output's header at the start of b (at least
// HeaderBytes long): its input's id and intended time, the worker's
// transaction (txnSeq, 0 outside one) and producer epoch (-1 outside one),
// and the worker's id.
func PutOutputHeader(b []byte, inputID uint64, intendedNs, txnSeq int64, epoch int16, worker uint16) {
	putOutput(b, OutputHeader{InputID: inputID, IntendedNs: intendedNs, TxnSeq: txnSeq, Epoch: epoch, Worker: worker})
}

// PayloadID returns the id an input's or output's header starts with (an
// output's is its input's), or false for a payload shorter than the
// header.
func PayloadID(b []byte) (uint64, bool) {
	h, err := ReadInput(b)
	return h.ID, err == nil
}
