// This file holds the server's options.

package serve

import (
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"strconv"
	"time"
)

type config struct {
	listen          string
	allowRemote     bool
	maxConns        int
	maxRequestBytes int32
	txnShareAck     int16
	autoCreate      bool
	partitions      int32
	logger          io.Writer
	trace           bool
	txnVersion      int16
	advertise       string
	idleTimeout     time.Duration
	partialTimeout  time.Duration
	maxPartsTopic   int32
	maxParts        int64
	saslMechs       []string
	saslUsers       []saslUser
	saslUsersFile   string
	tlsCert, tlsKey string
	tlsClientCA     string
	// maxEpoch is the largest wire epoch a transaction end bumps a
	// producer to; past it the producer gets a new producer id (Kafka's
	// limit, the largest int16 less one; tests lower it).
	maxEpoch int16
}

func defaultConfig() config {
	return config{
		listen:          "127.0.0.1:9092",
		maxConns:        1024,
		maxRequestBytes: 100 << 20,
		txnShareAck:     95,
		autoCreate:      true,
		partitions:      1,
		txnVersion:      2,
		maxEpoch:        math.MaxInt16 - 1,
		idleTimeout:     DefaultIdleTimeout,
		partialTimeout:  DefaultPartialFrameTimeout,
		maxPartsTopic:   DefaultMaxPartitionsPerTopic,
		maxParts:        DefaultMaxPartitions,
	}
}

// ErrConfig is wrapped by every error New returns for a bad option.
var ErrConfig = errors.New("serve: bad configuration")

// ErrRemote is returned by New for a non-loopback listen address without
// WithAllowRemote.
var ErrRemote = fmt.Errorf("%w: refusing a non-loopback listen address; pass --allow-remote to listen on it anyway (with --sasl-user or --sasl-users, and --tls-cert, for clients to authenticate)", ErrConfig)

// ErrAdvertise is returned by New for a wildcard listen address (every
// interface) with WithAllowRemote and no WithAdvertise: no address would
// reach the server from everywhere, so the one Metadata names must be
// given.
var ErrAdvertise = fmt.Errorf("%w: listening on every interface needs the address clients reach the server at; pass --advertise HOST:PORT", ErrConfig)

func (c *config) validate() error {
	host, _, err := net.SplitHostPort(c.listen)
	if err != nil {
		return fmt.Errorf("%w: listen address %q: %v (want host:port, for example 127.0.0.1:9092)", ErrConfig, c.listen, err)
	}
	if !c.allowRemote && !loopback(host) {
		return fmt.Errorf("%w: %q", ErrRemote, c.listen)
	}
	if c.advertise != "" {
		h, p, err := net.SplitHostPort(c.advertise)
		if err != nil || h == "" || wildcard(h) {
			return fmt.Errorf("%w: --advertise %q: want the HOST:PORT clients connect to, for example broker.example.com:9092", ErrConfig, c.advertise)
		}
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return fmt.Errorf("%w: --advertise %q: port %q (valid: 1 to 65535)", ErrConfig, c.advertise, p)
		}
	} else if c.allowRemote && wildcard(host) {
		return fmt.Errorf("%w (listening on %q)", ErrAdvertise, c.listen)
	}
	if c.idleTimeout <= 0 {
		return fmt.Errorf("%w: --idle-timeout %v must be positive", ErrConfig, c.idleTimeout)
	}
	if c.partialTimeout <= 0 {
		return fmt.Errorf("%w: --partial-request-timeout %v must be positive", ErrConfig, c.partialTimeout)
	}
	if c.maxPartsTopic < 1 || c.maxParts < 1 {
		return fmt.Errorf("%w: --max-partitions-per-topic %d and --max-partitions %d must be at least 1", ErrConfig, c.maxPartsTopic, c.maxParts)
	}
	if c.partitions > c.maxPartsTopic {
		return fmt.Errorf("%w: --partitions %d exceeds --max-partitions-per-topic %d; raise the cap or lower the default", ErrConfig, c.partitions, c.maxPartsTopic)
	}
	if err := c.validateSecurity(); err != nil {
		return err
	}
	switch c.txnShareAck {
	case 0, 93, 95:
	default:
		return fmt.Errorf("%w: TxnShareAcknowledge key %d (valid: off, 93, 95)", ErrConfig, c.txnShareAck)
	}
	if c.txnVersion != 1 && c.txnVersion != 2 {
		return fmt.Errorf("%w: transaction.version %d (valid: 1, 2)", ErrConfig, c.txnVersion)
	}
	if c.maxConns < 1 {
		return fmt.Errorf("%w: max connections %d must be at least 1", ErrConfig, c.maxConns)
	}
	if c.maxRequestBytes < 1024 {
		return fmt.Errorf("%w: max request bytes %d must be at least 1024", ErrConfig, c.maxRequestBytes)
	}
	if c.partitions < 1 {
		return fmt.Errorf("%w: default partitions %d must be at least 1", ErrConfig, c.partitions)
	}
	return nil
}

// wildcard reports whether host names every interface.
func wildcard(host string) bool {
	if host == "" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsUnspecified()
}

