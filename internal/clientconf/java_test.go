// This file holds the cases of Kafka 4.4's Java tools, each through its
// main class on scripts/kafka's classpath (scripts/kafka/run-class): topics,
// the console producer and consumers, the consumer- and share-group
// commands, the transactions command and the performance tools.

package clientconf

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

const runClass = "../../scripts/kafka/run-class"

const (
	topicCommand      = "org.apache.kafka.tools.TopicCommand"
	consoleProducer   = "org.apache.kafka.tools.ConsoleProducer"
	consoleConsumer   = "org.apache.kafka.tools.consumer.ConsoleConsumer"
	consoleShare      = "org.apache.kafka.tools.consumer.ConsoleShareConsumer"
	shareGroupCommand = "org.apache.kafka.tools.consumer.group.ShareGroupCommand"
	groupCommand      = "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand"
	transactionsCmd   = "org.apache.kafka.tools.TransactionsCommand"
	producerPerf      = "org.apache.kafka.tools.ProducerPerformance"
	shareConsumerPerf = "org.apache.kafka.tools.ShareConsumerPerformance"
	perfRecords       = 2000
	perfRecordsFlag   = "2000"
	shareGroupRecords = 10
	groupRecords      = 10
	groupCommittedAt  = 4
	javaClient        = "Java tools (Kafka 4.4.0)"
)

func javaCases() []clientCase {
	return []clientCase{
		{javaClient, "kafka-topics --create", topicsCreate},
		{javaClient, "kafka-topics --alter --partitions", topicsAlter},
		{javaClient, "kafka-topics --describe", topicsDescribe},
		{javaClient, "kafka-topics --delete", topicsDelete},
		{javaClient, "kafka-console-producer", consoleProduce},
		{javaClient, "kafka-console-consumer --isolation-level read_committed", consoleConsumeCommitted},
		{javaClient, "share groups: console share consumer, describe, reset-offsets, delete-offsets, delete", shareGroups},
		{javaClient, "consumer groups: describe, reset-offsets, delete-offsets, delete", consumerGroups},
		{javaClient, "kafka-transactions list, describe, describe-producers, find-hanging", transactions},
		{javaClient, "ProducerPerformance, plain then transactional; ShareConsumerPerformance", performance},
	}
}

// java runs a main class; stdin feeds the console producer.
func java(stdin, class string, args ...string) (string, error) {
	out, err := command(stdin, runClass, append([]string{class}, args...)...)
	if err != nil {
		return out, fmt.Errorf("%s %s: %w", class[strings.LastIndex(class, ".")+1:], strings.Join(args, " "), err)
	}
	return out, nil
}

// partitions is how many partitions the project's client sees in topic.
func (s *server) partitions(topic string) (int, error) {
	ctx, cancel := s.ctx()
	defer cancel()
	td, err := s.adm.ListTopics(ctx, topic)
	if err != nil {
		return 0, err
	}
	if td[topic].Err != nil {
		return 0, td[topic].Err
	}
	return len(td[topic].Partitions), nil
}

func topicsCreate(t *testing.T, s *server, n names) (string, error) {
	topic := n.get("created")
	out, err := java("", topicCommand, "--bootstrap-server", s.addr, "--create", "--topic", topic, "--partitions", "2", "--replication-factor", "1")
	if err != nil {
		return "", err
	}
	if want := "Created topic " + topic + "."; strings.TrimSpace(out) != want {
		return "", fmt.Errorf("kafka-topics --create printed %q, want %q", strings.TrimSpace(out), want)
	}
	if p, err := s.partitions(topic); err != nil || p != 2 {
		return "", fmt.Errorf("after kafka-topics --create, %s has %d partitions (%v), want 2", topic, p, err)
	}
	return strings.TrimSpace(out) + " 2 partitions", nil
}

func topicsAlter(t *testing.T, s *server, n names) (string, error) {
	topic := n.get("altered")
	if err := s.createTopic(topic, 1); err != nil {
		return "", err
	}
	out, err := java("", topicCommand, "--bootstrap-server", s.addr, "--alter", "--topic", topic, "--partitions", "3")
	if err != nil {
		return "", err
	}
	if p, err := s.partitions(topic); err != nil || p != 3 {
		return "", fmt.Errorf("after kafka-topics --alter --partitions 3, %s has %d partitions (%v), want 3", topic, p, err)
	}
	return fmt.Sprintf("printed %q; 3 partitions", strings.TrimSpace(out)), nil
}

