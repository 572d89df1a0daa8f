// This file holds the compression codecs a producer may write batches with,
// spelled as Kafka's compression.type spells them.

package vocab

import (
	"fmt"
	"strings"
)

// Compression is a producer's compression.type: the codec its record
// batches are written with.
type Compression string

// The codecs Kafka knows. "" (unset) means CompressionNone wherever a
// codec is used.
const (
	CompressionNone   Compression = "none"
	CompressionGzip   Compression = "gzip"
	CompressionSnappy Compression = "snappy"
	CompressionLz4    Compression = "lz4"
	CompressionZstd   Compression = "zstd"
)

// Compressions lists the codecs, none first. The slice is the caller's.
func Compressions() []Compression {
	return []Compression{CompressionNone, CompressionGzip, CompressionSnappy, CompressionLz4, CompressionZstd}
}

// ParseCompression returns the codec named s ("" is none), or an error
// naming the valid ones.
func ParseCompression(s string) (Compression, error) {
	if s == "" {
		return CompressionNone, nil
	}
	for _, c := range Compressions() {
		if string(c) == s {
			return c, nil
		}
	}
	return "", fmt.Errorf("vocab: unknown compression.type %q (valid: %s)", s, strings.Join(Names(Compressions()), ", "))
}

// OrNone returns c, or CompressionNone when c is unset.
func (c Compression) OrNone() Compression {
	if c == "" {
		return CompressionNone
	}
	return c
}

// String returns the codec's name.
func (c Compression) String() string { return string(c) }
