// Package pipeline is the worker logic of every acknowledgement mode as one
// pure state machine: Machine says what a worker does next (poll, process,
// begin, produce, stage, ack, renew, commit, abort, wait, replace, close;
// in the checkpoint model also barrier, pre-commit, snapshot, notify,
// commit or roll back the sink, end the checkpoint),
// the caller performs the call and hands the outcome back with Done, and
// the machine moves on. It reads no clock, starts no goroutine and does no
// I/O: the time, the stalls and cut-offs a fault imposes, the abort ratio
// in force and the stop signal come in as Inputs; its random choices (which
// records to reject, which transactions to abort) come from the stream the
// caller gives it. The same inputs give the same actions.
//
// The load generator drives one Machine per worker with a goroutine and
// real time (package loadgen); a test drives it step by step:
//
//	m := pipeline.New[*rec](pipeline.Config{Mode: vocab.Transactional, MaxRecords: 100}, rng)
//	for {
//		a := m.Next(pipeline.Inputs{Now: now})
//		res := perform(a)      // the target call the action names
//		if p := m.Done(res); p != "" {
//			// the worker just crossed crash phase p: a scheduled crash strikes here
//		}
//	}
//
// The package also owns the vocabulary those loops are written in: the
// acknowledgement modes (Mode) and the crash phases (Phase), the boundaries
// between a mode's actions where a worker-crash fault strikes. Every other
// package imports them from here; this package imports nothing of
// sharebench.
package pipeline
