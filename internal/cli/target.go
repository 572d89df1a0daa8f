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
	fs.StringVar(&k.commandConfig, "command-config", "", "kafka target: Kafka client properties FILE, as Kafka's tools or librdkafka take it (security.protocol, sasl.mechanism, sasl.jaas.config or sasl.username and sasl.password, ssl.truststore.location with a JKS, PKCS12 or PEM trust store or ssl.ca.location, a PEM client certificate)")
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

// validate checks the target flags against --target and each other,
// returning usage errors. runCmd calls it once, after a workload's
// engine-side faults have given the engine a temporary --data-dir.
func (f *runFlags) validate() error {
	switch f.target {
	case "engine":
		if f.kafka.brokers != "" {
			return usageErr("--brokers applies to --target kafka; drop it or add --target kafka")
		}
		if f.kafka.commandConfig != "" {
			return usageErr("--command-config applies to --target kafka; drop it or add --target kafka")
		}
		if _, err := parseKnobs(f.knobs); err != nil {
			return err
		}
		if _, err := parseFlush(f.flush); err != nil {
			return err
		}
		if f.dataDir == "" && f.flush != "always" {
			return usageErr("--flush applies with --data-dir; add --data-dir DIR")
		}
	case "kafka":
		if f.knobs != "safe" || f.shards != 0 {
			return usageErr("--knobs and --shards apply to --target engine")
		}
		if f.dataDir != "" || f.flush != "always" {
			return usageErr("--data-dir and --flush apply to --target engine")
		}
		k := &f.kafka
		if k.commandConfig != "" && (k.saslMechanism != "" || k.saslUser != "" || k.tls || k.tlsCA != "" || k.tlsCert != "" || k.tlsKey != "") {
			return usageErr("--command-config sets security itself: drop --sasl-* and --tls* flags, or drop --command-config")
		}
	default:
		return usageErr("--target %q: unknown target (valid: engine, kafka)", f.target)
	}
	return nil
}

// noteEngineDriver says that an OMB driver file's client settings do not
// apply to the engine target.
func noteEngineDriver(env *Env, f *runFlags) {
	if f.target == "engine" && f.driver != nil && f.driver.ClientSettings() {
		fmt.Fprintf(env.Stderr, "sharebench run: note: %s: its producer and consumer settings tune Kafka clients; the engine target has none, so they apply only with --target kafka\n", f.ombDriver)
	}
}

// openTarget opens the target named by the flags, which have passed
// validate, and, where it can apply target-side faults, the fault runner.
func openTarget(ctx context.Context, env *Env, f *runFlags, modes []vocab.Mode) (targets.Target, loadgen.FaultRunner, error) {
	if f.target == "kafka" {
		return openKafka(ctx, env, f, modes)
	}
	return openEngine(f)
}

