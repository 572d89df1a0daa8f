// This file pins the peer tools' text output, the lines Kafka's own tools
// print (scripts/peer-bench.sh compares them field by field), and the
// errors a result carries; runs against a cluster are tested through the
// CLI (internal/cli/peer_test.go).

package peer

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestProduceResultText(t *testing.T) {
	t.Parallel()
	lat := LatencyMs{AvgMs: 1.5, MaxMs: 9, P50Ms: 1, P95Ms: 3, P99Ms: 4, P999Ms: 8.25}
	r := &ProduceResult{Records: 3000, RecordBytes: 64, RecordsPerSec: 1234.56, MBPerSec: 0.075, Transactions: 7, LatencyMs: lat,
		Steady:          &ProduceSteady{Records: 2000, RecordsPerSec: 1000, MBPerSec: 0.06, LatencyMs: lat},
		transactionalID: "tx", transactionDuration: 100 * time.Millisecond}
	var b bytes.Buffer
	r.WriteText(&b)
	want := `3000 records sent, 1234.6 records/sec (0.07 MB/sec), 1.50 ms avg latency, 9.00 ms max latency, 1.00 ms 50th, 3.00 ms 95th, 4.00 ms 99th, 8.25 ms 99.9th.
2000 steady state records sent, 1000.0 records/sec (0.06 MB/sec), 1.50 ms avg latency, 9.00 ms max latency, 1.00 ms 50th, 3.00 ms 95th, 4.00 ms 99th, 8.25 ms 99.9th.
sharebench: 7 transactions (tx, a commit every 100ms)
`
	if got := b.String(); got != want {
		t.Errorf("got\n%swant\n%s", got, want)
	}
	if err := r.Err(); err != nil {
		t.Errorf("no failed record: Err() = %v", err)
	}
	cause := errors.New("boom")
	r.Failed, r.firstErr = 2, cause
	if err := r.Err(); !errors.Is(err, cause) || err.Error() != "peer produce: 2 of 3000 records failed: boom" {
		t.Errorf("two failed records: Err() = %v", err)
	}
}

func TestShareConsumeResultText(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 1, 2, 3, 4, 5, 6e6, time.UTC)
	r := &ShareConsumeResult{Start: start, End: start.Add(1500 * time.Millisecond), Records: 6000, Bytes: 3 << 20,
		MBPerSec: 2, RecordsPerSec: 4000, FirstRecordMs: 12, SteadyPerSec: 4100.25, Polls: 12, PollP50Ms: 0.5, PollP99Ms: 2,
		WarmupRecords: 1000, SteadyAfterWarmupPerSec: 4200}
	var b bytes.Buffer
	r.WriteText(&b)
	want := `start.time, end.time, data.consumed.in.MB, MB.sec, nMsg.sec, data.consumed.in.nMsg, fetch.time.ms
2026-01-02 03:04:05:006, 2026-01-02 03:04:06:506, 3.0000, 2.0000, 4000.0000, 6000, 1500
sharebench: first record after 12 ms, then 4100.2 records/s; 12 polls, poll p50 0.50 ms, p99 2.00 ms
sharebench: steady state after 1000 warm-up records: 4200.0 records/s
`
	if got := b.String(); got != want {
		t.Errorf("got\n%swant\n%s", got, want)
	}
	r.TimedOut, r.wanted, r.timeout = true, 9000, 10*time.Second
	if err := r.Err(); err == nil || !strings.HasPrefix(err.Error(), "peer share-consume: got 6000 of 9000 records: none came for 10s") {
		t.Errorf("timed out: Err() = %v", err)
	}
}

func TestConfigErrorIsErrConfig(t *testing.T) {
	t.Parallel()
	cause := errors.New("bad option")
	err := fmt.Errorf("peer produce: %w", configError{cause})
	if !errors.Is(err, ErrConfig) || !errors.Is(err, cause) || err.Error() != "peer produce: bad option" {
		t.Errorf("configError: Is(ErrConfig) %v, Is(cause) %v, text %q", errors.Is(err, ErrConfig), errors.Is(err, cause), err)
	}
}
