// This file holds Target: New (connect or start an embedded kfake cluster),
// Info, Supports and Close, and the bookkeeping of the clients it hands out.

package kafkatarget

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/sharebench/sharebench/internal/txnshareack"
	"github.com/sharebench/sharebench/loadgen/targets"
	"github.com/sharebench/sharebench/vocab"
)

// Target is a Kafka cluster reached through franz-go, or an embedded kfake
// cluster. It implements targets.Target. Its methods are safe for concurrent
// use.
type Target struct {
	conn    conn
	logger  func(string)
	keep    bool           // Options.Keep
	input   []kgo.Opt      // Options.Input, as kgo options
	fetch   int32          // Options.FetchMaxPartitionBytes
	cluster *kfake.Cluster // nil unless embedded
	admin   *kgo.Client
	adm     *kadm.Client

	// versions is one broker's ApiVersions response, nil if it could not
	// be learned.
	versions *kmsg.ApiVersionsResponse

	// faults keeps which nodes are under a broker fault; clients started
	// meanwhile leave their addresses out of their seeds.
	faults *nodeFaults

	mu struct {
		sync.Mutex
		info   targets.Info
		open   map[closer]struct{}
		closed bool
	}
}

var _ targets.Target = (*Target)(nil)

// closer is a producer, worker or reader that Target.Close must close if its
// owner did not.
type closer interface{ closeForTarget() }

// embeddedNote is the note Info carries when New started a kfake cluster.
const embeddedNote = "no brokers given: started an embedded kfake cluster"

// embeddedSweepInterval is how often the embedded cluster looks for expired
// acquisition locks. kfake's default (5s) would delay every lock expiry by up
// to 5s; the sweep over a benchmark's few partitions is cheap.
const embeddedSweepInterval = "100"

// New connects to opts.Brokers, or starts an embedded kfake cluster on
// 127.0.0.1 when there are none. With brokers, it checks that one answers
// within opts.PingTimeout and returns one error naming the brokers and the
// fix otherwise.
func New(ctx context.Context, opts Options) (*Target, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	tc, err := opts.tlsConfig()
	if err != nil {
		return nil, err
	}
	input, err := opts.Input.opts()
	if err != nil {
		return nil, err
	}
	t := &Target{keep: opts.Keep, input: input, fetch: opts.FetchMaxPartitionBytes}
	t.mu.open = make(map[closer]struct{})
	if w := opts.Logger; w != nil {
		t.logger = func(s string) { fmt.Fprintln(w, "kafka: "+s) }
	}
	t.mu.info = targets.Info{Target: vocab.TargetKafka, AcksBeforeNextPoll: true}
	seeds := opts.Brokers
	if len(seeds) == 0 {
		c, err := kfake.NewCluster(
			kfake.NumBrokers(1),
			kfake.BrokerConfigs(map[string]string{
				"share.record.lock.sweep.interval.ms": embeddedSweepInterval,
			}),
		)
		if err != nil {
			return nil, fmt.Errorf("kafka: starting the embedded kfake cluster: %w", err)
		}
		t.cluster = c
		seeds = c.ListenAddrs()
		t.mu.info.Embedded = true
		t.mu.info.Notes = append(t.mu.info.Notes, embeddedNote)
		if t.logger != nil {
			t.logger(embeddedNote)
		}
	}
	t.mu.info.Brokers = strings.Join(seeds, ",")
	t.faults = newNodeFaults()
	t.conn = conn{seeds: seeds, faults: t.faults, clientID: opts.ClientID, tls: tc, sasl: opts.saslMechanism()}

	admin, err := kgo.NewClient(append(t.conn.clientOpts(t.conn.newDialer(), "admin"),
		kgo.RequestRetries(3),
	)...)
	if err != nil {
		t.closeCluster()
		return nil, fmt.Errorf("kafka: creating the admin client: %w", err)
	}
	t.admin = admin
	t.adm = kadm.NewClient(admin)

	pctx, cancel := context.WithTimeout(ctx, opts.PingTimeout)
	defer cancel()
	if err := admin.Ping(pctx); err != nil {
		admin.Close()
		t.closeCluster()
		if ctx.Err() != nil {
			return nil, fmt.Errorf("kafka: connecting to brokers %s: %w", strings.Join(seeds, ","), ctx.Err())
		}
		if se := securityError(strings.Join(seeds, ","), opts, err); se != nil {
			return nil, se
		}
		return nil, &UnreachableError{Brokers: strings.Join(seeds, ","), Cause: pingCause(pctx, err)}
	}
	t.learnVersions(pctx)
	return t, nil
}

