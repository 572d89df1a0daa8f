// This file holds Spec, the workload schema, with its defaults and the
// helpers the load generator reads it through.

package workloads

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/printer"
	"github.com/goccy/go-yaml/token"

	"github.com/sharebench/sharebench/vocab"
)

// ModeAll, in a workload's modes field, stands for every mode
// (vocab.AllModes).
const ModeAll = vocab.AllName

// Rate distributions of the producers' intended send times.
const (
	RateConstant = "constant" // evenly spaced sends
	RatePoisson  = "poisson"  // exponential gaps with the same mean rate
)

// DefaultName is the built-in workload `sharebench run` uses when given none.
const DefaultName = "quick"

// Spec is one workload: what to produce, how workers consume and acknowledge,
// for how long, in which modes and under which faults. Field names in YAML
// and JSON follow the OpenMessaging Benchmark where one exists; SCHEMA.md
// documents each field's default and range.
//
// Durations are time.Duration, written in YAML as Go duration strings like
// "500ms" or "2s"; in JSON they are integers of nanoseconds, as encoding/json
// writes a time.Duration. Parse and Load return a Spec with every default filled and
// validated; a Spec built in Go should start from New or go through Defaults,
// then Validate.
type Spec struct {
	// Name identifies the workload in results and on the command line.
	Name string `yaml:"name" json:"name"`
	// Description says what the workload is for.
	Description string `yaml:"description" json:"description"`

	// Topics is the number of input topics, each of PartitionsPerTopic
	// partitions written by ProducersPerTopic producers; the workers'
	// group reads them all and writes one output topic.
	Topics int `yaml:"topics" json:"topics"`
	// PartitionsPerTopic is the number of partitions of each input topic.
	PartitionsPerTopic int `yaml:"partitionsPerTopic" json:"partitionsPerTopic"`
	// OutputPartitionsPerTopic is the number of output partitions; 0 means
	// the same as PartitionsPerTopic (Parse and Defaults fill it in).
	OutputPartitionsPerTopic int `yaml:"outputPartitionsPerTopic" json:"outputPartitionsPerTopic"`
	// MessageSizeBytes is the size of each input record's value, including
	// its 32-byte header (record id and intended send time).
	MessageSizeBytes int `yaml:"messageSize" json:"messageSize"`
	// ProducersPerTopic is the number of producers writing the input topic.
	ProducersPerTopic int `yaml:"producersPerTopic" json:"producersPerTopic"`
	// ProducerRate is the total rate over all producers in records per
	// second; 0 runs a closed loop at maximum throughput.
	ProducerRate int `yaml:"producerRate" json:"producerRate"`
	// RateDistribution spaces the intended send times: RateConstant or
	// RatePoisson.
	RateDistribution string `yaml:"rateDistribution" json:"rateDistribution"`

	// KeyDistributor is OMB's keyDistributor: KeyNone ("" is the same)
	// sends records without a key, spread over the partitions round robin;
	// KeyRoundRobin and KeyRandomNano give each record one of a pool of
	// keys (in turn, or at random from the run's seed), and the record goes
	// to the partition Kafka's default partitioner picks for its key.
	KeyDistributor string `yaml:"keyDistributor,omitempty" json:"keyDistributor,omitempty"`
	// PayloadFile is OMB's payloadFile: every input record's value is the
	// file's content, its first HeaderBytes overwritten by the record's
	// header; the file's size is the message size. Parse resolves a
	// relative path (see SCHEMA.md) and stores the path it found.
	PayloadFile string `yaml:"payloadFile,omitempty" json:"payloadFile,omitempty"`
	// RandomizedPayloads is OMB's useRandomizedPayloads: the values come
	// from a pool of RandomizedPayloadPoolSize payloads, each
	// RandomBytesRatio random bytes (from the run's seed) then zeros, so a
	// compressing producer sees the ratio OMB gives it.
	RandomizedPayloads        bool    `yaml:"useRandomizedPayloads,omitempty" json:"useRandomizedPayloads,omitempty"`
	RandomBytesRatio          float64 `yaml:"randomBytesRatio,omitempty" json:"randomBytesRatio,omitempty"`
	RandomizedPayloadPoolSize int     `yaml:"randomizedPayloadPoolSize,omitempty" json:"randomizedPayloadPoolSize,omitempty"`
	// SubscriptionsPerTopic is OMB's subscriptionsPerTopic; only 1 (0 is
	// the same) can be judged: each mode runs one group.
	SubscriptionsPerTopic int `yaml:"subscriptionsPerTopic,omitempty" json:"subscriptionsPerTopic,omitempty"`
	// ConsumerBacklogSizeGB is OMB's consumerBacklogSizeGB (GiB, fractions
	// allowed): the workers start only once the producers have built a
	// backlog of this size, and the measurement window opens once they
	// have drained it to BacklogDrainRatio. 0: no backlog.
	ConsumerBacklogSizeGB float64 `yaml:"consumerBacklogSizeGB,omitempty" json:"consumerBacklogSizeGB,omitempty"`
	// BacklogDrainRatio is OMB's backlogDrainRatio: the share of the
	// backlog that must be drained before the window opens (OMB's default
	// 1 when 0).
	BacklogDrainRatio float64 `yaml:"backlogDrainRatio,omitempty" json:"backlogDrainRatio,omitempty"`

	// TestMinutes is the measured test length in minutes, the OMB way of
	// writing it; Parse and Defaults fold it into TestLength. Set it or
	// TestLength, not both. Read the length with TestDuration.
	TestMinutes float64 `yaml:"testDurationMinutes,omitempty" json:"testDurationMinutes,omitempty"`
	// TestLength is the measured test length of each mode (YAML testDuration).
	TestLength time.Duration `yaml:"testDuration" json:"testDuration"`
	// WarmupMinutes is the warm-up in minutes, folded into WarmupLength like
	// TestMinutes. Read the warm-up with Warmup.
	WarmupMinutes float64 `yaml:"warmupDurationMinutes,omitempty" json:"warmupDurationMinutes,omitempty"`
	// WarmupLength is the warm-up before each mode's test, excluded from the
	// results (YAML warmupDuration); 0 means none.
	WarmupLength time.Duration `yaml:"warmupDuration" json:"warmupDuration"`
	// DrainTimeout bounds the wait, after producers stop, for every input
	// record to reach a terminal state.
	DrainTimeout time.Duration `yaml:"drainTimeout" json:"drainTimeout"`

	// Consumers is the number of workers per mode.
	Consumers int `yaml:"consumers" json:"consumers"`
	// MaxPollRecords caps the records one poll returns.
	MaxPollRecords int `yaml:"maxPollRecords" json:"maxPollRecords"`
	// ProcessingTime is how long a worker works on each record.
	ProcessingTime ProcessingTime `yaml:"processingTime" json:"processingTime"`

	// LockDuration is the acquisition lock (share.record.lock.duration.ms).
	LockDuration time.Duration `yaml:"lockDuration" json:"lockDuration"`
	// DeliveryLimit is share.delivery.count.limit.
	DeliveryLimit int `yaml:"deliveryLimit" json:"deliveryLimit"`
	// MaxRecordLocks is share.partition.max.record.locks, the in-flight
	// window of each share partition.
	MaxRecordLocks int `yaml:"maxRecordLocks" json:"maxRecordLocks"`
	// AcquireMode is share.acquire.mode (KIP-1206): AcquireBatchOptimized
	// or AcquireRecordLimit; "" leaves each target's default.
	AcquireMode string `yaml:"share.acquire.mode,omitempty" json:"share.acquire.mode,omitempty"`
	// Compression is compression.type, the codec of every producer's
	// record batches: the input producers' and the workers' output
	// producers' ("": none). The engine target stores records, not
	// batches, and notes that it ran uncompressed.
	Compression vocab.Compression `yaml:"compression.type,omitempty" json:"compression.type,omitempty"`
	// DLQTopic is the share group's errors.deadletterqueue.topic.name
	// (KIP-1191): records archived by a reject or at the delivery limit
	// are copied to a dead-letter topic, which the verifier reads back.
	// Each mode run gets its own topic, this name followed by "." and the
	// run's topic prefix, so the name's own prefix (Kafka requires "dlq."
	// by default) is kept. "": no dead-letter queue.
	DLQTopic string `yaml:"errors.deadletterqueue.topic.name,omitempty" json:"errors.deadletterqueue.topic.name,omitempty"`
	// DLQCopyRecord is errors.deadletterqueue.copy.record.enable: the
	// dead-letter record carries the source record's key and value.
	DLQCopyRecord bool `yaml:"errors.deadletterqueue.copy.record.enable,omitempty" json:"errors.deadletterqueue.copy.record.enable,omitempty"`
	// TransactionTimeout is transaction.timeout.ms of the workers' producers.
	TransactionTimeout time.Duration `yaml:"transactionTimeout" json:"transactionTimeout"`
	// ReplicationFactor is the replication factor of the input and output
	// topics (Kafka's replication.factor); 0 takes the cluster's
	// default.replication.factor.
	ReplicationFactor int `yaml:"replicationFactor,omitempty" json:"replicationFactor,omitempty"`
	// MinInsyncReplicas is the min.insync.replicas config of the input and
	// output topics; 0 takes the cluster's default.
	MinInsyncReplicas int `yaml:"minInsyncReplicas,omitempty" json:"minInsyncReplicas,omitempty"`
	// Transaction says when a worker commits its open transaction.
	Transaction Transaction `yaml:"transaction" json:"transaction"`

	// AbortRatio is the share of transactions a worker aborts on purpose.
	AbortRatio float64 `yaml:"abortRatio" json:"abortRatio"`
	// RejectRatio is the share of records a worker rejects on purpose.
	RejectRatio float64 `yaml:"rejectRatio" json:"rejectRatio"`

	// AckOnly selects the checkpoint model, the consume-only path of
	// stream-processing frameworks like Flink: workers write their outputs
	// to an external two-phase sink, not to the output topic, and commit
	// the sink and the share acknowledgements together at each
	// checkpoint (Checkpoint says how).
	AckOnly bool `yaml:"ackOnly" json:"ackOnly"`
	// CheckpointInterval is the time between checkpoint barriers when
	// AckOnly.
	CheckpointInterval time.Duration `yaml:"checkpointInterval" json:"checkpointInterval"`
	// Checkpoint tunes the checkpoint model (AckOnly).
	Checkpoint Checkpoint `yaml:"checkpoint" json:"checkpoint"`

	// ModeNames lists the modes to run as written, possibly ModeAll. Read
	// the expanded list with Modes.
	ModeNames []string `yaml:"modes" json:"modes"`
	// Faults are injected on each mode's timeline.
	Faults []Fault `yaml:"faults,omitempty" json:"faults,omitempty"`
}

