// This file holds Spec.Validate: the range of every field and the checks
// across fields that catch impossible settings.

package workloads

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/sharebench/sharebench/vocab"
)

// Ranges that are not Kafka's; Kafka's are written where they are checked.
const (
	maxPartitions = 1024
	maxTopics     = 1024
	// maxInputPartitions bounds topics × partitionsPerTopic.
	maxInputPartitions = 4096
	// maxPayloadPoolBytes bounds the pool of randomized payloads
	// (randomizedPayloadPoolSize × messageSize), held in memory.
	maxPayloadPoolBytes = 256 << 20
	maxBacklogGB        = 1024
	minMessageSize      = 32 // the payload header: record id and intended send time
	maxMessageSize      = 1 << 20
	maxProducers        = 256
	maxProducerRate     = 10_000_000
	maxTestLength       = 24 * time.Hour
	maxWarmupLength     = time.Hour
	maxDrainTimeout     = time.Hour
	maxConsumers        = 1024
	maxPollRecordsCap   = 10_000
	maxTxnRecords       = 100_000
	maxCheckpoint       = time.Hour
	maxNameLen          = 64
	maxDescriptionLen   = 4096
	minLockDuration     = time.Second // share.record.lock.duration.ms bounds
	maxLockDuration     = time.Hour
	minDeliveryLimit    = 2 // share.delivery.count.limit bounds
	maxDeliveryLimit    = 10
	minRecordLocks      = 100 // share.partition.max.record.locks bounds
	maxRecordLocksCap   = 10_000
	minTxnTimeout       = time.Second      // transaction.timeout.ms floor of the client
	maxTxnTimeout       = 15 * time.Minute // transaction.max.timeout.ms default
	// maxReplicationFactor bounds replicationFactor and minInsyncReplicas
	// (Kafka takes up to 32767; no cluster a benchmark runs against has
	// more than a few dozen brokers).
	maxReplicationFactor = 32
)

var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// fieldErr builds the *Error for field; Parse adds the file and line.
func fieldErr(field, format string, args ...any) *Error {
	return &Error{Field: field, Msg: fmt.Sprintf(format, args...)}
}

// Validate checks every field and the settings that cannot work together,
// and returns the first problem as an *Error, or nil. Call it after Defaults
// (Parse and Load already do both).
func (s *Spec) Validate() error {
	if s == nil {
		return &Error{Msg: "no workload (nil Spec); build one with workloads.New"}
	}
	if errs := s.validateAll(); len(errs) > 0 {
		return errs[0]
	}
	return nil
}

// validateAll runs every group of checks and returns the first problem of
// each group.
func (s *Spec) validateAll() []*Error {
	var out []*Error
	for _, check := range []func() *Error{
		s.validateIdentity, s.validateTopics, s.validateProducers, s.validateTiming,
		s.validateConsumers, s.validateKafka, s.validateTransaction, s.validateRatios,
		s.validateAckOnly, s.validateModes, s.validateFaults, s.validateAcquireMode, s.validateCompression, s.validateDLQ,
		s.validateOMB,
	} {
		if err := check(); err != nil {
			out = append(out, err)
		}
	}
	return out
}

func (s *Spec) validateIdentity() *Error {
	switch {
	case s.Name == "":
		return fieldErr("name", "missing; give the workload a name like my-workload")
	case len(s.Name) > maxNameLen:
		return fieldErr("name", "is %d characters long; use at most %d", len(s.Name), maxNameLen)
	case !nameRE.MatchString(s.Name):
		return fieldErr("name", "%q has characters other than letters, digits, '.', '_' and '-'; use a name like my-workload", s.Name)
	case len(s.Description) > maxDescriptionLen:
		return fieldErr("description", "is %d characters long; use at most %d", len(s.Description), maxDescriptionLen)
	}
	return nil
}