func topicsDescribe(t *testing.T, s *server, n names) (string, error) {
	topic := n.get("described")
	if err := s.createTopic(topic, 2); err != nil {
		return "", err
	}
	out, err := java("", topicCommand, "--bootstrap-server", s.addr, "--describe", "--topic", topic)
	if err != nil {
		return "", err
	}
	// The summary line names the partition count and replication factor;
	// one line per partition follows, with its leader, replicas and ISR.
	var summary, parts []string
	for _, l := range strings.Split(out, "\n") {
		f := fields(l)
		switch {
		case f["PartitionCount"] != "":
			summary = []string{"Topic " + f["Topic"], "PartitionCount " + f["PartitionCount"], "ReplicationFactor " + f["ReplicationFactor"]}
		case f["Partition"] != "":
			if f["Leader"] == "" || f["Leader"] != f["Replicas"] || f["Replicas"] != f["Isr"] {
				return "", fmt.Errorf("kafka-topics --describe: partition line %q: want one replica, the leader, in sync", strings.TrimSpace(l))
			}
			parts = append(parts, f["Partition"])
		}
	}
	want := []string{"Topic " + topic, "PartitionCount 2", "ReplicationFactor 1"}
	if !slices.Equal(summary, want) || !slices.Equal(parts, []string{"0", "1"}) {
		return "", fmt.Errorf("kafka-topics --describe: summary %v, partitions %v; want %v and partitions 0 1; it printed: %s", summary, parts, want, printed(out))
	}
	return strings.Join(summary, " ") + " partitions " + strings.Join(parts, " "), nil
}

// fields parses a "Key: value<TAB>Key: value" line of kafka-topics
// --describe.
func fields(line string) map[string]string {
	out := map[string]string{}
	for _, kv := range strings.Split(line, "\t") {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), ":")
		if ok {
			out[k] = strings.TrimSpace(v)
		}
	}
	return out
}

func topicsDelete(t *testing.T, s *server, n names) (string, error) {
	topic := n.get("deleted")
	if err := s.createTopic(topic, 1); err != nil {
		return "", err
	}
	out, err := java("", topicCommand, "--bootstrap-server", s.addr, "--delete", "--topic", topic)
	if err != nil {
		return "", err
	}
	// Kafka deletes through its controller: the broker's metadata drops the
	// topic shortly after the command returns.
	deadline := time.Now().Add(toolTimeout)
	for {
		_, err := s.partitions(topic)
		if err != nil {
			break
		}
		if time.Now().After(deadline) {
			return "", fmt.Errorf("after kafka-topics --delete, %s is still listed", topic)
		}
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Sprintf("printed %q; topic gone", strings.TrimSpace(out)), nil
}

func consoleProduce(t *testing.T, s *server, n names) (string, error) {
	topic := n.get("console-produced")
	if err := s.createTopic(topic, 1); err != nil {
		return "", err
	}
	var in strings.Builder
	want := make([]string, 10)
	for i := range want {
		fmt.Fprintf(&in, "k%d:cp-%d\n", i, i)
		want[i] = fmt.Sprintf("0/%d k%d=cp-%d", i, i, i)
	}
	if _, err := java(in.String(), consoleProducer, "--bootstrap-server", s.addr, "--topic", topic,
		"--reader-property", "parse.key=true", "--reader-property", "key.separator=:"); err != nil {
		return "", err
	}
	rs, err := s.readCommitted(topic)
	if err != nil {
		return "", err
	}
	got := make([]string, len(rs))
	for i, r := range rs {
		got[i] = r.String()
	}
	if err := sameValues("records after kafka-console-producer", got, want); err != nil {
		return "", err
	}
	return strings.Join(got, ", "), nil
}

func consoleConsumeCommitted(t *testing.T, s *server, n names) (string, error) {
	topic := n.get("console-committed")
	if err := s.createTopic(topic, 1); err != nil {
		return "", err
	}
	for _, err := range []error{
		s.txnProduce(n.get("cc-txn"), topic, true, "c-0", "c-1"),
		s.txnProduce(n.get("cc-txn"), topic, false, "a-0"),
		s.produce(topic, 0, "p-0"),
		s.txnProduce(n.get("cc-txn"), topic, true, "c-2"),
	} {
		if err != nil {
			return "", err
		}
	}
	// Four committed values: an aborted one shown would take a place among
	// the first four.
	out, err := java("", consoleConsumer, "--bootstrap-server", s.addr, "--topic", topic, "--from-beginning",
		"--isolation-level", "read_committed", "--max-messages", "4", "--timeout-ms", "60000",
		"--formatter-property", "print.offset=true")
	if err != nil {
		return "", err
	}
	got := strings.Split(strings.TrimSpace(out), "\n")
	// Each transaction's commit marker takes an offset: c-0 0, c-1 1,
	// marker 2, a-0 3, abort marker 4, p-0 5, c-2 6.
	want := []string{"Offset:0\tc-0", "Offset:1\tc-1", "Offset:5\tp-0", "Offset:6\tc-2"}
	if err := sameValues("kafka-console-consumer --isolation-level read_committed", got, want); err != nil {
		return "", err
	}
	return strings.ReplaceAll(strings.Join(got, ", "), "\t", " "), nil
}

// table parses a tool's whitespace-aligned table: the rows under the line
// whose first field is header, each a map from column to value, up to the
// first blank line.
func table(out, header string) []map[string]string {
	var cols []string
	var rows []map[string]string
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		switch {
		case cols == nil && len(f) > 0 && f[0] == header:
			cols = f
		case cols != nil && len(f) == 0:
			if len(rows) > 0 {
				return rows
			}
		case cols != nil:
			row := map[string]string{}
			for i, c := range cols {
				if i < len(f) {
					row[c] = f[i]
				}
			}
			rows = append(rows, row)
		}
	}
	return rows
}

