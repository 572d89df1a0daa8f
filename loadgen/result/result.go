// Package result is the run-artifact schema, sharebench/result/v1: what a
// run writes to result.json and what reports, compare and gate read. It is a
// leaf (it imports nothing of sharebench; the verifier fills its Verification
// type), so every consumer of results can use it without the load generator.
package result

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"time"

	"github.com/sharebench/sharebench/vocab"
)

// Schema is the value of Result.Schema for this version of the format.
const Schema = "sharebench/result/v1"

// FileName is the name of the result file inside a run directory.
const FileName = "result.json"

// Histogram names used in ModeResult.Histograms.
const (
	HistEndToEnd   = "end_to_end"     // intended send time of the input -> output visible to read_committed
	HistProduce    = "produce"        // input produce call service time
	HistPollCommit = "poll_to_commit" // worker: poll returned -> commit (or ack) returned
	HistCommit     = "commit"         // commit (or ack) call service time
	HistSendLag    = "send_lag"       // actual send time - intended send time
)

// Result is one run: every mode, every repeat.
type Result struct {
	Schema   string          `json:"schema"`
	Env      Env             `json:"env"`
	Workload string          `json:"workload"`      // name, or file path
	Spec     json.RawMessage `json:"workload_spec"` // the resolved workload, as JSON
	// SpecYAML is the workload that ran (flags applied) in the YAML
	// schema a workload file is written in, durations as Go durations: what
	// a reader of the report compares with the file they wrote. "" in a
	// result written before it was recorded.
	SpecYAML string `json:"workload_yaml,omitempty"`
	// SpecNotes say how the workload file was read: how the fields of an
	// OpenMessaging Benchmark file were translated, and which were ignored.
	SpecNotes []string `json:"workload_notes,omitempty"`
	Seed      int64    `json:"seed"`
	// Args is the command line; Flags the effective value of every flag.
	Args        []string          `json:"args"`
	Flags       map[string]string `json:"flags"`
	TopicPrefix string            `json:"topic_prefix"`
	Started     time.Time         `json:"started"`
	Finished    time.Time         `json:"finished"`
	// OpenLoop is false for closed-loop (max throughput) runs.
	OpenLoop bool          `json:"open_loop"`
	Rate     float64       `json:"rate"` // intended input records/s in all, 0 for closed loop
	Duration time.Duration `json:"duration_ns"`
	Warmup   time.Duration `json:"warmup_ns"`
	Repeats  int           `json:"repeats"`
	// Interrupted is set when a SIGINT or SIGTERM stopped the run: Modes
	// holds the completed modes and the interrupted one (marked), NotRun
	// the mode runs it never started, in the order it would have run them.
	Interrupted bool         `json:"interrupted,omitempty"`
	Modes       []ModeResult `json:"modes"`
	NotRun      []ModeRef    `json:"not_run,omitempty"`
}

// ModeRef names one run of a mode: the mode and the repeat (from 0).
type ModeRef struct {
	Mode   vocab.Mode `json:"mode"`
	Repeat int        `json:"repeat"`
}

// Env says where a run happened.
type Env struct {
	Commit        string       `json:"commit"`
	GoVersion     string       `json:"go_version"`
	OS            string       `json:"os"`
	Arch          string       `json:"arch"`
	CPU           string       `json:"cpu"`
	NumCPU        int          `json:"num_cpu"`
	GOMAXPROCS    int          `json:"gomaxprocs"`
	Target        vocab.Target `json:"target"`
	Embedded      bool         `json:"embedded"`
	Brokers       string       `json:"brokers,omitempty"`
	BrokerVersion string       `json:"broker_version,omitempty"`
	Notes         []string     `json:"notes,omitempty"`
}

