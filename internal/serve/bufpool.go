// This file holds the pool of byte buffers that record-carrying responses
// are built in: a fetch of many partitions encodes megabytes, and fresh
// buffers would each be zeroed and later collected. A buffer goes back to
// the pool once its response is written; nothing else keeps it (records are
// copied into it, never aliased from it).

package serve

import (
	"sync"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// maxPooledBytes is the largest buffer the pool keeps.
const maxPooledBytes = 16 << 20

var bufPool sync.Pool // of *[]byte

// getBuf returns an empty buffer with room for at least n bytes.
func getBuf(n int) []byte {
	if p, ok := bufPool.Get().(*[]byte); ok && cap(*p) >= n {
		return (*p)[:0]
	} else if ok {
		putBuf(*p)
	}
	return make([]byte, 0, n)
}

// putBuf returns b to the pool.
func putBuf(b []byte) {
	if cap(b) == 0 || cap(b) > maxPooledBytes {
		return
	}
	b = b[:0]
	bufPool.Put(&b)
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
