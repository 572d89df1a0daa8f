// Package ledger is the books of a mode's run, which both drivers of the
// workers share: package loadgen's runner on a real clock and package
// internal/sim on a manual one. It holds the payload codec every input and
// output carries (PutInputHeader, ReadOutput), the Ledger of every input,
// output, delivery and transaction, a worker incarnation's Book of its
// calls, the checkpoint model's books (Checkpoints, CheckpointBook), the
// gathering of a mode's evidence after the drain (Gatherer, Ledger.Judge)
// and the dump of a ledger to the files the verifier reads back (Dump).
//
// A driver keeps one Ledger per mode, books each worker incarnation's
// calls in a Book (and, for the checkpoint model, a CheckpointBook beside
// it), and after the drain has the verifier judge the mode:
//
//	l := ledger.New(nil)
//	b := l.NewBook(worker, incarnation, now)
//	b.Done(w, open, action, result) // after each call the machine names
//	verdict, err := l.Judge(ctx, target, cfg, mode, nil, verify.Options{})
//
// The package starts no goroutines. A Ledger and Checkpoints are safe for
// concurrent use; a Book or CheckpointBook belongs to its worker.
package ledger
