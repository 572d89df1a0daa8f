// This file opens the run's target from flags: the in-process engine, or a
// Kafka cluster (or an embedded kfake one) with SASL and TLS settings whose
// secrets come from a file or the environment and are never echoed.

package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/pflag"

	eng "github.com/sharebench/sharebench/engine"
	"github.com/sharebench/sharebench/loadgen"
	"github.com/sharebench/sharebench/loadgen/targets"
	"github.com/sharebench/sharebench/loadgen/targets/enginetarget"
	"github.com/sharebench/sharebench/loadgen/targets/kafkatarget"
	"github.com/sharebench/sharebench/reports"
	"github.com/sharebench/sharebench/vocab"
	"github.com/sharebench/sharebench/workloads"
)

type kafkaFlags struct {
	brokers          string
	saslMechanism    string
	saslUser         string
	saslPasswordFile string
	tls              bool
	tlsCA            string
	tlsCert          string
	tlsKey           string
	tlsInsecure      bool
	brokerControl    string
	commandConfig    string
	keep             bool
}

func (k *kafkaFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&k.brokers, "brokers", "", "kafka target: comma-separated seed brokers host:port (default: start an embedded kfake cluster)")
	fs.StringVar(&k.brokers, "bootstrap-server", "", "kafka target: the same as --brokers, as Kafka's tools spell it")
	fs.StringVar(&k.commandConfig, "command-config", "", "kafka target: Kafka client properties FILE (security.protocol, sasl.mechanism, sasl.jaas.config, ssl.truststore.location, ssl.keystore.location with PEM types), as Kafka's tools take it")
	fs.StringVar(&k.saslMechanism, "sasl-mechanism", "", "kafka target: SASL mechanism: plain, scram-sha-256 or scram-sha-512")
	fs.StringVar(&k.saslUser, "sasl-user", "", "kafka target: SASL user")
	fs.StringVar(&k.saslPasswordFile, "sasl-password-file", "", "kafka target: file holding the SASL password (or set SHAREBENCH_SASL_PASSWORD)")
	fs.BoolVar(&k.tls, "tls", false, "kafka target: connect with TLS")
	fs.StringVar(&k.tlsCA, "tls-ca", "", "kafka target: CA certificate file (PEM)")
	fs.StringVar(&k.tlsCert, "tls-cert", "", "kafka target: client certificate file (PEM)")
	fs.StringVar(&k.tlsKey, "tls-key", "", "kafka target: client key file (PEM)")
	fs.BoolVar(&k.tlsInsecure, "tls-insecure-skip-verify", false, "kafka target: do not verify the brokers' certificates (testing only)")
	fs.StringVar(&k.brokerControl, "broker-control", "", "kafka target: command for broker-side faults, run with sh -c: {action} (kill, restart or pause), {broker} (the broker id the fault's selector resolved to) and {for} (pause length or kill delay) are replaced, and the run's identifiers are in its environment (SHAREBENCH_*), e.g. 'scripts/kafka/control {action} --broker {broker} --for {for}'")
	fs.BoolVar(&k.keep, "keep", false, "kafka target: keep each mode's topics and group on the cluster after it is verified (default: delete them)")
}

// engineHook is every engine target's hook (enginetarget.Options.Hook,
// called after the fault runner's): nil, except in builds that install
// one (slowdemo.go, -tags slowdemo).
var engineHook eng.Hook

// targetWrap, when set, wraps the engine target: nil, except in the
// cpudemo build (cpudemo.go, -tags cpudemo).
var targetWrap func(targets.Target) targets.Target

