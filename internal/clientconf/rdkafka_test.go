// This file holds librdkafka's cases, through confluent-kafka's Python
// client (testdata/rdkafka.py, one case per run): the idempotent producer,
// read-process-write with send_offsets_to_transaction, the read_committed
// consumer, the share consumer and zombie fencing.

package clientconf

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
)

func rdkafkaCases() []clientCase {
	const c = "librdkafka (confluent-kafka 2.16.1)"
	return []clientCase{
		{c, "admin: create_topics with a config, describe_configs, delete_topics", rdAdmin},
		{c, "idempotent producer", rdIdempotent},
		{c, "transactional read-process-write (send_offsets_to_transaction)", rdReadProcessWrite},
		{c, "read_committed consumer", rdReadCommitted},
		{c, "share consumer (confluent_kafka.ShareConsumer, explicit acks)", rdShare},
		{c, "zombie fencing (two producers, one transactional.id)", rdFence},
	}
}

// rdkafka runs one case of testdata/rdkafka.py and decodes its JSON.
func rdkafka(s *server, out any, args ...string) error {
	stdout, err := command("", "python3", append([]string{"testdata/rdkafka.py", args[0], "--bootstrap", s.addr}, args[1:]...)...)
	if err != nil {
		return err
	}
	if err := json.Unmarshal([]byte(stdout), out); err != nil {
		return fmt.Errorf("rdkafka.py %s printed no result (%v): %s", args[0], err, tail(stdout))
	}
	return nil
}

func rdAdmin(t *testing.T, s *server, n names) (string, error) {
	topic := n.get("admin")
	var got struct {
		CreateError string `json:"create_error"`
		Partitions  []int32
		RetentionMs string `json:"retention_ms"`
		DeleteError string `json:"delete_error"`
	}
	if err := rdkafka(s, &got, "admin", "--topic", topic); err != nil {
		return "", err
	}
	if got.CreateError != "" || !slices.Equal(got.Partitions, []int32{0, 1}) {
		return "", fmt.Errorf("admin create_topics: error %q, partitions %v; want partitions 0 1", got.CreateError, got.Partitions)
	}
	if got.RetentionMs != "3600000" {
		return "", fmt.Errorf("admin describe_configs: %s has retention.ms %q, want the 3600000 create_topics set", topic, got.RetentionMs)
	}
	if got.DeleteError != "" {
		return "", fmt.Errorf("admin delete_topics: %s", got.DeleteError)
	}
	return fmt.Sprintf("created with partitions %v, retention.ms %s, deleted", got.Partitions, got.RetentionMs), nil
}

func rdIdempotent(t *testing.T, s *server, n names) (string, error) {
	topic := n.get("idem")
	if err := s.createTopic(topic, 1); err != nil {
		return "", err
	}
	var got struct {
		Undelivered int
		Errors      []string
		Offsets     []int64
	}
	if err := rdkafka(s, &got, "idempotent", "--topic", topic, "--count", "20"); err != nil {
		return "", err
	}
	want := make([]int64, 20)
	for i := range want {
		want[i] = int64(i)
	}
	if got.Undelivered != 0 || len(got.Errors) != 0 || !slices.Equal(got.Offsets, want) {
		return "", fmt.Errorf("idempotent producer: %d undelivered, errors %v, offsets %v; want all 20 delivered at offsets 0-19", got.Undelivered, got.Errors, got.Offsets)
	}
	rs, err := s.readCommitted(topic)
	if err != nil {
		return "", err
	}
	if err := sameValues("records after the idempotent producer", values(rs), seq("idem", 20)); err != nil {
		return "", err
	}
	return fmt.Sprintf("delivered at offsets %v; read back %s", got.Offsets, short(values(rs))), nil
}

func rdReadProcessWrite(t *testing.T, s *server, n names) (string, error) {
	in, out, group := n.get("rpw-in"), n.get("rpw-out"), n.get("rpw-group")
	for _, tp := range []string{in, out} {
		if err := s.createTopic(tp, 1); err != nil {
			return "", err
		}
	}
	inputs := seq("in", 30)
	if err := s.produce(in, 0, inputs...); err != nil {
		return "", err
	}
	var got struct {
		Consumed              int
		TransactionsCommitted bool `json:"transactions_committed"`
		Errors                []string
	}
	if err := rdkafka(s, &got, "rpw", "--input", in, "--output", out, "--group", group, "--txn-id", n.get("rpw-txn"), "--count", "30"); err != nil {
		return "", err
	}
	if got.Consumed != 30 || !got.TransactionsCommitted || len(got.Errors) != 0 {
		return "", fmt.Errorf("read-process-write: consumed %d of 30, committed %v, errors %v", got.Consumed, got.TransactionsCommitted, got.Errors)
	}
	rs, err := s.readCommitted(out)
	if err != nil {
		return "", err
	}
	want := make([]string, len(inputs))
	for i, v := range inputs {
		want[i] = "out-" + v
	}
	if err := sameValues("committed outputs", values(rs), want); err != nil {
		return "", err
	}
	ctx, cancel := s.ctx()
	defer cancel()
	offs, err := s.adm.FetchOffsets(ctx, group)
	if err != nil {
		return "", fmt.Errorf("fetching the offsets of group %s: %w", group, err)
	}
	o, ok := offs.Lookup(in, 0)
	if !ok || o.Err != nil || o.At != 30 {
		return "", fmt.Errorf("group %s's committed offset of %s-0: %+v (found %v), want 30 (send_offsets_to_transaction)", group, in, o, ok)
	}
	return fmt.Sprintf("30 outputs committed %s; group offset %d", short(values(rs)), o.At), nil
}

