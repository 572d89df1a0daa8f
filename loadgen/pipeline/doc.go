// Package pipeline is the worker logic of every acknowledgement mode as a
// pure state machine: a Loop says what a worker does next (poll, process,
// begin, produce, stage, ack, renew, commit, abort, wait, replace, close),
// the caller performs the call and hands the outcome back with Done, and
// the machine moves on. It reads no clock, starts no goroutine and does no
// I/O: the time, the stalls and cut-offs a fault imposes, the abort ratio
// in force and the stop signal come in as Inputs; its random choices (which
// records to reject, which transactions to abort) come from the stream the
// caller gives it. The same inputs give the same actions.
//
// Two machines implement Loop, each a table of transitions (state × the
// outcome of its call → the next state, the effect and the crash phase
// crossed) over one embedded core (the held poll, the open transaction,
// the failure, retry, replace and close rules): Machine runs a mode's own
// loop, and CheckpointMachine the checkpoint model (design §5.1), which
// adds the barrier, pre-commit, snapshot, notify, the sink's commit or
// roll-back and the checkpoint's end. New picks one by Config.Checkpoint.
//
// The load generator drives one Loop per worker with a goroutine and
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
// The modes and crash phases the loops are written in are package vocab's.
package pipeline
