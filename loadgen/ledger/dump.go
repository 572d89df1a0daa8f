// This file streams a mode's ledgers to the files the verifier reads
// (inputs, outputs and deliveries, beside their meta file).

package ledger

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/sharebench/sharebench/loadgen/verify"
)

// Dump streams a mode's ledger to the verifier's files (inputs, outputs
// and deliveries) as Gatherer.Feed hands it to the verifier; a nil dump
// does nothing. The first write error is kept and reported by Close.
type Dump struct {
	files [3]*os.File
	encs  [3]*verify.Encoder // buffered
	err   error
}

// NewDump creates dir and writes the meta file there, and opens the
// ledger files a Dump streams to.
func NewDump(dir string, meta verify.Meta) (*Dump, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("ledger: %w", err)
	}
	if err := verify.WriteMeta(dir, meta); err != nil {
		return nil, err
	}
	d := &Dump{}
	for i, name := range []string{verify.InputsFile, verify.OutputsFile, verify.DeliveriesFile} {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			d.Close()
			return nil, fmt.Errorf("ledger: %w", err)
		}
		d.files[i] = f
		d.encs[i] = verify.NewEncoder(f)
	}
	return d, nil
}

func (d *Dump) input(in verify.Input) {
	if d != nil && d.err == nil {
		d.err = d.encs[0].EncodeInput(in)
	}
}

func (d *Dump) output(o verify.Output) {
	if d != nil && d.err == nil {
		d.err = d.encs[1].EncodeOutput(o)
	}
}

func (d *Dump) delivery(v verify.Delivery) {
	if d != nil && d.err == nil {
		d.err = d.encs[2].EncodeDelivery(v)
	}
}

// Close flushes and closes the files, and reports the first error of the
// dump's writes or of their closing.
func (d *Dump) Close() error {
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
		return fmt.Errorf("ledger: writing ledgers: %w", err)
	}
	return nil
}
