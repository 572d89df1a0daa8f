// This file pins the lock shards' memory layout: each shard of a shard
// slice starts a full cache line after the one before, so two shards'
// mutexes never share a line (false sharing between unrelated partitions,
// groups or transactional ids).

package engine

import (
	"testing"
	"unsafe"
)

// cacheLine is the line size the shards are padded to (x86-64, most arm64).
const cacheLine = 64

func TestShardStrideIsWholeCacheLines(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		stride uintptr
	}{
		{"dataShard", unsafe.Sizeof(dataShard{})},
		{"groupShard", unsafe.Sizeof(groupShard{})},
		{"txnShard", unsafe.Sizeof(txnShard{})},
	} {
		if tc.stride == 0 || tc.stride%cacheLine != 0 {
			t.Errorf("%s stride = %d bytes, want a non-zero multiple of %d", tc.name, tc.stride, cacheLine)
		}
	}
}
