// This file holds topic configs as Kafka 4.4 defines them (its LogConfig):
// each config's name, type and valid values, and the checks CreateTopics,
// IncrementalAlterConfigs and AlterConfigs run on a topic's configs before
// the engine keeps them. Validation follows Kafka's: every name first
// (INVALID_CONFIG "Unknown topic config name: N"), then every value against
// its type and range, with Kafka's messages. The engine keeps what passes
// and enforces none of it (docs/serve.md, "Differences from Kafka").

package serve

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// topicConfigKind is a topic config's type, as Kafka's ConfigDef types.
type topicConfigKind int8

const (
	kindLong topicConfigKind = iota
	kindInt
	kindBool
	kindDouble
	kindString // one of oneOf
	kindList   // comma-separated, each one of oneOf (any when oneOf is nil)
)

func (k topicConfigKind) String() string {
	return [...]string{"LONG", "INT", "BOOLEAN", "DOUBLE", "STRING", "LIST"}[k]
}

// topicConfigDef is one topic config: its kind, its bounds (numbers) or
// valid values (strings and lists), and its documentation.
type topicConfigDef struct {
	kind     topicConfigKind
	min, max float64 // inclusive; ±Inf when unbounded
	oneOf    []string
	// orDefault is a value valid besides [min, max] (a compression
	// level's "the codec's default").
	orDefault *float64
	// replicas: a throttled-replicas list, "*" or partition:broker pairs.
	replicas bool
	doc      string
}

var inf = math.Inf(1)

func atLeast(k topicConfigKind, min float64, doc string) topicConfigDef {
	return topicConfigDef{kind: k, min: min, max: inf, doc: doc}
}

func anyValue(k topicConfigKind, doc string) topicConfigDef {
	return topicConfigDef{kind: k, min: -inf, max: inf, doc: doc}
}

func between(k topicConfigKind, min, max float64, doc string) topicConfigDef {
	return topicConfigDef{kind: k, min: min, max: max, doc: doc}
}

func levels(min, max, def float64, doc string) topicConfigDef {
	return topicConfigDef{kind: kindInt, min: min, max: max, orDefault: &def, doc: doc}
}