// pick renders the named columns of rows, for comparing two servers'
// tables without their ids.
func pick(rows []map[string]string, cols ...string) string {
	var out []string
	for _, r := range rows {
		var vs []string
		for _, c := range cols {
			vs = append(vs, c+"="+r[c])
		}
		out = append(out, strings.Join(vs, " "))
	}
	return "[" + strings.Join(out, "; ") + "]"
}

// shareGroups consumes with the console share consumer into a fresh share
// group, then describes the group, resets its offsets to the earliest,
// deletes its offsets and deletes it, checking each step's output and the
// group's state after it.
func shareGroups(t *testing.T, s *server, n names) (string, error) {
	topic, group := n.get("share"), n.get("share-group")
	if err := s.createTopic(topic, 1); err != nil {
		return "", err
	}
	if err := s.produce(topic, 0, seq("s", shareGroupRecords)...); err != nil {
		return "", err
	}
	if err := s.setShareEarliest(group); err != nil {
		return "", err
	}
	var obs []string
	out, err := java("", consoleShare, "--bootstrap-server", s.addr, "--topic", topic, "--group", group,
		"--max-messages", fmt.Sprint(shareGroupRecords), "--timeout-ms", "60000")
	if err != nil {
		return "", err
	}
	got := strings.Split(strings.TrimSpace(out), "\n")
	slices.Sort(got)
	want := seq("s", shareGroupRecords)
	slices.Sort(want)
	if err := sameValues("kafka-console-share-consumer", got, want); err != nil {
		return "", err
	}
	obs = append(obs, "console share consumer "+short(got))

	sg := func(args ...string) (string, error) {
		return java("", shareGroupCommand, append([]string{"--bootstrap-server", s.addr}, args...)...)
	}
	out, err = sg("--describe", "--group", group)
	if err != nil {
		return "", err
	}
	// Every record was accepted, so nothing is left to deliver: LAG 0.
	// The start offset is the share partition's persisted one, which a
	// client cannot rely on being current: Kafka 4.4 answers 0 here (its
	// share coordinator's snapshot stays behind the accepted records, also
	// minutes later), serve the exact shareGroupRecords. Both must lie
	// between the first record and the last accepted one, and that range
	// is what the two servers are compared on.
	rows := table(out, "GROUP")
	if len(rows) != 1 || rows[0]["GROUP"] != group || rows[0]["TOPIC"] != topic || rows[0]["PARTITION"] != "0" || rows[0]["LAG"] != "0" {
		return "", fmt.Errorf("kafka-share-groups --describe: want %s %s 0 with LAG 0; it printed: %s", group, topic, printed(out))
	}
	if so, err := strconv.Atoi(rows[0]["START-OFFSET"]); err != nil || so < 0 || so > shareGroupRecords {
		return "", fmt.Errorf("kafka-share-groups --describe: START-OFFSET %q, want 0 to %d (the records accepted); it printed: %s", rows[0]["START-OFFSET"], shareGroupRecords, printed(out))
	}
	t.Logf("%s: kafka-share-groups --describe START-OFFSET %s", s.name, rows[0]["START-OFFSET"])
	obs = append(obs, fmt.Sprintf("describe PARTITION=0 START-OFFSET in [0, %d] LAG=0", shareGroupRecords))

	out, err = sg("--reset-offsets", "--group", group, "--topic", topic, "--to-earliest", "--execute")
	if err != nil {
		return "", err
	}
	rows = table(out, "GROUP")
	if len(rows) != 1 || rows[0]["NEW-OFFSET"] != "0" {
		return "", fmt.Errorf("kafka-share-groups --reset-offsets --to-earliest: want NEW-OFFSET 0; it printed: %s", printed(out))
	}
	if o, err := s.shareStart(group, topic); err != nil || o != 0 {
		return "", fmt.Errorf("after kafka-share-groups --reset-offsets --to-earliest, %s's start offset is %d (%v), want 0", group, o, err)
	}
	obs = append(obs, "reset "+pick(rows, "PARTITION", "NEW-OFFSET"))

	out, err = sg("--delete-offsets", "--group", group, "--topic", topic)
	if err != nil {
		return "", err
	}
	rows = table(out, "TOPIC")
	if len(rows) != 1 || rows[0]["TOPIC"] != topic || rows[0]["STATUS"] != "Successful" {
		return "", fmt.Errorf("kafka-share-groups --delete-offsets: want %s Successful; it printed: %s", topic, printed(out))
	}
	if o, err := s.shareStart(group, topic); err == nil {
		return "", fmt.Errorf("after kafka-share-groups --delete-offsets, %s still has start offset %d on %s", group, o, topic)
	}
	obs = append(obs, "delete-offsets "+pick(rows, "STATUS"))

	out, err = sg("--delete", "--group", group)
	if err != nil {
		return "", err
	}
	if want := "Deletion of requested share groups ('" + group + "') was successful."; !strings.Contains(out, want) {
		return "", fmt.Errorf("kafka-share-groups --delete: want %q; it printed: %s", want, printed(out))
	}
	if listed, err := s.groupListed(group); err != nil || listed {
		return "", fmt.Errorf("after kafka-share-groups --delete, group %s is still listed (%v)", group, err)
	}
	obs = append(obs, "deleted")
	return strings.Join(obs, "; "), nil
}

