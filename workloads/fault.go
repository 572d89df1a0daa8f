// This file holds Fault, one fault scheduled on a mode's timeline, with the
// fault kinds, their parameters and their validation.

package workloads

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sharebench/sharebench/vocab"
)

// Values of the broker param of the broker-* faults: which broker a fault
// hits, resolved through the cluster's admin APIs when the fault fires. A
// broker id (a number) names one broker directly.
const (
	// BrokerTxnCoordinator is the transaction coordinator of the
	// transactional id of the fault's worker.
	BrokerTxnCoordinator = "txn-coordinator"
	// BrokerGroupCoordinator is the coordinator of the mode's group.
	BrokerGroupCoordinator = "group-coordinator"
	// BrokerShareCoordinator is the share coordinator holding the state
	// of the fault's input partition for the mode's share group.
	BrokerShareCoordinator = "share-coordinator"
	// BrokerLeader is the leader of the fault's partition of its topic.
	BrokerLeader = "leader"
	// BrokerController is the active KRaft controller.
	BrokerController = "controller"
)

// BrokerSelectors lists the named broker selectors (besides Random and a
// broker id), in documentation order.
var BrokerSelectors = []string{BrokerTxnCoordinator, BrokerGroupCoordinator, BrokerShareCoordinator,
	BrokerLeader, BrokerController, Random}

// Values of the topic param of the broker-* faults.
const (
	TopicInput  = "input"
	TopicOutput = "output"
)

// Values of the network-partition between param.
const (
	BetweenCoordinatorParticipant = "coordinator-participant"
	BetweenWorkerEngine           = "worker-engine"
)

// Values of the coordinator-crash state param: where a transaction is
// when the crash strikes it, or now for no transaction.
const (
	// StateNow: the coordinator crashes at once.
	StateNow = "now"
	// StateOngoing: the transaction stages acknowledgements or offsets.
	StateOngoing = "ongoing"
	// StatePrepareCommit, StatePrepareAbort: PREPARE_COMMIT or
	// PREPARE_ABORT is logged; StatePrepared: either.
	StatePrepareCommit = "prepare-commit"
	StatePrepareAbort  = "prepare-abort"
	StatePrepared      = "prepared"
	// StateMarker: the transaction's first marker is applied.
	StateMarker = "marker"
	// StateCompleted: COMPLETE_COMMIT or COMPLETE_ABORT is logged.
	StateCompleted = "completed"
)

// CoordinatorCrashStates lists the coordinator-crash states in
// documentation order.
var CoordinatorCrashStates = []string{StateNow, StateOngoing, StatePrepareCommit, StatePrepareAbort,
	StatePrepared, StateMarker, StateCompleted}

// Values of the coordinator-crash scope param: what crashes.
const (
	// CrashScopeCoordinator: the transaction coordinator alone, which
	// reloads its log (the default).
	CrashScopeCoordinator = "coordinator"
	// CrashScopeEngine: the whole engine, which restarts from its data
	// directory.
	CrashScopeEngine = "engine"
)

// Random is the value of a worker or partition param that picks one at
// random (from the run's seed) each time the fault fires.
const Random = "random"

// minFaultEvery keeps a repeating fault from firing in a tight loop.
const minFaultEvery = 100 * time.Millisecond

// maxFaults bounds the faults of one workload.
const maxFaults = 100

// Fault is one fault on the timeline of each mode's test, which starts when
// its warm-up ends. Exactly one of At (once, at that offset) and Every
// (repeatedly, first at Every) is set, both above zero and below the test
// duration. Params hold the kind's parameters as written; Index, Duration
// and Float read them once the Spec is valid.
type Fault struct {
	At     time.Duration     `yaml:"at,omitempty" json:"at,omitempty"`
	Every  time.Duration     `yaml:"every,omitempty" json:"every,omitempty"`
	Kind   vocab.FaultKind   `yaml:"kind" json:"kind"`
	Params map[string]string `yaml:"params,omitempty" json:"params,omitempty"`
}

// ClientSide reports whether the load generator applies f with its own
// clients (FaultKind.ClientSide, and a network partition between one worker
// and the target); any other fault needs the target's fault runner.
func (f Fault) ClientSide() bool {
	if f.Kind == vocab.FaultNetworkPartition {
		return f.Params["between"] != BetweenCoordinatorParticipant
	}
	return f.Kind.ClientSide()
}

