// This file holds kcat's cases: metadata (-L), producing lines (-P) and
// consuming to the end of every partition (-C -e).

package clientconf

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// kcatPath is where Debian's kcat package installs it.
const kcatPath = "/usr/bin/kcat"

func kcatCases() []clientCase {
	return []clientCase{
		{"kcat", "-L (metadata: the broker and the topics)", kcatMetadata},
		{"kcat", "-P (produce lines)", kcatProduce},
		{"kcat", "-C -e (consume, exit at end of partition)", kcatConsume},
		{"kcat", "-C -e read_committed over committed and aborted transactions", kcatConsumeCommitted},
	}
}

func kcat(stdin string, args ...string) (string, error) {
	return commandWithin(nativeTimeout, stdin, kcatPath, args...)
}

func kcatMetadata(t *testing.T, s *server, n names) (string, error) {
	topic := n.get("meta")
	if err := s.createTopic(topic, 3); err != nil {
		return "", err
	}
	out, err := kcat("", "-b", s.addr, "-L", "-J")
	if err != nil {
		return "", err
	}
	var md struct {
		Brokers []struct {
			ID   int32  `json:"id"`
			Name string `json:"name"`
		} `json:"brokers"`
		Topics []struct {
			Topic      string `json:"topic"`
			Err        string `json:"err"`
			Partitions []struct {
				Partition int32  `json:"partition"`
				Leader    int32  `json:"leader"`
				Err       string `json:"err"`
			} `json:"partitions"`
		} `json:"topics"`
	}
	if err := json.Unmarshal([]byte(out), &md); err != nil {
		return "", fmt.Errorf("kcat -L -J printed no JSON metadata (%v): %s", err, tail(out))
	}
	if len(md.Brokers) != 1 || md.Brokers[0].Name != s.addr {
		return "", fmt.Errorf("kcat -L lists brokers %+v, want the one broker at %s", md.Brokers, s.addr)
	}
	for _, tp := range md.Topics {
		if tp.Topic != topic {
			continue
		}
		var parts []string
		for _, p := range tp.Partitions {
			if p.Leader != md.Brokers[0].ID || p.Err != "" {
				return "", fmt.Errorf("kcat -L: %s partition %d: leader %d, error %q; want leader %d, no error", topic, p.Partition, p.Leader, p.Err, md.Brokers[0].ID)
			}
			parts = append(parts, fmt.Sprint(p.Partition))
		}
		slices.Sort(parts)
		if len(parts) != 3 || tp.Err != "" {
			return "", fmt.Errorf("kcat -L: %s has partitions %v (error %q), want 0 1 2", topic, parts, tp.Err)
		}
		return fmt.Sprintf("1 broker at the bootstrap address; %s partitions %v led by it", topic, parts), nil
	}
	return "", fmt.Errorf("kcat -L does not list topic %s", topic)
}

func kcatProduce(t *testing.T, s *server, n names) (string, error) {
	topic := n.get("produce")
	if err := s.createTopic(topic, 1); err != nil {
		return "", err
	}
	var in strings.Builder
	want := make([]string, 10)
	for i := range want {
		fmt.Fprintf(&in, "k%d:line-%d\n", i, i)
		want[i] = fmt.Sprintf("0/%d k%d=line-%d", i, i, i)
	}
	if _, err := kcat(in.String(), "-b", s.addr, "-P", "-t", topic, "-p", "0", "-K", ":"); err != nil {
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
	if err := sameValues("records after kcat -P", got, want); err != nil {
		return "", err
	}
	return strings.Join(got, ", "), nil
}

func kcatConsume(t *testing.T, s *server, n names) (string, error) {
	// Two partitions, the second empty: -e exits once every partition
	// reports its end, the empty one included.
	topic := n.get("consume")
	if err := s.createTopic(topic, 2); err != nil {
		return "", err
	}
	vs := seq("v", 5)
	if err := s.produce(topic, 0, vs...); err != nil {
		return "", err
	}
	out, err := kcat("", "-b", s.addr, "-C", "-t", topic, "-e", "-o", "beginning", "-f", `%p %o %k=%s\n`)
	if err != nil {
		return "", err
	}
	got := strings.Split(strings.TrimSpace(out), "\n")
	want := make([]string, len(vs))
	for i, v := range vs {
		want[i] = fmt.Sprintf("0 %d k%d=%s", i, i, v)
	}
	if err := sameValues("kcat -C -e output", got, want); err != nil {
		return "", err
	}
	return strings.Join(got, ", "), nil
}

func kcatConsumeCommitted(t *testing.T, s *server, n names) (string, error) {
	// The log ends in an abort marker: the reader reaches the end of the
	// partition only by fetching past control batches it never shows.
	topic := n.get("consume-txn")
	if err := s.createTopic(topic, 1); err != nil {
		return "", err
	}
	for _, err := range []error{
		s.txnProduce(n.get("kc-txn"), topic, true, "c-0", "c-1"),
		s.produce(topic, 0, "p-0"),
		s.txnProduce(n.get("kc-txn"), topic, false, "a-0", "a-1"),
	} {
		if err != nil {
			return "", err
		}
	}
	out, err := kcat("", "-b", s.addr, "-C", "-t", topic, "-e", "-o", "beginning", "-X", "isolation.level=read_committed", "-f", `%o %s\n`)
	if err != nil {
		return "", err
	}
	got := strings.Split(strings.TrimSpace(out), "\n")
	// c-0 0, c-1 1, commit marker 2, p-0 3.
	if err := sameValues("kcat -C -e read_committed output", got, []string{"0 c-0", "1 c-1", "3 p-0"}); err != nil {
		return "", err
	}
	return strings.Join(got, ", "), nil
}
