// This file holds `sharebench peer`, a hidden command (not in the command
// list; documented in docs/real-kafka.md) behind scripts/peer-bench.sh: the
// flags of the peer tools (internal/peer), produce-only and
// share-consume-only runs measured and printed the way Kafka's own
// ProducerPerformance and ShareConsumerPerformance are.

package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/sharebench/sharebench/internal/peer"
	"github.com/sharebench/sharebench/loadgen/targets/kafkatarget"
	"github.com/sharebench/sharebench/reports"
	"github.com/sharebench/sharebench/vocab"
)

const peerUsage = `Usage: sharebench peer produce|share-consume [flags]

Produce-only and share-consume-only runs against a Kafka cluster, measured
like Kafka's own tools (scripts/peer-bench.sh runs both side by side):

  produce        like org.apache.kafka.tools.ProducerPerformance: N records of
                 S bytes as fast as possible, optionally in transactions that
                 commit every D; records/s and send-to-ack latency.
  share-consume  like org.apache.kafka.tools.ShareConsumerPerformance: one
                 share consumer (implicit acks) reads N records; records/s from
                 subscribe to the last record, plus poll latency.

Examples:
  sharebench peer produce --brokers 127.0.0.1:9092 --topic t1 --num-records 1000000 --record-size 100
  sharebench peer produce --brokers 127.0.0.1:9092 --topic t1 --num-records 1000000 --record-size 100 --transaction-duration 100ms
  sharebench peer share-consume --brokers 127.0.0.1:9092 --topic t1 --group g1 --num-records 1000000

Run 'sharebench peer produce --help' for a subcommand's flags.`

func peerCmd(env *Env, args []string) error {
	if len(args) == 0 {
		fmt.Fprintln(env.Stderr, peerUsage)
		return usageErr("a subcommand is needed: produce or share-consume")
	}
	switch args[0] {
	case "produce":
		return peerProduce(env, args[1:])
	case "share-consume":
		return peerShareConsume(env, args[1:])
	case "-h", "--help", "help":
		fmt.Fprintln(env.Stdout, peerUsage)
		return nil
	}
	return usageErr("peer: unknown subcommand %q (valid: produce, share-consume)", args[0])
}

// peerCommon are the flags both subcommands take.
type peerCommon struct {
	brokers string
	topic   string
	records int64
	format  string
}

func (c *peerCommon) register(fs *pflag.FlagSet) {
	fs.StringVar(&c.brokers, "brokers", "127.0.0.1:9092", "comma-separated seed brokers host:port")
	fs.StringVar(&c.topic, "topic", "", "topic (required; create it first, e.g. with Kafka's TopicCommand)")
	fs.Int64Var(&c.records, "num-records", 0, "records to produce or consume (required)")
	fs.StringVar(&c.format, "format", "text", "output: text (the Kafka tool's own line, then sharebench's extras) or json")
}

func (c *peerCommon) check(name string) error {
	if c.topic == "" {
		return usageErr("peer %s: --topic is required", name)
	}
	if c.records <= 0 {
		return usageErr("peer %s: --num-records %d: must be positive", name, c.records)
	}
	if c.format != "text" && c.format != "json" {
		return usageErr("peer %s: --format %q: valid: text, json", name, c.format)
	}
	return nil
}

// checkBrokers refuses a --brokers that names no broker.
func (c *peerCommon) checkBrokers(name string) error {
	if len(c.seeds()) == 0 {
		return usageErr("peer %s: --brokers is empty: give the seed brokers host:port", name)
	}
	return nil
}

// open connects to --brokers as the kafka target does (its seeds, client id
// prefix and reachability check); the caller closes the target.
func (c *peerCommon) open(ctx context.Context, name string) (*kafkatarget.Target, error) {
	t, err := kafkatarget.New(ctx, kafkatarget.Options{Brokers: c.seeds(), ClientID: "sharebench-peer"})
	if err != nil {
		return nil, fmt.Errorf("peer %s: --brokers %s: %w", name, c.brokers, err)
	}
	return t, nil
}

