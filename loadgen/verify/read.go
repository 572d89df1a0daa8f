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
	"strings"

	"github.com/sharebench/sharebench/loadgen/result"
	"github.com/sharebench/sharebench/vocab"
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
// returns the keys it saw (bit i for known[i]) and why the line does not
// fit: invalid JSON, an unknown key (keys match exactly: encoding/json
// would accept "ID" for "id", a ledger may not), or a missing one. The
// usual line costs one allocation-free scan.
func decodeChecked(line []byte, known, need []string, fast func(seen *uint64) bool, slow func() error) (uint64, string, error) {
	var seen uint64
	if !fast(&seen) {
		if err := slow(); err != nil {
			return 0, fmt.Sprintf("invalid JSON (%v)", err), err
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(line, &m); err != nil {
			return 0, fmt.Sprintf("invalid JSON (%v)", err), err
		}
		var reason string
		if seen, reason = keysOf(m, known); reason != "" {
			return 0, reason, nil
		}
	}
	return seen, missing(seen, known, need), nil
}

// keysOf marks the keys of m (bit i for known[i]); a key not in known is
// refused.
func keysOf(m map[string]json.RawMessage, known []string) (uint64, string) {
	var seen uint64
	for _, k := range slices.Sorted(maps.Keys(m)) {
		i := slices.Index(known, k)
		if i < 0 {
			return 0, fmt.Sprintf("unknown field %q (known: %v)", k, known)
		}
		seen |= 1 << i
	}
	return seen, ""
}

// missing names the first key of need that seen lacks, "" when none.
func missing(seen uint64, known, need []string) string {
	for _, k := range need {
		if !has(seen, known, k) {
			return fmt.Sprintf("missing field %q", k)
		}
	}
	return ""
}

// has reports whether seen marks key.
func has(seen uint64, known []string, key string) bool {
	return seen&(1<<slices.Index(known, key)) != 0
}

// oneOf returns a reason when v is not one of vals.
func oneOf[S ~string](field string, v S, vals ...S) string {
	if slices.Contains(vals, v) {
		return ""
	}
	return fmt.Sprintf("%s %q is not one of %q", field, v, vals)
}

// Keys of ledger.json and of each of its open transactions, and the keys
// each must have: every field the writer always writes is required, so a
// ledger that lost one (and with it, say, the delivery limit that
// over-delivered is judged by) is refused instead of judged with a default.
var (
	metaKeys = []string{"schema", "mode", "target", "brokers", "output_topic", "delivery_limit", "drain_timed_out", "drain_note", "incomplete",
		"share_state", "delivery_counts", "markers", "dlq_topic", "dlq_at_least_once", "open_transactions", "notes", "target_down"}
	metaNeed = []string{"schema", "mode", "target", "delivery_limit", "drain_timed_out", "incomplete", "share_state", "delivery_counts", "markers",
		"dlq_topic", "dlq_at_least_once", "open_transactions"}
	openKeys = []string{"partition", "producer_id", "epoch", "first_offset", "transactional_id", "source"}
	openNeed = []string{"partition", "producer_id", "epoch", "first_offset", "source"}
)

// ReadMeta reads dir's ledger.json. A directory without one is the v1
// schema: ReadMeta returns a Meta with Schema LedgerSchemaV1 and no error,
// unless the directory holds a file only the v2 schema writes (its
// ledger.json was lost).
func ReadMeta(dir string) (Meta, error) {
	path := filepath.Join(dir, MetaFile)
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		for _, name := range []string{DeliveriesFile, DLQFile} {
			if _, err := os.Lstat(filepath.Join(dir, name)); err == nil {
				return Meta{}, &LedgerError{Path: path, Reason: fmt.Sprintf("missing, but %s is there: a v2 ledger without its meta file cannot be judged", name), Err: fs.ErrNotExist}
			}
		}
		return Meta{Schema: LedgerSchemaV1}, nil
	}
	if err != nil {
		return Meta{}, &LedgerError{Path: path, Reason: fmt.Sprintf("cannot be read (%v)", err), Err: err}
	}
	m, reason, err := decodeMeta(b)
	if reason != "" {
		return Meta{}, &LedgerError{Path: path, Reason: reason, Err: err}
	}
	return m, nil
}

