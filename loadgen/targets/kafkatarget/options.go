// This file holds Options, their validation, and the kgo client options every
// client of the target shares (seed brokers, client id, SASL, TLS dialing).

package kafkatarget

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// The SASL mechanisms Options.SASLMechanism accepts (case-insensitive).
const (
	SASLPlain       = "plain"
	SASLScramSHA256 = "scram-sha-256"
	SASLScramSHA512 = "scram-sha-512"
)

// defaultPingTimeout bounds the reachability check New runs against
// Options.Brokers: long enough for a TLS+SASL handshake across a WAN, short
// enough that a typo in --brokers fails within a few seconds.
const defaultPingTimeout = 5 * time.Second

// defaultClientID is the client id prefix when Options.ClientID is empty.
const defaultClientID = "sharebench"

// Options say which cluster the target talks to and how.
type Options struct {
	// Brokers are the seed brokers (host:port). Empty starts an embedded
	// kfake cluster on 127.0.0.1.
	Brokers []string

	// SASLMechanism is "" (no SASL), "plain", "scram-sha-256" or
	// "scram-sha-512". SASLUser and SASLPassword are its credentials; the
	// password never appears in errors, notes or String.
	SASLMechanism string
	SASLUser      string
	SASLPassword  string

	// TLS dials brokers with TLS. Setting any TLS file, TLSCACerts or
	// TLSInsecureSkipVerify implies TLS. TLSCAFile (PEM) and TLSCACerts
	// (certificates already read, such as a Java trust store's) replace
	// the system roots; both may be set and both are trusted. TLSCertFile
	// and TLSKeyFile (both or neither) give a client certificate.
	TLS                   bool
	TLSCAFile             string
	TLSCACerts            []*x509.Certificate
	TLSCertFile           string
	TLSKeyFile            string
	TLSInsecureSkipVerify bool

	// ClientID prefixes every client id the target uses; default
	// "sharebench".
	ClientID string

	// Logger, when set, receives one line per note the target records
	// (the same notes Info().Notes returns).
	Logger io.Writer

	// PingTimeout bounds the reachability check New runs against
	// Brokers; default 5s.
	PingTimeout time.Duration

	// Keep leaves each mode's topics and group on the cluster after the
	// mode is verified; by default Teardown deletes them.
	Keep bool

	// Input tunes the producers of the input records (what an OMB
	// driver file's producerConfig sets); its zero value keeps
	// sharebench's own.
	Input ProducerTuning
	// FetchMaxPartitionBytes is the workers' max.partition.fetch.bytes
	// (an OMB driver file's consumerConfig); 0 keeps franz-go's.
	FetchMaxPartitionBytes int32
}

// ProducerTuning is the batching of the input producers. The zero value
// is sharebench's default: no linger (each record's latency is its own,
// never a wait for its batch to fill), franz-go's batch size and in-flight
// limit, no compression.
type ProducerTuning struct {
	Linger        time.Duration // linger.ms
	BatchMaxBytes int32         // batch.size; 0: franz-go's default
	Compression   string        // compression.type: "", none, gzip, snappy, lz4, zstd
	MaxInFlight   int           // max.in.flight.requests.per.connection, 1-5; 0: franz-go's default
}

// opts returns the kgo options of t.
func (t ProducerTuning) opts() ([]kgo.Opt, error) {
	opts := []kgo.Opt{kgo.ProducerLinger(t.Linger)}
	if t.BatchMaxBytes > 0 {
		opts = append(opts, kgo.ProducerBatchMaxBytes(t.BatchMaxBytes))
	}
	if t.MaxInFlight > 0 {
		opts = append(opts, kgo.MaxProduceRequestsInflightPerBroker(t.MaxInFlight))
	}
	switch t.Compression {
	case "", "none":
	case "gzip":
		opts = append(opts, kgo.ProducerBatchCompression(kgo.GzipCompression()))
	case "snappy":
		opts = append(opts, kgo.ProducerBatchCompression(kgo.SnappyCompression()))
	case "lz4":
		opts = append(opts, kgo.ProducerBatchCompression(kgo.Lz4Compression()))
	case "zstd":
		opts = append(opts, kgo.ProducerBatchCompression(kgo.ZstdCompression()))
	default:
		return nil, fmt.Errorf("kafka: unknown compression %q (valid: none, gzip, snappy, lz4, zstd)", t.Compression)
	}
	return opts, nil
}

// String describes the options without secrets.
func (o Options) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "brokers=%s", strings.Join(o.Brokers, ","))
	if o.SASLMechanism != "" {
		fmt.Fprintf(&b, " sasl=%s user=%s password=<redacted>", o.SASLMechanism, o.SASLUser)
	}
	if o.tlsWanted() {
		b.WriteString(" tls=true")
	}
	if o.ClientID != "" {
		fmt.Fprintf(&b, " client-id=%s", o.ClientID)
	}
	return b.String()
}

// GoString is String, so %#v does not print the password either.
func (o Options) GoString() string { return "kafka.Options{" + o.String() + "}" }

func (o Options) tlsWanted() bool {
	return o.TLS || o.TLSCAFile != "" || len(o.TLSCACerts) > 0 || o.TLSCertFile != "" || o.TLSKeyFile != "" || o.TLSInsecureSkipVerify
}