// topicConfigDefs are Kafka 4.4's topic configs.
var topicConfigDefs = map[string]topicConfigDef{
	"cleanup.policy":                          {kind: kindList, oneOf: []string{"compact", "delete"}, doc: "What happens to old log segments: delete or compact (kept; the engine deletes by --retention-bytes and never compacts)."},
	"compression.type":                        {kind: kindString, oneOf: []string{"uncompressed", "zstd", "lz4", "snappy", "gzip", "producer"}, doc: "The codec the broker writes a topic's batches with (kept; the engine keeps each batch as produced)."},
	"compression.gzip.level":                  levels(1, 9, -1, "The gzip level with compression.type=gzip (kept)."),
	"compression.lz4.level":                   levels(1, 17, 9, "The lz4 level with compression.type=lz4 (kept)."),
	"compression.zstd.level":                  levels(-131072, 22, 3, "The zstd level with compression.type=zstd (kept)."),
	"delete.retention.ms":                     atLeast(kindLong, 0, "How long compaction tombstones are kept, in milliseconds (kept)."),
	"errors.deadletterqueue.group.enable":     {kind: kindBool, doc: "Whether share groups may write dead letters to this topic (kept; the engine's dead-letter topics need no such config)."},
	"file.delete.delay.ms":                    atLeast(kindLong, 0, "How long before a deleted segment's file is removed, in milliseconds (kept)."),
	"flush.messages":                          atLeast(kindLong, 1, "How many records between forced fsyncs (kept; --data-dir syncs each acknowledged write)."),
	"flush.ms":                                atLeast(kindLong, 0, "How long between forced fsyncs, in milliseconds (kept)."),
	"follower.replication.throttled.replicas": {kind: kindList, replicas: true, doc: "Replicas throttled on the follower side (kept; one broker)."},
	"index.interval.bytes":                    atLeast(kindInt, 0, "How often an offset index entry is written, in bytes (kept)."),
	"leader.replication.throttled.replicas":   {kind: kindList, replicas: true, doc: "Replicas throttled on the leader side (kept; one broker)."},
	"local.retention.bytes":                   atLeast(kindLong, -2, "Local retention by size with tiered storage (kept)."),
	"local.retention.ms":                      atLeast(kindLong, -2, "Local retention by time with tiered storage (kept)."),
	"max.compaction.lag.ms":                   atLeast(kindLong, 1, "The longest a record stays uncompacted, in milliseconds (kept)."),
	"max.message.bytes":                       atLeast(kindInt, 0, "The largest record batch the topic takes, in bytes (kept)."),
	"message.timestamp.after.max.ms":          atLeast(kindLong, 0, "How far past the broker's time a CreateTime timestamp may be, in milliseconds (kept)."),
	"message.timestamp.before.max.ms":         atLeast(kindLong, 0, "How far before the broker's time a CreateTime timestamp may be, in milliseconds (kept)."),
	"message.timestamp.type":                  {kind: kindString, oneOf: []string{"CreateTime", "LogAppendTime"}, doc: "Which timestamp a record carries (kept; the engine stamps LogAppendTime)."},
	"min.cleanable.dirty.ratio":               between(kindDouble, 0, 1, "How dirty a log must be before compaction (kept)."),
	"min.compaction.lag.ms":                   atLeast(kindLong, 0, "The least time a record stays uncompacted, in milliseconds (kept)."),
	"min.insync.replicas":                     atLeast(kindInt, 1, "How many replicas must acknowledge a write with acks=all (kept; one broker: 1)."),
	"preallocate":                             {kind: kindBool, doc: "Whether segment files are preallocated (kept)."},
	"remote.log.copy.disable":                 {kind: kindBool, doc: "Whether copying to tiered storage is stopped (kept)."},
	"remote.log.delete.on.disable":            {kind: kindBool, doc: "Whether disabling tiered storage deletes the remote data (kept)."},
	"remote.storage.enable":                   {kind: kindBool, doc: "Whether the topic uses tiered storage (serve has none: only false)."},
	"retention.bytes":                         anyValue(kindLong, "How many bytes a partition keeps before old records go, -1 for no limit (kept; the engine keeps --retention-bytes)."),
	"retention.ms":                            atLeast(kindLong, -1, "How long records are kept, in milliseconds; -1 keeps them for ever (kept; the engine keeps records until --retention-bytes)."),
	"segment.bytes":                           atLeast(kindInt, 1<<20, "The size of a log segment file, in bytes (kept)."),
	"segment.index.bytes":                     atLeast(kindInt, 4, "The size of a segment's offset index, in bytes (kept)."),
	"segment.jitter.ms":                       atLeast(kindLong, 0, "The random jitter subtracted from segment.ms, in milliseconds (kept)."),
	"segment.ms":                              atLeast(kindLong, 1, "How long before a segment is rolled, in milliseconds (kept)."),
	"unclean.leader.election.enable":          {kind: kindBool, doc: "Whether an out-of-sync replica may become leader (kept; one broker)."},
}

// topicConfigError is a refused topic config: INVALID_CONFIG, or
// INVALID_REQUEST for a malformed request, with Kafka's message.
type topicConfigError struct {
	code *kerr.Error
	msg  string
}

func (e *topicConfigError) Error() string { return e.msg }
func (e *topicConfigError) Unwrap() error { return e.code }

func invalidConfig(format string, args ...any) error {
	return &topicConfigError{kerr.InvalidConfig, fmt.Sprintf(format, args...)}
}

// errValidateOnly ends an Engine.AlterTopicConfigs call of a ValidateOnly
// request once its configs passed, so the engine keeps nothing.
var errValidateOnly = errors.New("serve: validate only")

// checkTopicConfigs validates the configs an alteration leaves, and ends
// it with errValidateOnly when the request only validates.
func checkTopicConfigs(configs map[string]string, validateOnly bool) error {
	if err := validateTopicConfigs(configs); err != nil {
		return err
	}
	if validateOnly {
		return errValidateOnly
	}
	return nil
}