func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Option configures a Server.
type Option func(*config)

// WithListen sets the listen address (default 127.0.0.1:9092; port 0
// picks a free port, see Server.Addr).
func WithListen(addr string) Option { return func(c *config) { c.listen = addr } }

// WithAllowRemote allows a non-loopback listen address (default false).
func WithAllowRemote(on bool) Option { return func(c *config) { c.allowRemote = on } }

// WithMaxConns caps open client connections (default 1024).
func WithMaxConns(n int) Option { return func(c *config) { c.maxConns = n } }

// WithMaxRequestBytes caps one request frame (default 100 MiB, Kafka's
// socket.request.max.bytes).
func WithMaxRequestBytes(n int32) Option { return func(c *config) { c.maxRequestBytes = n } }

// WithTxnShareAck selects which shape of the draft TxnShareAcknowledge is
// served and advertised: 93, 95 (the default), or 0 for none.
func WithTxnShareAck(key int16) Option { return func(c *config) { c.txnShareAck = key } }

// WithAutoCreateTopics creates a topic that Metadata or Produce names and
// that does not exist (auto.create.topics.enable; default true).
func WithAutoCreateTopics(on bool) Option { return func(c *config) { c.autoCreate = on } }

// WithDefaultPartitions is the partition count of auto-created topics and
// of CreateTopics asking for -1 (num.partitions; default 1).
func WithDefaultPartitions(n int32) Option { return func(c *config) { c.partitions = n } }

// WithLogger writes one line per closed-on-error connection and per
// handler failure (default: nothing).
func WithLogger(w io.Writer) Option { return func(c *config) { c.logger = w } }

// WithRequestLog logs every request (API, version, client id) to the
// logger (default false).
func WithRequestLog(on bool) Option { return func(c *config) { c.trace = on } }

// WithTransactionVersion is the transaction.version feature the server
// finalizes (default 2, as Kafka 4.x clusters have it). At 2 (KIP-890
// part 2) clients send EndTxn v5 and get a new producer epoch with every
// transaction end, a transactional Produce (v12+) adds its partition to
// the transaction and TxnOffsetCommit (v5) its group, without
// AddPartitionsToTxn or AddOffsetsToTxn. At 1 clients keep the epoch
// InitProducerId gave them and add partitions and groups first; EndTxn v5
// is not served.
func WithTransactionVersion(v int16) Option { return func(c *config) { c.txnVersion = v } }

// DefaultIdleTimeout is how long a connection may send nothing, with no
// request of its in flight, before the server closes it: Kafka's
// connections.max.idle.ms default.
const DefaultIdleTimeout = 10 * time.Minute

// DefaultPartialFrameTimeout is how long a request frame may take to
// arrive once its first byte has: a Kafka client abandons a request after
// request.timeout.ms (30 s by default), so a frame still arriving after
// that is one its sender gave up on, or a client holding a connection
// slot with a trickle of bytes. It also bounds a TLS handshake.
const DefaultPartialFrameTimeout = 30 * time.Second

// DefaultMaxPartitionsPerTopic is the cap on one topic's partitions:
// several times what a benchmark topic needs, and small enough that a
// Metadata answer for the topic stays a few megabytes.
const DefaultMaxPartitionsPerTopic = 10_000

// DefaultMaxPartitions is the cap on all topics' partitions together. An
// idle partition costs the engine about 420 bytes and a Metadata answer
// about 1.3 KB per partition it lists, so the cap bounds the worst case
// near 170 MB, which fits a small machine.
const DefaultMaxPartitions = 100_000

// WithAdvertise sets the address (host:port) that Metadata,
// FindCoordinator and DescribeCluster name and Addr returns (default: the
// listen address). It is required for a wildcard listen address with
// WithAllowRemote.
func WithAdvertise(addr string) Option { return func(c *config) { c.advertise = addr } }

// WithIdleTimeout closes a connection that sent nothing for d while no
// request of its was in flight (connections.max.idle.ms; default
// DefaultIdleTimeout, 10 minutes). It also bounds how long a response
// may wait for a client that does not read.
func WithIdleTimeout(d time.Duration) Option { return func(c *config) { c.idleTimeout = d } }

// WithPartialFrameTimeout closes a connection whose request frame did not
// arrive in full within d of its first byte, and bounds a TLS handshake
// (default DefaultPartialFrameTimeout, 30 seconds).
func WithPartialFrameTimeout(d time.Duration) Option {
	return func(c *config) { c.partialTimeout = d }
}

// WithMaxPartitionsPerTopic caps one topic's partition count (default
// DefaultMaxPartitionsPerTopic, 10 000); CreateTopics asking for more is
// refused with INVALID_PARTITIONS.
func WithMaxPartitionsPerTopic(n int32) Option { return func(c *config) { c.maxPartsTopic = n } }

// WithMaxPartitions caps the partitions of all topics together (default
// DefaultMaxPartitions, 100 000); a topic that would pass it is refused
// with POLICY_VIOLATION (auto-creation: the topic stays unknown).
func WithMaxPartitions(n int64) Option { return func(c *config) { c.maxParts = n } }