// Key distributors (OMB's keyDistributor), as OMB spells them.
const (
	KeyNone       = "NO_KEY"
	KeyRoundRobin = "KEY_ROUND_ROBIN"
	KeyRandomNano = "RANDOM_NANO"
)

// BacklogRecords is the number of input records that make up the
// workload's consumer backlog (ConsumerBacklogSizeGB over MessageSizeBytes),
// 0 when it has none.
func (s *Spec) BacklogRecords() int64 {
	if s.ConsumerBacklogSizeGB <= 0 || s.MessageSizeBytes <= 0 {
		return 0
	}
	return int64(math.Ceil(s.ConsumerBacklogSizeGB * (1 << 30) / float64(s.MessageSizeBytes)))
}

// DrainRatio is BacklogDrainRatio with OMB's default of 1 for 0.
func (s *Spec) DrainRatio() float64 {
	if s.BacklogDrainRatio == 0 {
		return 1
	}
	return s.BacklogDrainRatio
}

// Acquire modes (share.acquire.mode), as Kafka spells them.
const (
	AcquireBatchOptimized = "batch_optimized"
	AcquireRecordLimit    = "record_limit"
)

// Transaction says when a worker commits: when its open transaction holds
// MaxRecords records or has been open for MaxDuration, whichever comes
// first. Zero disables that trigger; at least one must be above zero.
type Transaction struct {
	MaxRecords  int           `yaml:"maxRecords" json:"maxRecords"`
	MaxDuration time.Duration `yaml:"maxDuration" json:"maxDuration"`
}

