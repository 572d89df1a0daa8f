// This file tests `sharebench peer` (the produce-only and share-consume-only
// runs behind scripts/peer-bench.sh) against an embedded kfake cluster: what
// it produces it can share-consume, in plain and transactional produce, and
// bad flags give exit code 2 with one line.

package cli_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/sharebench/sharebench/internal/cli"
	"github.com/sharebench/sharebench/reports"
)

func peerRun(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = cli.Main(append([]string{"sharebench", "peer"}, args...), &cli.Env{Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }})
	return code, out.String(), errb.String()
}

func TestPeerProduceThenShareConsume(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(2, "peer-t"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	brokers := strings.Join(c.ListenAddrs(), ",")

	var produced int64
	for _, extra := range [][]string{nil, {"--transaction-duration", "5ms"}} {
		args := append([]string{"produce", "--brokers", brokers, "--topic", "peer-t", "--num-records", "3000",
			"--record-size", "64", "--format", "json"}, extra...)
		code, stdout, stderr := peerRun(t, args...)
		if code != reports.ExitOK {
			t.Fatalf("peer %s: exit %d\n%s%s", strings.Join(args, " "), code, stdout, stderr)
		}
		var res struct {
			Records       int64   `json:"records"`
			Failed        int64   `json:"failed"`
			RecordsPerSec float64 `json:"records_per_sec"`
			Transactions  int64   `json:"transactions"`
			P99Ms         float64 `json:"latency_p99_ms"`
		}
		if err := json.Unmarshal([]byte(stdout), &res); err != nil {
			t.Fatalf("peer produce --format json: %v\n%s", err, stdout)
		}
		if res.Records != 3000 || res.Failed != 0 || res.RecordsPerSec <= 0 || res.P99Ms <= 0 {
			t.Errorf("peer %s: got %+v, want 3000 records, none failed, a rate and a latency", strings.Join(extra, " "), res)
		}
		if txn := extra != nil; txn != (res.Transactions > 0) {
			t.Errorf("peer %s: %d transactions", strings.Join(extra, " "), res.Transactions)
		}
		produced += res.Records
	}

	code, stdout, stderr := peerRun(t, "share-consume", "--brokers", brokers, "--topic", "peer-t", "--group", "peer-g",
		"--num-records", "6000", "--timeout", "20s")
	if code != reports.ExitOK {
		t.Fatalf("peer share-consume: exit %d\n%s%s", code, stdout, stderr)
	}
	// ShareConsumerPerformance's header and line: field 6 is the count.
	ls := strings.Split(strings.TrimSpace(stdout), "\n")
	if len(ls) < 2 || !strings.HasPrefix(ls[0], "start.time, end.time, data.consumed.in.MB") {
		t.Fatalf("peer share-consume printed:\n%s", stdout)
	}
	if f := strings.Split(ls[1], ", "); len(f) != 7 || f[5] != "6000" {
		t.Errorf("peer share-consume line %q: want 7 fields with 6000 records (produced %d)", ls[1], produced)
	}
}

func TestPeerBadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "a subcommand is needed"},
		{[]string{"bogus"}, `unknown subcommand "bogus"`},
		{[]string{"produce", "--num-records", "10"}, "--topic is required"},
		{[]string{"produce", "--topic", "t"}, "--num-records 0: must be positive"},
		{[]string{"share-consume", "--topic", "t", "--num-records", "1"}, "--group is required"},
		{[]string{"produce", "--topic", "t", "--num-records", "1", "--format", "xml"}, `--format "xml"`},
	} {
		code, _, stderr := peerRun(t, tc.args...)
		last := strings.TrimSpace(stderr)
		if i := strings.LastIndex(last, "\n"); i >= 0 {
			last = last[i+1:]
		}
		if code != reports.ExitUsage || !strings.Contains(last, tc.want) {
			t.Errorf("peer %v: exit %d, last stderr line %q; want exit %d and %q", tc.args, code, last, reports.ExitUsage, tc.want)
		}
	}
	if code, stdout, _ := peerRun(t, "--help"); code != reports.ExitOK || !strings.Contains(stdout, "ShareConsumerPerformance") {
		t.Errorf("peer --help: exit %d\n%s", code, stdout)
	}
}

// TestPeerWarmupRecords excludes a warm-up from both tools' steady state,
// as ProducerPerformance --warmup-records does, and pins compression.
func TestPeerWarmupRecords(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(2, "peer-w"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	brokers := strings.Join(c.ListenAddrs(), ",")
	code, stdout, stderr := peerRun(t, "produce", "--brokers", brokers, "--topic", "peer-w", "--num-records", "3000",
		"--record-size", "64", "--warmup-records", "1000", "--compression", "none", "--linger", "0s")
	if code != reports.ExitOK {
		t.Fatalf("peer produce: exit %d\n%s%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "3000 records sent, ") || !strings.Contains(stdout, "\n2000 steady state records sent, ") {
		t.Errorf("want the whole run's line and the steady state's (2000 records):\n%s", stdout)
	}
	code, stdout, stderr = peerRun(t, "share-consume", "--brokers", brokers, "--topic", "peer-w", "--group", "peer-wg",
		"--num-records", "3000", "--timeout", "20s", "--warmup-records", "1000")
	if code != reports.ExitOK || !strings.Contains(stdout, "steady state after ") {
		t.Errorf("peer share-consume --warmup-records: exit %d\n%s%s", code, stdout, stderr)
	}
	if code, _, stderr := peerRun(t, "produce", "--brokers", brokers, "--topic", "peer-w", "--num-records", "10", "--compression", "brotli"); code != reports.ExitUsage || !strings.Contains(stderr, "--compression") {
		t.Errorf("an unknown codec: exit %d %s", code, stderr)
	}
}
