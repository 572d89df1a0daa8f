// This file reads an OpenMessaging Benchmark Kafka driver file
// (driver-kafka/*.yaml): the settings sharebench can honour become a
// Driver, the ones that only say how OMB reaches its cluster are noted,
// and every other one is refused with the reason (docs/omb.md has the
// table).

package workloads

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/goccy/go-yaml"

	"github.com/sharebench/sharebench/vocab"
)

// ombKafkaDriver is the driverClass of OMB's Kafka driver, the one driver
// sharebench speaks for.
const ombKafkaDriver = "io.openmessaging.benchmark.driver.kafka.KafkaBenchmarkDriver"

// Driver is what an OMB driver file sets that sharebench honours. The
// zero value of a field means the file leaves it to sharebench.
type Driver struct {
	// Name is the driver file's name field.
	Name string
	// ReplicationFactor and MinInsyncReplicas set the workload's
	// replicationFactor and minInsyncReplicas (topic config
	// min.insync.replicas).
	ReplicationFactor int
	MinInsyncReplicas int
	// The input producers' settings on a Kafka cluster: linger.ms
	// (LingerSet tells linger.ms=0 from unset), batch.size,
	// compression.type, max.in.flight.requests.per.connection.
	Linger        time.Duration
	LingerSet     bool
	BatchMaxBytes int32
	Compression   vocab.Compression
	MaxInFlight   int
	// FetchMaxPartitionBytes is the workers' max.partition.fetch.bytes on
	// a Kafka cluster.
	FetchMaxPartitionBytes int32
}

// ApplyTo sets the workload settings the driver gives on s.
func (d *Driver) ApplyTo(s *Spec) {
	if d.ReplicationFactor > 0 {
		s.ReplicationFactor = d.ReplicationFactor
	}
	if d.MinInsyncReplicas > 0 {
		s.MinInsyncReplicas = d.MinInsyncReplicas
	}
}

// ClientSettings reports whether the driver sets any client setting that
// only a Kafka cluster's clients take (an embedded engine has none).
func (d *Driver) ClientSettings() bool {
	return d.LingerSet || d.BatchMaxBytes > 0 || d.Compression != "" || d.MaxInFlight > 0 || d.FetchMaxPartitionBytes > 0
}

// ombDriverFile is the YAML of an OMB Kafka driver file.
type ombDriverFile struct {
	Name              string `yaml:"name"`
	DriverClass       string `yaml:"driverClass"`
	ReplicationFactor int    `yaml:"replicationFactor"`
	Reset             bool   `yaml:"reset"`
	TopicConfig       string `yaml:"topicConfig"`
	CommonConfig      string `yaml:"commonConfig"`
	ProducerConfig    string `yaml:"producerConfig"`
	ConsumerConfig    string `yaml:"consumerConfig"`
}

// notDriverFile opens the error for a file that is not a driver file.
const notDriverFile = "is not an OMB driver file (name, driverClass, replicationFactor, reset, topicConfig, commonConfig, producerConfig, consumerConfig)"

// LoadDriver reads the OMB driver file at path. It returns the settings
// sharebench honours, notes on the ones it takes as they are (how OMB
// reaches its cluster), and every setting it cannot honour at once, as
// Errors naming the file, the setting and the reason.
func LoadDriver(path string) (*Driver, []string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, &Error{File: path, err: err, Msg: fmt.Sprintf("cannot read the OMB driver file: %v; give the path of a driver-kafka/*.yaml file", unwrapPath(err))}
	}
	var f ombDriverFile
	if err := yaml.UnmarshalWithOptions(data, &f, yaml.DisallowUnknownField()); err != nil {
		e := &Error{File: path, err: err}
		msg := printable(err.Error())
		var ye yaml.Error
		if errors.As(err, &ye) {
			msg, e.Line = printable(ye.GetMessage()), lineOf(ye.GetToken())
		}
		e.Msg = notDriverFile + ": " + msg
		return nil, nil, e
	}
	if f == (ombDriverFile{}) {
		return nil, nil, &Error{File: path, Msg: notDriverFile + ": it sets none of them"}
	}
	var (
		d     = &Driver{Name: f.Name, ReplicationFactor: f.ReplicationFactor}
		notes []string
		errs  []*Error
	)
	refuse := func(field, format string, args ...any) {
		errs = append(errs, &Error{File: path, Field: field, Msg: fmt.Sprintf(format, args...)})
	}
	if f.DriverClass != "" && f.DriverClass != ombKafkaDriver {
		refuse("driverClass", "%q is not OMB's Kafka driver; sharebench drives Kafka share groups (driverClass %s)", f.DriverClass, ombKafkaDriver)
	}
	if f.ReplicationFactor < 0 || f.ReplicationFactor > maxReplicationFactor {
		refuse("replicationFactor", "%d is outside 0 to %d", f.ReplicationFactor, maxReplicationFactor)
	}
	if f.Reset {
		notes = append(notes, "reset: true: every mode run creates topics of its own, so there is nothing to reset")
	}
	props := []struct {
		section, text string
		apply         func(key, value string) (note, refusal string)
	}{
		{"topicConfig", f.TopicConfig, d.topicSetting},
		{"commonConfig", f.CommonConfig, commonSetting},
		{"producerConfig", f.ProducerConfig, d.producerSetting},
		{"consumerConfig", f.ConsumerConfig, d.consumerSetting},
	}
	for _, p := range props {
		kv, bad := properties(p.text)
		for _, l := range bad {
			refuse(p.section, "%q is not a key=value line", l)
		}
		for _, e := range kv {
			note, refusal := p.apply(e[0], e[1])
			switch {
			case refusal != "":
				refuse(p.section+"."+e[0], "%s", refusal)
			case note != "":
				notes = append(notes, p.section+" "+e[0]+"="+e[1]+": "+note)
			}
		}
	}
	if d.MinInsyncReplicas > 0 && d.ReplicationFactor > 0 && d.MinInsyncReplicas > d.ReplicationFactor {
		refuse("topicConfig.min.insync.replicas", "%d is above replicationFactor %d; no write could succeed", d.MinInsyncReplicas, d.ReplicationFactor)
	}
	if len(errs) > 0 {
		return nil, nil, errorsOf(errs)
	}
	return d, notes, nil
}

