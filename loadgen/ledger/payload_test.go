// This file tests the payload headers: inputs and outputs round-trip their
// fields, and short payloads are refused.

package ledger

import (
	"errors"
	"math"
	"testing"
)

func TestInputHeaderRoundTrip(t *testing.T) {
	t.Parallel()
	for _, h := range []InputHeader{
		{ID: 1, IntendedNs: 0},
		{ID: 123456789, IntendedNs: 987654321},
		{ID: math.MaxUint64, IntendedNs: -5}, // a negative time survives
		{ID: 7, IntendedNs: math.MaxInt64},
	} {
		b := make([]byte, 256)
		for i := range b {
			b[i] = 0xAA // the rest of the payload is left alone
		}
		putInput(b, h)
		got, err := ReadInput(b)
		if err != nil || got != h {
			t.Errorf("ReadInput(putInput(%+v)) = %+v, %v", h, got, err)
		}
		if b[HeaderBytes] != 0xAA || b[255] != 0xAA {
			t.Errorf("putInput wrote past the header")
		}
	}
}

func TestOutputHeaderRoundTrip(t *testing.T) {
	t.Parallel()
	for _, h := range []OutputHeader{
		{InputID: 1, IntendedNs: 2, TxnSeq: 0, Epoch: -1, Worker: 0},
		{InputID: 42, IntendedNs: 1e9, TxnSeq: 3<<32 | 17, Epoch: 12, Worker: 7},
		{InputID: math.MaxUint64, IntendedNs: -1, TxnSeq: math.MaxInt64, Epoch: math.MaxInt16, Worker: math.MaxUint16},
		{InputID: 9, Epoch: math.MinInt16},
	} {
		b := make([]byte, HeaderBytes)
		putOutput(b, h)
		got, err := ReadOutput(b)
		if err != nil || got != h {
			t.Errorf("ReadOutput(putOutput(%+v)) = %+v, %v", h, got, err)
		}
	}
}

func TestOutputKeepsInputFields(t *testing.T) {
	t.Parallel()
	// A worker copies the input and writes the output header over it: the
	// id and intended time read the same through either header.
	b := make([]byte, 64)
	putInput(b, InputHeader{ID: 99, IntendedNs: 12345})
	putOutput(b, OutputHeader{InputID: 99, IntendedNs: 12345, TxnSeq: 1, Epoch: 2, Worker: 3})
	in, err := ReadInput(b)
	if err != nil || in.ID != 99 || in.IntendedNs != 12345 {
		t.Fatalf("ReadInput of an output = %+v, %v", in, err)
	}
}

func TestShortPayload(t *testing.T) {
	t.Parallel()
	for _, n := range []int{0, 1, HeaderBytes - 1} {
		b := make([]byte, n)
		if _, err := ReadInput(b); !errors.Is(err, ErrShortPayload) {
			t.Errorf("ReadInput(%d bytes) error %v, want ErrShortPayload", n, err)
		}
		if _, err := ReadOutput(b); !errors.Is(err, ErrShortPayload) {
			t.Errorf("ReadOutput(%d bytes) error %v, want ErrShortPayload", n, err)
		}
	}
	if _, err := ReadInput(make([]byte, HeaderBytes)); err != nil {
		t.Errorf("ReadInput(%d bytes): %v", HeaderBytes, err)
	}
}
