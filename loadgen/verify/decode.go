// This file holds the ledger line decoders. Ledger lines are flat JSON
// objects of numbers, plain strings and booleans, so a small scanner decodes
// the usual line without encoding/json's reflection (about ten times
// faster); anything it is not sure of (an escape, a non-ASCII byte, a
// fraction, null, an unknown or differently cased key, malformed JSON) goes
// to json.Unmarshal, so results and errors are always encoding/json's.

package verify

import (
	"encoding/json"
	"math"

	"github.com/sharebench/sharebench/vocab"
)

// decodeInput decodes one inputs.jsonl line into in.
func decodeInput(line []byte, in *Input) error {
	*in = Input{}
	if fastInput(line, in, nil) {
		return nil
	}
	*in = Input{}
	return json.Unmarshal(line, in)
}

// decodeOutput decodes one outputs.jsonl line into o.
func decodeOutput(line []byte, o *Output) error {
	*o = Output{}
	if fastOutput(line, o, nil) {
		return nil
	}
	*o = Output{}
	return json.Unmarshal(line, o)
}

func fastInput(line []byte, in *Input, seen *uint64) bool {
	return scanObject(line, func(key, val []byte, kind byte) bool {
		if seen != nil {
			*seen |= keyBit(inputKeys, key)
		}
		var ok bool
		switch string(key) {
		case "id":
			in.ID, ok = kindUint(kind, val)
		case "partition":
			var n int64
			n, ok = kindInt(kind, val, math.MinInt32, math.MaxInt32)
			in.Partition = int32(n)
		case "offset":
			in.Offset, ok = kindInt(kind, val, math.MinInt64, math.MaxInt64)
		case "intended_ns":
			in.IntendedNs, ok = kindInt(kind, val, math.MinInt64, math.MaxInt64)
		case "final_state":
			in.FinalState, ok = state(val), kind == kindString
		case "delivery_count":
			var n int64
			n, ok = kindInt(kind, val, math.MinInt, math.MaxInt)
			in.DeliveryCount = int(n)
		case "rejected":
			in.Rejected, ok = kindBool(kind)
		case "below_spso":
			in.BelowSPSO, ok = kindBool(kind)
		}
		return ok
	})
}

// decodeDelivery decodes one deliveries.jsonl line into d.
func decodeDelivery(line []byte, d *Delivery) error {
	*d = Delivery{}
	if fastDelivery(line, d, nil) {
		return nil
	}
	*d = Delivery{}
	return json.Unmarshal(line, d)
}

func fastDelivery(line []byte, d *Delivery, seen *uint64) bool {
	return scanObject(line, func(key, val []byte, kind byte) bool {
		if seen != nil {
			*seen |= keyBit(deliveryKeys, key)
		}
		var ok bool
		var n int64
		switch string(key) {
		case "id":
			d.InputID, ok = kindUint(kind, val)
		case "worker":
			n, ok = kindInt(kind, val, math.MinInt, math.MaxInt)
			d.Worker = int(n)
		case "at_ns":
			d.AtNs, ok = kindInt(kind, val, math.MinInt64, math.MaxInt64)
		case "delivery_count":
			n, ok = kindInt(kind, val, math.MinInt, math.MaxInt)
			d.DeliveryCount = int(n)
		case "ack":
			d.Ack, ok = enumString(val), kind == kindString
		case "ack_outcome":
			d.AckOutcome, ok = enumString(val), kind == kindString
		case "transactional_id":
			d.TransactionalID, ok = string(val), kind == kindString
		case "txn_seq":
			d.TxnSeq, ok = kindInt(kind, val, math.MinInt64, math.MaxInt64)
		}
		return ok
	})
}

// keyBit is key's bit in a presence mask over known (0 for an unknown key:
// the fast decoders refuse those anyway).
func keyBit(known []string, key []byte) uint64 {
	for i, k := range known {
		if string(key) == k {
			return 1 << i
		}
	}
	return 0
}

// enumString returns b as a string, without allocating for the ledger's
// enumerated values.
func enumString(b []byte) string {
	switch string(b) {
	case AckNone:
		return AckNone
	case AckAccept:
		return AckAccept
	case AckReject:
		return AckReject
	case AckRelease:
		return AckRelease
	case AckCommitted:
		return AckCommitted
	case AckAborted:
		return AckAborted
	case AckFailed:
		return AckFailed
	case AckUnknown:
		return AckUnknown
	case AckRefused:
		return AckRefused
	case MarkerCommit:
		return MarkerCommit
	case MarkerAbort:
		return MarkerAbort
	case MarkerOpen:
		return MarkerOpen
	}
	return string(b)
}

func fastOutput(line []byte, o *Output, seen *uint64) bool {
	return scanObject(line, func(key, val []byte, kind byte) bool {
		if seen != nil {
			*seen |= keyBit(outputKeys, key)
		}
		var ok bool
		var n int64
		switch string(key) {
		case "id":
			o.InputID, ok = kindUint(kind, val)
		case "partition":
			n, ok = kindInt(kind, val, math.MinInt32, math.MaxInt32)
			o.Partition = int32(n)
		case "offset":
			o.Offset, ok = kindInt(kind, val, math.MinInt64, math.MaxInt64)
		case "transactional_id":
			o.TransactionalID, ok = string(val), kind == kindString
		case "epoch":
			n, ok = kindInt(kind, val, math.MinInt16, math.MaxInt16)
			o.Epoch = int16(n)
		case "txn_seq":
			o.TxnSeq, ok = kindInt(kind, val, math.MinInt64, math.MaxInt64)
		case "txn_size":
			n, ok = kindInt(kind, val, math.MinInt, math.MaxInt)
			o.TxnSize = int(n)
		case "producer_id":
			o.ProducerID, ok = kindInt(kind, val, math.MinInt64, math.MaxInt64)
		case "txn_outcome":
			o.TxnOutcome, ok = enumString(val), kind == kindString
		case "commit_sent":
			o.CommitSent, ok = kindBool(kind)
		case "read_uncommitted":
			o.Uncommitted, ok = kindBool(kind)
		case "marker":
			o.Marker, ok = enumString(val), kind == kindString
		case "marker_epoch":
			n, ok = kindInt(kind, val, math.MinInt16, math.MaxInt16)
			o.MarkerEpoch = int16(n)
		case "committed":
			o.Committed, ok = kindBool(kind)
		case "aborted":
			o.Aborted, ok = kindBool(kind)
		case "visible_ns":
			o.VisibleNs, ok = kindInt(kind, val, math.MinInt64, math.MaxInt64)
		}
		return ok
	})
}