// String describes f on one line for logs, like
// "worker-crash every 1.5s (phase=after-poll worker=random)".
func (f Fault) String() string {
	var b strings.Builder
	b.WriteString(string(f.Kind))
	switch {
	case f.Every > 0:
		b.WriteString(" every ")
		b.WriteString(fmtDur(f.Every))
	default:
		b.WriteString(" at ")
		b.WriteString(fmtDur(f.At))
	}
	if len(f.Params) > 0 {
		b.WriteString(" (")
		for i, k := range slices.Sorted(maps.Keys(f.Params)) {
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(k)
			b.WriteByte('=')
			b.WriteString(f.Params[k])
		}
		b.WriteByte(')')
	}
	return b.String()
}

// Index reads a worker or partition param: the index, or random true when
// the param says "random" or is absent.
func (f Fault) Index(param string) (index int, random bool) {
	v, ok := f.Params[param]
	if !ok || v == Random {
		return -1, true
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return -1, true
	}
	return n, false
}

// Duration reads a duration param such as "for" or "delay"; 0 when absent.
func (f Fault) Duration(param string) time.Duration {
	d, err := time.ParseDuration(f.Params[param])
	if err != nil {
		return 0
	}
	return d
}

// Float reads a number param such as "ratio"; 0 when absent.
func (f Fault) Float(param string) float64 {
	x, err := strconv.ParseFloat(f.Params[param], 64)
	if err != nil {
		return 0
	}
	return x
}

// resolve writes the default of each omitted optional param, and drops an
// empty params map so YAML round trips compare equal.
func (f *Fault) resolve() {
	k, ok := faultKinds[f.Kind]
	if !ok {
		return
	}
	for _, p := range k.params {
		if p.def == "" {
			continue
		}
		if _, ok := f.Params[p.name]; !ok {
			if f.Params == nil {
				f.Params = map[string]string{}
			}
			f.Params[p.name] = p.def
		}
	}
	if len(f.Params) == 0 {
		f.Params = nil
	}
}

// faultParam describes one param of a fault kind.
type faultParam struct {
	name     string
	required bool
	def      string // written by resolve when omitted; "" for none
	// check returns what is wrong with v and the fix, or "" when v is fine.
	check func(s *Spec, v string) string
}

type faultKind struct {
	params []faultParam
	// combine returns the param that does not go with the others and
	// what to do, or "" when they go together.
	combine func(params map[string]string) (param, msg string)
	// runnerOnly are params a target's fault runner takes from a direct
	// caller (the simulator), each with what it names: one of the run's
	// own topics, groups or transactional ids, which the load generator
	// names for each run, so a workload cannot.
	runnerOnly map[string]string
}

// faultKinds maps each kind to its params, in the order they are checked.
var faultKinds = map[vocab.FaultKind]faultKind{
	vocab.FaultWorkerCrash: {params: []faultParam{
		{name: "phase", required: true, check: checkEnum("crash phase", vocab.CrashPhaseNames()...)},
		workerParam,
	}},
	vocab.FaultAbortRatio: {params: []faultParam{
		{name: "ratio", required: true, check: checkRatio},
		{name: "for", required: true, check: checkFaultDur},
	}},
	vocab.FaultStallWorker: {params: []faultParam{
		{name: "for", required: true, check: checkFaultDur},
		{name: "phase", check: checkEnum("stall phase", string(vocab.AfterStage), string(vocab.AfterProduce))},
		workerParam,
	}},
	vocab.FaultSlowProcessing: {params: []faultParam{
		{name: "for", required: true, check: checkFaultDur},
		{name: "delay", required: true, check: checkFaultDur},
		workerParam,
	}},
	vocab.FaultCoordinatorCrash: {params: []faultParam{
		{name: "state", required: true, check: checkEnum("transaction state", CoordinatorCrashStates...)},
		{name: "scope", check: checkEnum("crash scope", CrashScopeCoordinator, CrashScopeEngine)},
		{name: "wait", check: checkWait},
	}, combine: checkCrashNow, runnerOnly: map[string]string{"transactional-id-prefix": "transactional ids"}},
	vocab.FaultShareFailover: {params: []faultParam{
		{name: "partition", def: Random, check: checkPartition},
	}, runnerOnly: map[string]string{"group": "groups", "topic": "topics"}},
	vocab.FaultZombieProducer: {params: []faultParam{
		{name: "pause", check: checkPause},
		workerParam,
	}},
	vocab.FaultEngineRestart: {},
	vocab.FaultNetworkPartition: {params: []faultParam{
		{name: "for", required: true, check: checkFaultDur},
		{name: "between", def: BetweenWorkerEngine, check: checkEnum("network partition",
			BetweenWorkerEngine, BetweenCoordinatorParticipant)},
		{name: "partition", def: Random, check: checkPartition},
		workerParam,
	}, runnerOnly: map[string]string{"topic": "topics"}},
	vocab.FaultMembershipChurn: {params: []faultParam{
		{name: "for", def: "1s", check: checkFaultDur},
	}},
	vocab.FaultSlowCheckpoint: {params: []faultParam{
		{name: "delay", required: true, check: checkFaultDur},
		workerParam,
	}},
	vocab.FaultBrokerKill: {params: append([]faultParam{
		{name: "delay", def: "0s", check: checkDelay},
	}, brokerParams...)},
	vocab.FaultBrokerRestart: {params: brokerParams},
	vocab.FaultBrokerPause: {params: append([]faultParam{
		{name: "for", required: true, check: checkFaultDur},
	}, brokerParams...)},
}