// Checkpoint tunes the checkpoint model: in which order a completed
// checkpoint commits the sink and the acknowledgements, when the acks are
// staged, whether held records are renewed, and the bounds of one
// checkpoint.
type Checkpoint struct {
	// Order is CommitAcksFirst or CommitSinkFirst.
	Order string `yaml:"order" json:"order"`
	// Staging is StageAtBarrier or StageAtAcquisition (transactional mode).
	Staging string `yaml:"staging" json:"staging"`
	// Renew renews the locks of records held for the barrier before they
	// expire. New (so Parse) sets it; Defaults cannot tell false from
	// unset and leaves it.
	Renew bool `yaml:"renew" json:"renew"`
	// MaxRecords ends a checkpoint early once it holds that many records
	// (0: no bound), which keeps its dwell below the lock.
	MaxRecords int `yaml:"maxRecords" json:"maxRecords"`
	// Timeout fails a checkpoint whose snapshot is not complete that long
	// after its barrier (Flink's checkpoint timeout).
	Timeout time.Duration `yaml:"timeout" json:"timeout"`
}

// Values of Checkpoint.Order and Checkpoint.Staging.
const (
	CommitAcksFirst    = "acks-first"
	CommitSinkFirst    = "sink-first"
	StageAtBarrier     = "barrier"
	StageAtAcquisition = "acquisition"
)

