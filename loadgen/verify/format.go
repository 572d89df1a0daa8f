// This file holds Format, the human-readable rendering of a verdict: the
// PASS/FAIL line, the counts by kind, the witnesses and the notes.

package verify

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/sharebench/sharebench/loadgen/result"
	"github.com/sharebench/sharebench/vocab"
)

// Format writes mode's verdict v for people:
//
//	verify transactional: FAIL (1000 inputs, 998 outputs; forbidden: lost)
//	allowed: none
//	counts:
//	  lost                          2  forbidden
//	  archived-at-limit             1  info
//	witnesses:
//	  lost id=17 input=p0@16 state=ACKNOWLEDGED deliveries=1: acknowledged but no committed output; 1 seen only uncommitted
//	    output p3@120 txn=w-1 epoch=5 uncommitted visible=12.5ms
//	notes:
//	  verify: ...
//
// Kinds are listed anomalies first, in the order of Anomalies, then the
// informational ones; each count says whether the mode forbids or allows it
// or whether it is only informational. ExampleFormat pins the exact text.
func Format(w io.Writer, mode string, v *result.Verification) error {
	var b strings.Builder
	if v == nil {
		fmt.Fprintf(&b, "verify %s: no verdict\n", mode)
		_, err := io.WriteString(w, b.String())
		return err
	}
	fmt.Fprintf(&b, "verify %s: %s (%d inputs, %d outputs", mode, v.VerdictName(), v.Inputs, v.Outputs)
	if len(v.Forbidden) > 0 {
		fmt.Fprintf(&b, "; forbidden: %s", strings.Join(vocab.Names(v.Forbidden), ", "))
	}
	if v.Unjudged > 0 {
		fmt.Fprintf(&b, "; %d unjudged", v.Unjudged)
	}
	b.WriteString(")\n")
	allowed := "none"
	if len(v.Allowed) > 0 {
		allowed = strings.Join(vocab.Names(v.Allowed), ", ")
	}
	fmt.Fprintf(&b, "allowed: %s\n", allowed)

	kinds := reportOrder(v)
	if len(kinds) == 0 {
		b.WriteString("counts: none\n")
	} else {
		b.WriteString("counts:\n")
		for _, k := range kinds {
			n, ok := v.Counts[k]
			if !ok {
				continue
			}
			fmt.Fprintf(&b, "  %-22s %8d  %s\n", k, n, label(k, v))
		}
	}
	if len(v.Witnesses) > 0 {
		b.WriteString("witnesses:\n")
		for _, k := range kinds {
			for _, wt := range v.Witnesses[k] {
				formatWitness(&b, wt)
			}
		}
	}
	if len(v.Notes) > 0 {
		b.WriteString("notes:\n")
		for _, n := range v.Notes {
			fmt.Fprintf(&b, "  %s\n", n)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// reportOrder lists the kinds in v's counts and witnesses: known kinds in
// report order, then any others sorted.
func reportOrder(v *result.Verification) []vocab.Finding {
	seen := make(map[vocab.Finding]bool)
	for k := range v.Counts {
		seen[k] = true
	}
	for k := range v.Witnesses {
		seen[k] = true
	}
	var kinds, other []vocab.Finding
	for _, k := range vocab.KindOrder() {
		if seen[k] {
			kinds = append(kinds, k)
			delete(seen, k)
		}
	}
	for k := range seen {
		other = append(other, k)
	}
	slices.Sort(other)
	return append(kinds, other...)
}

func label(kind vocab.Finding, v *result.Verification) string {
	switch {
	case slices.Contains(v.Forbidden, kind):
		return "forbidden"
	case slices.Contains(v.Allowed, kind):
		return "allowed"
	case slices.Contains(vocab.Informational(), kind):
		return "info"
	case vocab.IsAnomaly(kind):
		return "forbidden"
	}
	return "unknown kind"
}

func formatWitness(b *strings.Builder, w result.Witness) {
	fmt.Fprintf(b, "  %s id=%d", w.Kind, w.InputID)
	if w.Kind == vocab.KindPhantom {
		b.WriteString(" input=none")
	} else {
		state := w.State
		if state == "" {
			state = "unknown"
		}
		fmt.Fprintf(b, " input=p%d@%d state=%s deliveries=%d", w.Partition, w.Offset, state, w.DeliveryCount)
	}
	if w.Detail != "" {
		fmt.Fprintf(b, ": %s", w.Detail)
	}
	b.WriteByte('\n')
	for _, o := range w.Outputs {
		txn := o.TransactionalID
		if txn == "" {
			txn = "none"
		}
		committed := "committed"
		if !o.Committed {
			committed = "uncommitted"
		}
		fmt.Fprintf(b, "    output p%d@%d txn=%s epoch=%d %s visible=%s\n",
			o.Partition, o.Offset, txn, o.Epoch, committed, time.Duration(o.VisibleNs))
	}
}
