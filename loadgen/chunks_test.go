package loadgen

import "testing"

// TestChunksAcrossChunkBoundaries checks the ledger's chunked table where
// a run's ledger lives: past the first chunks, where an index maps to a
// chunk and a slot in it.
func TestChunksAcrossChunkBoundaries(t *testing.T) {
	for _, n := range []int{0, 1, chunkLen - 1, chunkLen, chunkLen + 1, 3*chunkLen + 7} {
		var c chunks[int64]
		for i := range n {
			c.append(int64(i) * 3)
		}
		if c.len() != n {
			t.Fatalf("n=%d: len %d", n, c.len())
		}
		for _, i := range []int{0, chunkLen - 1, chunkLen, n - 1} {
			if i >= 0 && i < n && *c.at(i) != int64(i)*3 {
				t.Errorf("n=%d: at(%d) = %d, want %d", n, i, *c.at(i), int64(i)*3)
			}
		}
		seen := 0
		c.each(func(i int, v *int64) {
			if i != seen || *v != int64(i)*3 {
				t.Fatalf("n=%d: each gave (%d, %d) at step %d", n, i, *v, seen)
			}
			seen++
		})
		if seen != n {
			t.Errorf("n=%d: each visited %d", n, seen)
		}
	}
}

func TestChunksGrowFillsAndKeeps(t *testing.T) {
	var c chunks[int32]
	c.append(7)
	c.grow(chunkLen+2, -1)
	c.grow(5, 9) // never shrinks or overwrites
	if c.len() != chunkLen+2 || *c.at(0) != 7 || *c.at(1) != -1 || *c.at(chunkLen + 1) != -1 {
		t.Fatalf("len %d, at(0) %d, at(1) %d, last %d", c.len(), *c.at(0), *c.at(1), *c.at(chunkLen + 1))
	}
	*c.at(chunkLen) = 42
	if *c.at(chunkLen) != 42 {
		t.Errorf("at does not address the entry it names")
	}
}

func TestBitset(t *testing.T) {
	var b bitset
	set := []int64{0, 63, 64, 65, 1000, 4095}
	for _, off := range set {
		b.set(off)
	}
	for _, tc := range []struct {
		off  int64
		want bool
	}{
		{0, true}, {1, false}, {62, false}, {63, true}, {64, true}, {65, true}, {66, false},
		{999, false}, {1000, true}, {4095, true}, {4096, false}, {1 << 40, false}, {-1, false}, {-64, false},
	} {
		if got := b.has(tc.off); got != tc.want {
			t.Errorf("has(%d) = %v, want %v", tc.off, got, tc.want)
		}
	}
}
