// This file holds the chunked storage the ledger's tables grow in. The
// ledger grows by millions of entries a run, so its tables are chunked and
// pointer-free: appending never copies what is already there, and the
// garbage collector never scans them (one slice grown by doubling cost the
// load generator a fifth of its time in copies and clears).

package ledger

// chunkLen is the number of entries in one ledger chunk.
const chunkLen = 1 << 14

// chunks is an append-only table in fixed-size chunks.
type chunks[T any] struct {
	c [][]T
	n int
}

func (c *chunks[T]) len() int { return c.n }

func (c *chunks[T]) append(v T) {
	if c.n%chunkLen == 0 {
		c.c = append(c.c, make([]T, 0, chunkLen))
	}
	last := &c.c[len(c.c)-1]
	*last = append(*last, v)
	c.n++
}

// grow appends fill until the table holds n entries.
func (c *chunks[T]) grow(n int, fill T) {
	for c.n < n {
		c.append(fill)
	}
}

func (c *chunks[T]) at(i int) *T { return &c.c[i/chunkLen][i%chunkLen] }

// each calls fn for every entry, in order.
func (c *chunks[T]) each(fn func(i int, v *T)) {
	i := 0
	for _, ch := range c.c {
		for j := range ch {
			fn(i, &ch[j])
			i++
		}
	}
}
