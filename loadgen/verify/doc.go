// Package verify is sharebench's exactly-once verifier. Given the ledger of
// every input record (where it was written, its final share state) and every
// output record read back from the output topic, it names each anomaly of
// docs/design.md §7 with a witness and judges each acknowledgement mode against what
// that mode allows.
//
// Use it as a stream: create a Verifier for one mode, feed it every input and
// every output in any order, then call Finish once:
//
//	v := verify.New("transactional", verify.Options{DeliveryLimit: 5})
//	for _, in := range inputs { v.AddInput(in) }
//	for _, d := range deliveries { v.AddDelivery(d) }
//	for _, out := range outputs { v.AddOutput(out) }
//	res := v.Finish() // *result.Verification: res.Verdict is PASS, FAIL or INCONCLUSIVE
//
// VerifyDir does the same for the ledgers that --dump-ledgers writes
// (ledger.json, and inputs.jsonl, deliveries.jsonl and outputs.jsonl in one
// directory, one JSON object per line; ids start at 1), refusing a ledger
// it cannot trust with a *LedgerError naming the file and line (every
// field the writer always writes is required, blank lines and unknown
// values are refused, deliveries must be of inputs); CheckRecorded refuses
// ledgers whose counts contradict what result.json recorded of the mode;
// ReadLedgers streams them into an existing Verifier, Encoder, WriteMeta
// and WriteInputs/WriteOutputs/WriteLedgers write them, and Format prints a
// verdict for people. docs/verifier.md describes the schema field by field.
//
// It is a leaf package: it imports nothing of sharebench but the result
// schema, so the load generator, the reports and the simulator can all use it.
//
// # What is checked
//
// Each input record carries a unique id; each output names the id it was
// made from. Per input id the verifier reports (the Kind constants):
//
//   - lost: the record is terminal and accepted (ACKNOWLEDGED, or below the
//     share-partition start offset with no per-record state and not
//     rejected) but no committed output exists. "Committed" always means
//     seen by a read_committed reader and not known to be aborted.
//   - duplicate: more than one committed output for one known input (counted
//     once per input).
//   - aborted-read: an output of an aborted transaction was visible to a
//     read_committed reader (counted once per output).
//   - torn-transaction: outputs grouped by (transactional id, epoch, txn seq):
//     part of the transaction is committed while another part was seen only
//     uncommitted, or fewer or more outputs are committed than the
//     transaction wrote (the largest TxnSize its outputs report; 0 is
//     unknown). Counted once per transaction; a transaction with nothing
//     committed is not torn (its inputs show up as lost or unresolved).
//   - unresolved: the record is AVAILABLE, ACQUIRED or TX_PENDING after the
//     drain, or its final state is a string the verifier does not know.
//   - over-delivered: delivered more times than the delivery limit.
//   - archived-unprocessed: ARCHIVED without a reject before reaching the
//     delivery limit.
//   - phantom: a committed output whose input id is not in the input ledger
//     (counted once per output; never allowed by any mode).
//   - ack-contradiction: an acknowledgement outcome the target's own final
//     state contradicts (an accept or reject it answered as taking effect on
//     a record that ended otherwise, or a record that ended ACKNOWLEDGED or
//     ARCHIVED by a reject although the target refused every such
//     acknowledgement sent for it); checked only where the target reports final
//     states, and not in implicit mode, whose accepts nothing answers per
//     record. Never allowed by any mode: the target's word or its state is
//     false.
//
// Reported but not anomalies: archived-at-limit (ARCHIVED, not rejected,
// delivery limit reached: share groups' poison-record rule) and rejected
// (the worker rejected the record on purpose).
//
// A record with no final state that is not below SPSO (a target that
// cannot report share state) and whose acknowledgement never took effect
// is judged neither lost nor unresolved: nothing says whether it is
// terminal. It is left unjudged, and any unjudged input, or a drain that
// timed out, makes the verdict INCONCLUSIVE (never PASS); its outputs are
// still checked for duplicates, aborted reads and torn transactions. A
// record a worker's accept or reject took effect on is terminal whatever
// the start offset says.
//
// With deliveries recorded (the v2 ledger), an accept or reject counts only
// when it took effect: its outcome is AckCommitted (the target answered it
// without error for that record, or its transaction committed) and no
// delivery with a higher count followed it, since a record whose
// acknowledgement took effect is terminal and never delivered again (Kafka
// answers an acknowledgement of a record already below the start offset
// with success, as a no-op). AckRefused and AckFailed never took effect.
// The delivery count for the limit is the highest the broker
// reported or the deliveries that certainly counted, and an output is known
// aborted when an abort marker followed it, the client was told so, or the
// client never asked to commit its transaction. Transactions left open
// after the drain (AddOpenTransaction) are hanging-transaction findings.
//
// Without a delivery limit (Options.DeliveryLimit 0) over-delivered is not
// checked and every archived, unrejected record counts as archived-at-limit;
// the verdict then carries a note saying so.
//
// The output ledger must list each output record once (the read_committed
// pass, plus the records only the read_uncommitted pass saw); the same
// output listed twice reads as a duplicate.
//
// # What each mode allows
//
// Allowed returns each mode's policy; any anomaly found outside it fails the
// mode. The policies follow from where each mode puts the acknowledgement
// relative to the output (docs/design.md §5):
//
//   - implicit allows duplicate. The worker writes the output and the next
//     poll acknowledges the record; a crash or a lock expiry between the two
//     hands the record to another worker while its output already exists,
//     so the record is processed twice. It never loses a record: the ack
//     comes only after the output was written.
//   - explicit allows duplicate, for the same reason: the output is written
//     before the worker acks each record and commits the acks, and a crash or
//     lock expiry in between redelivers a record whose output exists.
//   - deferred allows duplicate. The outputs commit in a producer
//     transaction and the acks follow outside it; a crash between the commit
//     and the ack redelivers records whose outputs are already committed.
//     An abort before the commit leaves neither outputs nor acks, so nothing
//     is lost or torn.
//   - transactional allows nothing. The acks commit atomically with the
//     outputs (KIP-1289): after a commit the outputs are visible and the
//     source records terminal, after an abort neither, so a record is
//     either processed once or redelivered with no output.
//   - classic-eos allows nothing. The consumer group's offsets commit in the
//     same transaction as the outputs (sendOffsetsToTransaction), the
//     exactly-once baseline KIP-1289 mirrors.
//
// No mode allows lost, aborted-read, torn-transaction, unresolved,
// over-delivered, archived-unprocessed or phantom: each is a broken promise
// in every mode (at-least-once means duplicates, never loss).
//
// # Memory
//
// The verifier keeps no Input, Output or Delivery values. Per input id it
// keeps a 24-byte record (partition, offset, state, delivery counts, flags
// and the head of a chain of its outputs), into which deliveries fold; per
// output a 56-byte record (where it is, its transaction, its marker, when it
// became visible, the next output of the same id).
// Records live in fixed-size chunks indexed by id, so the dense ids the load
// generator assigns cost no per-entry overhead; ids too sparse for chunks
// fall back to a map (about 100 bytes per id). Ten million inputs with ten
// million outputs hold about 840 MiB (88 bytes per input), whatever the
// transaction sizes; Finish adds 4 bytes per transactional output to sort
// them into transactions. BenchmarkVerify and BenchmarkVerify10M measure it.
// The long-lived records hold no pointers, so the garbage collector does not
// scan them; a process verifying that much should still set GOMEMLIMIT so
// that garbage from elsewhere does not double its footprint.
//
// A Verifier is safe for concurrent use.
package verify
