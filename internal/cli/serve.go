// This file holds the serve command: the reference engine as a
// Kafka-protocol broker (internal/serve).

package cli

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"strconv"
	"syscall"

	"github.com/sharebench/sharebench/engine"
	"github.com/sharebench/sharebench/internal/serve"
)

const serveExamples = `  sharebench serve                                   # in memory on 127.0.0.1:9092
  sharebench serve --listen 127.0.0.1:19092 --data-dir /tmp/sb-data
  sharebench serve --txn-share-ack 93                # the draft's first TxnShareAcknowledge shape
  sharebench run --target kafka --brokers 127.0.0.1:9092 --modes all`

// serveShards is serve's engine lock-shard count. The engine's own default
// counts goroutines running at once (GOMAXPROCS), but a server's concurrent
// calls are its connections, dozens for one load generator (each worker's
// consumer and producer, each input producer), and a handler that the OS
// preempts while it holds a shard lock stalls every call hashed onto that
// shard: under ctp-throughput on two busy cores, 8 shards had Produce
// handlers waiting on shard locks for 1.3 s per second, 64 for 0.6 s.
const serveShards = 64

func serveCmd(env *Env, args []string) error {
	fs := newFlags(env, "serve", "[flags]", serveExamples)
	listen := fs.String("listen", "127.0.0.1:9092", "address to listen on (loopback only unless --allow-remote)")
	allowRemote := fs.Bool("allow-remote", false, "allow a non-loopback --listen address (the server has no authentication)")
	dataDir := fs.String("data-dir", "", "durable engine in this directory (default: in memory)")
	flush := fs.String("flush", "always", "with --data-dir: fsync policy (always, interval:DURATION, never)")
	shards := fs.Int("shards", serveShards, "engine lock shards")
	txnAck := fs.String("txn-share-ack", "95", "which draft TxnShareAcknowledge to serve and advertise: off, 93 or 95")
	maxConns := fs.Int("max-conns", 1024, "cap on open client connections")
	maxReq := fs.Int32("max-request-bytes", 100<<20, "cap on one request frame (socket.request.max.bytes)")
	partitions := fs.Int32("partitions", 1, "partitions of auto-created topics (num.partitions)")
	autoCreate := fs.Bool("auto-create-topics", true, "create topics that Metadata names (auto.create.topics.enable)")
	pidFile := fs.String("pid-file", "", "write the server's process id to this file (for signals: SIGHUP restarts the engine from --data-dir, SIGUSR1 crashes and reloads its transaction coordinator)")
	logRequests := fs.Bool("log-requests", false, "log every request (API, version, client) to stderr")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the server to this file until it stops")
	retention := fs.Int64("retention-bytes", 0, "bound on each partition's retained record bytes (default: the engine's, 256 MiB)")
	txnVersion := fs.Int16("transaction-version", 2, "transaction.version feature to finalize: 2 (KIP-890 part 2: EndTxn v5, an epoch per transaction, partitions added by Produce) or 1")
	adminListen := fs.String("admin-listen", "", "loopback address of the admin endpoint: POST /control/ACTION applies an engine-side fault (kill, restart, stop, start, coordinator-crash, share-failover), /debug/pprof serves profiles (default: none)")
	blockRate := fs.Int("block-profile-rate", 0, "runtime.SetBlockProfileRate for /debug/pprof/block (nanoseconds; 0: off)")
	mutexFrac := fs.Int("mutex-profile-fraction", 0, "runtime.SetMutexProfileFraction for /debug/pprof/mutex (0: off)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	var key int16
	switch *txnAck {
	case "off":
	case "93":
		key = 93
	case "95":
		key = 95
	default:
		return usageErr("--txn-share-ack %q (valid: off, 93, 95)", *txnAck)
	}
	if *shards < 1 || *shards > 1<<16 {
		return usageErr("--shards %d out of range (valid: 1 to 65536)", *shards)
	}
	opts := []engine.Option{engine.WithShards(*shards)}
	if *blockRate < 0 || *mutexFrac < 0 {
		return usageErr("--block-profile-rate and --mutex-profile-fraction must not be negative")
	}
	if *retention < 0 {
		return usageErr("--retention-bytes %d must not be negative", *retention)
	}
	if *retention > 0 {
		opts = append(opts, engine.WithRetentionBytes(*retention))
	}
	if *dataDir != "" {
		p, err := engine.ParseFlushPolicy(*flush)
		if err != nil {
			return usageErr("--flush: %v", err)
		}
		opts = append(opts, engine.WithDataDir(*dataDir), engine.WithFlushPolicy(p))
	} else if fs.Changed("flush") {
		return usageErr("--flush applies with --data-dir")
	}
	e, err := engine.New(opts...)
	if err != nil {
		if errors.Is(err, engine.ErrNotDataDir) || errors.Is(err, engine.ErrCorruptLog) || errors.Is(err, engine.ErrDataDirVersion) {
			return usageErr("--data-dir %s: %v", *dataDir, err)
		}
		return err
	}
	defer e.Close()
	s, err := serve.New(e,
		serve.WithListen(*listen), serve.WithAllowRemote(*allowRemote), serve.WithTxnShareAck(key),
		serve.WithMaxConns(*maxConns), serve.WithMaxRequestBytes(*maxReq),
		serve.WithDefaultPartitions(*partitions), serve.WithAutoCreateTopics(*autoCreate),
		serve.WithLogger(env.Stderr), serve.WithRequestLog(*logRequests), serve.WithTransactionVersion(*txnVersion),
	)
	if err != nil {
		if errors.Is(err, serve.ErrConfig) {
			return usageErr("%v", err)
		}
		return err
	}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			return usageErr("--cpuprofile: %v", err)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	ctl := serve.NewControl(e)
	if *adminListen != "" {
		logf := func(format string, args ...any) { fmt.Fprintf(env.Stderr, "sharebench serve: "+format+"\n", args...) }
		a, err := serve.NewAdmin(*adminListen, ctl, logf)
		if err != nil {
			s.Close()
			if errors.Is(err, serve.ErrConfig) {
				return usageErr("--admin-listen: %v", err)
			}
			return err
		}
		defer a.Close()
		fmt.Fprintf(env.Stdout, "sharebench serve: admin endpoint on http://%s (POST /control/ACTION, /debug/pprof)\n", a.Addr())
	}
	runtime.SetBlockProfileRate(*blockRate)
	runtime.SetMutexProfileFraction(*mutexFrac)
	fmt.Fprintf(env.Stdout, "sharebench serve: listening on %s (TxnShareAcknowledge: %s; engine: %s)\n", s.Addr(), *txnAck, engineKind(*dataDir))
	if *pidFile != "" {
		if err := os.WriteFile(*pidFile, []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644); err != nil {
			return usageErr("--pid-file: %v", err)
		}
		defer os.Remove(*pidFile)
	}
	errc := make(chan error, 1)
	go func() { errc <- s.Serve() }()
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	defer signal.Stop(term)
	faults := make(chan os.Signal, 1)
	signal.Notify(faults, syscall.SIGHUP, syscall.SIGUSR1)
	defer signal.Stop(faults)
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

func engineKind(dir string) string {
	if dir == "" {
		return "in memory"
	}
	return "durable in " + dir
}