// decodeMeta decodes ledger.json and says why it does not fit: invalid
// JSON, an unknown or missing field (in the file or in one of its open
// transactions), or a value the schema does not have.
func decodeMeta(b []byte) (Meta, string, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return Meta{}, fmt.Sprintf("invalid ledger.json (%v)", err), err
	}
	seen, reason := keysOf(raw, metaKeys)
	if reason == "" {
		reason = missing(seen, metaKeys, metaNeed)
	}
	if reason != "" {
		return Meta{}, reason, nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var m Meta
	if err := dec.Decode(&m); err != nil {
		return Meta{}, fmt.Sprintf("invalid ledger.json (%v)", err), err
	}
	if m.Schema != LedgerSchema {
		return Meta{}, fmt.Sprintf("schema %q is not %q", m.Schema, LedgerSchema), nil
	}
	if _, err := Allowed(vocab.Mode(m.Mode)); err != nil {
		return Meta{}, fmt.Sprintf("mode %q is not a mode (want one of %s)", m.Mode, strings.Join(Modes(), ", ")), nil
	}
	switch {
	case m.Target == "":
		return Meta{}, `target is empty (want the target the run drove, such as "engine" or "kafka")`, nil
	case m.DeliveryLimit < 1:
		return Meta{}, fmt.Sprintf("delivery_limit %d is not a delivery limit (at least 1)", m.DeliveryLimit), nil
	case m.DLQAtLeastOnce && m.DLQTopic == "":
		return Meta{}, "dlq_at_least_once is set without a dlq_topic", nil
	}
	var opens struct {
		Open []map[string]json.RawMessage `json:"open_transactions"`
	}
	if err := json.Unmarshal(b, &opens); err != nil {
		return Meta{}, fmt.Sprintf("invalid ledger.json (%v)", err), err
	}
	for i, t := range opens.Open {
		seen, reason := keysOf(t, openKeys)
		if reason == "" {
			reason = missing(seen, openKeys, openNeed)
		}
		if reason == "" {
			reason = oneOf("source", m.OpenTransactions[i].Source, OpenSourceTarget, OpenSourceMarkers)
		}
		if reason != "" {
			return Meta{}, fmt.Sprintf("open_transactions[%d]: %s", i, reason), nil
		}
	}
	return m, "", nil
}

// ReadLedgers streams dir's ledgers into v: inputs.jsonl, outputs.jsonl,
// and for the v2 schema (ledger.json present) deliveries.jsonl, dlq.jsonl
// when ledger.json names a DLQ topic, and the open transactions ledger.json
// lists. It stops at the first unreadable file or refused line, returning
// a *LedgerError naming the file and line; v then holds what was read
// before it.
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
	states := []vocab.RecordState{vocab.StateAvailable, vocab.StateAcquired, vocab.StateAcknowledged, vocab.StateArchived, vocab.StateTxPending, vocab.StateUnknown, ""}
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
		if _, reason, err := decodeChecked(line, inputKeys, inNeed, inFast, inSlow); reason != "" {
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
		seen, reason, err := decodeChecked(line, outputKeys, outNeed, oFast, oSlow)
		if reason != "" {
			return reason, err
		}
		// The writer leaves out an empty txn_outcome or marker; one that is
		// there must be a value of the schema.
		if has(seen, outputKeys, "txn_outcome") {
			if reason := oneOf("txn_outcome", o.TxnOutcome, OutcomeCommitted, OutcomeAborted, OutcomeUnknown); reason != "" {
				return reason, nil
			}
		}
		if has(seen, outputKeys, "marker") {
			if reason := oneOf("marker", o.Marker, MarkerCommit, MarkerAbort, MarkerOpen); reason != "" {
				return reason, nil
			}
		}
		v.AddOutput(o)
		return "", nil
	})
	if err != nil || !v2 {
		return err
	}
	err = readLines(filepath.Join(dir, DeliveriesFile), func(line []byte) (string, error) {
		cur = line
		seen, reason, err := decodeChecked(line, deliveryKeys, deliveryNeed, dFast, dSlow)
		if reason != "" {
			return reason, err
		}
		switch {
		case d.InputID == 0:
			return "delivery id is 0 (ids start at 1)", nil
		case d.DeliveryCount < 0:
			return fmt.Sprintf("delivery_count %d is negative", d.DeliveryCount), nil
		case has(seen, deliveryKeys, "txn_seq") && !has(seen, deliveryKeys, "transactional_id"):
			return "txn_seq without transactional_id (an acknowledgement staged in a transaction names both)", nil
		}
		if reason := oneOf("ack", d.Ack, AckNone, AckAccept, AckReject, AckRelease); reason != "" {
			return reason, nil
		}
		if reason := oneOf("ack_outcome", d.AckOutcome, AckNotSent, AckCommitted, AckAborted, AckFailed, AckUnknown, AckRefused); reason != "" {
			return reason, nil
		}
		// inputs.jsonl was read first. A delivery of an id the producers
		// assigned but the input ledger lacks means the ledger lost
		// records; one of an id never assigned is a record the target
		// handed a worker that was never produced to the input, which the
		// verifier judges (phantom).
		if !v.hasInput(d.InputID) && v.assignedID(d.InputID) {
			return fmt.Sprintf("delivery of id %d, which is not in %s", d.InputID, InputsFile), nil
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

// readLines calls add for each line of path; a blank line is refused (the
// writer writes one record per line and nothing else). add returns a
// non-empty reason (and optionally the cause) for a refused line.
func readLines(path string, add func(line []byte) (reason string, err error)) error {
	// Stat first: opening a named pipe would block.
	st, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &LedgerError{Path: path, Reason: "missing (the run dumped no ledgers)", Err: err}
	}
	if err == nil && !st.Mode().IsRegular() {
		return &LedgerError{Path: path, Reason: fmt.Sprintf("is not a regular file (%s)", fileKind(st.Mode()))}
	}
	f, err := os.Open(path)
	if err != nil {
		return &LedgerError{Path: path, Reason: fmt.Sprintf("cannot be read (%v)", err), Err: err}
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), maxLineBytes)
	n := 0
	for sc.Scan() {
		n++
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			return &LedgerError{Path: path, Line: n, Reason: "blank line (a ledger holds one record per line)"}
		}
		if reason, err := add(line); reason != "" {
			return &LedgerError{Path: path, Line: n, Reason: reason, Err: err}
		}
	}
	if err := sc.Err(); errors.Is(err, bufio.ErrTooLong) {
		return &LedgerError{Path: path, Line: n + 1, Reason: fmt.Sprintf("line longer than %d bytes", maxLineBytes), Err: err}
	} else if err != nil {
		return &LedgerError{Path: path, Line: n + 1, Reason: fmt.Sprintf("cannot be read (%v)", err), Err: err}
	}
	return nil
}

