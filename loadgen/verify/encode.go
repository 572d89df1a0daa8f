// This file holds the ledger writers: an Encoder that streams Input and
// Output records as JSON lines, and helpers that write whole ledgers. The
// encoding is byte-for-byte what encoding/json produces for the ledger
// types, without its reflection cost, so that dumping ten million records
// stays cheap.

package verify

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
)

// Ledger file names inside a ledger directory (ledgers/<mode>/ by the
// load generator's --dump-ledgers).
const (
	InputsFile     = "inputs.jsonl"
	OutputsFile    = "outputs.jsonl"
	DeliveriesFile = "deliveries.jsonl"
	MetaFile       = "ledger.json"
)

// Encoder writes ledger records as JSON lines, one record per line. It
// buffers; call Flush when done. Errors are sticky: after one, every call
// returns it.
type Encoder struct {
	w   *bufio.Writer
	buf []byte
	err error
}

// NewEncoder returns an Encoder writing to w.
func NewEncoder(w io.Writer) *Encoder {
	return &Encoder{w: bufio.NewWriterSize(w, 64<<10)}
}

// EncodeInput writes one input record.
func (e *Encoder) EncodeInput(in Input) error {
	e.buf = append(AppendInput(e.buf[:0], in), '\n')
	return e.write()
}

// EncodeDelivery writes one delivery record.
func (e *Encoder) EncodeDelivery(d Delivery) error {
	e.buf = append(AppendDelivery(e.buf[:0], d), '\n')
	return e.write()
}

// EncodeOutput writes one output record.
func (e *Encoder) EncodeOutput(o Output) error {
	e.buf = append(AppendOutput(e.buf[:0], o), '\n')
	return e.write()
}

func (e *Encoder) write() error {
	if e.err != nil {
		return e.err
	}
	if _, err := e.w.Write(e.buf); err != nil {
		e.err = fmt.Errorf("verify: writing ledger: %w", err)
	}
	return e.err
}

// Flush writes any buffered records to the underlying writer.
func (e *Encoder) Flush() error {
	if e.err != nil {
		return e.err
	}
	if err := e.w.Flush(); err != nil {
		e.err = fmt.Errorf("verify: writing ledger: %w", err)
	}
	return e.err
}

// WriteInputs writes ins to w as JSON lines.
func WriteInputs(w io.Writer, ins []Input) error {
	e := NewEncoder(w)
	for _, in := range ins {
		if err := e.EncodeInput(in); err != nil {
			return err
		}
	}
	return e.Flush()
}

// WriteOutputs writes outs to w as JSON lines.
func WriteOutputs(w io.Writer, outs []Output) error {
	e := NewEncoder(w)
	for _, o := range outs {
		if err := e.EncodeOutput(o); err != nil {
			return err
		}
	}
	return e.Flush()
}

// WriteLedgers writes dir/inputs.jsonl and dir/outputs.jsonl, creating dir
// if needed.
func WriteLedgers(dir string, ins []Input, outs []Output) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("verify: writing ledgers: %w", err)
	}
	if err := writeFile(filepath.Join(dir, InputsFile), func(w io.Writer) error { return WriteInputs(w, ins) }); err != nil {
		return err
	}
	return writeFile(filepath.Join(dir, OutputsFile), func(w io.Writer) error { return WriteOutputs(w, outs) })
}

func writeFile(path string, write func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("verify: writing ledger: %w", err)
	}
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("verify: writing ledger: %w", err)
	}
	return nil
}

// AppendInput appends in's JSON encoding (no newline) to b; the bytes are
// what json.Marshal(in) returns.
func AppendInput(b []byte, in Input) []byte {
	b = append(b, `{"id":`...)
	b = strconv.AppendUint(b, in.ID, 10)
	b = append(b, `,"partition":`...)
	b = strconv.AppendInt(b, int64(in.Partition), 10)
	b = append(b, `,"offset":`...)
	b = strconv.AppendInt(b, in.Offset, 10)
	b = append(b, `,"intended_ns":`...)
	b = strconv.AppendInt(b, in.IntendedNs, 10)
	b = append(b, `,"final_state":`...)
	b = appendString(b, string(in.FinalState))
	b = append(b, `,"delivery_count":`...)
	b = strconv.AppendInt(b, int64(in.DeliveryCount), 10)
	if in.Rejected {
		b = append(b, `,"rejected":true`...)
	}
	if in.BelowSPSO {
		b = append(b, `,"below_spso":true`...)
	}
	return append(b, '}')
}