// shareStart is a share group's start offset on partition 0 of topic; an
// error when the group holds none there.
func (s *server) shareStart(group, topic string) (int64, error) {
	ctx, cancel := s.ctx()
	defer cancel()
	d, err := s.adm.DescribeShareGroupOffsets(ctx, group)
	if err != nil {
		return 0, err
	}
	o, ok := d[group].Offsets.Lookup(topic, 0)
	switch {
	case !ok:
		return 0, fmt.Errorf("no start offset")
	case o.Err != nil:
		return 0, o.Err
	case o.StartOffset < 0:
		return o.StartOffset, fmt.Errorf("start offset %d: none", o.StartOffset)
	}
	return o.StartOffset, nil
}

// groupListed says whether ListGroups lists group.
func (s *server) groupListed(group string) (bool, error) {
	ctx, cancel := s.ctx()
	defer cancel()
	gs, err := s.adm.ListGroups(ctx)
	if err != nil {
		return false, err
	}
	_, ok := gs[group]
	return ok, nil
}

// consumerGroups commits a classic group's offsets on two topics, then
// describes it, resets one topic to the earliest, deletes the other's
// offsets and deletes the group.
func consumerGroups(t *testing.T, s *server, n names) (string, error) {
	topic, other, group := n.get("grouped"), n.get("grouped-other"), n.get("group")
	for _, tp := range []string{topic, other} {
		if err := s.createTopic(tp, 1); err != nil {
			return "", err
		}
		if err := s.produce(tp, 0, seq("g", groupRecords)...); err != nil {
			return "", err
		}
	}
	ctx, cancel := s.ctx()
	defer cancel()
	var offs kadm.Offsets
	offs.AddOffset(topic, 0, groupCommittedAt, -1)
	offs.AddOffset(other, 0, groupCommittedAt, -1)
	if err := s.adm.CommitAllOffsets(ctx, group, offs); err != nil {
		return "", fmt.Errorf("setup: committing offsets of group %s: %w", group, err)
	}
	cg := func(args ...string) (string, error) {
		return java("", groupCommand, append([]string{"--bootstrap-server", s.addr}, args...)...)
	}
	var obs []string

	out, err := cg("--describe", "--group", group)
	if err != nil {
		return "", err
	}
	rows := table(out, "GROUP")
	slices.SortFunc(rows, func(a, b map[string]string) int { return strings.Compare(a["TOPIC"], b["TOPIC"]) })
	lag := fmt.Sprint(groupRecords - groupCommittedAt)
	if len(rows) != 2 || rows[0]["TOPIC"] != topic || rows[1]["TOPIC"] != other {
		return "", fmt.Errorf("kafka-consumer-groups --describe: want rows for %s and %s; it printed: %s", topic, other, printed(out))
	}
	for _, r := range rows {
		if r["CURRENT-OFFSET"] != fmt.Sprint(groupCommittedAt) || r["LOG-END-OFFSET"] != fmt.Sprint(groupRecords) || r["LAG"] != lag {
			return "", fmt.Errorf("kafka-consumer-groups --describe: want CURRENT-OFFSET %d LOG-END-OFFSET %d LAG %s; it printed: %s", groupCommittedAt, groupRecords, lag, printed(out))
		}
	}
	obs = append(obs, "describe "+pick(rows, "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG", "CONSUMER-ID"))

	out, err = cg("--reset-offsets", "--group", group, "--topic", topic, "--to-earliest", "--execute")
	if err != nil {
		return "", err
	}
	rows = table(out, "GROUP")
	if len(rows) != 1 || rows[0]["TOPIC"] != topic || rows[0]["NEW-OFFSET"] != "0" {
		return "", fmt.Errorf("kafka-consumer-groups --reset-offsets --to-earliest: want %s 0 NEW-OFFSET 0; it printed: %s", topic, printed(out))
	}
	if o, err := s.committed(group, topic); err != nil || o != 0 {
		return "", fmt.Errorf("after --reset-offsets --to-earliest, %s's offset of %s-0 is %d (%v), want 0", group, topic, o, err)
	}
	obs = append(obs, "reset "+pick(rows, "PARTITION", "NEW-OFFSET"))

	out, err = cg("--delete-offsets", "--group", group, "--topic", other)
	if err != nil {
		return "", err
	}
	rows = table(out, "TOPIC")
	if len(rows) != 1 || rows[0]["TOPIC"] != other || rows[0]["STATUS"] != "Successful" {
		return "", fmt.Errorf("kafka-consumer-groups --delete-offsets: want %s 0 Successful; it printed: %s", other, printed(out))
	}
	if o, err := s.committed(group, other); err == nil {
		return "", fmt.Errorf("after --delete-offsets, %s still has offset %d on %s-0", group, o, other)
	}
	obs = append(obs, "delete-offsets "+pick(rows, "PARTITION", "STATUS"))

	out, err = cg("--delete", "--group", group)
	if err != nil {
		return "", err
	}
	if want := "Deletion of requested consumer groups ('" + group + "') was successful."; !strings.Contains(out, want) {
		return "", fmt.Errorf("kafka-consumer-groups --delete: want %q; it printed: %s", want, printed(out))
	}
	if listed, err := s.groupListed(group); err != nil || listed {
		return "", fmt.Errorf("after kafka-consumer-groups --delete, group %s is still listed (%v)", group, err)
	}
	obs = append(obs, "deleted")
	return strings.Join(obs, "; "), nil
}