// fileKind names what a file that should be a regular file is.
func fileKind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m.IsRegular():
		return "a regular file"
	}
	return "mode " + m.String()
}

// DirOptions completes opts from dir's ledger.json: the drain's outcome,
// the reads that stopped short of their end offsets, and the delivery limit when opts has none. For a v1 directory it lists
// what that schema never recorded.
func DirOptions(dir string, opts Options) (Options, error) {
	opts, _, err := dirOptions(dir, opts)
	return opts, err
}

// dirOptions is DirOptions, returning the ledger.json it read as well.
func dirOptions(dir string, opts Options) (Options, Meta, error) {
	meta, err := ReadMeta(dir)
	if err != nil {
		return opts, meta, err
	}
	if meta.Schema == LedgerSchemaV1 {
		opts.Unobserved = append(opts.Unobserved,
			"the ledger is the unversioned v1 schema: no deliveries observed by workers (over-delivered and lost-vs-archived judged from final states only), no client outcomes or transaction markers (aborted-read and torn-transaction judged from visibility only), no drain outcome")
		return opts, meta, nil
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
	return opts, meta, nil
}

// VerifyDir verifies mode's ledgers in dir. It fails fast for an unknown
// mode (ErrUnknownMode); a dir that is missing or not a directory, a
// ledger.json of another mode, and any error of ReadLedgers is a
// *LedgerError.
func VerifyDir(mode vocab.Mode, dir string, opts Options) (*result.Verification, error) {
	if _, err := Allowed(mode); err != nil {
		return nil, err
	}
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, &LedgerError{Path: dir, Reason: "missing (the run dumped no ledgers for this mode)", Err: err}
	case err != nil:
		return nil, &LedgerError{Path: dir, Reason: fmt.Sprintf("cannot be read (%v)", err), Err: err}
	case !st.IsDir():
		return nil, &LedgerError{Path: dir, Reason: fmt.Sprintf("is %s, not a ledger directory (%s, %s, %s, %s)", fileKind(st.Mode()), MetaFile, InputsFile, OutputsFile, DeliveriesFile)}
	}
	opts, meta, err := dirOptions(dir, opts)
	if err != nil {
		return nil, err
	}
	if meta.Schema == LedgerSchema && meta.Mode != mode {
		return nil, &LedgerError{Path: filepath.Join(dir, MetaFile), Reason: fmt.Sprintf("mode %q, but the directory holds the ledgers of %s", meta.Mode, mode)}
	}
	v := New(mode, opts)
	if err := ReadLedgers(dir, v); err != nil {
		return nil, err
	}
	return v.Finish(), nil
}
