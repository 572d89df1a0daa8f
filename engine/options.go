// This file holds the engine's options (functional options over one
// defaultConfig, validated by New) and the per-group configuration.

package engine

import (
	"crypto/rand"
	"fmt"
	"io"
	"runtime"
	"time"

	"github.com/sharebench/sharebench/engine/internal/sharepart"
)

// AcquireMode is share.acquire.mode (KIP-1206): how a poll bounds what it
// acquires. In Kafka it is the consumer's setting; the engine takes it per
// group, since a benchmark's members all use one.
type AcquireMode uint8

// Acquire modes.
const (
	// AcquireRecordLimit acquires exactly: at most the poll's max records,
	// never past the in-flight window. The zero value (see GroupConfig).
	AcquireRecordLimit AcquireMode = iota
	// AcquireBatchOptimized is Kafka's default: the window is checked
	// before the fetch, which then acquires whole produced batches and can
	// overshoot the window and the poll's max by up to one fetch.
	AcquireBatchOptimized
)

// String is the mode's share.acquire.mode value (record_limit,
// batch_optimized).
func (m AcquireMode) String() string { return sharepart.AcquireMode(m).String() }

// AutoOffsetReset is share.auto.offset.reset.
type AutoOffsetReset int8

// Reset policies.
const (
	ResetLatest AutoOffsetReset = iota
	ResetEarliest
)

// IsolationLevel is share.isolation.level / a fetch's isolation level.
type IsolationLevel int8

// Isolation levels.
const (
	ReadUncommitted IsolationLevel = iota
	ReadCommitted
)

// AckMode is share.acknowledgement.mode, chosen per member.
type AckMode int8

// Acknowledgement modes.
const (
	// AckImplicit: the next poll accepts every record of the previous poll
	// that was not acknowledged.
	AckImplicit AckMode = iota
	// AckExplicit: the application acknowledges each record.
	AckExplicit
	// AckTransactional: acknowledgements go through a producer transaction
	// (KIP-1289); polls never acknowledge.
	AckTransactional
)

// GroupConfig is a share group's configuration, with Kafka's names
// (docs/design.md §3.7). DefaultGroupConfig returns Kafka's defaults, the
// "Kafka's default" each field names; start from it to configure a group
// that behaves like a broker's.
//
// The zero value is not DefaultGroupConfig: the three numeric fields must
// be set (zero is refused with ErrInvalidConfig), and AcquireMode left zero
// is record_limit, not Kafka's batch_optimized. The zero AcquireMode is the
// exact mode on purpose: a configuration written out field by field (a
// test, the simulator, a user's unit test) acquires exactly what it asks
// for, which CheckInvariants can bound; batch_optimized is asked for by
// name or by DefaultGroupConfig. The other fields' zero values are Kafka's
// defaults.
type GroupConfig struct {
	LockDuration    time.Duration   // share.record.lock.duration.ms; Kafka's default 30s
	DeliveryLimit   int             // share.delivery.count.limit; Kafka's default 5
	MaxRecordLocks  int             // share.partition.max.record.locks; Kafka's default 2000
	AutoOffsetReset AutoOffsetReset // share.auto.offset.reset; zero: latest, Kafka's default
	Isolation       IsolationLevel  // share.isolation.level; zero: read_uncommitted, Kafka's default
	// AcquireMode is share.acquire.mode (KIP-1206). Zero: record_limit;
	// Kafka's default, and DefaultGroupConfig's, is batch_optimized.
	AcquireMode AcquireMode
	// DLQTopic is errors.deadletterqueue.topic.name (KIP-1191): every
	// record archived by a reject or at the delivery limit is copied to
	// that topic once, with its provenance in headers. "" (the default):
	// no dead-letter queue. The topic must exist when a copy is written;
	// copies to a missing topic are counted in Stats.DLQDropped.
	DLQTopic string
	// DLQCopyRecord is errors.deadletterqueue.copy.record.enable: the copy
	// carries the record's key and value. Default false (headers only).
	DLQCopyRecord bool
}

// DefaultGroupConfig returns Kafka's defaults: 30s locks, a delivery limit
// of 5, 2000 record locks, latest, read_uncommitted, batch_optimized and no
// dead-letter queue. It is the engine's group defaults unless
// WithGroupDefaults says otherwise.
func DefaultGroupConfig() GroupConfig {
	return GroupConfig{
		LockDuration:   30 * time.Second,
		DeliveryLimit:  5,
		MaxRecordLocks: 2000,
		AcquireMode:    AcquireBatchOptimized,
	}
}

