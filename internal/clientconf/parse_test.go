// This file tests the tier's own parsing of tool output on text Kafka
// 4.4.0's tools printed; it runs in the default suite, with no client.

package clientconf

import "testing"

func TestTableParsesToolOutput(t *testing.T) {
	t.Parallel()
	// kafka-consumer-groups --describe, as Kafka 4.4.0 printed it.
	out := "\nGROUP             TOPIC                     PARTITION  CURRENT-OFFSET  LOG-END-OFFSET  LAG             CONSUMER-ID     HOST            CLIENT-ID\n" +
		"g-group cc-grouped       0          4               10              6               -               -               -\n" +
		"g-group cc-grouped-other 0          4               10              6               -               -               -\n"
	rows := table(out, "GROUP")
	if got, want := pick(rows, "TOPIC", "CURRENT-OFFSET", "LAG", "CLIENT-ID"),
		"[TOPIC=cc-grouped CURRENT-OFFSET=4 LAG=6 CLIENT-ID=-; TOPIC=cc-grouped-other CURRENT-OFFSET=4 LAG=6 CLIENT-ID=-]"; got != want {
		t.Errorf("table: got %s, want %s", got, want)
	}
	if rows := table("Error: no such group\n", "GROUP"); len(rows) != 0 {
		t.Errorf("table of output with no header: got %v, want no rows", rows)
	}
}

func TestFieldsParsesTopicDescribe(t *testing.T) {
	t.Parallel()
	f := fields("\tTopic: t\tPartition: 1\tLeader: 1\tReplicas: 1\tIsr: 1\tElr: \tLastKnownElr: ")
	if f["Partition"] != "1" || f["Leader"] != "1" || f["Isr"] != "1" || f["Elr"] != "" {
		t.Errorf("fields: got %v", f)
	}
}

func TestNormalizeTakesOutRunNames(t *testing.T) {
	t.Parallel()
	got := normalize("[2026-12-04 18:32:38,312] ERROR topic cc1x-1-altered at 127.0.0.1:39392: no", "cc1x", "127.0.0.1:39392")
	if want := "ERROR topic N-1-altered at BOOTSTRAP: no"; got != want {
		t.Errorf("normalize: got %q, want %q", got, want)
	}
}