// validateTopicConfigs checks a topic's whole set of configs as Kafka's
// LogConfig.validate does: names first, then each value (sorted by name,
// so the first error is the same every time), then the checks across
// configs.
func validateTopicConfigs(configs map[string]string) error {
	names := make([]string, 0, len(configs))
	for n := range configs {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		if len(configs[n]) > maxConfigValueBytes {
			return invalidConfig("The configuration value cannot be added because it exceeds the maximum value size of %d bytes.", maxConfigValueBytes)
		}
	}
	for _, n := range names {
		if _, ok := topicConfigDefs[n]; !ok {
			return invalidConfig("Unknown topic config name: %s", n)
		}
	}
	nums := map[string]float64{}
	for _, n := range names {
		v, err := parseTopicConfig(n, configs[n])
		if err != nil {
			return err
		}
		nums[n] = v
	}
	minLag, maxLag := 0.0, float64(math.MaxInt64)
	if v, ok := nums["min.compaction.lag.ms"]; ok {
		minLag = v
	}
	if v, ok := nums["max.compaction.lag.ms"]; ok {
		maxLag = v
	}
	if minLag > maxLag {
		return invalidConfig("conflict topic config setting min.compaction.lag.ms (%s) > max.compaction.lag.ms (%s)",
			configs["min.compaction.lag.ms"], configs["max.compaction.lag.ms"])
	}
	if strings.EqualFold(strings.TrimSpace(configs["remote.storage.enable"]), "true") {
		return invalidConfig("Tiered Storage functionality is disabled in the broker. Topic cannot be configured with remote log storage.")
	}
	return nil
}

// parseTopicConfig checks value against config name's definition and
// returns it as a number (numbers only). Values are trimmed first, as
// Kafka's ConfigDef trims them.
func parseTopicConfig(name, value string) (float64, error) {
	d := topicConfigDefs[name]
	v := strings.TrimSpace(value)
	bad := func(why string) error {
		return invalidConfig("Invalid value %s for configuration %s: %s", value, name, why)
	}
	var n float64
	switch d.kind {
	case kindLong:
		i, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return 0, bad("Not a number of type LONG")
		}
		n = float64(i)
	case kindInt:
		i, err := strconv.ParseInt(v, 10, 32)
		if err != nil {
			return 0, bad("Not a number of type INT")
		}
		n = float64(i)
	case kindDouble:
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || math.IsNaN(f) {
			return 0, bad("Not a number of type DOUBLE")
		}
		n = f
	case kindBool:
		if !strings.EqualFold(v, "true") && !strings.EqualFold(v, "false") {
			return 0, bad("Expected value to be either true or false")
		}
		return 0, nil
	case kindString:
		if !slices.Contains(d.oneOf, v) {
			return 0, bad("String must be one of: " + strings.Join(d.oneOf, ", "))
		}
		return 0, nil
	case kindList:
		for _, item := range splitList(v) {
			switch {
			case d.replicas && !validReplica(item, v):
				return 0, bad("must be the literal '*' or a list of replicas in the following format: [partitionId]:[brokerId],[partitionId]:[brokerId],...")
			case d.oneOf != nil && !slices.Contains(d.oneOf, item):
				return 0, bad("String must be one of: " + strings.Join(d.oneOf, ", "))
			}
		}
		return 0, nil
	}
	if d.orDefault != nil && n == *d.orDefault {
		return n, nil
	}
	switch {
	case n < d.min:
		return 0, bad("Value must be at least " + formatBound(d.min))
	case n > d.max:
		return 0, bad("Value must be no more than " + formatBound(d.max))
	}
	return n, nil
}

