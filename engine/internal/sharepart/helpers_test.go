// This file holds what the share partition's tests share: the test
// configuration, a log with gaps, and the renderings of records, ranges and
// batches the scripts and the randomized tests print.

package sharepart_test

import (
	"fmt"
	"strings"
	"time"

	"github.com/sharebench/sharebench/engine/internal/sharepart"
)

const sec = time.Second

// Short names keep the tables readable.
const (
	Available    = sharepart.Available
	Acquired     = sharepart.Acquired
	Acknowledged = sharepart.Acknowledged
	Archived     = sharepart.Archived
	TxPending    = sharepart.TxPending

	Gap     = sharepart.Gap
	Accept  = sharepart.Accept
	Release = sharepart.Release
	Reject  = sharepart.Reject
	Renew   = sharepart.Renew

	badType = sharepart.AckType(9)
)

// gapLog is a Log whose gap offsets are a set.
type gapLog map[int64]bool

func (g gapLog) IsGap(o int64) bool { return g[o] }

// BatchEnd: every record is a batch of its own.
func (g gapLog) BatchEnd(o int64, _ int) int64 { return o }

// testConfig: 10s locks, delivery limit 3, a window of 10 records, history
// kept so records below SPSO can be inspected.
func testConfig() sharepart.Config {
	return sharepart.Config{LockDuration: 10 * sec, DeliveryLimit: 3, MaxRecordLocks: 10, KeepHistory: true}
}

// describe renders the fields of a record that define its state:
//
//	AVAILABLE c1 | ACQUIRED c1 o2 d11s | ACKNOWLEDGED c1 |
//	ARCHIVED c2 delivery-limit | TX_PENDING c1 p7 e0 ACCEPT
func describe(ri sharepart.RecordInfo) string {
	switch ri.State {
	case Available:
		return fmt.Sprintf("AVAILABLE c%d", ri.DeliveryCount)
	case Acquired:
		d := "nolock"
		if ri.Deadline != sharepart.NoDeadline {
			d = "d" + ri.Deadline.String()
		}
		return fmt.Sprintf("ACQUIRED c%d o%d %s", ri.DeliveryCount, ri.Owner, d)
	case Acknowledged:
		return fmt.Sprintf("ACKNOWLEDGED c%d", ri.DeliveryCount)
	case Archived:
		return fmt.Sprintf("ARCHIVED c%d %v", ri.DeliveryCount, ri.Reason)
	case TxPending:
		s := fmt.Sprintf("TX_PENDING c%d p%d e%d %v", ri.DeliveryCount, ri.Producer, ri.Epoch, ri.Staged)
		if ri.Deadline != sharepart.NoDeadline || ri.Owner != 0 {
			s += fmt.Sprintf(" (still locked: o%d d%v)", ri.Owner, ri.Deadline) // the lock must be cancelled
		}
		return s
	}
	return ri.State.String()
}

func b(first, last int64, t sharepart.AckType) sharepart.Batch {
	return sharepart.Batch{First: first, Last: last, Type: t}
}

func renderRanges(rs []sharepart.Range) string {
	var s []string
	for _, r := range rs {
		s = append(s, fmt.Sprintf("[%d,%d]c%d", r.First, r.Last, r.DeliveryCount))
	}
	return strings.Join(s, " ")
}

func renderBatches(bs []sharepart.Batch) string {
	var s []string
	for _, x := range bs {
		if len(x.Types) > 0 {
			s = append(s, fmt.Sprintf("[%d,%d]%v", x.First, x.Last, x.Types))
		} else {
			s = append(s, fmt.Sprintf("[%d,%d]%v", x.First, x.Last, x.Type))
		}
	}
	return strings.Join(s, " ")
}