func (s *Spec) validateTopics() *Error {
	if e := intRange("topics", s.Topics, 1, maxTopics, "every topic is created for each mode run"); e != nil {
		return e
	}
	if e := intRange("partitionsPerTopic", s.PartitionsPerTopic, 1, maxPartitions, ""); e != nil {
		return e
	}
	if n := s.Topics * s.PartitionsPerTopic; n > maxInputPartitions {
		return fieldErr("topics", "%d topics of %d partitions are %d input partitions, above the maximum %d (one share partition each, per mode run); use fewer topics or partitions",
			s.Topics, s.PartitionsPerTopic, n, maxInputPartitions)
	}
	if s.Topics > 1 && s.AckOnly {
		return fieldErr("topics", "%d topics with ackOnly: the checkpoint model keys the records it holds by partition and offset of one input topic; use topics: 1", s.Topics)
	}
	if s.Topics > 1 && s.DLQTopic != "" {
		return fieldErr("topics", "%d topics with a dead-letter queue: the verifier matches dead letters to inputs by partition and offset of one input topic; use topics: 1", s.Topics)
	}
	// 0 means the same as the input until Defaults or Parse fills it in.
	if s.OutputPartitionsPerTopic != 0 {
		if e := intRange("outputPartitionsPerTopic", s.OutputPartitionsPerTopic, 1, maxPartitions, ""); e != nil {
			return e
		}
	}
	return intRange("messageSize", s.MessageSizeBytes, minMessageSize, maxMessageSize,
		"every payload carries a 32-byte header")
}

func (s *Spec) validateProducers() *Error {
	if e := intRange("producersPerTopic", s.ProducersPerTopic, 1, maxProducers, ""); e != nil {
		return e
	}
	switch {
	case s.ProducerRate < 0:
		return fieldErr("producerRate", "%d is negative; use 0 for a closed loop at maximum throughput, or a rate in records per second like 2000", s.ProducerRate)
	case s.ProducerRate > maxProducerRate:
		return fieldErr("producerRate", "%d is above the maximum %d records/s; use %d or less, or 0 for a closed loop", s.ProducerRate, maxProducerRate, maxProducerRate)
	}
	switch s.RateDistribution {
	case RateConstant:
	case RatePoisson:
		if s.ProducerRate == 0 {
			return &Error{Field: "rateDistribution", alt: []string{"producerRate"},
				Msg: "poisson needs an open loop but producerRate is 0 (closed loop); set producerRate above 0 or use constant"}
		}
	default:
		return fieldErr("rateDistribution", "%q is not a rate distribution; use constant or poisson", s.RateDistribution)
	}
	return nil
}

func (s *Spec) validateTiming() *Error {
	if e := minutesPair(s.TestMinutes, s.TestLength, "testDuration", maxTestLength, false); e != nil {
		return e
	}
	if e := minutesPair(s.WarmupMinutes, s.WarmupLength, "warmupDuration", maxWarmupLength, true); e != nil {
		return e
	}
	if s.DrainTimeout <= 0 {
		return fieldErr("drainTimeout", "%s is not above 0: the run waits this long after the test for in-flight records to finish; use a duration like 30s", fmtDur(s.DrainTimeout))
	}
	return durMax("drainTimeout", s.DrainTimeout, maxDrainTimeout, "")
}

// minutesPair checks an OMB-style pair like testDurationMinutes and
// testDuration: at most one set, in range.
func minutesPair(mins float64, d time.Duration, field string, hi time.Duration, zeroOK bool) *Error {
	minField := field + "Minutes"
	switch {
	case mins != 0 && d != 0:
		return &Error{Field: minField, alt: []string{field},
			Msg: fmt.Sprintf("set together with %s; set only one of them", field)}
	case math.IsNaN(mins) || math.IsInf(mins, 0):
		return fieldErr(minField, "%v is not a number of minutes; use a number like 0.5", mins)
	case mins < 0:
		return fieldErr(minField, "%v is negative; use a number of minutes like 0.5", mins)
	case mins > hi.Minutes():
		return fieldErr(minField, "%v is above the maximum %v minutes (%s); use %v or less", mins, hi.Minutes(), fmtDur(hi), hi.Minutes())
	case mins > 0:
		return nil
	case d < 0:
		return fieldErr(field, "%s is negative; use a duration like 10s", fmtDur(d))
	case d == 0 && !zeroOK:
		return fieldErr(field, "0s is not above 0; use a duration like 10s")
	}
	return durMax(field, d, hi, "")
}

func (s *Spec) validateConsumers() *Error {
	if e := intRange("consumers", s.Consumers, 1, maxConsumers, ""); e != nil {
		return e
	}
	if e := intRange("maxPollRecords", s.MaxPollRecords, 1, maxPollRecordsCap, ""); e != nil {
		return e
	}
	return s.ProcessingTime.validate()
}