// ModeResult is one mode's run (one repeat of it).
type ModeResult struct {
	Mode   vocab.Mode `json:"mode"`
	Repeat int        `json:"repeat"`
	// Unsupported is set (and nothing else) when the target cannot run
	// the mode; it says why and what to use instead.
	Unsupported string `json:"unsupported,omitempty"`
	// Error is set when the run of this mode failed.
	Error string `json:"error,omitempty"`

	// Interrupted is set on the mode a SIGINT or SIGTERM stopped; its
	// figures cover what it measured before (often nothing).
	Interrupted bool `json:"interrupted,omitempty"`

	// The measurement window, in ns since the mode started: it opens when
	// the warm-up has ended and every worker has received records, and
	// closes when the producers stop (WindowEndNs - WindowStartNs =
	// MeasuredNs). Every histogram and rate counts only samples inside it;
	// both are 0 when it never opened.
	WindowStartNs int64 `json:"window_start_ns"`
	WindowEndNs   int64 `json:"window_end_ns"`
	MeasuredNs    int64 `json:"measured_ns"`
	// Counts over the measurement window: inputs whose intended send time
	// falls in it (one send_lag and one produce sample each), outputs
	// visible in it, commits (or acks) done in it (one commit and one
	// poll_to_commit sample each).
	InputsProduced int64   `json:"inputs_produced"`
	OutputsVisible int64   `json:"outputs_visible"`
	WindowCommits  int64   `json:"window_commits"`
	Throughput     float64 `json:"throughput"` // outputs visible per second
	InputRate      float64 `json:"input_rate"` // inputs produced per second
	// CPUNs is the CPU time (user and system) the sharebench process used
	// inside the window: load generator and, with the engine target, the
	// engine. 0 where the OS does not say.
	CPUNs int64 `json:"cpu_ns,omitempty"`
	// Noise is what else the machine was doing during the window, for
	// judging how far the figures can be trusted; nil in a result written
	// before it was recorded.
	Noise *Noise `json:"noise,omitempty"`
	// Counts over the whole run.
	TotalInputs  int64 `json:"total_inputs"`
	TotalOutputs int64 `json:"total_outputs"`
	Processed    int64 `json:"processed"`
	Redeliveries int64 `json:"redeliveries"`
	Commits      int64 `json:"commits"`
	Aborts       int64 `json:"aborts"`
	// FencedAborts counts the aborts whose cause was a staging fenced by
	// a stale member epoch (a rebalance between poll and staging).
	FencedAborts int64 `json:"fenced_aborts,omitempty"`
	// Rebalances counts the share-group membership changes the run's
	// membership-churn faults made (a member joining, a member leaving);
	// FencedAborts / Rebalances is what a rebalance costs in aborts.
	Rebalances int64 `json:"rebalances,omitempty"`
	// DLQRecords counts the records read back from the share group's
	// dead-letter topic after the drain (read_committed).
	DLQRecords    int64 `json:"dlq_records,omitempty"`
	LockExpiries  int64 `json:"lock_expiries"`
	WorkerCrashes int64 `json:"worker_crashes"`

	// SettleNs is how long the mode waited, before the drain's timeout
	// started, for the target to be whole again after its faults (every
	// node back, every partition led); the notes say what it waited for.
	SettleNs int64 `json:"settle_ns,omitempty"`

	// DrainNs is how long the drain took; DrainTimedOut is set only when
	// it reached its timeout, DrainInterrupted when an interrupt ended it
	// first.
	DrainNs          int64 `json:"drain_ns"`
	DrainTimedOut    bool  `json:"drain_timed_out"`
	DrainInterrupted bool  `json:"drain_interrupted,omitempty"`
	// DrainNote says what was left when the drain timed out or was
	// interrupted.
	DrainNote string `json:"drain_note,omitempty"`
	// Unsent counts the inputs an open loop's schedule placed inside the
	// measurement window that were never sent: the producers stop when
	// the window closes, even behind their schedule.
	Unsent int64 `json:"unsent,omitempty"`
	// SendLagWarning is set when the schedule was not met.
	SendLagWarning string `json:"send_lag_warning,omitempty"`
	// Notes are things a reader of the figures should know (a window
	// that opened before every worker had received records).
	Notes []string `json:"notes,omitempty"`

	Histograms map[string]Histogram `json:"histograms"`
	Series     []Second             `json:"series"`
	Faults     []FaultEvent         `json:"faults,omitempty"`
	Verify     *Verification        `json:"verify,omitempty"`
}

// Noise describes the machine around a mode's measurement window.
type Noise struct {
	// LoadAvgStart and LoadAvgEnd are the 1-, 5- and 15-minute load
	// averages (Linux /proc/loadavg) when the window opened and closed:
	// the runnable threads of every process, this one included. Nil where
	// the OS does not say.
	LoadAvgStart []float64 `json:"load_avg_start,omitempty"`
	LoadAvgEnd   []float64 `json:"load_avg_end,omitempty"`
	// CPUShare is the process's CPU time over the window divided by the
	// window's wall time and GOMAXPROCS: 1 means it kept every P busy the
	// whole window. -1 where the OS does not report the process's CPU time.
	CPUShare float64 `json:"cpu_share"`
	// GOMAXPROCS is the value CPUShare divides by.
	GOMAXPROCS int `json:"gomaxprocs"`
}

