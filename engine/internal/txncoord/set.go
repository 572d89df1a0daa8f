// This file holds a transaction's participant set.

package txncoord

import "slices"

// Set is a transaction's participants of one kind, in the order they
// joined (until Sort puts them in marker order). It is a slice so that the
// engine journals and ranges over it directly; Add keeps it duplicate-free.
type Set[K comparable] []K

// Add adds k and reports whether it is new, and so must be journaled
// before the data it covers.
func (s *Set[K]) Add(k K) bool {
	if slices.Contains(*s, k) {
		return false
	}
	*s = append(*s, k)
	return true
}

// Sort puts the set in the order cmp gives (the order markers are sent).
// The elements are distinct, so any sort gives the same order.
func (s Set[K]) Sort(cmp func(a, b K) int) { slices.SortFunc(s, cmp) }

// reset empties the set, keeping its storage for the next transaction.
func (s *Set[K]) reset() { *s = (*s)[:0] }

// duplicate returns an element that occurs twice, if any.
func (s Set[K]) duplicate() (K, bool) {
	seen := make(map[K]struct{}, len(s))
	for _, k := range s {
		if _, ok := seen[k]; ok {
			return k, true
		}
		seen[k] = struct{}{}
	}
	var zero K
	return zero, false
}