func (p ProcessingTime) validate() *Error {
	const f = "processingTime."
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"mean", p.Mean}, {"min", p.Min}, {"max", p.Max}, {"stddev", p.Stddev}} {
		if d.v < 0 {
			return fieldErr(f+d.name, "%s is negative; use 0 or more", fmtDur(d.v))
		}
		if e := durMax(f+d.name, d.v, maxProcessingTime, ""); e != nil {
			return e
		}
	}
	unused := func(name string, v time.Duration) *Error {
		if v != 0 {
			return fieldErr(f+name, "%s distribution does not use %s; remove it", p.Distribution, name)
		}
		return nil
	}
	var e *Error
	switch p.Distribution {
	case DistConstant:
		e = firstErr(unused("min", p.Min), unused("max", p.Max), unused("stddev", p.Stddev))
	case DistUniform:
		e = firstErr(unused("mean", p.Mean), unused("stddev", p.Stddev))
		if e == nil && p.Max < p.Min {
			e = &Error{Field: f + "max", alt: []string{f + "min"},
				Msg: fmt.Sprintf("%s is below min %s; set max to min or more", fmtDur(p.Max), fmtDur(p.Min))}
		}
	case DistExponential:
		e = unused("stddev", p.Stddev)
		if e == nil && p.Mean <= 0 {
			e = fieldErr(f+"mean", "exponential needs a mean above 0; set mean like 2ms")
		}
	case DistLognormal:
		switch {
		case p.Mean <= 0:
			e = fieldErr(f+"mean", "lognormal needs a mean above 0; set mean like 2ms")
		case p.Stddev <= 0:
			e = fieldErr(f+"stddev", "lognormal needs a stddev above 0; set stddev like 1ms")
		}
	default:
		return fieldErr(f+"distribution", "%q is not a distribution; use constant, uniform, exponential or lognormal", p.Distribution)
	}
	if e != nil {
		return e
	}
	if (p.Distribution == DistExponential || p.Distribution == DistLognormal) && p.Max != 0 && p.Max < p.Min {
		return &Error{Field: f + "max", alt: []string{f + "min"},
			Msg: fmt.Sprintf("%s is below min %s; set max to min or more, or 0 for no cap", fmtDur(p.Max), fmtDur(p.Min))}
	}
	return nil
}

func (s *Spec) validateKafka() *Error {
	const lockProp = "Kafka's share.record.lock.duration.ms"
	switch {
	case s.LockDuration < minLockDuration:
		return fieldErr("lockDuration", "%s is below the minimum %s (%s floor); use %s or more",
			fmtDur(s.LockDuration), fmtDur(minLockDuration), lockProp, fmtDur(minLockDuration))
	case s.LockDuration > maxLockDuration:
		return fieldErr("lockDuration", "%s is above the maximum %s (%s ceiling); use %s or less",
			fmtDur(s.LockDuration), fmtDur(maxLockDuration), lockProp, fmtDur(maxLockDuration))
	}
	if e := intRange("deliveryLimit", s.DeliveryLimit, minDeliveryLimit, maxDeliveryLimit,
		"Kafka's share.delivery.count.limit bounds"); e != nil {
		return e
	}
	if e := intRange("maxRecordLocks", s.MaxRecordLocks, minRecordLocks, maxRecordLocksCap,
		"Kafka's share.partition.max.record.locks bounds"); e != nil {
		return e
	}
	if e := intRange("replicationFactor", s.ReplicationFactor, 0, maxReplicationFactor,
		"0 takes the cluster's default.replication.factor"); e != nil {
		return e
	}
	if e := intRange("minInsyncReplicas", s.MinInsyncReplicas, 0, maxReplicationFactor,
		"0 takes the cluster's min.insync.replicas"); e != nil {
		return e
	}
	if s.ReplicationFactor > 0 && s.MinInsyncReplicas > s.ReplicationFactor {
		return fieldErr("minInsyncReplicas", "%d is above replicationFactor %d, so no write with acks=all could ever succeed; use %d or less",
			s.MinInsyncReplicas, s.ReplicationFactor, s.ReplicationFactor)
	}
	switch {
	case s.TransactionTimeout < minTxnTimeout:
		return fieldErr("transactionTimeout", "%s is below the minimum %s; use %s or more",
			fmtDur(s.TransactionTimeout), fmtDur(minTxnTimeout), fmtDur(minTxnTimeout))
	case s.TransactionTimeout > maxTxnTimeout:
		return fieldErr("transactionTimeout", "%s is above the maximum %s (Kafka's default transaction.max.timeout.ms); use %s or less",
			fmtDur(s.TransactionTimeout), fmtDur(maxTxnTimeout), fmtDur(maxTxnTimeout))
	}
	return nil
}