// brokerParams are the params every broker-* fault takes: the selector,
// and what it reads (the worker whose transactional id a txn-coordinator
// names; the topic and partition a leader or share-coordinator names).
var brokerParams = []faultParam{
	{name: "broker", def: Random, check: checkBroker},
	workerParam,
	{name: "topic", def: TopicOutput, check: checkEnum("topic of the run", TopicInput, TopicOutput)},
	{name: "partition", def: Random, check: checkPartition},
}

func checkBroker(_ *Spec, v string) string {
	if slices.Contains(BrokerSelectors, v) {
		return ""
	}
	if n, err := strconv.Atoi(v); err == nil && n >= 0 {
		return ""
	}
	return fmt.Sprintf("%q is not a broker selector; use %s, or a broker id such as 1", v, orList(BrokerSelectors))
}

func checkWait(_ *Spec, v string) string {
	return checkDurationUpTo1h(v, "the fault returns at once, the crash armed")
}

// checkCrashNow refuses what state now does not take: a crash at once
// waits for no transaction, and a whole-engine crash at once is
// engine-restart.
func checkCrashNow(params map[string]string) (string, string) {
	if params["state"] != StateNow {
		return "", ""
	}
	if _, ok := params["wait"]; ok {
		return "wait", "state now crashes the coordinator at once and waits for no transaction; remove wait"
	}
	if params["scope"] == CrashScopeEngine {
		return "scope", fmt.Sprintf("a whole-engine crash at once is the %s fault; use kind %s, or scope %s",
			vocab.FaultEngineRestart, vocab.FaultEngineRestart, CrashScopeCoordinator)
	}
	return "", ""
}

func checkPause(_ *Spec, v string) string {
	return checkDurationUpTo1h(v, "the zombie runs on at once")
}

func checkDelay(_ *Spec, v string) string { return checkDurationUpTo1h(v, "start again at once") }

// checkDurationUpTo1h checks a duration param in [0, 1h]; zero says what
// 0s means for it.
func checkDurationUpTo1h(v, zero string) string {
	d, err := time.ParseDuration(v)
	switch {
	case err != nil:
		return fmt.Sprintf("%q is not a duration; write a Go duration like 0s or 2s", v)
	case d < 0:
		return fmt.Sprintf("%s is negative; use 0s (%s) or more", v, zero)
	case d > time.Hour:
		return fmt.Sprintf("%s is above the maximum 1h; use 1h or less", v)
	}
	return ""
}

var workerParam = faultParam{name: "worker", def: Random, check: checkWorker}

func checkEnum(what string, values ...string) func(*Spec, string) string {
	return func(_ *Spec, v string) string {
		if slices.Contains(values, v) {
			return ""
		}
		return fmt.Sprintf("%q is not a %s; use %s", v, what, orList(values))
	}
}

func checkRatio(_ *Spec, v string) string {
	x, err := strconv.ParseFloat(v, 64)
	if err != nil || !(x >= 0 && x <= 1) {
		return fmt.Sprintf("%q is not a share between 0 and 1; use a number like 0.1", v)
	}
	return ""
}

func checkFaultDur(_ *Spec, v string) string {
	d, err := time.ParseDuration(v)
	switch {
	case err != nil:
		return fmt.Sprintf("%q is not a duration; write a Go duration like 500ms or 2s", v)
	case d <= 0:
		return fmt.Sprintf("%s is not above 0; use a duration like 2s", v)
	case d > time.Hour:
		return fmt.Sprintf("%s is above the maximum 1h; use 1h or less", v)
	}
	return ""
}