func formatBound(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// splitList splits a list config's value on commas, trimming each item;
// "" is the empty list.
func splitList(v string) []string {
	if strings.TrimSpace(v) == "" {
		return nil
	}
	items := strings.Split(v, ",")
	for i := range items {
		items[i] = strings.TrimSpace(items[i])
	}
	return items
}

// validReplica reports whether item of list is "*" (as the whole list) or
// a partition:broker pair of numbers.
func validReplica(item, list string) bool {
	if item == "*" {
		return strings.TrimSpace(list) == "*"
	}
	p, b, ok := strings.Cut(item, ":")
	if !ok {
		return false
	}
	_, err1 := strconv.ParseInt(strings.TrimSpace(p), 10, 32)
	_, err2 := strconv.ParseInt(strings.TrimSpace(b), 10, 32)
	return err1 == nil && err2 == nil
}

// alterTopicConfig applies one IncrementalAlterConfigs operation to
// configs, as Kafka's controller does: SET sets, DELETE removes the
// topic's value (back to the default), APPEND and SUBTRACT add items to
// or remove them from a list config's value (the default's when the topic
// sets none). value is non-nil but for DELETE (nullUpdates checks it
// first). The result is validated as a whole by the caller.
func alterTopicConfig(configs map[string]string, name string, value *string, op kmsg.IncrementalAlterConfigOp) error {
	switch op {
	case kmsg.IncrementalAlterConfigOpSet:
		configs[name] = *value
	case kmsg.IncrementalAlterConfigOpDelete:
		delete(configs, name)
	case kmsg.IncrementalAlterConfigOpAppend, kmsg.IncrementalAlterConfigOpSubtract:
		// An unknown name is no list either, and Kafka says so.
		if d, known := topicConfigDefs[name]; !known || d.kind != kindList {
			return invalidConfig("Can't %s to key %s because its type is not LIST.", op, name)
		}
		cur, ok := configs[name]
		if !ok {
			cur = topicConfigDefault(name)
		}
		// Items are split on commas and compared as given, not trimmed,
		// as Kafka's controller does; empty ones of the old value go.
		items := slices.DeleteFunc(strings.Split(cur, ","), func(x string) bool { return x == "" })
		for _, x := range strings.Split(*value, ",") {
			has := slices.Contains(items, x)
			switch {
			case op == kmsg.IncrementalAlterConfigOpAppend && !has:
				items = append(items, x)
			case op == kmsg.IncrementalAlterConfigOpSubtract && has:
				items = slices.DeleteFunc(items, func(y string) bool { return y == x })
			}
		}
		configs[name] = strings.Join(items, ",")
	default:
		return &topicConfigError{kerr.InvalidRequest, fmt.Sprintf("unknown config operation %d on %s", int8(op), name)}
	}
	return nil
}

// nullUpdates refuses the configs that give no value to anything but a
// DELETE, with the INVALID_REQUEST Kafka's broker answers before the
// request reaches its controller.
func nullUpdates(names []string) error {
	if len(names) == 0 {
		return nil
	}
	return &topicConfigError{kerr.InvalidRequest, "Null value not supported for : " + strings.Join(names, ", ")}
}

// maxConfigValueBytes is the longest config value Kafka's controller
// keeps (a ConfigRecord's value is a string of at most 32767 bytes).
const maxConfigValueBytes = math.MaxInt16

// topicConfigDefault is the value DescribeConfigs reports for a topic
// config the topic does not set ("" for one it does not report).
func topicConfigDefault(name string) string {
	for _, kv := range topicConfigs {
		if kv[0] == name {
			return kv[1]
		}
	}
	return ""
}

// configEntry is one config as DescribeConfigs and CreateTopics answer
// it, with its source.
type configEntry struct {
	name, value string
	source      kmsg.ConfigSource
}

// topicConfigEntries are a topic's configs as answered: the reported
// defaults in their order, each replaced by the topic's value if it sets
// one, then the other configs it sets, by name.
func topicConfigEntries(set map[string]string) []configEntry {
	out := make([]configEntry, 0, len(topicConfigs)+len(set))
	for _, kv := range topicConfigs {
		if v, ok := set[kv[0]]; ok {
			out = append(out, configEntry{kv[0], v, kmsg.ConfigSourceDynamicTopicConfig})
		} else {
			out = append(out, configEntry{kv[0], kv[1], kmsg.ConfigSourceDefaultConfig})
		}
	}
	var rest []string
	for n := range set {
		if topicConfigDefault(n) == "" {
			rest = append(rest, n)
		}
	}
	slices.Sort(rest)
	for _, n := range rest {
		out = append(out, configEntry{n, set[n], kmsg.ConfigSourceDynamicTopicConfig})
	}
	return out
}

// topicConfigDoc is a config's documentation as DescribeConfigs (v3+)
// answers it.
func topicConfigDoc(name string) string {
	if d, ok := topicConfigDefs[name]; ok {
		return d.doc
	}
	return configDocs[name]
}