func (c *peerCommon) seeds() []string {
	var out []string
	for _, b := range strings.Split(c.brokers, ",") {
		if b = strings.TrimSpace(b); b != "" {
			out = append(out, b)
		}
	}
	return out
}

// peerProduceFlags are `peer produce`'s flags.
type peerProduceFlags struct {
	peerCommon
	cfg         peer.ProduceConfig // the fields its own flags set
	compression string
}

const peerProduceExamples = `  sharebench peer produce --topic t1 --num-records 1000000 --record-size 100
  sharebench peer produce --topic t1 --num-records 1000000 --record-size 100 --transaction-duration 100ms`

func (f *peerProduceFlags) register(fs *pflag.FlagSet) {
	f.peerCommon.register(fs)
	fs.IntVar(&f.cfg.RecordBytes, "record-size", 100, "bytes per record value (no key)")
	fs.StringVar(&f.cfg.TransactionalID, "transactional-id", "", "produce in transactions with this id (default with --transaction-duration: sharebench-peer-<time>)")
	fs.DurationVar(&f.cfg.TransactionDuration, "transaction-duration", 0, "produce in transactions, committing once one is this old (ProducerPerformance's --transaction-duration-ms; default with --transactional-id: 3s)")
	// Kafka 4.x producer defaults, so both tools build the same batches.
	fs.DurationVar(&f.cfg.Linger, "linger", 5*time.Millisecond, "linger per partition (Kafka's producer default linger.ms=5)")
	fs.Int32Var(&f.cfg.BatchMaxBytes, "batch-max-bytes", 16384, "largest record batch (Kafka's producer default batch.size=16384)")
	fs.Uint64Var(&f.cfg.Seed, "seed", 0, "payload seed")
	fs.Int64Var(&f.cfg.WarmupRecords, "warmup-records", 0, "records to treat as warm-up: a second line gives the steady state without them (ProducerPerformance's --warmup-records)")
	fs.StringVar(&f.compression, "compression", "none", "batch compression: none, gzip, snappy, lz4 or zstd (Kafka's compression.type; its default none)")
}

// validate checks the flags against each other, returning usage errors.
func (f *peerProduceFlags) validate() error {
	if err := f.check("produce"); err != nil {
		return err
	}
	if _, err := vocab.ParseCompression(f.compression); err != nil || f.compression == "" {
		return usageErr("peer produce: --compression %q: use %s", f.compression, strings.Join(vocab.Names(vocab.Compressions()), ", "))
	}
	if w := f.cfg.WarmupRecords; w < 0 || w >= f.records {
		return usageErr("peer produce: --warmup-records %d: must be at least 0 and below --num-records %d", w, f.records)
	}
	if size := f.cfg.RecordBytes; size < 1 || size > 1<<20 {
		return usageErr("peer produce: --record-size %d: must be 1..1048576", size)
	}
	return f.checkBrokers("produce")
}

// config is the run the flags ask for.
func (f *peerProduceFlags) config() peer.ProduceConfig {
	cfg := f.cfg
	cfg.Cluster, cfg.Topic, cfg.Records = f.brokers, f.topic, f.records
	cfg.Compression = vocab.Compression(f.compression)
	return cfg
}

// peerProduce runs peer.Produce on --brokers.
func peerProduce(env *Env, args []string) error {
	var f peerProduceFlags
	return runPeer(env, args, peerCommand[*peer.ProduceResult]{
		name: "produce", usage: "--topic T --num-records N --record-size S [flags]", examples: peerProduceExamples,
		flags: &f, common: &f.peerCommon,
		run: func(ctx context.Context, t *kafkatarget.Target) (*peer.ProduceResult, error) {
			return peer.Produce(ctx, t, f.config())
		},
	})
}

// peerResult is what a peer tool returns: its text lines, and the error
// its outcome makes (records that failed).
type peerResult interface {
	WriteText(io.Writer)
	Err() error
}

// peerCommand is one peer tool: its flags and how to run it on a target.
type peerCommand[R peerResult] struct {
	name, usage, examples string
	flags                 interface {
		register(*pflag.FlagSet)
		validate() error
	}
	common *peerCommon
	run    func(context.Context, *kafkatarget.Target) (R, error)
}