// Histogram is a latency histogram: a summary for people and the
// V2-encoded HdrHistogram (base64, as HdrHistogram's own tools exchange it)
// for machines.
type Histogram struct {
	Unit     string  `json:"unit"` // always "ns"
	Count    int64   `json:"count"`
	Overflow int64   `json:"overflow"` // samples above the range, counted not clamped
	Min      int64   `json:"min"`
	Max      int64   `json:"max"`
	Mean     float64 `json:"mean"`
	P50      int64   `json:"p50"`
	P90      int64   `json:"p90"`
	P99      int64   `json:"p99"`
	P999     int64   `json:"p999"`
	P9999    int64   `json:"p9999"`
	// EncodedV2 is HdrHistogram's compressed V2 encoding, base64 text as
	// HdrHistogram's own tools exchange it.
	EncodedV2 string `json:"encoded_v2"`
}

// Second is one bucket of the per-second series. Buckets are whole seconds
// aligned with the measurement window: back from its start through the
// warm-up (the first may be shorter), from its start to its end (the last
// may be shorter), then from its end through the drain. [StartNs, EndNs)
// are its bounds in ns since the mode started, T its start in whole
// seconds; rates are per second of the bucket's own length.
type Second struct {
	T            int      `json:"t"`
	StartNs      int64    `json:"start_ns"`
	EndNs        int64    `json:"end_ns"`
	Warmup       bool     `json:"warmup,omitempty"`
	Drain        bool     `json:"drain,omitempty"`
	Inputs       int64    `json:"inputs"`  // inputs sent in the bucket
	Outputs      int64    `json:"outputs"` // outputs visible in the bucket
	InputRate    int64    `json:"input_rate"`
	OutputRate   int64    `json:"output_rate"`
	Redeliveries int64    `json:"redeliveries"`
	Aborts       int64    `json:"aborts"`
	LockExpiries int64    `json:"lock_expiries"`
	Backlog      int64    `json:"backlog"` // inputs produced minus outputs visible
	SendLagP99   int64    `json:"send_lag_p99_ns"`
	P99          int64    `json:"e2e_p99_ns"` // end-to-end p99 of the window's outputs seen in that bucket
	Faults       []string `json:"faults,omitempty"`
}

// FaultEvent is one fault applied; its times are ns since the start of
// the mode. AtNs is when it actually began; ScheduledNs when its timeline
// had it due (0 for an event logged where it struck, such as a worker
// crash at its phase); EndNs when applying it returned (a broker restart
// ends once the broker answers again; 0 where it has no end of its own).
type FaultEvent struct {
	AtNs        int64 `json:"at_ns"`
	ScheduledNs int64 `json:"scheduled_ns,omitempty"`
	EndNs       int64 `json:"end_ns,omitempty"`
	// Kind is a vocab.FaultKind's name, or the name of an event the
	// checkpoint model puts on the timeline beside the faults (recovery,
	// checkpoint-failed): not every event is a fault kind, so it is a
	// string.
	Kind   string `json:"kind"`
	Detail string `json:"detail,omitempty"`
	// Broker is the broker a broker fault hit (its id, or "all"), and
	// Selector how the workload named it (txn-coordinator, leader, ...).
	Broker   string `json:"broker,omitempty"`
	Selector string `json:"selector,omitempty"`
	// Failed is true when the fault could not be applied (Detail says why).
	Failed bool `json:"failed,omitempty"`
	// RoleBefore, RoleDuring and RoleAfter are the node ids that held the
	// role the selector named when the fault was resolved, while the node
	// was down or paused, and once the fault had ended (omitted when the
	// selector names no role or the cluster did not answer).
	RoleBefore string `json:"role_before,omitempty"`
	RoleDuring string `json:"role_during,omitempty"`
	RoleAfter  string `json:"role_after,omitempty"`
}

// FaultsLanded counts the mode's faults that were applied (landed) and
// all that fired (total): landed < total says the schedule did not happen
// as written, which the verdict line reports.
func (m *ModeResult) FaultsLanded() (landed, total int) {
	for _, f := range m.Faults {
		total++
		if !f.Failed {
			landed++
		}
	}
	return landed, total
}

// FaultsNote is the verdict's suffix when some faults did not land
// ("3 of 5 faults landed"), or "" when every fault that fired landed.
func (m *ModeResult) FaultsNote() string { return FaultsNote(m.FaultsLanded()) }

// FaultsNote says how many of the faults that fired landed ("3 of 5
// faults landed"), or "" when all did: the one wording of the text table,
// the report and the error line.
func FaultsNote(landed, fired int) string {
	if landed == fired {
		return ""
	}
	return fmt.Sprintf("%d of %d faults landed", landed, fired)
}

