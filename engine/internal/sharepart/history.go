// This file holds the optional per-record history of records that left the
// in-flight window, so introspection can tell ACKNOWLEDGED from ARCHIVED (and
// why) below SPSO.

package sharepart

// history packs state (3 bits), reason (3 bits) and delivery count (9 bits,
// saturating) into 2 bytes per offset, from base on.
type history struct {
	base int64
	recs []uint16
}

const histCountMax = 1<<9 - 1 // bit 15 marks a present entry

func (h *history) put(first, last int64, st State, reason Reason, count int) {
	if count > histCountMax {
		count = histCountMax
	}
	v := uint16(st)&7 | uint16(reason&7)<<3 | uint16(count)<<6
	for o := first; o <= last; o++ {
		i := o - h.base
		if i < 0 {
			continue
		}
		for int64(len(h.recs)) < i {
			h.recs = append(h.recs, 0) // offsets skipped before history began
		}
		if int64(len(h.recs)) == i {
			h.recs = append(h.recs, v|1<<15)
		} else {
			h.recs[i] = v | 1<<15
		}
	}
}

func (h *history) get(offset int64) (State, Reason, int, bool) {
	i := offset - h.base
	if i < 0 || i >= int64(len(h.recs)) || h.recs[i]&(1<<15) == 0 {
		return 0, 0, 0, false
	}
	v := h.recs[i] &^ (1 << 15)
	return State(v & 7), Reason(v >> 3 & 7), int(v >> 6 & histCountMax), true
}
