// Package ledger is the books of a mode's run, shared by both drivers of
// the workers (package loadgen's runner on a real clock, package
// internal/sim on a manual one), starting with the payload codec every
// input and output carries: PutInputHeader and ReadInput, PutOutputHeader
// and ReadOutput, PayloadID.
package ledger