// state returns b as a record state, without allocating for the known states.
func state(b []byte) vocab.RecordState {
	switch string(b) {
	case string(vocab.StateAcknowledged):
		return vocab.StateAcknowledged
	case string(vocab.StateArchived):
		return vocab.StateArchived
	case string(vocab.StateAvailable):
		return vocab.StateAvailable
	case string(vocab.StateAcquired):
		return vocab.StateAcquired
	case string(vocab.StateTxPending):
		return vocab.StateTxPending
	case string(vocab.StateUnknown):
		return vocab.StateUnknown
	case "":
		return ""
	}
	return vocab.RecordState(b)
}

// Value kinds scanObject reports.
const (
	kindNumber = 'n' // an integer: -?(0|[1-9][0-9]*)
	kindString = 's' // val is the contents, plain printable ASCII, no escapes
	kindTrue   = 't'
	kindFalse  = 'f'
)

func kindBool(kind byte) (bool, bool) {
	return kind == kindTrue, kind == kindTrue || kind == kindFalse
}

// kindUint parses an integer value that fits a uint64.
func kindUint(kind byte, b []byte) (uint64, bool) {
	if kind != kindNumber || b[0] == '-' {
		return 0, false
	}
	var n uint64
	for _, c := range b {
		d := uint64(c - '0')
		if n > (math.MaxUint64-d)/10 {
			return 0, false
		}
		n = n*10 + d
	}
	return n, true
}

// kindInt parses an integer value within [lo, hi].
func kindInt(kind byte, b []byte, lo, hi int64) (int64, bool) {
	if kind != kindNumber {
		return 0, false
	}
	neg := b[0] == '-'
	if neg {
		b = b[1:]
	}
	u, ok := kindUint(kindNumber, b)
	switch {
	case !ok:
		return 0, false
	case neg && u <= uint64(-(lo+1))+1:
		return -int64(u-1) - 1, true // no overflow at math.MinInt64
	case !neg && u <= uint64(hi):
		return int64(u), true
	}
	return 0, false
}

// scanObject scans a flat JSON object, calling field for each member, and
// reports whether the whole line was such an object and field accepted
// every member. It accepts only what it can decode exactly; false means
// "ask encoding/json", never "invalid".
func scanObject(b []byte, field func(key, val []byte, kind byte) bool) bool {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return false
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return skipSpace(b, i+1) == len(b)
	}
	for {
		key, j, ok := plainString(b, i)
		if !ok {
			return false
		}
		i = skipSpace(b, j)
		if i >= len(b) || b[i] != ':' {
			return false
		}
		i = skipSpace(b, i+1)
		if i >= len(b) {
			return false
		}
		var val []byte
		var kind byte
		switch c := b[i]; {
		case c == '"':
			val, j, ok = plainString(b, i)
			kind = kindString
		case c == '-' || (c >= '0' && c <= '9'):
			val, j, ok = integer(b, i)
			kind = kindNumber
		case hasLiteral(b, i, "true"):
			j, ok, kind = i+4, true, kindTrue
		case hasLiteral(b, i, "false"):
			j, ok, kind = i+5, true, kindFalse
		default:
			return false
		}
		if !ok || !field(key, val, kind) {
			return false
		}
		i = skipSpace(b, j)
		if i >= len(b) {
			return false
		}
		switch b[i] {
		case ',':
			i = skipSpace(b, i+1)
		case '}':
			return skipSpace(b, i+1) == len(b)
		default:
			return false
		}
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// plainString scans a string at b[i] that holds only printable ASCII and no
// escapes, returning its contents and the index after its closing quote.
func plainString(b []byte, i int) ([]byte, int, bool) {
	if i >= len(b) || b[i] != '"' {
		return nil, 0, false
	}
	for j := i + 1; j < len(b); j++ {
		switch c := b[j]; {
		case c == '"':
			return b[i+1 : j], j + 1, true
		case c == '\\' || c < 0x20 || c > 0x7e:
			return nil, 0, false
		}
	}
	return nil, 0, false
}

// integer scans -?(0|[1-9][0-9]*) at b[i], refusing fractions and exponents.
func integer(b []byte, i int) ([]byte, int, bool) {
	j := i
	if b[j] == '-' {
		j++
	}
	start := j
	for j < len(b) && b[j] >= '0' && b[j] <= '9' {
		j++
	}
	switch {
	case j == start, b[start] == '0' && j > start+1:
		return nil, 0, false
	case j < len(b) && (b[j] == '.' || b[j] == 'e' || b[j] == 'E'):
		return nil, 0, false
	}
	return b[i:j], j, true
}

func hasLiteral(b []byte, i int, lit string) bool {
	return len(b)-i >= len(lit) && string(b[i:i+len(lit)]) == lit
}
