// This file holds the serve command: the reference engine as a
// Kafka-protocol broker (serve).

package cli

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/pflag"

	"github.com/sharebench/sharebench/engine"
	"github.com/sharebench/sharebench/serve"
)

const serveExamples = `  sharebench serve                                   # in memory on 127.0.0.1:9092
  sharebench serve --listen 127.0.0.1:19092 --data-dir /tmp/sb-data
  sharebench serve --txn-share-ack 93                # the draft's first TxnShareAcknowledge shape
  sharebench serve --listen 0.0.0.0:9092 --allow-remote --advertise broker.example.com:9092 \
    --sasl-users users.txt --tls-cert server.pem --tls-key server-key.pem   # SASL_SSL for remote clients
  sharebench run --target kafka --brokers 127.0.0.1:9092 --modes all`

// serveShards is serve's engine lock-shard count. The engine's own default
// counts goroutines running at once (GOMAXPROCS), but a server's concurrent
// calls are its connections, dozens for one load generator (each worker's
// consumer and producer, each input producer), and a handler that the OS
// preempts while it holds a shard lock stalls every call hashed onto that
// shard: under ctp-throughput on two busy cores, 8 shards had Produce
// handlers waiting on shard locks for 1.3 s per second, 64 for 0.6 s.
const serveShards = 64

// serveFlags are serve's flags.
type serveFlags struct {
	listen      string
	allowRemote bool
	dataDir     string
	flush       string
	shards      int
	txnAck      string
	maxConns    int
	maxReq      int32
	partitions  int32
	autoCreate  bool
	pidFile     string
	logRequests bool
	cpuProfile  string
	retention   int64
	txnVersion  int16
	adminListen string
	blockRate   int
	mutexFrac   int

	advertise      string
	idleTimeout    time.Duration
	partialTimeout time.Duration
	maxPartsTopic  int32
	maxParts       int64
	saslUsers      []string
	saslUsersFile  string
	saslMechs      []string
	tlsCert        string
	tlsKey         string
	tlsClientCA    string
}

func (f *serveFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.listen, "listen", "127.0.0.1:9092", "address to listen on (loopback only unless --allow-remote)")
	fs.BoolVar(&f.allowRemote, "allow-remote", false, "allow a non-loopback --listen address (authenticate clients with --sasl-user or --sasl-users, and --tls-cert)")
	fs.StringVar(&f.advertise, "advertise", "", "HOST:PORT clients are told to connect to (Metadata, FindCoordinator, DescribeCluster); required with --allow-remote on a wildcard --listen such as 0.0.0.0 (default: the --listen address)")
	fs.DurationVar(&f.idleTimeout, "idle-timeout", serve.DefaultIdleTimeout, "close a connection that sends nothing for this long with no request in flight (connections.max.idle.ms)")
	fs.DurationVar(&f.partialTimeout, "partial-request-timeout", serve.DefaultPartialFrameTimeout, "close a connection whose request frame, or TLS handshake, is not complete this long after it began (a client's request.timeout.ms)")
	fs.Int32Var(&f.maxPartsTopic, "max-partitions-per-topic", serve.DefaultMaxPartitionsPerTopic, "cap on one topic's partitions; more is refused with INVALID_PARTITIONS")
	fs.Int64Var(&f.maxParts, "max-partitions", serve.DefaultMaxPartitions, "cap on all topics' partitions together; a topic past it is refused with POLICY_VIOLATION")
	fs.StringArrayVar(&f.saslUsers, "sasl-user", nil, "USER:PASSWORD that may authenticate by SASL (repeatable; visible in the process list, prefer --sasl-users); any user makes clients authenticate")
	fs.StringVar(&f.saslUsersFile, "sasl-users", "", "file of SASL users, one USER:PASSWORD a line (# comments); any user makes clients authenticate")
	fs.StringSliceVar(&f.saslMechs, "sasl-mechanisms", nil, "SASL mechanisms to offer: PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 (default: all three)")
	fs.StringVar(&f.tlsCert, "tls-cert", "", "PEM certificate (chain) to serve TLS with; needs --tls-key (default: plaintext)")
	fs.StringVar(&f.tlsKey, "tls-key", "", "PEM private key of --tls-cert")
	fs.StringVar(&f.tlsClientCA, "tls-client-ca", "", "PEM CA certificates; with it every client must present a certificate signed by one (default: none asked for)")
	fs.StringVar(&f.dataDir, "data-dir", "", "durable engine in this directory (default: in memory)")
	fs.StringVar(&f.flush, "flush", "always", "with --data-dir: fsync policy (always, interval:DURATION, never)")
	fs.IntVar(&f.shards, "shards", serveShards, "engine lock shards")
	fs.StringVar(&f.txnAck, "txn-share-ack", "95", "which draft TxnShareAcknowledge to serve and advertise: off, 93 or 95")
	fs.IntVar(&f.maxConns, "max-conns", 1024, "cap on open client connections")
	fs.Int32Var(&f.maxReq, "max-request-bytes", 100<<20, "cap on one request frame (socket.request.max.bytes)")
	fs.Int32Var(&f.partitions, "partitions", 1, "partitions of auto-created topics (num.partitions)")
	fs.BoolVar(&f.autoCreate, "auto-create-topics", true, "create topics that Metadata names (auto.create.topics.enable)")
	fs.StringVar(&f.pidFile, "pid-file", "", "write the server's process id to this file (for signals: SIGHUP restarts the engine from --data-dir, SIGUSR1 crashes and reloads its transaction coordinator)")
	fs.BoolVar(&f.logRequests, "log-requests", false, "log every request (API, version, client) to stderr")
	fs.StringVar(&f.cpuProfile, "cpuprofile", "", "write a CPU profile of the server to this file until it stops")
	fs.Int64Var(&f.retention, "retention-bytes", 0, "bound on each partition's retained record bytes (default: the engine's, 256 MiB)")
	fs.Int16Var(&f.txnVersion, "transaction-version", 2, "transaction.version feature to finalize: 2 (KIP-890 part 2: EndTxn v5, an epoch per transaction, partitions added by Produce) or 1")
	fs.StringVar(&f.adminListen, "admin-listen", "", "loopback address of the admin endpoint: POST /control/ACTION applies an engine-side fault (kill, restart, stop, start, coordinator-crash, share-failover), /debug/pprof serves profiles (default: none)")
	fs.IntVar(&f.blockRate, "block-profile-rate", 0, "runtime.SetBlockProfileRate for /debug/pprof/block (nanoseconds; 0: off)")
	fs.IntVar(&f.mutexFrac, "mutex-profile-fraction", 0, "runtime.SetMutexProfileFraction for /debug/pprof/mutex (0: off)")
}