// openTarget opens the target named by the flags and, where it can apply
// target-side faults, the fault runner.
func openTarget(ctx context.Context, env *Env, f *runFlags, modes []vocab.Mode, spec *workloads.Spec) (targets.Target, loadgen.FaultRunner, error) {
	switch f.target {
	case "engine":
		if f.driver != nil && f.driver.ClientSettings() {
			fmt.Fprintf(env.Stderr, "sharebench run: note: %s: its producer and consumer settings tune Kafka clients; the engine target has none, so they apply only with --target kafka\n", f.ombDriver)
		}
		if f.kafka.brokers != "" {
			return nil, nil, usageErr("--brokers applies to --target kafka; drop it or add --target kafka")
		}
		if f.kafka.commandConfig != "" {
			return nil, nil, usageErr("--command-config applies to --target kafka; drop it or add --target kafka")
		}
		knobs, err := parseKnobs(f.knobs)
		if err != nil {
			return nil, nil, err
		}
		flush, err := eng.ParseFlushPolicy(f.flush)
		if err != nil {
			return nil, nil, usageErr("--flush %q: use always, never or interval:DURATION such as interval:10ms", f.flush)
		}
		if f.dataDir == "" && f.flush != "always" {
			return nil, nil, usageErr("--flush applies with --data-dir; add --data-dir DIR")
		}
		t, err := enginetarget.New(enginetarget.Options{Shards: f.shards, Knobs: knobs, DataDir: f.dataDir, Flush: flush, Hook: engineHook})
		if err != nil {
			if f.dataDir != "" {
				return nil, nil, usageErr("--data-dir %s: %v", f.dataDir, err)
			}
			return nil, nil, usageErr("%v", err)
		}
		var tgt targets.Target = t
		if targetWrap != nil {
			tgt = targetWrap(t)
		}
		if fr := t.FaultRunner(); fr != nil {
			return tgt, fr, nil
		}
		return tgt, nil, nil
	case "kafka":
		if f.knobs != "safe" || f.shards != 0 {
			return nil, nil, usageErr("--knobs and --shards apply to --target engine")
		}
		if f.dataDir != "" || f.flush != "always" {
			return nil, nil, usageErr("--data-dir and --flush apply to --target engine")
		}
		opts := kafkatarget.Options{
			SASLMechanism: f.kafka.saslMechanism, SASLUser: f.kafka.saslUser,
			TLS: f.kafka.tls, TLSCAFile: f.kafka.tlsCA, TLSCertFile: f.kafka.tlsCert, TLSKeyFile: f.kafka.tlsKey,
			TLSInsecureSkipVerify: f.kafka.tlsInsecure, Keep: f.kafka.keep,
		}
		if d := f.driver; d != nil {
			opts.Input = kafkatarget.ProducerTuning{Linger: d.Linger, BatchMaxBytes: d.BatchMaxBytes, Compression: d.Compression, MaxInFlight: d.MaxInFlight}
			opts.FetchMaxPartitionBytes = d.FetchMaxPartitionBytes
		}
		if f.kafka.brokers != "" {
			for _, b := range strings.Split(f.kafka.brokers, ",") {
				if b = strings.TrimSpace(b); b != "" {
					opts.Brokers = append(opts.Brokers, b)
				}
			}
		}
		if f.kafka.commandConfig != "" {
			if opts.SASLMechanism != "" || opts.SASLUser != "" || opts.TLS || opts.TLSCAFile != "" || opts.TLSCertFile != "" || opts.TLSKeyFile != "" {
				return nil, nil, usageErr("--command-config sets security itself: drop --sasl-* and --tls* flags, or drop --command-config")
			}
			cc, err := loadCommandConfig(f.kafka.commandConfig)
			if err != nil {
				return nil, nil, err
			}
			cc.ApplyTo(&opts)
		} else if opts.SASLMechanism != "" {
			pw := env.Getenv("SHAREBENCH_SASL_PASSWORD")
			if f.kafka.saslPasswordFile != "" {
				b, err := os.ReadFile(f.kafka.saslPasswordFile)
				if err != nil {
					return nil, nil, usageErr("--sasl-password-file: %v", err)
				}
				pw = strings.TrimSpace(string(b))
			}
			if pw == "" {
				return nil, nil, usageErr("--sasl-mechanism %s needs a password: --sasl-password-file FILE or SHAREBENCH_SASL_PASSWORD", opts.SASLMechanism)
			}
			opts.SASLPassword = pw
		}
		t, err := kafkatarget.New(ctx, opts)
		if err != nil {
			return nil, nil, kafkaNewErr(err)
		}
		// A transactional run asked for by name must fail fast on a broker
		// without the KIP-1289 API; with --modes unset it is listed as
		// unsupported in the table instead.
		for _, m := range modes {
			if m == vocab.Transactional {
				if err := t.Supports(ctx, m); err != nil {
					t.Close()
					return nil, nil, withCode(reports.ExitUsage, runFlagHints(err))
				}
			}
		}
		var fr loadgen.FaultRunner
		if f.kafka.brokerControl != "" {
			fr = t.BrokerControl(f.kafka.brokerControl)
		}
		return t, fr, nil
	}
	return nil, nil, usageErr("--target %q: unknown target (valid: engine, kafka)", f.target)
}

// parseKnobs reads --knobs (engine.ParseKnobs), its error naming the flag.
func parseKnobs(s string) (eng.Knobs, error) {
	k, err := eng.ParseKnobs(s)
	var unknown *eng.UnknownKnobError
	switch {
	case errors.As(err, &unknown):
		return k, usageErr("--knobs: unknown knob %q (valid: %s)", unknown.Name, strings.Join(eng.KnobNames(), ", "))
	case err != nil:
		return k, usageErr("--knobs: %v", err)
	}
	return k, nil
}

// loadCommandConfig reads --command-config, its errors naming the flag.
func loadCommandConfig(path string) (*kafkatarget.ClientProperties, error) {
	cc, err := kafkatarget.ReadClientProperties(path)
	var pe *kafkatarget.PropertiesError
	if errors.As(err, &pe) {
		return nil, usageErr("--command-config %s: %v", pe.Where(), pe.Err)
	}
	return cc, err
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

// flagged is an error whose message names the flags that gave the input it
// is about; the package's error stays in the chain.
type flagged struct {
	msg string
	err error
}

func (e *flagged) Error() string { return e.msg }
func (e *flagged) Unwrap() error { return e.err }

// kafkaNewErr says which flags named what the kafka target could not use:
// the packages below the CLI name inputs by their meaning, not by flag.
func kafkaNewErr(err error) error {
	var ue *kafkatarget.UnreachableError
	switch {
	case errors.As(err, &ue):
		return withCode(reports.ExitRuntime, &flagged{fmt.Sprintf("kafka: cannot reach brokers %s: %s; check --brokers and that the cluster is up (or omit --brokers to use an embedded kfake cluster)", ue.Brokers, ue.Cause), err})
	case errors.Is(err, kafkatarget.ErrSecurityWithoutBrokers):
		return withCode(reports.ExitUsage, &flagged{"kafka: --sasl-* and --tls* need --brokers; the embedded kfake cluster runs without them", err})
	}
	return withCode(reports.ExitRuntime, err)
}
