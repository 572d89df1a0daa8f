// This file holds the server's options.

package serve

import (
	"errors"
	"fmt"
	"io"
	"math"
	"net"
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
	}
}

// ErrConfig is wrapped by every error New returns for a bad option.
var ErrConfig = errors.New("serve: bad configuration")

// ErrRemote is returned by New for a non-loopback listen address without
// WithAllowRemote.
var ErrRemote = fmt.Errorf("%w: refusing a non-loopback listen address (the server has no authentication); pass --allow-remote to listen on it anyway", ErrConfig)

func (c *config) validate() error {
	host, _, err := net.SplitHostPort(c.listen)
	if err != nil {
		return fmt.Errorf("%w: listen address %q: %v (want host:port, for example 127.0.0.1:9092)", ErrConfig, c.listen, err)
	}
	if !c.allowRemote && !loopback(host) {
		return fmt.Errorf("%w: %q", ErrRemote, c.listen)
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
