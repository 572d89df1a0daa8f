// This file holds the ledger readers: ReadLedgers streams a ledger directory
// into a Verifier line by line, refusing anything it cannot judge exactly
// (a malformed line, an unknown or missing field, an unknown value, a
// repeated input id), and VerifyDir verifies one directory. Every refusal
// names the file and line.

package verify

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/sharebench/sharebench/loadgen/result"
)

// maxLineBytes bounds one ledger line; real lines are about 200 bytes.
const maxLineBytes = 1 << 20

// ErrCorruptLedger is matched (errors.Is) by the *LedgerError that reading a
// malformed ledger returns.
var ErrCorruptLedger = errors.New("verify: corrupt ledger")

// LedgerError is a ledger line (or file) the verifier cannot use.
type LedgerError struct {
	Path   string // the ledger file
	Line   int    // 1-based line number; 0 for the file as a whole
	Reason string // what is wrong with the line
	Err    error  // the decoding error, if any
}

func (e *LedgerError) Error() string {
	if e.Line == 0 {
		return fmt.Sprintf("verify: %s: %s; run again with the ledgers dumped", e.Path, e.Reason)
	}
	return fmt.Sprintf("verify: %s:%d: %s; run again with the ledgers dumped", e.Path, e.Line, e.Reason)
}

func (e *LedgerError) Unwrap() error { return e.Err }

func (e *LedgerError) Is(target error) bool { return target == ErrCorruptLedger }

// Field sets of each ledger file: every key a line may have, and the keys
// it must have, per schema version.
var (
	inputKeys    = []string{"id", "partition", "offset", "intended_ns", "final_state", "delivery_count", "rejected", "below_spso"}
	inputNeedV1  = []string{"id", "partition", "offset"}
	inputNeedV2  = []string{"id", "partition", "offset", "intended_ns", "final_state", "delivery_count"}
	outputKeys   = []string{"id", "partition", "offset", "transactional_id", "producer_id", "epoch", "txn_seq", "txn_size", "txn_outcome", "commit_sent", "committed", "read_uncommitted", "marker", "marker_epoch", "aborted", "visible_ns"}
	outputNeedV1 = []string{"id", "partition", "offset", "committed"}
	outputNeedV2 = []string{"id", "partition", "offset", "epoch", "committed", "visible_ns"}
	deliveryKeys = []string{"id", "worker", "at_ns", "delivery_count", "ack", "ack_outcome", "transactional_id", "txn_seq"}
	deliveryNeed = []string{"id", "worker", "at_ns", "delivery_count", "ack", "ack_outcome"}
)