// openEngine opens the in-process engine target.
func openEngine(f *runFlags) (targets.Target, loadgen.FaultRunner, error) {
	knobs, err := parseKnobs(f.knobs)
	if err != nil {
		return nil, nil, err
	}
	flush, err := parseFlush(f.flush)
	if err != nil {
		return nil, nil, err
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
}

// openKafka opens the kafka target. A transactional run asked for by name
// must fail fast on a broker without the KIP-1289 API; with --modes unset
// it is listed as unsupported in the table instead.
func openKafka(ctx context.Context, env *Env, f *runFlags, modes []vocab.Mode) (targets.Target, loadgen.FaultRunner, error) {
	opts, inputs, err := kafkaOptions(env, f)
	if err != nil {
		return nil, nil, err
	}
	t, err := kafkatarget.New(ctx, opts)
	if err != nil {
		return nil, nil, kafkaNewErr(err, inputs)
	}
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

// securityInputs name where the SASL credentials and the trusted CAs came
// from, as the user wrote them: what to fix when the brokers refuse them.
type securityInputs struct {
	credentials string // e.g. "--command-config FILE: sasl.jaas.config"
	mechanism   string // e.g. "--sasl-mechanism"
	ca          string // e.g. "--tls-ca"
}

// kafkaOptions are the kafka target's options from the flags: seed
// brokers, the OMB driver's client tuning, and security from
// --command-config or from the --sasl-* and --tls* flags, the password
// from --sasl-password-file or SHAREBENCH_SASL_PASSWORD; and the inputs
// that gave the security settings.
func kafkaOptions(env *Env, f *runFlags) (kafkatarget.Options, securityInputs, error) {
	k := &f.kafka
	opts := kafkatarget.Options{
		SASLMechanism: k.saslMechanism, SASLUser: k.saslUser,
		TLS: k.tls, TLSCAFile: k.tlsCA, TLSCertFile: k.tlsCert, TLSKeyFile: k.tlsKey,
		TLSInsecureSkipVerify: k.tlsInsecure, Keep: k.keep,
	}
	if d := f.driver; d != nil {
		opts.Input = kafkatarget.ProducerTuning{Linger: d.Linger, BatchMaxBytes: d.BatchMaxBytes, Compression: d.Compression, MaxInFlight: d.MaxInFlight}
		opts.FetchMaxPartitionBytes = d.FetchMaxPartitionBytes
	}
	for _, b := range strings.Split(k.brokers, ",") {
		if b = strings.TrimSpace(b); b != "" {
			opts.Brokers = append(opts.Brokers, b)
		}
	}
	in := securityInputs{credentials: "--sasl-user and SHAREBENCH_SASL_PASSWORD", mechanism: "--sasl-mechanism", ca: "--tls-ca"}
	if k.saslPasswordFile != "" {
		in.credentials = "--sasl-user and --sasl-password-file"
	}
	switch {
	case k.commandConfig != "":
		cc, err := loadCommandConfig(k.commandConfig)
		if err != nil {
			return opts, in, err
		}
		cc.ApplyTo(&opts)
		in.credentials = propertyInput(k.commandConfig, cc.PasswordProperty, "sasl.jaas.config")
		in.mechanism = "--command-config " + k.commandConfig + ": sasl.mechanism"
		in.ca = propertyInput(k.commandConfig, cc.CAProperty, "ssl.truststore.location (or ssl.ca.location)")
	case opts.SASLMechanism != "":
		pw, err := saslPassword(env, k)
		if err != nil {
			return opts, in, err
		}
		opts.SASLPassword = pw
	}
	return opts, in, nil
}

// propertyInput names a property of the --command-config file: the one
// that set it, or the one to add.
func propertyInput(file, key, unset string) string {
	if key == "" {
		return "--command-config " + file + ": add " + unset
	}
	return "--command-config " + file + ": " + key
}

// saslPassword reads the SASL password: --sasl-password-file, else
// SHAREBENCH_SASL_PASSWORD.
func saslPassword(env *Env, k *kafkaFlags) (string, error) {
	pw := env.Getenv("SHAREBENCH_SASL_PASSWORD")
	if k.saslPasswordFile != "" {
		b, err := os.ReadFile(k.saslPasswordFile)
		if err != nil {
			return "", usageErr("--sasl-password-file: %v", err)
		}
		pw = strings.TrimSpace(string(b))
	}
	if pw == "" {
		return "", usageErr("--sasl-mechanism %s needs a password: --sasl-password-file FILE or SHAREBENCH_SASL_PASSWORD", k.saslMechanism)
	}
	return pw, nil
}

// parseFlush reads --flush (engine.ParseFlushPolicy), its error naming
// the flag.
func parseFlush(s string) (eng.FlushPolicy, error) {
	p, err := eng.ParseFlushPolicy(s)
	if err != nil {
		return p, usageErr("--flush %q: use always, never or interval:DURATION such as interval:10ms", s)
	}
	return p, nil
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
func kafkaNewErr(err error, in securityInputs) error {
	var ue *kafkatarget.UnreachableError
	var se *kafkatarget.SecurityError
	switch {
	case errors.As(err, &se):
		var fix string
		switch se.Failure {
		case kafkatarget.LoginRefused:
			fix = "fix the user name or password in " + in.credentials
		case kafkatarget.MechanismRefused:
			fix = "set " + in.mechanism + " to a mechanism the listener enables"
		default:
			fix = "trust the CA that signed the brokers' certificates: " + in.ca
		}
		return withCode(reports.ExitUsage, &flagged{fmt.Sprintf("kafka: brokers %s: %s; %s", se.Brokers, se.Problem(), fix), err})
	case errors.As(err, &ue):
		return withCode(reports.ExitRuntime, &flagged{fmt.Sprintf("kafka: cannot reach brokers %s: %s; check --brokers and that the cluster is up (or omit --brokers to use an embedded kfake cluster)", ue.Brokers, ue.Cause), err})
	case errors.Is(err, kafkatarget.ErrSecurityWithoutBrokers):
		return withCode(reports.ExitUsage, &flagged{"kafka: --sasl-* and --tls* need --brokers; the embedded kfake cluster runs without them", err})
	}
	return withCode(reports.ExitRuntime, err)
}