// Verification is the verifier's verdict for one mode.
type Verification struct {
	// Verdict is PASS, FAIL or INCONCLUSIVE; Pass is true for PASS only.
	Verdict string `json:"verdict"`
	Pass    bool   `json:"pass"`
	// Allowed lists the anomaly kinds this mode allows.
	Allowed []vocab.Finding `json:"allowed"`
	// Counts holds every anomaly and informational kind found.
	Counts map[vocab.Finding]int64 `json:"counts"`
	// Forbidden lists the kinds found that the mode does not allow.
	Forbidden []vocab.Finding `json:"forbidden,omitempty"`
	// Witnesses holds up to N findings per kind.
	Witnesses map[vocab.Finding][]Witness `json:"witnesses,omitempty"`
	// Unjudged counts the inputs the verifier could not judge, by reason;
	// any makes the verdict INCONCLUSIVE unless it is FAIL.
	Unjudged        int64            `json:"unjudged,omitempty"`
	UnjudgedReasons map[string]int64 `json:"unjudged_reasons,omitempty"`
	// Inputs, Outputs and Deliveries counted by the verifier.
	Inputs     int64    `json:"inputs"`
	Outputs    int64    `json:"outputs"`
	Deliveries int64    `json:"deliveries,omitempty"`
	Notes      []string `json:"notes,omitempty"`
}

// AbortsPerRebalance is FencedAborts per membership change made by the
// run's churn faults; NaN without one.
func (m *ModeResult) AbortsPerRebalance() float64 {
	if m.Rebalances == 0 {
		return math.NaN()
	}
	return float64(m.FencedAborts) / float64(m.Rebalances)
}

// Inconclusive reports whether the verdict is INCONCLUSIVE (a file written
// before verdicts existed has none: it is PASS or FAIL by Pass).
func (v *Verification) Inconclusive() bool { return v != nil && v.Verdict == "INCONCLUSIVE" }

// VerdictName returns the verdict, deriving it from Pass for a file that
// predates verdicts.
func (v *Verification) VerdictName() string {
	switch {
	case v == nil:
		return ""
	case v.Verdict != "":
		return v.Verdict
	case v.Pass:
		return "PASS"
	}
	return "FAIL"
}

// Witness is evidence for one finding.
type Witness struct {
	Kind            vocab.Finding `json:"kind"`
	TransactionalID string        `json:"transactional_id,omitempty"`
	ProducerID      int64         `json:"producer_id,omitempty"`
	Epoch           int16         `json:"epoch,omitempty"`
	// Candidates names the kinds a finding could be when the evidence
	// cannot tell them apart.
	Candidates    []vocab.Finding   `json:"candidates,omitempty"`
	InputID       uint64            `json:"id"`
	Partition     int32             `json:"partition"`
	Offset        int64             `json:"offset"`
	State         vocab.RecordState `json:"state,omitempty"`
	DeliveryCount int               `json:"delivery_count,omitempty"`
	Outputs       []OutputRef       `json:"outputs,omitempty"`
	Detail        string            `json:"detail,omitempty"`
}

// OutputRef points at one output record.
type OutputRef struct {
	Partition       int32  `json:"partition"`
	Offset          int64  `json:"offset"`
	TransactionalID string `json:"transactional_id,omitempty"`
	ProducerID      int64  `json:"producer_id,omitempty"`
	Epoch           int16  `json:"epoch"`
	TxnSeq          int64  `json:"txn_seq,omitempty"`
	Committed       bool   `json:"committed"`
	// Marker and MarkerEpoch: the transaction marker that followed it.
	Marker      string `json:"marker,omitempty"`
	MarkerEpoch int16  `json:"marker_epoch,omitempty"`
	// TxnOutcome: what the client was told of its transaction.
	TxnOutcome string `json:"txn_outcome,omitempty"`
	VisibleNs  int64  `json:"visible_ns"`
}

// ErrSchema is wrapped by errors for a file that is not a v1 result.
var ErrSchema = errors.New("result: not a sharebench/result/v1 file")

// Write writes r as indented JSON to path.
func Write(path string, r *Result) error {
	r.Schema = Schema
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("result: encoding %s: %w", path, err)
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// Read reads a result file and checks its schema.
func Read(path string) (*Result, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("result: %w", err)
	}
	var r Result
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("result: %s is not valid JSON (%v): %w", path, err, ErrSchema)
	}
	if r.Schema != Schema {
		return nil, fmt.Errorf("result: %s has schema %q, want %q: %w", path, r.Schema, Schema, ErrSchema)
	}
	return &r, nil
}