// Defaults, in the order of the fields of Spec.
const (
	defaultTopics             = 1
	defaultPartitions         = 4
	defaultMessageSizeBytes   = 256
	defaultProducers          = 2
	defaultProducerRate       = 2000
	defaultTestLength         = 10 * time.Second
	defaultWarmupLength       = 1 * time.Second
	defaultDrainTimeout       = 30 * time.Second
	defaultConsumers          = 4
	defaultMaxPollRecords     = 500
	defaultLockDuration       = 30 * time.Second
	defaultDeliveryLimit      = 5
	defaultMaxRecordLocks     = 2000
	defaultTransactionTimeout = 60 * time.Second
	defaultTxnMaxRecords      = 500
	defaultTxnMaxDuration     = 100 * time.Millisecond
	defaultCheckpointInterval = 1 * time.Second
	defaultCheckpointTimeout  = 10 * time.Second
)

// New returns a Spec named name that holds every default. It is the start
// for a Spec built in Go, and what Parse decodes a file over: a field the
// file leaves out keeps the value New gives it. OutputPartitionsPerTopic is
// 0 (same as the input) until Defaults or Parse fills it in.
func New(name string) *Spec {
	return &Spec{
		Name:               name,
		Topics:             defaultTopics,
		PartitionsPerTopic: defaultPartitions,
		MessageSizeBytes:   defaultMessageSizeBytes,
		ProducersPerTopic:  defaultProducers,
		ProducerRate:       defaultProducerRate,
		RateDistribution:   RateConstant,
		TestLength:         defaultTestLength,
		WarmupLength:       defaultWarmupLength,
		DrainTimeout:       defaultDrainTimeout,
		Consumers:          defaultConsumers,
		MaxPollRecords:     defaultMaxPollRecords,
		ProcessingTime:     ProcessingTime{Distribution: DistConstant},
		LockDuration:       defaultLockDuration,
		DeliveryLimit:      defaultDeliveryLimit,
		MaxRecordLocks:     defaultMaxRecordLocks,
		TransactionTimeout: defaultTransactionTimeout,
		Transaction:        Transaction{MaxRecords: defaultTxnMaxRecords, MaxDuration: defaultTxnMaxDuration},
		CheckpointInterval: defaultCheckpointInterval,
		Checkpoint:         Checkpoint{Order: CommitAcksFirst, Staging: StageAtBarrier, Renew: true, Timeout: defaultCheckpointTimeout},
		ModeNames:          []string{ModeAll},
	}
}

