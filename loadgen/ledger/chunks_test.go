package ledger

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