// committed is a classic group's committed offset of partition 0 of
// topic; an error when it has none.
func (s *server) committed(group, topic string) (int64, error) {
	ctx, cancel := s.ctx()
	defer cancel()
	offs, err := s.adm.FetchOffsets(ctx, group)
	if err != nil {
		return 0, err
	}
	o, ok := offs.Lookup(topic, 0)
	switch {
	case !ok || o.At < 0:
		return 0, fmt.Errorf("no committed offset")
	case o.Err != nil:
		return 0, o.Err
	}
	return o.At, nil
}

// transactions leaves one transaction committed and one open on a topic,
// then lists, describes, describes the partition's producers and looks for
// hanging transactions (the open one is not: its coordinator knows it).
func transactions(t *testing.T, s *server, n names) (string, error) {
	topic, done, open := n.get("txns"), n.get("txn-done"), n.get("txn-open")
	if err := s.createTopic(topic, 1); err != nil {
		return "", err
	}
	if err := s.txnProduce(done, topic, true, "t-0", "t-1"); err != nil {
		return "", err
	}
	cl, err := s.txnClient(open)
	if err != nil {
		return "", err
	}
	defer cl.Close()
	ctx, cancel := s.ctx()
	defer cancel()
	if err := cl.BeginTransaction(); err != nil {
		return "", fmt.Errorf("setup: begin %s: %w", open, err)
	}
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte("open-0")}).FirstErr(); err != nil {
		return "", fmt.Errorf("setup: producing in %s: %w", open, err)
	}
	defer cl.EndTransaction(ctx, kgo.TryAbort)

	tx := func(args ...string) (string, error) {
		return java("", transactionsCmd, append([]string{"--bootstrap-server", s.addr}, args...)...)
	}
	var obs []string
	out, err := tx("list")
	if err != nil {
		return "", err
	}
	states := map[string]string{}
	for _, r := range table(out, "TransactionalId") {
		states[r["TransactionalId"]] = r["TransactionState"]
	}
	if states[done] != "CompleteCommit" || states[open] != "Ongoing" {
		return "", fmt.Errorf("kafka-transactions list: want %s CompleteCommit and %s Ongoing; it printed: %s", done, open, printed(out))
	}
	obs = append(obs, fmt.Sprintf("list %s=%s %s=%s", done, states[done], open, states[open]))

	out, err = tx("describe", "--transactional-id", open)
	if err != nil {
		return "", err
	}
	rows := table(out, "CoordinatorId")
	if len(rows) != 1 || rows[0]["TransactionalId"] != open || rows[0]["TransactionState"] != "Ongoing" || rows[0]["TopicPartitions"] != topic+"-0" {
		return "", fmt.Errorf("kafka-transactions describe: want %s Ongoing over %s-0; it printed: %s", open, topic, printed(out))
	}
	obs = append(obs, "describe "+pick(rows, "TransactionState", "CurrentTransactionTimeout(ms)", "TopicPartitions"))

	out, err = tx("describe-producers", "--topic", topic, "--partition", "0")
	if err != nil {
		return "", err
	}
	rows = table(out, "ProducerId")
	slices.SortFunc(rows, func(a, b map[string]string) int {
		return strings.Compare(b["CurrentTransactionStartOffset"], a["CurrentTransactionStartOffset"])
	})
	// What Kafka 4.4 reports. The committed producer wrote offsets 0-1 and
	// its commit marker at 2: under transaction.version 2 the marker
	// carries the epoch its EndTxn bumped (1), with no sequence (-1), and
	// the coordinator's epoch (that of its __transaction_state partition:
	// 0 on a fresh broker, more once it restarted, so any epoch counts);
	// no transaction is open. The open producer wrote one record, sequence
	// 0, epoch 0; its transaction starts at 3 and no marker carried a
	// coordinator epoch yet (-1).
	for _, r := range rows {
		if e, err := strconv.Atoi(r["LatestCoordinatorEpoch"]); err == nil && e >= 0 {
			r["LatestCoordinatorEpoch"] = "a coordinator's"
		}
	}
	got := pick(rows, "ProducerEpoch", "LatestCoordinatorEpoch", "LastSequence", "CurrentTransactionStartOffset")
	want := "[ProducerEpoch=1 LatestCoordinatorEpoch=a coordinator's LastSequence=-1 CurrentTransactionStartOffset=None; " +
		"ProducerEpoch=0 LatestCoordinatorEpoch=-1 LastSequence=0 CurrentTransactionStartOffset=3]"
	if got != want {
		return "", fmt.Errorf("kafka-transactions describe-producers: got %s, want %s", got, want)
	}
	obs = append(obs, "describe-producers "+got)

	out, err = tx("find-hanging", "--topic", topic, "--max-transaction-timeout", "0")
	if err != nil {
		return "", err
	}
	if rows := table(out, "Topic"); len(rows) != 0 {
		return "", fmt.Errorf("kafka-transactions find-hanging: the open transaction is known to its coordinator, want no hanging transaction; it printed: %s", printed(out))
	}
	obs = append(obs, "find-hanging "+strings.Join(strings.Fields(out), " "))
	return strings.Join(obs, "; "), nil
}

