// This file streams a mode's ledgers to the files the verifier reads
// (inputs, outputs and deliveries, beside their meta file).

package loadgen

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/sharebench/sharebench/loadgen/verify"
)

// ledgerDump streams ledgers to inputs.jsonl and outputs.jsonl; a nil dump
// does nothing. The first write error is kept and reported by close.
type ledgerDump struct {
	files [3]*os.File
	encs  [3]*verify.Encoder // buffered
	err   error
}

func newLedgerDump(dir string, meta verify.Meta) (*ledgerDump, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("loadgen: %w", err)
	}
	if err := verify.WriteMeta(dir, meta); err != nil {
		return nil, err
	}
	d := &ledgerDump{}
	for i, name := range []string{verify.InputsFile, verify.OutputsFile, verify.DeliveriesFile} {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			d.close()
			return nil, fmt.Errorf("loadgen: %w", err)
		}
		d.files[i] = f
		d.encs[i] = verify.NewEncoder(f)
	}
	return d, nil
}

func (d *ledgerDump) input(in verify.Input) {
	if d != nil && d.err == nil {
		d.err = d.encs[0].EncodeInput(in)
	}
}

func (d *ledgerDump) output(o verify.Output) {
	if d != nil && d.err == nil {
		d.err = d.encs[1].EncodeOutput(o)
	}
}

func (d *ledgerDump) delivery(v verify.Delivery) {
	if d != nil && d.err == nil {
		d.err = d.encs[2].EncodeDelivery(v)
	}
}

func (d *ledgerDump) close() error {
	if d == nil {
		return nil
	}
	err := d.err
	for i := range d.files {
		if d.files[i] == nil {
			continue
		}
		if d.encs[i] != nil {
			err = errors.Join(err, d.encs[i].Flush())
		}
		err = errors.Join(err, d.files[i].Close())
	}
	if err != nil {
		return fmt.Errorf("loadgen: writing ledgers: %w", err)
	}
	return nil
}