// UnreachableError is New's error when no broker answered: it names the
// brokers tried and why, so a caller can say which of its inputs named
// them.
type UnreachableError struct {
	Brokers string // the seed brokers, comma-separated
	Cause   string // why the ping failed, one short phrase
}

func (e *UnreachableError) Error() string {
	return fmt.Sprintf("kafka: cannot reach brokers %s: %s; check the broker addresses and that the cluster is up (or give none to use an embedded kfake cluster)", e.Brokers, e.Cause)
}

// pingCause says why a ping failed in one short phrase.
func pingCause(ctx context.Context, err error) string {
	if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		return "no broker answered within the ping timeout"
	}
	return err.Error()
}

// learnVersions asks one broker for its API versions and fills in
// Info().BrokerVersion. Failure is not fatal: Supports asks again.
func (t *Target) learnVersions(ctx context.Context) {
	resp, err := t.apiVersions(ctx)
	if err != nil {
		t.note(fmt.Sprintf("could not learn the broker version: %v", err))
		return
	}
	t.versions = resp
	version := versionGuess(resp)
	if t.cluster != nil {
		// kfake advertises API versions of no single Kafka release, so
		// a guess from them means nothing; name the kfake build instead.
		version = kfakeVersion()
	}
	t.mu.Lock()
	t.mu.info.BrokerVersion = version
	t.mu.Unlock()
}

// kfakeVersion names the kfake module this binary was built with.
func kfakeVersion() string {
	const path = "github.com/twmb/franz-go/pkg/kfake"
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, m := range bi.Deps {
			if m.Path == path {
				return "kfake " + m.Version
			}
		}
	}
	return "kfake"
}

// apiVersions returns the API versions of one broker.
func (t *Target) apiVersions(ctx context.Context) (*kmsg.ApiVersionsResponse, error) {
	vs, err := t.adm.ApiVersions(ctx)
	if err != nil {
		return nil, err
	}
	var lastErr error
	for _, v := range vs.Sorted() {
		if v.Err != nil {
			lastErr = v.Err
			continue
		}
		return v.Raw(), nil
	}
	if lastErr == nil {
		lastErr = errors.New("no broker in the metadata")
	}
	return nil, lastErr
}

// versionGuess is kversion's best guess of the Kafka release that answers
// with resp, for example "v4.1".
func versionGuess(resp *kmsg.ApiVersionsResponse) string {
	return kversion.FromApiVersionsResponse(resp).VersionGuess()
}

// note records a note for Info and the logger.
func (t *Target) note(s string) {
	t.mu.Lock()
	dup := slices.Contains(t.mu.info.Notes, s)
	if !dup {
		t.mu.info.Notes = append(t.mu.info.Notes, s)
	}
	t.mu.Unlock()
	if !dup && t.logger != nil {
		t.logger(s)
	}
}

// Info describes the cluster.
func (t *Target) Info() targets.Info {
	t.mu.Lock()
	defer t.mu.Unlock()
	info := t.mu.info
	info.Notes = slices.Clone(info.Notes)
	return info
}

// Supports reports whether mode m can run on this cluster: the share modes
// need share groups (KIP-932), transactional needs a KIP-1289 API that no
// released Kafka advertises.
func (t *Target) Supports(ctx context.Context, m vocab.Mode) error {
	if !slices.Contains(vocab.AllModes(), m) {
		return fmt.Errorf("kafka: unknown mode %q (valid: implicit, explicit, deferred, transactional, classic-eos)", m)
	}
	resp := t.versions
	if resp == nil {
		var err error
		if resp, err = t.apiVersions(ctx); err != nil {
			return fmt.Errorf("kafka: checking whether the brokers support mode %s: %w", m, err)
		}
	}
	return supports(resp, m)
}

// UnsupportedModeError says that the brokers do not advertise an API a
// mode needs, and which modes they can run instead. It wraps
// targets.ErrUnsupported.
type UnsupportedModeError struct {
	Mode    vocab.Mode
	Needs   string       // what the mode needs, in words
	Instead []vocab.Mode // modes the brokers can run in its place
	Advice  string       // more of what to do, or ""
}

// InsteadNames names the modes the brokers can run in the mode's place.
func (e *UnsupportedModeError) InsteadNames() []string {
	names := make([]string, len(e.Instead))
	for i, m := range e.Instead {
		names[i] = string(m)
	}
	return names
}