// performance runs ProducerPerformance plain and transactional, then
// ShareConsumerPerformance over what the plain run wrote.
func performance(t *testing.T, s *server, n names) (string, error) {
	plain, txn, group := n.get("perf"), n.get("perf-txn"), n.get("perf-share")
	for _, tp := range []string{plain, txn} {
		if err := s.createTopic(tp, 1); err != nil {
			return "", err
		}
	}
	perf := func(topic string, extra ...string) error {
		args := append([]string{"--bootstrap-server", s.addr, "--topic", topic, "--num-records", perfRecordsFlag,
			"--record-size", "100", "--throughput", "-1", "--command-property", "acks=all"}, extra...)
		out, err := java("", producerPerf, args...)
		if err != nil {
			return err
		}
		if !strings.Contains(out, perfRecordsFlag+" records sent") {
			return fmt.Errorf("ProducerPerformance %s: want %q; it printed: %s", strings.Join(extra, " "), perfRecordsFlag+" records sent", printed(out))
		}
		return nil
	}
	if err := perf(plain); err != nil {
		return "", err
	}
	ctx, cancel := s.ctx()
	defer cancel()
	ends, err := s.adm.ListEndOffsets(ctx, plain)
	if err != nil {
		return "", err
	}
	if o, ok := ends.Lookup(plain, 0); !ok || o.Offset != perfRecords {
		return "", fmt.Errorf("after ProducerPerformance, %s-0 ends at %d, want %d", plain, o.Offset, perfRecords)
	}
	if err := perf(txn, "--transactional-id", n.get("perf-tx"), "--transaction-duration-ms", "100"); err != nil {
		return "", err
	}
	rs, err := s.readCommitted(txn)
	if err != nil {
		return "", err
	}
	if len(rs) != perfRecords {
		return "", fmt.Errorf("after ProducerPerformance --transactional-id, read_committed sees %d records of %s, want %d", len(rs), txn, perfRecords)
	}
	if err := s.setShareEarliest(group); err != nil {
		return "", err
	}
	out, err := java("", shareConsumerPerf, "--bootstrap-server", s.addr, "--topic", plain, "--group", group,
		"--num-records", perfRecordsFlag, "--timeout", "60000")
	if err != nil {
		return "", err
	}
	// The last line's sixth column is data.consumed.in.nMsg; the tool exits
	// 0 also when it timed out short of --num-records.
	lines := strings.Split(strings.TrimSpace(out), "\n")
	cols := strings.Split(lines[len(lines)-1], ", ")
	if len(cols) < 6 || cols[5] != perfRecordsFlag {
		return "", fmt.Errorf("ShareConsumerPerformance: want data.consumed.in.nMsg %d; it printed: %s", perfRecords, printed(out))
	}
	return fmt.Sprintf("plain: %d records sent, log end %d; transactional: %d committed; share consumer: %s consumed", perfRecords, perfRecords, len(rs), cols[5]), nil
}

// printed is a tool's output on one line, for an error message: its
// non-blank lines, their columns single-spaced, joined by " / ".
func printed(out string) string {
	var lines []string
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) > 0 {
			lines = append(lines, strings.Join(f, " "))
		}
	}
	if len(lines) == 0 {
		return "nothing"
	}
	return strings.Join(lines, " / ")
}