func (g GroupConfig) validate() error {
	switch {
	case g.LockDuration <= 0:
		return fmt.Errorf("%w: share.record.lock.duration.ms %v must be positive", ErrInvalidConfig, g.LockDuration)
	case g.DeliveryLimit < 1:
		return fmt.Errorf("%w: share.delivery.count.limit %d must be at least 1", ErrInvalidConfig, g.DeliveryLimit)
	case g.MaxRecordLocks < 1:
		return fmt.Errorf("%w: share.partition.max.record.locks %d must be at least 1", ErrInvalidConfig, g.MaxRecordLocks)
	case g.AcquireMode > AcquireBatchOptimized:
		return fmt.Errorf("%w: share.acquire.mode %d (valid: record_limit, batch_optimized)", ErrInvalidConfig, g.AcquireMode)
	}
	return nil
}

type config struct {
	shards             int
	clock              Clock
	manual             bool
	knobs              Knobs
	group              GroupConfig
	retentionBytes     int64
	history            bool
	hook               Hook
	timerInterval      time.Duration
	abortSweepInterval time.Duration
	txnTimeout         time.Duration
	txnMaxTimeout      time.Duration
	sessionTimeout     time.Duration
	dataDir            string
	flush              FlushPolicy
	snapshotEvery      int
	segmentBytes       int64
	markers            MarkerDelivery
	topicIDs           io.Reader
}

// MarkerDelivery says when a decided transaction's markers reach its
// participants (docs/design.md §3.5).
type MarkerDelivery int8

// Marker deliveries.
const (
	// MarkersAsync: Commit and Abort return once PREPARE_* is durable, as
	// Kafka's EndTxn does; the markers follow through the coordinator's
	// marker channels, sent by a goroutine with real timers, or by
	// FireTimers and DeliverMarkers with a manual clock (so a
	// single-goroutine driver interleaves them with everything else). The
	// producer's next call sends those still pending itself, and waits
	// only for a participant that cannot be reached.
	MarkersAsync MarkerDelivery = iota
	// MarkersInline: Commit and Abort send the markers and log COMPLETE_*
	// before they return (a participant cut off by PartitionMarkers still
	// waits): a test on a manual clock sees a committed transaction's
	// effects as soon as Commit returns.
	MarkersInline
)

// defaultShards picks the shard count from GOMAXPROCS: partitions, share
// partitions and transactional ids hash onto shards, and with four shards
// per running goroutine the chance that two concurrent calls meet on one
// mutex stays small, while an idle shard costs only a mutex and a few maps.
// Rounded up to a power of two so the hash spreads evenly.
func defaultShards() int {
	n := 4 * runtime.GOMAXPROCS(0)
	p := 1
	for p < n {
		p <<= 1
	}
	return p
}

func defaultConfig() config {
	return config{
		shards:             defaultShards(),
		group:              DefaultGroupConfig(),
		retentionBytes:     256 << 20,
		timerInterval:      10 * time.Millisecond,
		abortSweepInterval: 10 * time.Second,
		txnTimeout:         60 * time.Second,
		txnMaxTimeout:      15 * time.Minute,
		sessionTimeout:     45 * time.Second,
		snapshotEvery:      500,
		segmentBytes:       64 << 20,
		topicIDs:           rand.Reader,
	}
}

func (c *config) validate() error {
	switch {
	case c.topicIDs == nil:
		return fmt.Errorf("%w: no topic id source (WithTopicIDSource(nil)); pass a reader such as crypto/rand.Reader", ErrInvalidConfig)
	case c.shards < 1 || c.shards > 1<<16:
		return fmt.Errorf("%w: shard count %d out of range [1, 65536]", ErrInvalidConfig, c.shards)
	case c.retentionBytes < 0:
		return fmt.Errorf("%w: retention %d bytes is negative", ErrInvalidConfig, c.retentionBytes)
	case c.timerInterval <= 0 || c.abortSweepInterval <= 0:
		return fmt.Errorf("%w: timer intervals must be positive", ErrInvalidConfig)
	case c.txnTimeout <= 0 || c.txnTimeout > c.txnMaxTimeout:
		return fmt.Errorf("%w: transaction.timeout.ms %v must be in (0, %v]", ErrInvalidConfig, c.txnTimeout, c.txnMaxTimeout)
	case c.sessionTimeout <= 0:
		return fmt.Errorf("%w: session timeout must be positive", ErrInvalidConfig)
	case c.snapshotEvery < 1:
		return fmt.Errorf("%w: share-state snapshot interval %d deltas must be at least 1", ErrInvalidConfig, c.snapshotEvery)
	case c.markers != MarkersAsync && c.markers != MarkersInline:
		return fmt.Errorf("%w: marker delivery %d", ErrInvalidConfig, c.markers)
	case c.segmentBytes < 4<<10:
		return fmt.Errorf("%w: segment size %d bytes is below 4 KiB", ErrInvalidConfig, c.segmentBytes)
	}
	return c.group.validate()
}

