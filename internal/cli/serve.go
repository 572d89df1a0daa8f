// This file holds the serve command: the reference engine as a
// Kafka-protocol broker (internal/serve).

package cli

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
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

func serveCmd(env *Env, args []string) error {
	fs := newFlags(env, "serve", "[flags]", serveExamples)
	listen := fs.String("listen", "127.0.0.1:9092", "address to listen on (loopback only unless --allow-remote)")
	allowRemote := fs.Bool("allow-remote", false, "allow a non-loopback --listen address (the server has no authentication)")
	dataDir := fs.String("data-dir", "", "durable engine in this directory (default: in memory)")
	flush := fs.String("flush", "always", "with --data-dir: fsync policy (always, interval:DURATION, never)")
	shards := fs.Int("shards", 0, "engine lock shards (default: from GOMAXPROCS)")
	txnAck := fs.String("txn-share-ack", "95", "which draft TxnShareAcknowledge to serve and advertise: off, 93 or 95")
	maxConns := fs.Int("max-conns", 1024, "cap on open client connections")
	maxReq := fs.Int32("max-request-bytes", 100<<20, "cap on one request frame (socket.request.max.bytes)")
	partitions := fs.Int32("partitions", 1, "partitions of auto-created topics (num.partitions)")
	autoCreate := fs.Bool("auto-create-topics", true, "create topics that Metadata names (auto.create.topics.enable)")
	pidFile := fs.String("pid-file", "", "write the server's process id to this file (for signals: SIGHUP restarts the engine from --data-dir, SIGUSR1 crashes and reloads its transaction coordinator)")
	logRequests := fs.Bool("log-requests", false, "log every request (API, version, client) to stderr")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the server to this file until it stops")
	retention := fs.Int64("retention-bytes", 0, "bound on each partition's retained record bytes (default: the engine's, 256 MiB)")
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
	var opts []engine.Option
	if *shards > 0 {
		opts = append(opts, engine.WithShards(*shards))
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
		serve.WithLogger(env.Stderr), serve.WithRequestLog(*logRequests),
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
			engineFault(env, e, sig)
			continue
		}
		break
	}
	s.Close()
	return err
}

// engineFault applies the engine-side fault a signal asks for: SIGHUP
// crashes the engine and restarts it from its data directory (what a broker
// restart does to its state: acquisitions, locks and sessions are lost,
// everything durable is recovered), SIGUSR1 crashes the transaction
// coordinator alone and reloads it from the transaction log. The listener
// stays up; clients see retriable errors while it happens.
func engineFault(env *Env, e *engine.Engine, sig os.Signal) {
	var rep engine.RecoveryReport
	var err error
	what := "engine restart"
	if sig == syscall.SIGUSR1 {
		what = "coordinator crash"
		rep, err = e.CrashCoordinator()
	} else if err = e.Crash(); err == nil {
		rep, err = e.Restart()
	}
	if err != nil {
		fmt.Fprintf(env.Stderr, "sharebench serve: %s (%v): %v\n", what, sig, err)
		return
	}
	fmt.Fprintf(env.Stderr, "sharebench serve: %s (%v): %s\n", what, sig, rep)
}

func engineKind(dir string) string {
	if dir == "" {
		return "in memory"
	}
	return "durable in " + dir
}