func rdReadCommitted(t *testing.T, s *server, n names) (string, error) {
	topic := n.get("rc")
	if err := s.createTopic(topic, 1); err != nil {
		return "", err
	}
	steps := []error{
		s.txnProduce(n.get("rc-txn"), topic, true, "c-0", "c-1"),
		s.txnProduce(n.get("rc-txn"), topic, false, "a-0", "a-1"),
		s.produce(topic, 0, "p-0"),
		s.txnProduce(n.get("rc-txn"), topic, true, "c-2"),
	}
	for _, err := range steps {
		if err != nil {
			return "", err
		}
	}
	var got struct {
		Records []struct {
			Partition int32
			Offset    int64
			Value     string
		}
		EOFPartitions []int32 `json:"eof_partitions"`
		Errors        []string
	}
	if err := rdkafka(s, &got, "read-committed", "--topic", topic, "--group", n.get("rc-group")); err != nil {
		return "", err
	}
	var seen []string
	for _, r := range got.Records {
		seen = append(seen, fmt.Sprintf("%d:%s", r.Offset, r.Value))
	}
	vs := make([]string, len(got.Records))
	for i, r := range got.Records {
		vs[i] = r.Value
	}
	if err := sameValues("read_committed consumer", vs, []string{"c-0", "c-1", "p-0", "c-2"}); err != nil {
		return "", err
	}
	if !slices.Equal(got.EOFPartitions, []int32{0}) || len(got.Errors) != 0 {
		return "", fmt.Errorf("read_committed consumer: end of partition reached on %v (want [0]), errors %v", got.EOFPartitions, got.Errors)
	}
	return "offset:value " + strings.Join(seen, " "), nil
}

func rdShare(t *testing.T, s *server, n names) (string, error) {
	topic, group := n.get("share"), n.get("share-group")
	if err := s.createTopic(topic, 1); err != nil {
		return "", err
	}
	if err := s.produce(topic, 0, seq("s", 10)...); err != nil {
		return "", err
	}
	if err := s.setShareEarliest(group); err != nil {
		return "", err
	}
	var got struct {
		Values       []string
		Errors       []string
		CommitErrors []string `json:"commit_errors"`
	}
	if err := rdkafka(s, &got, "share", "--topic", topic, "--group", group, "--count", "10"); err != nil {
		return "", err
	}
	want := seq("s", 10)
	slices.Sort(want)
	if err := sameValues("share consumer (sorted)", got.Values, want); err != nil {
		return "", err
	}
	if len(got.Errors)+len(got.CommitErrors) != 0 {
		return "", fmt.Errorf("share consumer: poll errors %v, commit errors %v", got.Errors, got.CommitErrors)
	}
	ctx, cancel := s.ctx()
	defer cancel()
	d, err := s.adm.DescribeShareGroupOffsets(ctx, group)
	if err != nil {
		return "", fmt.Errorf("describing the share offsets of %s: %w", group, err)
	}
	o, ok := d[group].Offsets.Lookup(topic, 0)
	// Every record was accepted: nothing is left to deliver, lag 0. The
	// start offset is the persisted one, which may lag (Kafka 4.4 answers
	// 0 here, serve the exact 10): both must lie in [0, 10], and the
	// servers are compared on that.
	if !ok || o.Err != nil || o.Lag != 0 || o.StartOffset < 0 || o.StartOffset > 10 {
		return "", fmt.Errorf("share group %s's offsets of %s-0 after every record accepted: start %d lag %d error %v (found %v), want lag 0 and a start offset from 0 to 10", group, topic, o.StartOffset, o.Lag, o.Err, ok)
	}
	t.Logf("%s: share start offset %d", s.name, o.StartOffset)
	return fmt.Sprintf("received %s; start offset in [0, 10], lag %d", short(got.Values), o.Lag), nil
}

func rdFence(t *testing.T, s *server, n names) (string, error) {
	topic := n.get("fence")
	if err := s.createTopic(topic, 1); err != nil {
		return "", err
	}
	var got struct {
		WinnerCommitted bool   `json:"winner_committed"`
		ZombieError     string `json:"zombie_error"`
		ZombieFatal     bool   `json:"zombie_fatal"`
	}
	if err := rdkafka(s, &got, "fence", "--topic", topic, "--txn-id", n.get("fence-txn")); err != nil {
		return "", err
	}
	if !got.WinnerCommitted || got.ZombieError == "" {
		return "", fmt.Errorf("zombie fencing: newer producer committed %v, older producer's commit error %q; want the older fenced", got.WinnerCommitted, got.ZombieError)
	}
	rs, err := s.readCommitted(topic)
	if err != nil {
		return "", err
	}
	if err := sameValues("committed records after fencing", values(rs), []string{"winner"}); err != nil {
		return "", err
	}
	return fmt.Sprintf("older producer failed %s (fatal %v); committed %v", got.ZombieError, got.ZombieFatal, values(rs)), nil
}