func (s *Spec) validateTransaction() *Error {
	t := s.Transaction
	switch {
	case t.MaxRecords < 0:
		return fieldErr("transaction.maxRecords", "%d is negative; use 0 (no record limit) or more", t.MaxRecords)
	case t.MaxRecords > maxTxnRecords:
		return fieldErr("transaction.maxRecords", "%d is above the maximum %d; use %d or less", t.MaxRecords, maxTxnRecords, maxTxnRecords)
	case t.MaxDuration < 0:
		return fieldErr("transaction.maxDuration", "%s is negative; use 0 (no time limit) or more", fmtDur(t.MaxDuration))
	case t.MaxRecords == 0 && t.MaxDuration == 0:
		return &Error{Field: "transaction", alt: []string{"transaction.maxRecords", "transaction.maxDuration"},
			Msg: "maxRecords and maxDuration are both 0, so a worker would never commit; set maxRecords or maxDuration above 0"}
	case t.MaxDuration >= s.TransactionTimeout:
		return &Error{Field: "transaction.maxDuration", alt: []string{"transactionTimeout"},
			Msg: fmt.Sprintf("%s is not below transactionTimeout %s, so transactions would time out before they commit; use a maxDuration below %s",
				fmtDur(t.MaxDuration), fmtDur(s.TransactionTimeout), fmtDur(s.TransactionTimeout))}
	}
	return nil
}

func (s *Spec) validateRatios() *Error {
	for _, r := range []struct {
		field string
		v     float64
		what  string
	}{{"abortRatio", s.AbortRatio, "transactions"}, {"rejectRatio", s.RejectRatio, "records"}} {
		if !(r.v >= 0 && r.v <= 1) {
			return fieldErr(r.field, "%v is outside 0 to 1; use the share of %s, like 0.1", r.v, r.what)
		}
	}
	return nil
}

func (s *Spec) validateAcquireMode() *Error {
	switch s.AcquireMode {
	case "", AcquireBatchOptimized, AcquireRecordLimit:
		return nil
	}
	return fieldErr("share.acquire.mode", "%q is not an acquire mode; use %s (Kafka's default) or %s", s.AcquireMode, AcquireBatchOptimized, AcquireRecordLimit)
}

func (s *Spec) validateCompression() *Error {
	if _, err := vocab.ParseCompression(string(s.Compression)); err != nil {
		return fieldErr("compression.type", "%q is not a codec; use one of %s", s.Compression, strings.Join(vocab.Names(vocab.Compressions()), ", "))
	}
	return nil
}

// dlqNameRE is the characters Kafka allows in a topic name.
var dlqNameRE = regexp.MustCompile(`^[a-zA-Z0-9._-]+$`)

// maxDLQName leaves room, in Kafka's 249 characters, for the run's prefix.
const maxDLQName = 120

func (s *Spec) validateDLQ() *Error {
	const field = "errors.deadletterqueue.topic.name"
	switch {
	case s.DLQTopic == "" && s.DLQCopyRecord:
		return fieldErr("errors.deadletterqueue.copy.record.enable", "is set but %s is not; name the dead-letter topic, like dlq.sharebench, or drop this field", field)
	case s.DLQTopic == "":
		return nil
	case strings.HasPrefix(s.DLQTopic, "__"):
		return fieldErr(field, "%q starts with __, which Kafka keeps for internal topics; use a name like dlq.sharebench", s.DLQTopic)
	case len(s.DLQTopic) > maxDLQName:
		return fieldErr(field, "is %d characters long; use at most %d (the run appends its topic prefix)", len(s.DLQTopic), maxDLQName)
	case !dlqNameRE.MatchString(s.DLQTopic):
		return fieldErr(field, "%q has characters Kafka does not allow in a topic name; use letters, digits, '.', '_' and '-', like dlq.sharebench", s.DLQTopic)
	}
	return nil
}