// validate checks the options and fills in defaults. It never mentions the
// password.
func (o *Options) validate() error {
	var brokers []string
	for _, b := range o.Brokers {
		for _, s := range strings.Split(b, ",") {
			if s = strings.TrimSpace(s); s != "" {
				brokers = append(brokers, s)
			}
		}
	}
	o.Brokers = brokers
	o.SASLMechanism = strings.ToLower(strings.TrimSpace(o.SASLMechanism))
	switch o.SASLMechanism {
	case "", SASLPlain, SASLScramSHA256, SASLScramSHA512:
	default:
		return fmt.Errorf("kafka: unknown SASL mechanism %q (valid: plain, scram-sha-256, scram-sha-512)", o.SASLMechanism)
	}
	if o.SASLMechanism != "" && o.SASLUser == "" {
		return fmt.Errorf("kafka: SASL mechanism %s needs a user", o.SASLMechanism)
	}
	if o.SASLMechanism == "" && (o.SASLUser != "" || o.SASLPassword != "") {
		return errors.New("kafka: a SASL user or password was given without a SASL mechanism (plain, scram-sha-256, scram-sha-512)")
	}
	if (o.TLSCertFile == "") != (o.TLSKeyFile == "") {
		return errors.New("kafka: a TLS client certificate needs both the certificate file and the key file")
	}
	if len(o.Brokers) == 0 && (o.SASLMechanism != "" || o.tlsWanted()) {
		return ErrSecurityWithoutBrokers
	}
	if _, err := o.Input.opts(); err != nil {
		return err
	}
	if o.Input.Linger < 0 || o.Input.BatchMaxBytes < 0 || o.Input.MaxInFlight < 0 || o.Input.MaxInFlight > 5 || o.FetchMaxPartitionBytes < 0 {
		return errors.New("kafka: producer tuning out of range (linger and batch size at least 0, 0 to 5 requests in flight, fetch bytes at least 0)")
	}
	if o.ClientID == "" {
		o.ClientID = defaultClientID
	}
	if o.PingTimeout <= 0 {
		o.PingTimeout = defaultPingTimeout
	}
	return nil
}

// tlsConfig builds the TLS configuration, or nil without TLS.
func (o *Options) tlsConfig() (*tls.Config, error) {
	if !o.tlsWanted() {
		return nil, nil
	}
	cfg := &tls.Config{
		MinVersion:         tls.VersionTLS12,
		InsecureSkipVerify: o.TLSInsecureSkipVerify, //nolint:gosec // the user asked for it explicitly
	}
	if o.TLSCAFile != "" || len(o.TLSCACerts) > 0 {
		pool := x509.NewCertPool()
		for _, c := range o.TLSCACerts {
			pool.AddCert(c)
		}
		if o.TLSCAFile != "" {
			pem, err := os.ReadFile(o.TLSCAFile)
			if err != nil {
				return nil, fmt.Errorf("kafka: reading TLS CA file: %w", err)
			}
			if !pool.AppendCertsFromPEM(pem) {
				return nil, fmt.Errorf("kafka: TLS CA file %s holds no PEM certificate", o.TLSCAFile)
			}
		}
		cfg.RootCAs = pool
	}
	if o.TLSCertFile != "" {
		cert, err := tls.LoadX509KeyPair(o.TLSCertFile, o.TLSKeyFile)
		if err != nil {
			return nil, fmt.Errorf("kafka: loading TLS client certificate %s: %w", o.TLSCertFile, err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}

// saslMechanism returns the SASL mechanism, or nil without SASL.
func (o *Options) saslMechanism() sasl.Mechanism {
	switch o.SASLMechanism {
	case SASLPlain:
		user, pass := o.SASLUser, o.SASLPassword
		return plain.Plain(func(context.Context) (plain.Auth, error) {
			return plain.Auth{User: user, Pass: pass}, nil
		})
	case SASLScramSHA256:
		return scram.Auth{User: o.SASLUser, Pass: o.SASLPassword}.AsSha256Mechanism()
	case SASLScramSHA512:
		return scram.Auth{User: o.SASLUser, Pass: o.SASLPassword}.AsSha512Mechanism()
	}
	return nil
}

// conn is what every client needs to reach the cluster: the seeds, the
// client id prefix, SASL and TLS. It is built once by New.
type conn struct {
	seeds    []string
	faults   *nodeFaults // nodes under a broker fault, left out of new clients' seeds
	clientID string
	tls      *tls.Config
	sasl     sasl.Mechanism
}

// clientOpts returns the kgo options for one client named suffix that dials
// through d.
func (c *conn) clientOpts(d *dialer, suffix string) []kgo.Opt {
	opts := []kgo.Opt{
		kgo.SeedBrokers(c.faults.liveSeeds(c.seeds)...),
		kgo.ClientID(c.clientID + "-" + suffix),
		kgo.Dialer(d.DialContext),
		// KIP-714 pushes would add requests to every benchmark run.
		kgo.DisableClientMetrics(),
		// Uncompressed batches, as Kafka's producer sends by default
		// (compression.type=none); franz-go would pick snappy, which
		// shrinks the load generator's mostly-zero payloads to little.
		kgo.ProducerBatchCompression(kgo.NoCompression()),
	}
	if c.sasl != nil {
		opts = append(opts, kgo.SASL(c.sasl))
	}
	return opts
}

// newDialer returns a dialer for one client or one group of clients that
// crash together.
func (c *conn) newDialer() *dialer { return newDialer(c.tls) }

// ErrSecurityWithoutBrokers: SASL or TLS options were given without broker
// addresses (the embedded kfake cluster runs without them).
var ErrSecurityWithoutBrokers = errors.New("kafka: SASL and TLS options need broker addresses; the embedded kfake cluster runs without them")