// Option configures an Engine.
type Option func(*config)

// WithShards sets the number of lock shards. Default: 4×GOMAXPROCS rounded
// up to a power of two. One shard makes the engine a single-lock engine (the
// differential tests compare the two).
func WithShards(n int) Option { return func(c *config) { c.shards = n } }

// WithClock sets the clock. A manual clock (Clock.Manual true, as a
// *ManualClock) also turns off the timer goroutine: call FireTimers to
// expire locks and time out transactions. Default: the real monotonic clock.
func WithClock(clk Clock) Option {
	return func(c *config) {
		c.clock = clk
		c.manual = clk.Manual()
	}
}

// WithKnobs sets the KIP-1289 decision knobs. Default: all safe.
func WithKnobs(k Knobs) Option { return func(c *config) { c.knobs = k } }

// WithGroupDefaults sets the configuration new share groups start with.
// Default: DefaultGroupConfig (Kafka's defaults).
func WithGroupDefaults(g GroupConfig) Option { return func(c *config) { c.group = g } }

// WithRetentionBytes bounds each partition log's retained record bytes;
// older segments are dropped and the log start offset moves (share groups
// archive what they had not delivered). 0 keeps everything. Default 256 MiB.
func WithRetentionBytes(n int64) Option { return func(c *config) { c.retentionBytes = n } }

// WithHistory keeps the final state of every record that leaves a share
// partition's in-flight window (2 bytes per record), so ShareRecord can
// answer below SPSO (ACKNOWLEDGED or ARCHIVED, with the reason and the
// delivery count); without it a record there reads as terminal with Known
// false. Default: off.
func WithHistory(on bool) Option { return func(c *config) { c.history = on } }

// WithHook installs the hook seam (see Hook). Default: none.
func WithHook(h Hook) Option { return func(c *config) { c.hook = h } }

// WithTimerInterval sets how often the timer goroutine fires due timers.
// Default 10ms.
func WithTimerInterval(d time.Duration) Option { return func(c *config) { c.timerInterval = d } }

// WithAbortSweepInterval sets how often timed-out transactions are aborted
// (transaction.abort.timed.out.transaction.cleanup.interval.ms). Default 10s.
func WithAbortSweepInterval(d time.Duration) Option {
	return func(c *config) { c.abortSweepInterval = d }
}

// WithTransactionTimeout sets the default transaction.timeout.ms of new
// transactional producers. Default 60s.
func WithTransactionTimeout(d time.Duration) Option { return func(c *config) { c.txnTimeout = d } }

// WithDataDir makes the engine durable: every state change Kafka makes
// durable (partition records and markers, share-state snapshots and
// deltas, transaction coordinator transitions, group configurations and
// offsets) is appended to checksummed logs in dir before the call that
// made it returns (see WithFlushPolicy), and New recovers whatever dir
// holds (Recovery reports it). An empty or missing dir is initialised; a
// directory sharebench did not create, or a newer format, is refused.
// Default: none, the engine runs in memory.
func WithDataDir(dir string) Option { return func(c *config) { c.dataDir = dir } }

// WithFlushPolicy sets when the data directory's logs are fsynced:
// FlushAlways (before a call returns, group-committed across concurrent
// callers), FlushInterval(d), or FlushNever. Default: FlushAlways.
func WithFlushPolicy(p FlushPolicy) Option { return func(c *config) { c.flush = p } }

// WithShareSnapshotEvery sets after how many deltas a share partition
// writes a full snapshot of its state to the share-state log. Default
// 500, as Kafka's share coordinator (share.coordinator.snapshot.update.records.per.snapshot).
func WithShareSnapshotEvery(n int) Option { return func(c *config) { c.snapshotEvery = n } }

// WithSegmentBytes sets the size at which the data directory's logs start
// a new segment file; older segments are deleted once retention or a
// snapshot covers them. Default 64 MiB.
func WithSegmentBytes(n int64) Option { return func(c *config) { c.segmentBytes = n } }

// WithMarkerDelivery sets when markers reach the participants. Default
// MarkersAsync.
func WithMarkerDelivery(d MarkerDelivery) Option { return func(c *config) { c.markers = d } }

// WithSessionTimeout sets how long a share or classic group member may stay
// silent before it is removed and its acquired records released
// (group.share.session.timeout.ms). Default 45s.
func WithSessionTimeout(d time.Duration) Option { return func(c *config) { c.sessionTimeout = d } }

// WithTopicIDSource sets where topic ids come from: each new topic reads 16
// bytes from r (under the engine's topic lock, so r need not be safe for
// concurrent use). Default crypto/rand.Reader; tests and the simulator pass
// a seeded stream so the ids of a run repeat with its seed.
func WithTopicIDSource(r io.Reader) Option { return func(c *config) { c.topicIDs = r } }