func (s *Spec) validateAckOnly() *Error {
	if s.CheckpointInterval <= 0 {
		return fieldErr("checkpointInterval", "%s is not above 0; use a duration like 1s", fmtDur(s.CheckpointInterval))
	}
	if e := durMax("checkpointInterval", s.CheckpointInterval, maxCheckpoint, ""); e != nil {
		return e
	}
	if s.AckOnly && s.CheckpointInterval >= s.TransactionTimeout {
		return &Error{Field: "checkpointInterval", alt: []string{"transactionTimeout", "ackOnly"},
			Msg: fmt.Sprintf("%s is not below transactionTimeout %s, so with ackOnly each checkpoint's transaction would time out; use a checkpointInterval below %s",
				fmtDur(s.CheckpointInterval), fmtDur(s.TransactionTimeout), fmtDur(s.TransactionTimeout))}
	}
	c := s.Checkpoint
	if c.Order != CommitAcksFirst && c.Order != CommitSinkFirst {
		return fieldErr("checkpoint.order", "%q is not a commit order; use %s or %s", c.Order, CommitAcksFirst, CommitSinkFirst)
	}
	if c.Staging != StageAtBarrier && c.Staging != StageAtAcquisition {
		return fieldErr("checkpoint.staging", "%q is not a staging point; use %s or %s", c.Staging, StageAtBarrier, StageAtAcquisition)
	}
	if c.MaxRecords < 0 || c.MaxRecords > 10_000_000 {
		return fieldErr("checkpoint.maxRecords", "%d is outside 0 to 10000000; use 0 for no bound", c.MaxRecords)
	}
	if c.Timeout <= 0 {
		return fieldErr("checkpoint.timeout", "%s is not above 0; use a duration like 10s", fmtDur(c.Timeout))
	}
	if e := durMax("checkpoint.timeout", c.Timeout, maxCheckpoint, ""); e != nil {
		return e
	}
	if !s.AckOnly {
		for _, f := range s.Faults {
			if f.Kind == vocab.FaultSlowCheckpoint || f.Kind == vocab.FaultWorkerCrash && vocab.Phase(f.Params["phase"]).Checkpoint() {
				return &Error{Field: "faults", alt: []string{"ackOnly"},
					Msg: fmt.Sprintf("%s is a fault of the checkpoint model; set ackOnly: true, or remove it", f)}
			}
		}
	}
	return nil
}

func (s *Spec) validateModes() *Error {
	if len(s.ModeNames) == 0 {
		return fieldErr("modes", "lists no modes; list some of %s, or write [all]", andList(vocab.ModeNames()))
	}
	for i, m := range s.ModeNames {
		field := fmt.Sprintf("modes[%d]", i)
		switch {
		case m == ModeAll && len(s.ModeNames) > 1:
			return fieldErr(field, "all stands for every mode, so it cannot be listed with others; write [all] alone or list the modes")
		case m != ModeAll && !slices.Contains(vocab.ModeNames(), m):
			return fieldErr(field, "%q is not a mode; use %s, or all", m, orList(vocab.ModeNames()))
		case slices.Index(s.ModeNames, m) < i:
			return fieldErr(field, "%s is listed twice; list each mode once", m)
		}
	}
	return nil
}

func (s *Spec) validateFaults() *Error {
	if len(s.Faults) > maxFaults {
		return fieldErr("faults", "lists %d faults; use at most %d", len(s.Faults), maxFaults)
	}
	for i := range s.Faults {
		if e := s.Faults[i].validate(s, i); e != nil {
			return e
		}
	}
	return nil
}

// intRange checks lo <= v <= hi; why, when given, says where the bounds
// come from.
func intRange(field string, v, lo, hi int, why string) *Error {
	note := ""
	if why != "" {
		note = " (" + why + ")"
	}
	switch {
	case v < lo:
		return fieldErr(field, "%d is below the minimum %d%s; use %d to %d", v, lo, note, lo, hi)
	case v > hi:
		return fieldErr(field, "%d is above the maximum %d%s; use %d to %d", v, hi, note, lo, hi)
	}
	return nil
}