// Defaults fills in every field left at a zero value that is not a valid
// setting, and resolves the derived ones: OutputPartitionsPerTopic 0 becomes
// PartitionsPerTopic, TestMinutes and WarmupMinutes fold into TestLength and
// WarmupLength, and a fault's omitted worker or partition becomes "random".
//
// Fields whose zero value is a valid setting keep it, because Defaults
// cannot tell "unset" from "zero": ProducerRate 0 is a closed loop,
// WarmupLength 0 is no warm-up, AbortRatio and RejectRatio 0 are none, and a
// Transaction with one trigger at 0 has that trigger off (with both at 0 it
// gets both defaults). Parse does not have this problem: it starts from New.
func (s *Spec) Defaults() {
	if s == nil {
		return
	}
	fill := func(p *int, v int) {
		if *p == 0 {
			*p = v
		}
	}
	fillDur := func(p *time.Duration, v time.Duration) {
		if *p == 0 {
			*p = v
		}
	}
	fill(&s.Topics, defaultTopics)
	fill(&s.PartitionsPerTopic, defaultPartitions)
	fill(&s.MessageSizeBytes, defaultMessageSizeBytes)
	fill(&s.ProducersPerTopic, defaultProducers)
	if s.RateDistribution == "" {
		s.RateDistribution = RateConstant
	}
	if s.TestMinutes == 0 {
		fillDur(&s.TestLength, defaultTestLength)
	}
	fillDur(&s.DrainTimeout, defaultDrainTimeout)
	fill(&s.Consumers, defaultConsumers)
	fill(&s.MaxPollRecords, defaultMaxPollRecords)
	if s.ProcessingTime.Distribution == "" {
		s.ProcessingTime.Distribution = DistConstant
	}
	fillDur(&s.LockDuration, defaultLockDuration)
	fill(&s.DeliveryLimit, defaultDeliveryLimit)
	fill(&s.MaxRecordLocks, defaultMaxRecordLocks)
	fillDur(&s.TransactionTimeout, defaultTransactionTimeout)
	if s.Transaction.MaxRecords == 0 && s.Transaction.MaxDuration == 0 {
		s.Transaction = Transaction{MaxRecords: defaultTxnMaxRecords, MaxDuration: defaultTxnMaxDuration}
	}
	fillDur(&s.CheckpointInterval, defaultCheckpointInterval)
	if s.Checkpoint.Order == "" {
		s.Checkpoint.Order = CommitAcksFirst
	}
	if s.Checkpoint.Staging == "" {
		s.Checkpoint.Staging = StageAtBarrier
	}
	fillDur(&s.Checkpoint.Timeout, defaultCheckpointTimeout)
	if len(s.ModeNames) == 0 {
		s.ModeNames = []string{ModeAll}
	}
	s.resolve()
}

// resolve fills the derived fields; Parse and Defaults both call it.
func (s *Spec) resolve() {
	if s.OutputPartitionsPerTopic == 0 {
		s.OutputPartitionsPerTopic = s.PartitionsPerTopic
	}
	// Fold minutes into the duration only when in range, so Validate can
	// still name the minutes field when they are not.
	if s.TestMinutes > 0 && s.TestMinutes <= maxTestLength.Minutes() && s.TestLength == 0 {
		s.TestLength = minutes(s.TestMinutes)
		s.TestMinutes = 0
	}
	if s.WarmupMinutes > 0 && s.WarmupMinutes <= maxWarmupLength.Minutes() && s.WarmupLength == 0 {
		s.WarmupLength = minutes(s.WarmupMinutes)
		s.WarmupMinutes = 0
	}
	for i := range s.Faults {
		s.Faults[i].resolve()
	}
}

