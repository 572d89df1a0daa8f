// This file holds the pool of byte buffers that record-carrying responses
// are built in: a fetch of many partitions encodes megabytes, and fresh
// buffers would each be zeroed and later collected. A buffer goes back to
// the pool once its response is written; nothing else keeps it (records are
// copied into it, never aliased from it).

package serve

import (
	"math/bits"
	"sync"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// maxPooledBits: the largest buffer the pool keeps has 1<<maxPooledBits
// bytes.
const (
	maxPooledBits  = 24
	maxPooledBytes = 1 << maxPooledBits
)

// minPooledBits: buffers are pooled in power-of-two size classes from
// 1<<minPooledBits to maxPooledBytes. A buffer of class k has a capacity of
// exactly 1<<k, so any buffer a class hands out fits any request of that
// class: with one pool of mixed sizes, a Produce frame put back could be
// handed to a slightly larger fetch response, which then allocated anyway.
const minPooledBits = 12

var bufPools [maxPooledBits - minPooledBits + 1]sync.Pool // of *[]byte

// sizeClass is the class of a buffer of n bytes: the least k with
// 1<<k >= n (never below minPooledBits); ok is false past maxPooledBytes.
func sizeClass(n int) (k int, ok bool) {
	k = max(bits.Len(uint(max(n, 1)-1)), minPooledBits)
	return k, 1<<k <= maxPooledBytes
}

// getBuf returns an empty buffer with room for at least n bytes.
func getBuf(n int) []byte {
	k, ok := sizeClass(n)
	if !ok {
		return make([]byte, 0, n)
	}
	if p, _ := bufPools[k-minPooledBits].Get().(*[]byte); p != nil {
		return (*p)[:0]
	}
	return make([]byte, 0, 1<<k)
}

// putBuf returns b to the pool of its class; a buffer whose capacity is no
// class's size (not from getBuf, or grown by append) is left to the GC.
func putBuf(b []byte) {
	k, ok := sizeClass(cap(b))
	if !ok || cap(b) != 1<<k {
		return
	}
	b = b[:0]
	bufPools[k-minPooledBits].Put(&b)
}

// releaseRecordBuffers returns the record buffers of a written response.
func releaseRecordBuffers(resp kmsg.Response) {
	switch r := resp.(type) {
	case *kmsg.FetchResponse:
		for i := range r.Topics {
			for j := range r.Topics[i].Partitions {
				putBuf(r.Topics[i].Partitions[j].RecordBatches)
				r.Topics[i].Partitions[j].RecordBatches = nil
			}
		}
	case *kmsg.ShareFetchResponse:
		for i := range r.Topics {
			for j := range r.Topics[i].Partitions {
				putBuf(r.Topics[i].Partitions[j].Records)
				r.Topics[i].Partitions[j].Records = nil
			}
		}
	}
}