func (e *UnsupportedModeError) Error() string {
	msg := fmt.Sprintf("kafka: mode %s needs %s, which this broker does not advertise; run the %s mode", e.Mode, e.Needs, strings.Join(e.InsteadNames(), " or "))
	if e.Advice != "" {
		msg += " " + e.Advice
	}
	return msg + ": " + targets.ErrUnsupported.Error()
}

func (e *UnsupportedModeError) Unwrap() error { return targets.ErrUnsupported }

// supports decides Supports from one ApiVersions response.
func supports(resp *kmsg.ApiVersionsResponse, m vocab.Mode) error {
	has := func(key int16) bool {
		for _, k := range resp.ApiKeys {
			if k.ApiKey == key {
				return true
			}
		}
		return false
	}
	switch m {
	case vocab.ClassicEOS:
		if !has(int16(kmsg.InitProducerID)) || !has(int16(kmsg.TxnOffsetCommit)) {
			return &UnsupportedModeError{Mode: m, Needs: "transactions", Instead: []vocab.Mode{vocab.Implicit, vocab.Explicit}}
		}
		return nil
	case vocab.Transactional:
		if txnShareAckKey(resp) == 0 {
			return &UnsupportedModeError{Mode: m, Needs: "the KIP-1289 transactional share-acknowledgement API",
				Instead: []vocab.Mode{vocab.Deferred}, Advice: "for today's best effort, or use the engine target (or sharebench serve)"}
		}
		if !has(int16(kmsg.ShareGroupHeartbeat)) || !has(int16(kmsg.ShareFetch)) || !has(int16(kmsg.InitProducerID)) {
			return fmt.Errorf("kafka: mode transactional needs share groups and transactions, which this broker does not advertise: %w", targets.ErrUnsupported)
		}
		return nil
	}
	// The share modes.
	if !has(int16(kmsg.ShareGroupHeartbeat)) || !has(int16(kmsg.ShareFetch)) || !has(int16(kmsg.ShareAcknowledge)) {
		return fmt.Errorf("kafka: mode %s needs share groups (KIP-932, Kafka 4.1+ with share groups enabled), which this broker does not advertise; run the classic-eos mode, or use the engine target: %w", m, targets.ErrUnsupported)
	}
	if m == vocab.Deferred && !has(int16(kmsg.InitProducerID)) {
		return fmt.Errorf("kafka: mode deferred needs transactions, which this broker does not advertise; run the explicit mode: %w", targets.ErrUnsupported)
	}
	return nil
}

// txnShareAckKey returns the key of the KIP-1289 draft's
// TxnShareAcknowledge the broker advertises (95, or 93), or 0. Key 93 is
// also the key kmsg gives a streams-group API, so it counts only on a
// broker that advertises no streams-group API.
func txnShareAckKey(resp *kmsg.ApiVersionsResponse) int16 {
	has := map[int16]bool{}
	for _, k := range resp.ApiKeys {
		has[k.ApiKey] = k.MinVersion <= 0 && k.MaxVersion >= 0
	}
	switch {
	case has[txnshareack.Key95]:
		return txnshareack.Key95
	case has[txnshareack.Key93] && !has[int16(kmsg.StreamsGroupHeartbeat)] && !has[int16(kmsg.StreamsGroupDescribe)]:
		return txnshareack.Key93
	}
	return 0
}

// track registers c so Close closes it; it fails once the target is closed.
func (t *Target) track(c closer) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.mu.closed {
		return errTargetClosed
	}
	t.mu.open[c] = struct{}{}
	return nil
}

// untrack forgets c after its owner closed it.
func (t *Target) untrack(c closer) {
	t.mu.Lock()
	delete(t.mu.open, c)
	t.mu.Unlock()
}

var errTargetClosed = errors.New("kafka: target is closed")

// closeTimeout bounds how long Close waits for one worker's clean leave.
const closeTimeout = 5 * time.Second

// Close closes every producer, worker and reader still open, the admin
// client, and the embedded cluster.
func (t *Target) Close() error {
	t.mu.Lock()
	if t.mu.closed {
		t.mu.Unlock()
		return nil
	}
	t.mu.closed = true
	open := make([]closer, 0, len(t.mu.open))
	for c := range t.mu.open {
		open = append(open, c)
	}
	clear(t.mu.open)
	t.mu.Unlock()

	var wg sync.WaitGroup
	for _, c := range open {
		wg.Go(c.closeForTarget)
	}
	wg.Wait()
	t.admin.Close()
	t.closeCluster()
	return nil
}

func (t *Target) closeCluster() {
	if t.cluster != nil {
		t.cluster.Close()
	}
}

// nodeFaults returns the nodes under a broker fault.
func (t *Target) nodeFaults() *nodeFaults { return t.faults }
