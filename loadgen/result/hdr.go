// This file holds the one codec of the histograms a result file carries:
// HdrHistogram's compressed V2 encoding as base64 text, the form
// HdrHistogram's own tools exchange.

package result

import (
	"encoding/base64"
	"errors"
	"fmt"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// ErrHistogram is wrapped by the error for an encoding that does not decode.
var ErrHistogram = errors.New("result: histogram encoding")

// EncodeHistogram returns h's V2 encoding, or "" when it cannot be encoded.
func EncodeHistogram(h *hdrhistogram.Histogram) string {
	b, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		return ""
	}
	return string(b)
}

// Decode decodes h's V2 encoding (EncodedV2). A value base64-encoded once
// more on top is accepted too. A malformed encoding is an error wrapping
// ErrHistogram, never a panic.
func (h Histogram) Decode() (*hdrhistogram.Histogram, error) {
	d, err := decodeV2([]byte(h.EncodedV2))
	if err == nil {
		return d, nil
	}
	if raw, err2 := base64.StdEncoding.DecodeString(h.EncodedV2); err2 == nil {
		if d, err3 := decodeV2(raw); err3 == nil {
			return d, nil
		}
	}
	return nil, fmt.Errorf("%w: %v", ErrHistogram, err)
}

// decodeV2 is hdrhistogram.Decode with its panics on malformed input turned
// into errors.
func decodeV2(b []byte) (h *hdrhistogram.Histogram, err error) {
	defer func() {
		if r := recover(); r != nil {
			h, err = nil, fmt.Errorf("decoder failed: %v", r)
		}
	}()
	return hdrhistogram.Decode(b)
}