// minutes converts a count of minutes to a duration, rounded to the
// nanosecond.
func minutes(m float64) time.Duration {
	return time.Duration(math.Round(m * float64(time.Minute)))
}

// TestDuration returns the measured test length of each mode, from
// testDuration or testDurationMinutes.
func (s *Spec) TestDuration() time.Duration {
	if s.TestLength == 0 && s.TestMinutes > 0 {
		return minutes(s.TestMinutes)
	}
	return s.TestLength
}

// Warmup returns the warm-up before each mode's test, from warmupDuration or
// warmupDurationMinutes.
func (s *Spec) Warmup() time.Duration {
	if s.WarmupLength == 0 && s.WarmupMinutes > 0 {
		return minutes(s.WarmupMinutes)
	}
	return s.WarmupLength
}

// Modes returns the modes to run in report order (implicit, explicit,
// deferred, transactional, classic-eos), with "all" expanded, duplicates
// and unknown names dropped, and every mode when none is listed.
func (s *Spec) Modes() []vocab.Mode {
	if len(s.ModeNames) == 0 || slices.Contains(s.ModeNames, ModeAll) {
		return vocab.AllModes()
	}
	var out []vocab.Mode
	for _, m := range vocab.AllModes() {
		if slices.Contains(s.ModeNames, string(m)) {
			out = append(out, m)
		}
	}
	return out
}

// Clone returns a deep copy of s.
func (s *Spec) Clone() *Spec {
	if s == nil {
		return nil
	}
	c := *s
	c.ModeNames = slices.Clone(s.ModeNames)
	if s.Faults != nil {
		c.Faults = make([]Fault, len(s.Faults))
		for i, f := range s.Faults {
			f.Params = maps.Clone(f.Params)
			c.Faults[i] = f
		}
	}
	return &c
}

// YAML encodes s in the schema Parse reads, every field written out.
// Parsing the result gives back an equal Spec once s has been through
// Defaults (or came from Parse).
func (s *Spec) YAML() ([]byte, error) {
	n, err := yaml.ValueToNode(s, yaml.Indent(2), yaml.IndentSequence(true), yaml.AutoInt())
	if err != nil {
		return nil, fmt.Errorf("workloads: encode %q as YAML: %w", s.Name, err)
	}
	ast.Walk(stringStyler{}, n)
	var p printer.Printer
	return p.PrintNode(n), nil
}

// stringStyler sets the style of each string of an encoded Spec (see
// stringStyle). go-yaml's encoder stores a string it quotes as Go's
// strconv.Quote of it, and quotes every string that starts with '"', so a
// value starting with '"' is a quoted one.
type stringStyler struct{}

func (v stringStyler) Visit(n ast.Node) ast.Visitor {
	s, ok := n.(*ast.StringNode)
	if !ok {
		return v
	}
	if strings.HasPrefix(s.Value, `"`) {
		if raw, err := strconv.Unquote(s.Value); err == nil {
			s.Value = raw
		}
	}
	s.Token.Type = stringStyle(s.Value)
	return v
}

// stringStyle is how a string value is written: double-quoted when it is
// empty, would read back as another type (a number, a bool, null: the quotes
// show it is text) or holds a line break or a character that is not
// printable (escaped); plain when go-yaml needs no quotes for it and
// parseYAML reads the text back as the same string; single-quoted
// otherwise.
func stringStyle(v string) token.Type {
	if v == "" || strings.ContainsFunc(v, func(r rune) bool { return !strconv.IsPrint(r) }) {
		return token.DoubleQuoteType
	}
	docs, se := parseYAML([]byte(v))
	if se == nil && len(docs) == 1 && docs[0].root != nil && docs[0].root.kind == scalarNode {
		switch root := docs[0].root; {
		case root.tag != tagStr:
			return token.DoubleQuoteType
		case root.value == v && !token.IsNeedQuoted(v):
			return token.StringType
		}
	}
	return token.SingleQuoteType
}