// durMax checks d <= hi.
func durMax(field string, d, hi time.Duration, why string) *Error {
	if d <= hi {
		return nil
	}
	note := ""
	if why != "" {
		note = " (" + why + ")"
	}
	return fieldErr(field, "%s is above the maximum %s%s; use %s or less", fmtDur(d), fmtDur(hi), note, fmtDur(hi))
}

func firstErr(errs ...*Error) *Error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// validateOMB checks the OpenMessaging Benchmark fields that have no
// other sharebench form: keys, payloads, subscriptions, the backlog.
func (s *Spec) validateOMB() *Error {
	switch s.KeyDistributor {
	case "", KeyNone, KeyRoundRobin, KeyRandomNano:
	default:
		return fieldErr("keyDistributor", "%q is not one of OMB's key distributors; use %s, %s or %s", s.KeyDistributor, KeyNone, KeyRoundRobin, KeyRandomNano)
	}
	if s.SubscriptionsPerTopic > 1 {
		return fieldErr("subscriptionsPerTopic", "%d subscriptions cannot be judged: each would be another share group reading every record and writing its own outputs, and the verifier judges one group per mode run, so the other groups' outputs would count as duplicates; set subscriptionsPerTopic: 1 (compare groups by running more modes)", s.SubscriptionsPerTopic)
	}
	if s.SubscriptionsPerTopic < 0 {
		return fieldErr("subscriptionsPerTopic", "%d is below 1; use 1", s.SubscriptionsPerTopic)
	}
	if s.RandomizedPayloads {
		if s.PayloadFile != "" {
			return fieldErr("payloadFile", "is given with useRandomizedPayloads: true; give one of them")
		}
		if !(s.RandomBytesRatio >= 0 && s.RandomBytesRatio <= 1) {
			return fieldErr("randomBytesRatio", "%v is outside 0 to 1; use the share of random bytes in each payload, like 0.5", s.RandomBytesRatio)
		}
		if s.RandomizedPayloadPoolSize < 1 {
			return fieldErr("randomizedPayloadPoolSize", "%d is below 1; use the number of payloads to cycle through, like 1000", s.RandomizedPayloadPoolSize)
		}
		if b := int64(s.RandomizedPayloadPoolSize) * int64(s.MessageSizeBytes); b > maxPayloadPoolBytes {
			return fieldErr("randomizedPayloadPoolSize", "%d payloads of %d bytes are %d MiB, above the %d MiB held in memory; use a smaller pool", s.RandomizedPayloadPoolSize, s.MessageSizeBytes, b>>20, maxPayloadPoolBytes>>20)
		}
	} else if s.RandomBytesRatio != 0 || s.RandomizedPayloadPoolSize != 0 {
		field := "randomBytesRatio"
		if s.RandomBytesRatio == 0 {
			field = "randomizedPayloadPoolSize"
		}
		return fieldErr(field, "has no effect without useRandomizedPayloads: true; set it, or remove %s", field)
	}
	switch {
	case !(s.ConsumerBacklogSizeGB >= 0 && s.ConsumerBacklogSizeGB <= maxBacklogGB):
		return fieldErr("consumerBacklogSizeGB", "%v is outside 0 to %d GiB; use the backlog to build before the consumers start, like 1 (fractions allowed)", s.ConsumerBacklogSizeGB, maxBacklogGB)
	case s.ConsumerBacklogSizeGB > 0 && s.ProducerRate == 0:
		return fieldErr("consumerBacklogSizeGB", "needs producerRate above 0: a closed loop's producers wait for the consumers, so no backlog builds (OMB refuses it too); set a producerRate")
	case !(s.BacklogDrainRatio >= 0 && s.BacklogDrainRatio <= 1):
		return fieldErr("backlogDrainRatio", "%v is outside 0 to 1; use the share of the backlog to drain before the measurement, like 0.99", s.BacklogDrainRatio)
	case s.BacklogDrainRatio != 0 && s.ConsumerBacklogSizeGB == 0:
		return fieldErr("backlogDrainRatio", "has no effect without consumerBacklogSizeGB; set one, or remove backlogDrainRatio")
	}
	return nil
}