// properties splits Java properties text into key/value pairs, skipping
// blank lines and # or ! comments; bad holds the lines that are not pairs.
func properties(text string) (kv [][2]string, bad []string) {
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' || line[0] == '!' {
			continue
		}
		i := strings.IndexAny(line, "=:")
		if i <= 0 {
			bad = append(bad, line)
			continue
		}
		kv = append(kv, [2]string{strings.TrimSpace(line[:i]), strings.TrimSpace(line[i+1:])})
	}
	return kv, bad
}

func (d *Driver) topicSetting(key, value string) (note, refusal string) {
	if key != "min.insync.replicas" {
		return "", "sharebench creates each run's topics with replication.factor and min.insync.replicas only; drop this topic config"
	}
	n, err := strconv.Atoi(value)
	if err != nil || n < 1 || n > maxReplicationFactor {
		return "", fmt.Sprintf("%q is not a replica count from 1 to %d", value, maxReplicationFactor)
	}
	d.MinInsyncReplicas = n
	return "", ""
}

// commonSetting takes the settings that say how OMB's clients reach the
// cluster: sharebench's clients reach it as its own flags say.
func commonSetting(key, value string) (note, refusal string) {
	switch key {
	case "bootstrap.servers":
		return "sharebench connects where --bootstrap-server says", ""
	case "request.timeout.ms", "default.api.timeout.ms":
		return "sharebench's clients keep their own timeouts (every call is bounded by the run's contexts)", ""
	}
	return "", "sharebench's clients take their connection settings from its own flags (--bootstrap-server, --command-config, --sasl-*, --tls*); drop this setting or give it as a flag"
}

func (d *Driver) producerSetting(key, value string) (note, refusal string) {
	switch key {
	case "acks":
		if value != "all" && value != "-1" {
			return "", fmt.Sprintf("acks=%s: sharebench's input producers are idempotent, which needs acks=all; use acks=all", value)
		}
		return "", ""
	case "enable.idempotence":
		if value != "true" {
			return "", "sharebench's input producers are idempotent (exactly-once judging needs every input written once); use true"
		}
		return "", ""
	case "retries":
		if value != "2147483647" {
			return "", fmt.Sprintf("retries=%s: sharebench's producers retry until the record's delivery times out (Kafka's retries=2147483647), so a lost input is never the producer's doing; use 2147483647", value)
		}
		return "", ""
	case "linger.ms":
		ms, err := strconv.Atoi(value)
		if err != nil || ms < 0 || ms > 60_000 {
			return "", fmt.Sprintf("%q is not a linger from 0 to 60000 ms", value)
		}
		d.Linger, d.LingerSet = time.Duration(ms)*time.Millisecond, true
		return "", ""
	case "batch.size":
		n, err := strconv.Atoi(value)
		if err != nil || n < 1 || n > 1<<30 {
			return "", fmt.Sprintf("%q is not a batch size from 1 to %d bytes", value, 1<<30)
		}
		d.BatchMaxBytes = int32(n)
		return "", ""
	case "compression.type":
		c, err := vocab.ParseCompression(value)
		if err != nil || value == "" {
			return "", fmt.Sprintf("%q is not one of %s", value, strings.Join(vocab.Names(vocab.Compressions()), ", "))
		}
		d.Compression = c
		return "", ""
	case "max.in.flight.requests.per.connection":
		n, err := strconv.Atoi(value)
		if err != nil || n < 1 || n > 5 {
			return "", fmt.Sprintf("%q: an idempotent producer keeps order with 1 to 5 requests in flight; use 1 to 5", value)
		}
		d.MaxInFlight = n
		return "", ""
	}
	return "", "sharebench's input producers honour acks, enable.idempotence, retries, linger.ms, batch.size, compression.type and max.in.flight.requests.per.connection only; drop this setting"
}

func (d *Driver) consumerSetting(key, value string) (note, refusal string) {
	switch key {
	case "auto.offset.reset":
		if value != "earliest" {
			return "", "sharebench's groups read each run's topics from the start, so no input is missed; use earliest"
		}
		return "", ""
	case "enable.auto.commit":
		if value != "false" {
			return "", "sharebench's workers commit (or acknowledge) as the mode says; use false"
		}
		return "", ""
	case "max.partition.fetch.bytes":
		n, err := strconv.Atoi(value)
		if err != nil || n < 1 || n > 1<<30 {
			return "", fmt.Sprintf("%q is not a size from 1 to %d bytes", value, 1<<30)
		}
		d.FetchMaxPartitionBytes = int32(n)
		return "", ""
	}
	return "", "sharebench's workers honour auto.offset.reset, enable.auto.commit and max.partition.fetch.bytes only (polling is the workload's maxPollRecords); drop this setting"
}