func checkWorker(s *Spec, v string) string {
	return checkIndex(v, "worker", "consumers", s.Consumers)
}

func checkPartition(s *Spec, v string) string {
	return checkIndex(v, "partition", "partitionsPerTopic", s.PartitionsPerTopic)
}

func checkIndex(v, what, countField string, count int) string {
	if v == Random {
		return ""
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 || n >= count {
		return fmt.Sprintf("%q is not a %s of this workload (%s is %d); use 0 to %d or %s",
			v, what, countField, count, count-1, Random)
	}
	return ""
}

// validate checks fault i of s.
func (f *Fault) validate(s *Spec, i int) *Error {
	path := fmt.Sprintf("faults[%d]", i)
	test := s.TestDuration()
	k, ok := faultKinds[f.Kind]
	switch {
	case f.Kind == "":
		return fieldErr(path+".kind", "missing; set kind to one of %s", orList(vocab.FaultKinds()))
	case !ok:
		return fieldErr(path+".kind", "%q is not a fault kind; use %s", f.Kind, orList(vocab.FaultKinds()))
	}
	switch {
	case f.At != 0 && f.Every != 0:
		return fieldErr(path+".every", "set together with at; set only one: at fires once, every repeats")
	case f.At == 0 && f.Every == 0:
		return fieldErr(path, "has neither at nor every; add at: 2s to fire once, or every: 2s to repeat")
	case f.At < 0:
		return fieldErr(path+".at", "%s is negative; use a time after the warm-up, like 2s", fmtDur(f.At))
	case f.At >= test:
		return fieldErr(path+".at", "%s is not before the end of the test (testDuration %s), so the fault would never fire; use an at below %s",
			fmtDur(f.At), fmtDur(test), fmtDur(test))
	case f.Every < 0:
		return fieldErr(path+".every", "%s is negative; use a period like 2s", fmtDur(f.Every))
	case f.Every > 0 && f.Every < minFaultEvery:
		return fieldErr(path+".every", "%s is below the minimum %s; use %s or more", fmtDur(f.Every), fmtDur(minFaultEvery), fmtDur(minFaultEvery))
	case f.Every >= test:
		return fieldErr(path+".every", "%s is not below the test duration %s, so the fault would never fire; use an every below %s",
			fmtDur(f.Every), fmtDur(test), fmtDur(test))
	}
	known := make([]string, len(k.params))
	for j, p := range k.params {
		known[j] = p.name
	}
	for _, name := range slices.Sorted(maps.Keys(f.Params)) {
		if slices.Contains(known, name) {
			continue
		}
		if what, ok := k.runnerOnly[name]; ok {
			return fieldErr(path+".params."+name, "names one of the run's own %s, which the load generator names for each run, so a workload cannot (the fault uses the mode's); remove it", what)
		}
		if len(known) == 0 {
			return fieldErr(path+".params."+name, "unknown param: %s takes no params; remove it", f.Kind)
		}
		return fieldErr(path+".params."+name, "unknown param for %s; its params are %s", f.Kind, andList(known))
	}
	for _, p := range k.params {
		v, ok := f.Params[p.name]
		if !ok {
			if p.required {
				return fieldErr(path+".params", "%s needs param %s; add it", f.Kind, p.name)
			}
			continue
		}
		if msg := p.check(s, v); msg != "" {
			return fieldErr(path+".params."+p.name, "%s", msg)
		}
	}
	if k.combine != nil {
		if name, msg := k.combine(f.Params); name != "" {
			return fieldErr(path+".params."+name, "%s", msg)
		}
	}
	return nil
}

// orList writes "a, b or c".
func orList[S ~string](v []S) string { return joinList(v, "or") }

// andList writes "a, b and c".
func andList[S ~string](v []S) string { return joinList(v, "and") }

func joinList[S ~string](v []S, last string) string {
	switch len(v) {
	case 0:
		return ""
	case 1:
		return string(v[0])
	}
	var b strings.Builder
	for i, x := range v[:len(v)-1] {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(string(x))
	}
	return b.String() + " " + last + " " + string(v[len(v)-1])
}

// fmtDur writes d like time.Duration.String without zero tails: "1h", "2m",
// "1m30s", "500ms".
func fmtDur(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