func serveCmd(env *Env, args []string) error {
	var f serveFlags
	fs := newFlags(env, "serve", "[flags]", serveExamples)
	f.register(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	key, err := f.txnAckKey()
	if err != nil {
		return err
	}
	opts, err := f.engineOptions(fs)
	if err != nil {
		return err
	}
	e, err := newServeEngine(f.dataDir, opts)
	if err != nil {
		return err
	}
	defer e.Close()
	s, err := f.newServer(env, e, key)
	if err != nil {
		return err
	}
	if f.cpuProfile != "" {
		stop, err := startCPUProfile(f.cpuProfile)
		if err != nil {
			return err
		}
		defer stop()
	}
	ctl := serve.NewControl(e)
	if f.adminListen != "" {
		a, err := startAdmin(env, f.adminListen, ctl)
		if err != nil {
			s.Close()
			return err
		}
		defer a.Close()
	}
	runtime.SetBlockProfileRate(f.blockRate)
	runtime.SetMutexProfileFraction(f.mutexFrac)
	fmt.Fprintf(env.Stdout, "sharebench serve: listening on %s%s (%s; TxnShareAcknowledge: %s; engine: %s)\n",
		s.ListenAddr(), advertised(s), s.SecurityProtocol(), f.txnAck, engineKind(f.dataDir))
	if f.pidFile != "" {
		if err := os.WriteFile(f.pidFile, []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644); err != nil {
			return usageErr("--pid-file: %v", err)
		}
		defer os.Remove(f.pidFile)
	}
	return serveUntilStopped(env, s, ctl)
}

// txnAckKey is the API key of the TxnShareAcknowledge --txn-share-ack
// names; 0 for off.
func (f *serveFlags) txnAckKey() (int16, error) {
	switch f.txnAck {
	case "off":
		return 0, nil
	case "93":
		return 93, nil
	case "95":
		return 95, nil
	}
	return 0, usageErr("--txn-share-ack %q (valid: off, 93, 95)", f.txnAck)
}

// engineOptions checks the engine and profiling flags, returning usage
// errors, and gives the engine's options.
func (f *serveFlags) engineOptions(fs *pflag.FlagSet) ([]engine.Option, error) {
	if f.shards < 1 || f.shards > 1<<16 {
		return nil, usageErr("--shards %d out of range (valid: 1 to 65536)", f.shards)
	}
	opts := []engine.Option{engine.WithShards(f.shards)}
	if f.blockRate < 0 || f.mutexFrac < 0 {
		return nil, usageErr("--block-profile-rate and --mutex-profile-fraction must not be negative")
	}
	if f.retention < 0 {
		return nil, usageErr("--retention-bytes %d must not be negative", f.retention)
	}
	if f.retention > 0 {
		opts = append(opts, engine.WithRetentionBytes(f.retention))
	}
	if f.dataDir != "" {
		p, err := engine.ParseFlushPolicy(f.flush)
		if err != nil {
			return nil, usageErr("--flush: %v", err)
		}
		opts = append(opts, engine.WithDataDir(f.dataDir), engine.WithFlushPolicy(p))
	} else if fs.Changed("flush") {
		return nil, usageErr("--flush applies with --data-dir")
	}
	return opts, nil
}

// newServeEngine makes the engine; a data directory it cannot use is a
// usage error naming --data-dir.
func newServeEngine(dataDir string, opts []engine.Option) (*engine.Engine, error) {
	e, err := engine.New(opts...)
	if err != nil {
		if errors.Is(err, engine.ErrNotDataDir) || errors.Is(err, engine.ErrCorruptLog) || errors.Is(err, engine.ErrDataDirVersion) {
			return nil, usageErr("--data-dir %s: %v", dataDir, err)
		}
		return nil, err
	}
	return e, nil
}

// newServer makes the Kafka-protocol server over e.
func (f *serveFlags) newServer(env *Env, e *engine.Engine, txnAckKey int16) (*serve.Server, error) {
	opts := []serve.Option{
		serve.WithListen(f.listen), serve.WithAllowRemote(f.allowRemote), serve.WithTxnShareAck(txnAckKey),
		serve.WithMaxConns(f.maxConns), serve.WithMaxRequestBytes(f.maxReq),
		serve.WithDefaultPartitions(f.partitions), serve.WithAutoCreateTopics(f.autoCreate),
		serve.WithLogger(env.Stderr), serve.WithRequestLog(f.logRequests), serve.WithTransactionVersion(f.txnVersion),
		serve.WithAdvertise(f.advertise), serve.WithIdleTimeout(f.idleTimeout), serve.WithPartialFrameTimeout(f.partialTimeout),
		serve.WithMaxPartitionsPerTopic(f.maxPartsTopic), serve.WithMaxPartitions(f.maxParts),
		serve.WithSASLMechanisms(f.saslMechs...), serve.WithSASLUsersFile(f.saslUsersFile),
		serve.WithTLS(f.tlsCert, f.tlsKey, f.tlsClientCA),
	}
	for _, u := range f.saslUsers {
		name, pass, ok := strings.Cut(u, ":")
		if !ok {
			return nil, usageErr("--sasl-user %q: want USER:PASSWORD", u)
		}
		opts = append(opts, serve.WithSASLUser(name, pass))
	}
	s, err := serve.New(e, opts...)
	if err != nil {
		if errors.Is(err, serve.ErrConfig) {
			return nil, usageErr("%v", err)
		}
		return nil, err
	}
	return s, nil
}

// startCPUProfile profiles the CPU into path until stop is called.
func startCPUProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, usageErr("--cpuprofile: %v", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

// startAdmin starts the admin endpoint on addr and says where it is.
func startAdmin(env *Env, addr string, ctl *serve.Control) (*serve.Admin, error) {
	logf := func(format string, args ...any) { fmt.Fprintf(env.Stderr, "sharebench serve: "+format+"\n", args...) }
	a, err := serve.NewAdmin(addr, ctl, logf)
	if err != nil {
		if errors.Is(err, serve.ErrConfig) {
			return nil, usageErr("--admin-listen: %v", err)
		}
		return nil, err
	}
	fmt.Fprintf(env.Stdout, "sharebench serve: admin endpoint on http://%s (POST /control/ACTION, /debug/pprof)\n", a.Addr())
	return a, nil
}

// serveUntilStopped serves until the server fails, env.Interrupt closes or
// SIGTERM comes, applying the engine-side faults SIGHUP and SIGUSR1 ask
// for meanwhile, then closes the server.
func serveUntilStopped(env *Env, s *serve.Server, ctl *serve.Control) error {
	errc := make(chan error, 1)
	go func() { errc <- s.Serve() }()
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	defer signal.Stop(term)
	faults := make(chan os.Signal, 1)
	signal.Notify(faults, syscall.SIGHUP, syscall.SIGUSR1)
	defer signal.Stop(faults)
	var err error
	for {
		select {
		case err = <-errc:
		case <-env.Interrupt:
		case <-term:
		case sig := <-faults:
			engineFault(env, ctl, sig)
			continue
		}
		break
	}
	s.Close()
	return err
}

// engineFault applies the engine-side fault a signal asks for: SIGHUP is
// the restart action (the engine crashes and recovers from its data
// directory: acquisitions, locks and sessions are lost, everything durable
// is recovered), SIGUSR1 the coordinator-crash action (the transaction
// coordinator alone crashes and reloads from the transaction log). The
// listener stays up; clients see retriable errors while it happens.
func engineFault(env *Env, ctl *serve.Control, sig os.Signal) {
	action := serve.ActionRestart
	if sig == syscall.SIGUSR1 {
		action = serve.ActionCoordinatorCrash
	}
	msg, err := ctl.Apply(action, nil)
	if err != nil {
		fmt.Fprintf(env.Stderr, "sharebench serve: %v (%v)\n", err, sig)
		return
	}
	fmt.Fprintf(env.Stderr, "sharebench serve: %s (%v)\n", msg, sig)
}

// advertised is the startup line's note of the advertised address, when
// it is not the one listened on.
func advertised(s *serve.Server) string {
	if s.Addr() == s.ListenAddr() {
		return ""
	}
	return ", advertised as " + s.Addr()
}

func engineKind(dir string) string {
	if dir == "" {
		return "in memory"
	}
	return "durable in " + dir
}