// runPeer parses and checks a peer tool's flags, connects to --brokers,
// runs the tool and writes its result.
func runPeer[R peerResult](env *Env, args []string, c peerCommand[R]) error {
	fs := newFlags(env, "peer "+c.name, c.usage, c.examples)
	c.flags.register(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := c.flags.validate(); err != nil {
		return err
	}
	ctx := context.Background()
	tgt, err := c.common.open(ctx, c.name)
	if err != nil {
		return err
	}
	defer tgt.Close()
	res, err := c.run(ctx, tgt)
	if err != nil {
		return peerErr(err)
	}
	if err := writePeer(env.Stdout, c.common.format, res, res.WriteText); err != nil {
		return err
	}
	return res.Err()
}

// peerConsumeFlags are `peer share-consume`'s flags.
type peerConsumeFlags struct {
	peerCommon
	cfg     peer.ShareConsumeConfig // the fields its own flags set
	acquire string
}

const peerConsumeExamples = `  sharebench peer share-consume --topic t1 --group g1 --num-records 1000000`

func (f *peerConsumeFlags) register(fs *pflag.FlagSet) {
	f.peerCommon.register(fs)
	fs.StringVar(&f.cfg.Group, "group", "", "share group id (required; use a new one per run)")
	fs.IntVar(&f.cfg.MaxPollRecords, "max-poll-records", 500, "records per poll (Kafka's share consumer default max.poll.records=500)")
	fs.DurationVar(&f.cfg.Timeout, "timeout", 10*time.Second, "give up when no record came for this long (the tool's --timeout)")
	fs.BoolVar(&f.cfg.Earliest, "earliest", true, "set share.auto.offset.reset=earliest on the group first (before the clock), so it reads records produced before it joined")
	fs.Int64Var(&f.cfg.WarmupRecords, "warmup-records", 0, "records to treat as warm-up: the steady rate counts from the poll that passes them")
	fs.StringVar(&f.acquire, "acquire-mode", "batch_optimized", "share.acquire.mode: record_limit (a fetch acquires at most --max-poll-records, as run's share workers) or batch_optimized (whole batches, Kafka's client default)")
}

// validate checks the flags against each other, returning usage errors.
func (f *peerConsumeFlags) validate() error {
	if err := f.check("share-consume"); err != nil {
		return err
	}
	if f.acquire != "record_limit" && f.acquire != "batch_optimized" {
		return usageErr("peer share-consume: --acquire-mode %q: want record_limit or batch_optimized", f.acquire)
	}
	if f.cfg.Group == "" {
		return usageErr("peer share-consume: --group is required")
	}
	return f.checkBrokers("share-consume")
}

// config is the run the flags ask for.
func (f *peerConsumeFlags) config() peer.ShareConsumeConfig {
	cfg := f.cfg
	cfg.Topic, cfg.Records, cfg.RecordLimit = f.topic, f.records, f.acquire == "record_limit"
	return cfg
}

// peerShareConsume runs peer.ShareConsume on --brokers.
func peerShareConsume(env *Env, args []string) error {
	var f peerConsumeFlags
	return runPeer(env, args, peerCommand[*peer.ShareConsumeResult]{
		name: "share-consume", usage: "--topic T --group G --num-records N [flags]", examples: peerConsumeExamples,
		flags: &f, common: &f.peerCommon,
		run: func(ctx context.Context, t *kafkatarget.Target) (*peer.ShareConsumeResult, error) {
			return peer.ShareConsume(ctx, t, f.config())
		},
	})
}

// peerErr gives a setting the client refused the usage exit code.
func peerErr(err error) error {
	if errors.Is(err, peer.ErrConfig) {
		return withCode(reports.ExitUsage, err)
	}
	return err
}

// writePeer writes v as JSON, or calls text.
func writePeer(w io.Writer, format string, v any, text func(io.Writer)) error {
	if format == "json" {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	}
	text(w)
	return nil
}
