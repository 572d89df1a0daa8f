// This file runs compressed input through every mode on each target, as
// scripted in testdata/compression.txt: the engine target (in process,
// where compression.type is noted as not applied), sharebench serve (in
// process) and kfake, each run verified by the verifier. On the two Kafka
// protocol targets the run keeps its topics, and every input and output
// batch is read back with franz-go to show which codec it travelled in.

package cli_test

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sharebench/sharebench/engine"
	"github.com/sharebench/sharebench/loadgen/result"
	"github.com/sharebench/sharebench/serve"
)

// codecNames are kgo's CompressionType numbers by Kafka's name.
var codecNames = []string{"none", "gzip", "snappy", "lz4", "zstd"}

func TestCompressionEveryModeEveryTarget(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("-short: twelve runs of every mode")
	}
	brokers := map[string]func(t *testing.T) string{
		"serve": func(t *testing.T) string {
			e, err := engine.New()
			if err != nil {
				t.Fatal(err)
			}
			s, err := serve.New(e, serve.WithListen("127.0.0.1:0"))
			if err != nil {
				t.Fatal(err)
			}
			go s.Serve()
			t.Cleanup(func() { s.Close(); e.Close() })
			return s.Addr()
		},
		"kfake": func(t *testing.T) string {
			c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.BrokerConfigs(map[string]string{"share.record.lock.sweep.interval.ms": "100"}))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(c.Close)
			return strings.Join(c.ListenAddrs(), ",")
		},
	}
	datadriven.RunTest(t, "testdata/compression.txt", func(t *testing.T, d *datadriven.TestData) string {
		if d.Cmd != "run" {
			d.Fatalf(t, "unknown command %q (want run)", d.Cmd)
		}
		var target, codec string
		d.ScanArgs(t, "target", &target)
		d.ScanArgs(t, "compression", &codec)
		out := t.TempDir()
		args := []string{"run", "--workload", "testdata/compressed.yaml", "--compression", codec,
			"--out", out, "--quiet", "--no-report", "--seed", "11"}
		var addr string
		if target != "engine" {
			newBrokers, ok := brokers[target]
			if !ok {
				d.Fatalf(t, "unknown target %q (want engine, serve or kfake)", target)
			}
			addr = newBrokers(t)
			args = append(args, "--target", "kafka", "--brokers", addr, "--keep")
		}
		o := sharebench(t, args...)
		res, err := result.Read(out + "/" + result.FileName)
		if err != nil {
			t.Fatalf("%v\nreading the result: %v", o, err)
		}
		var b strings.Builder
		fmt.Fprintf(&b, "exit %d, compression %s\n", o.code, res.Compression)
		for _, n := range res.Env.Notes {
			if strings.Contains(n, "compression.type") {
				fmt.Fprintf(&b, "note: %s\n", n)
			}
		}
		for _, m := range res.Modes {
			switch {
			case m.Unsupported != "":
				fmt.Fprintf(&b, "%s: unsupported\n", m.Mode)
			case m.Error != "":
				fmt.Fprintf(&b, "%s: error %s\n", m.Mode, m.Error)
			case m.Verify == nil:
				fmt.Fprintf(&b, "%s: not judged\n", m.Mode)
			case m.Verify.Pass && m.TotalInputs > 0 && m.TotalOutputs > 0:
				fmt.Fprintf(&b, "%s: PASS\n", m.Mode)
			default:
				fmt.Fprintf(&b, "%s: FAIL (%d inputs, %d outputs, counts %v)\n", m.Mode, m.TotalInputs, m.TotalOutputs, m.Verify.Counts)
			}
		}
		if addr != "" {
			fmt.Fprintf(&b, "batches: %s\n", batchCodecs(t, addr, res.TopicPrefix))
		}
		return b.String()
	})
}

// batchCodecs reads every topic of the run (its names start with prefix)
// from the start, read_uncommitted, and lists the codecs its batches came
// in, for the input topics and the output topics apart: "in gzip; out
// gzip". A producer sends a batch uncompressed when compressing would not
// shrink it, so "none" is left out when the codec was seen too.
func batchCodecs(t *testing.T, addr, prefix string) string {
	t.Helper()
	ctx := context.Background()
	adm, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(addr, ",")...))
	if err != nil {
		t.Fatal(err)
	}
	defer adm.Close()
	topics, err := kadm.NewClient(adm).ListTopics(ctx)
	if err != nil {
		t.Fatal(err)
	}
	hooks := &codecHook{seen: map[string]map[string]bool{}}
	var names []string
	want := map[string]int64{}
	for _, td := range topics.Sorted() {
		if !strings.HasPrefix(td.Topic, prefix) {
			continue
		}
		names = append(names, td.Topic)
	}
	ends, err := kadm.NewClient(adm).ListEndOffsets(ctx, names...)
	if err != nil {
		t.Fatal(err)
	}
	ends.Each(func(o kadm.ListedOffset) { want[fmt.Sprintf("%s/%d", o.Topic, o.Partition)] = o.Offset })
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(addr, ",")...), kgo.ConsumeTopics(names...),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.WithHooks(hooks))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	// Read until a poll brings nothing more and every partition is read to
	// near its end (its last offsets may be transaction markers, which
	// carry no record).
	got := map[string]int64{}
	near := func() bool {
		for tp, n := range want {
			if got[tp] < n-4 {
				return false
			}
		}
		return true
	}
	for empty := 0; ; {
		pctx, cancel := context.WithTimeout(ctx, time.Second)
		fs := cl.PollFetches(pctx)
		cancel()
		fs.EachRecord(func(r *kgo.Record) {
			k := fmt.Sprintf("%s/%d", r.Topic, r.Partition)
			got[k] = max(got[k], r.Offset+1)
		})
		if fs.NumRecords() > 0 {
			empty = 0
			continue
		}
		if near() {
			break
		}
		if empty++; empty == 20 {
			t.Fatalf("reading the run's topics back: stuck at %v of %v", got, want)
		}
	}
	hooks.mu.Lock()
	defer hooks.mu.Unlock()
	var parts []string
	for _, kind := range []string{"in", "out"} {
		var cs []string
		for c := range hooks.seen[kind] {
			cs = append(cs, c)
		}
		sort.Strings(cs)
		if len(cs) > 1 {
			cs = slices.DeleteFunc(cs, func(c string) bool { return c == "none" })
		}
		parts = append(parts, kind+" "+strings.Join(cs, ","))
	}
	return strings.Join(parts, "; ")
}

// codecHook records the codec of every batch a client reads, by the kind
// of topic ("in" or "out", from the run's topic names).
type codecHook struct {
	mu   sync.Mutex
	seen map[string]map[string]bool
}

func (h *codecHook) OnFetchBatchRead(_ kgo.BrokerMetadata, topic string, _ int32, m kgo.FetchBatchMetrics) {
	kind := "in"
	if strings.HasSuffix(topic, "-out") {
		kind = "out"
	} else if strings.Contains(topic, "dlq") {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.seen[kind] == nil {
		h.seen[kind] = map[string]bool{}
	}
	name := fmt.Sprint(m.CompressionType)
	if int(m.CompressionType) < len(codecNames) {
		name = codecNames[m.CompressionType]
	}
	h.seen[kind][name] = true
}