// decodeChecked decodes line with fast (which marks the keys it saw) or,
// for a line the fast scanner does not take, with encoding/json, and
// returns why the line does not fit: invalid JSON, an unknown key (keys
// match exactly: encoding/json would accept "ID" for "id", a ledger may
// not), or a missing one. The usual line costs one allocation-free scan.
func decodeChecked(line []byte, known, need []string, fast func(seen *uint64) bool, slow func() error) (string, error) {
	var seen uint64
	if !fast(&seen) {
		if err := slow(); err != nil {
			return fmt.Sprintf("invalid JSON (%v)", err), err
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(line, &m); err != nil {
			return fmt.Sprintf("invalid JSON (%v)", err), err
		}
		seen = 0
		for _, k := range slices.Sorted(maps.Keys(m)) {
			i := slices.Index(known, k)
			if i < 0 {
				return fmt.Sprintf("unknown field %q (known: %v)", k, known), nil
			}
			seen |= 1 << i
		}
	}
	for _, k := range need {
		if seen&(1<<slices.Index(known, k)) == 0 {
			return fmt.Sprintf("missing field %q", k), nil
		}
	}
	return "", nil
}

// oneOf returns a reason when v is not one of vals.
func oneOf[S ~string](field string, v S, vals ...S) string {
	if slices.Contains(vals, v) {
		return ""
	}
	return fmt.Sprintf("%s %q is not one of %q", field, v, vals)
}

// ReadMeta reads dir's ledger.json. A directory without one is the v1
// schema: ReadMeta returns a Meta with Schema LedgerSchemaV1 and no error.
func ReadMeta(dir string) (Meta, error) {
	path := filepath.Join(dir, MetaFile)
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Meta{Schema: LedgerSchemaV1}, nil
	}
	if err != nil {
		return Meta{}, fmt.Errorf("verify: reading ledger: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var m Meta
	if err := dec.Decode(&m); err != nil {
		return Meta{}, &LedgerError{Path: path, Reason: fmt.Sprintf("invalid ledger.json (%v)", err), Err: err}
	}
	if m.Schema != LedgerSchema {
		return Meta{}, &LedgerError{Path: path, Reason: fmt.Sprintf("schema %q is not %q", m.Schema, LedgerSchema)}
	}
	return m, nil
}

// ReadLedgers streams dir's ledgers into v: inputs.jsonl, outputs.jsonl,
// and for the v2 schema (ledger.json present) deliveries.jsonl and the
// open transactions ledger.json lists. It stops at the first unreadable
// file or refused line, returning a *LedgerError naming the file and line
// for the latter; v then holds what was read before it.
func ReadLedgers(dir string, v *Verifier) error {
	meta, err := ReadMeta(dir)
	if err != nil {
		return err
	}
	v2 := meta.Schema == LedgerSchema
	inNeed, outNeed := inputNeedV1, outputNeedV1
	if v2 {
		inNeed, outNeed = inputNeedV2, outputNeedV2
	}
	states := []result.RecordState{result.StateAvailable, result.StateAcquired, result.StateAcknowledged, result.StateArchived, result.StateTxPending, result.StateUnknown, ""}
	if v2 {
		states = states[:len(states)-1] // v2 writes UNKNOWN, never ""
	}
	// The decoders are made once, not per line: cur is the line at hand.
	var (
		cur    []byte
		in     Input
		o      Output
		d      Delivery
		inFast = func(seen *uint64) bool { in = Input{}; return fastInput(cur, &in, seen) }
		inSlow = func() error { in = Input{}; return json.Unmarshal(cur, &in) }
		oFast  = func(seen *uint64) bool { o = Output{}; return fastOutput(cur, &o, seen) }
		oSlow  = func() error { o = Output{}; return json.Unmarshal(cur, &o) }
		dFast  = func(seen *uint64) bool { d = Delivery{}; return fastDelivery(cur, &d, seen) }
		dSlow  = func() error { d = Delivery{}; return json.Unmarshal(cur, &d) }
	)
	err = readLines(filepath.Join(dir, InputsFile), func(line []byte) (string, error) {
		cur = line
		if reason, err := decodeChecked(line, inputKeys, inNeed, inFast, inSlow); reason != "" {
			return reason, err
		}
		switch {
		case in.ID == 0:
			return "input id is 0 (ids start at 1)", nil
		case in.DeliveryCount < 0:
			return fmt.Sprintf("delivery_count %d is negative", in.DeliveryCount), nil
		}
		if reason := oneOf("final_state", in.FinalState, states...); reason != "" {
			return reason, nil
		}
		if !v.addInput(in) {
			return fmt.Sprintf("input id %d appears twice", in.ID), nil
		}
		return "", nil
	})
	if err != nil {
		return err
	}
	err = readLines(filepath.Join(dir, OutputsFile), func(line []byte) (string, error) {
		cur = line
		if reason, err := decodeChecked(line, outputKeys, outNeed, oFast, oSlow); reason != "" {
			return reason, err
		}
		if reason := oneOf("txn_outcome", o.TxnOutcome, "", OutcomeCommitted, OutcomeAborted, OutcomeUnknown); reason != "" {
			return reason, nil
		}
		if reason := oneOf("marker", o.Marker, "", MarkerCommit, MarkerAbort, MarkerOpen); reason != "" {
			return reason, nil
		}
		v.AddOutput(o)
		return "", nil
	})
	if err != nil || !v2 {
		return err
	}
	err = readLines(filepath.Join(dir, DeliveriesFile), func(line []byte) (string, error) {
		cur = line
		if reason, err := decodeChecked(line, deliveryKeys, deliveryNeed, dFast, dSlow); reason != "" {
			return reason, err
		}
		switch {
		case d.InputID == 0:
			return "delivery id is 0 (ids start at 1)", nil
		case d.DeliveryCount < 0:
			return fmt.Sprintf("delivery_count %d is negative", d.DeliveryCount), nil
		}
		if reason := oneOf("ack", d.Ack, AckNone, AckAccept, AckReject, AckRelease); reason != "" {
			return reason, nil
		}
		if reason := oneOf("ack_outcome", d.AckOutcome, AckNotSent, AckCommitted, AckAborted, AckFailed, AckUnknown); reason != "" {
			return reason, nil
		}
		v.AddDelivery(d)
		return "", nil
	})
	if err != nil {
		return err
	}
	if meta.DLQTopic != "" {
		if err := readDLQ(dir, v); err != nil {
			return err
		}
	}
	for _, t := range meta.OpenTransactions {
		v.AddOpenTransaction(t)
	}
	return nil
}

// readLines calls add for each non-blank line of path. add returns a
// non-empty reason (and optionally the cause) for a refused line.
func readLines(path string, add func(line []byte) (reason string, err error)) error {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &LedgerError{Path: path, Reason: "missing (the run dumped no ledgers)", Err: err}
	}
	if err != nil {
		return fmt.Errorf("verify: reading ledger: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), maxLineBytes)
	n := 0
	for sc.Scan() {
		n++
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		if reason, err := add(line); reason != "" {
			return &LedgerError{Path: path, Line: n, Reason: reason, Err: err}
		}
	}
	if err := sc.Err(); errors.Is(err, bufio.ErrTooLong) {
		return &LedgerError{Path: path, Line: n + 1, Reason: fmt.Sprintf("line longer than %d bytes", maxLineBytes), Err: err}
	} else if err != nil {
		return fmt.Errorf("verify: reading ledger %s after line %d: %w", path, n, err)
	}
	return nil
}

// DirOptions completes opts from dir's ledger.json: the drain's outcome,
// the reads that stopped short of their end offsets, and the delivery limit when opts has none. For a v1 directory it lists
// what that schema never recorded.
func DirOptions(dir string, opts Options) (Options, error) {
	meta, err := ReadMeta(dir)
	if err != nil {
		return opts, err
	}
	if meta.Schema == LedgerSchemaV1 {
		opts.Unobserved = append(opts.Unobserved,
			"the ledger is the unversioned v1 schema: no deliveries observed by workers (over-delivered and lost-vs-archived judged from final states only), no client outcomes or transaction markers (aborted-read and torn-transaction judged from visibility only), no drain outcome")
		return opts, nil
	}
	opts.DrainTimedOut = opts.DrainTimedOut || meta.DrainTimedOut
	opts.Incomplete = append(opts.Incomplete, meta.Incomplete...)
	if opts.TargetDown == "" {
		opts.TargetDown = meta.TargetDown
	}
	if opts.DrainNote == "" {
		opts.DrainNote = meta.DrainNote
	}
	if opts.DeliveryLimit == 0 {
		opts.DeliveryLimit = meta.DeliveryLimit
	}
	if meta.DLQTopic != "" {
		opts.DLQ = true
		opts.DLQAtLeastOnce = opts.DLQAtLeastOnce || meta.DLQAtLeastOnce
	}
	if !meta.ShareState {
		opts.Unobserved = append(opts.Unobserved, "per-record final share states (the target reports only the share-partition start offset)")
	}
	if !meta.DeliveryCounts {
		opts.Unobserved = append(opts.Unobserved, "delivery counts with each delivery (over-delivered judged from the deliveries observed)")
	}
	if !meta.Markers {
		opts.Unobserved = append(opts.Unobserved, "transaction markers (aborted-read and torn-transaction judged from client outcomes and visibility)")
	}
	return opts, nil
}

// VerifyDir verifies mode's ledgers in dir. It fails fast for an unknown
// mode (ErrUnknownMode) and returns any error of ReadLedgers.
func VerifyDir(mode, dir string, opts Options) (*result.Verification, error) {
	if _, err := Allowed(mode); err != nil {
		return nil, err
	}
	opts, err := DirOptions(dir, opts)
	if err != nil {
		return nil, err
	}
	v := New(mode, opts)
	if err := ReadLedgers(dir, v); err != nil {
		return nil, err
	}
	return v.Finish(), nil
}