// AppendDelivery appends d's JSON encoding (no newline) to b; the bytes
// are what json.Marshal(d) returns.
func AppendDelivery(b []byte, d Delivery) []byte {
	b = append(b, `{"id":`...)
	b = strconv.AppendUint(b, d.InputID, 10)
	b = append(b, `,"worker":`...)
	b = strconv.AppendInt(b, int64(d.Worker), 10)
	b = append(b, `,"at_ns":`...)
	b = strconv.AppendInt(b, d.AtNs, 10)
	b = append(b, `,"delivery_count":`...)
	b = strconv.AppendInt(b, int64(d.DeliveryCount), 10)
	b = append(b, `,"ack":`...)
	b = appendString(b, d.Ack)
	b = append(b, `,"ack_outcome":`...)
	b = appendString(b, d.AckOutcome)
	if d.TransactionalID != "" {
		b = append(b, `,"transactional_id":`...)
		b = appendString(b, d.TransactionalID)
	}
	if d.TxnSeq != 0 {
		b = append(b, `,"txn_seq":`...)
		b = strconv.AppendInt(b, d.TxnSeq, 10)
	}
	return append(b, '}')
}

// WriteMeta writes dir/ledger.json, setting its schema. Lists are written
// as [] when empty: the reader requires them.
func WriteMeta(dir string, m Meta) error {
	m.Schema = LedgerSchema
	if m.Incomplete == nil {
		m.Incomplete = []string{}
	}
	if m.OpenTransactions == nil {
		m.OpenTransactions = []OpenTransaction{}
	}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("verify: encoding %s: %w", MetaFile, err)
	}
	if err := os.WriteFile(filepath.Join(dir, MetaFile), append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("verify: writing ledger: %w", err)
	}
	return nil
}

// AppendOutput appends o's JSON encoding (no newline) to b; the bytes are
// what json.Marshal(o) returns.
func AppendOutput(b []byte, o Output) []byte {
	b = append(b, `{"id":`...)
	b = strconv.AppendUint(b, o.InputID, 10)
	b = append(b, `,"partition":`...)
	b = strconv.AppendInt(b, int64(o.Partition), 10)
	b = append(b, `,"offset":`...)
	b = strconv.AppendInt(b, o.Offset, 10)
	if o.TransactionalID != "" {
		b = append(b, `,"transactional_id":`...)
		b = appendString(b, o.TransactionalID)
	}
	if o.ProducerID != 0 {
		b = append(b, `,"producer_id":`...)
		b = strconv.AppendInt(b, o.ProducerID, 10)
	}
	b = append(b, `,"epoch":`...)
	b = strconv.AppendInt(b, int64(o.Epoch), 10)
	if o.TxnSeq != 0 {
		b = append(b, `,"txn_seq":`...)
		b = strconv.AppendInt(b, o.TxnSeq, 10)
	}
	if o.TxnSize != 0 {
		b = append(b, `,"txn_size":`...)
		b = strconv.AppendInt(b, int64(o.TxnSize), 10)
	}
	if o.TxnOutcome != "" {
		b = append(b, `,"txn_outcome":`...)
		b = appendString(b, o.TxnOutcome)
	}
	if o.CommitSent {
		b = append(b, `,"commit_sent":true`...)
	}
	b = append(b, `,"committed":`...)
	b = strconv.AppendBool(b, o.Committed)
	if o.Uncommitted {
		b = append(b, `,"read_uncommitted":true`...)
	}
	if o.Marker != "" {
		b = append(b, `,"marker":`...)
		b = appendString(b, o.Marker)
	}
	if o.MarkerEpoch != 0 {
		b = append(b, `,"marker_epoch":`...)
		b = strconv.AppendInt(b, int64(o.MarkerEpoch), 10)
	}
	if o.Aborted {
		b = append(b, `,"aborted":true`...)
	}
	b = append(b, `,"visible_ns":`...)
	b = strconv.AppendInt(b, o.VisibleNs, 10)
	return append(b, '}')
}

// appendString appends s as a JSON string. Plain ASCII goes straight in;
// anything json.Marshal would escape goes through json.Marshal, so the
// bytes match it exactly.
func appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // a string always encodes
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}
