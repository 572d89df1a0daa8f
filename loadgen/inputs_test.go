// This file tests the input bodies and keys of OMB workloads: Kafka's
// murmur2 partitioning, OMB's randomized payload layout, its key pools.

package loadgen

import (
	"bytes"
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sharebench/sharebench/loadgen/targets"
	"github.com/sharebench/sharebench/loadgen/targets/enginetarget"
	"github.com/sharebench/sharebench/workloads"
)

// TestMurmur2 checks the hash against the values Kafka's own UtilsTest
// pins for Utils.murmur2.
func TestMurmur2(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want int32
	}{
		{"21", -973932308}, {"foobar", -790332482}, {"a-little-bit-long-string", -985981536},
		{"a-little-bit-longer-string", -1486304829}, {"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8", -58897971}, {"abc", 479470107},
	} {
		if got := int32(murmur2([]byte(tc.in))); got != tc.want {
			t.Errorf("murmur2(%q) = %d, want %d", tc.in, got, tc.want)
		}
	}
	// Kafka: toPositive(-790332482) = 1357151166, and 1357151166 % 10 = 6.
	if p := keyPartition([]byte("foobar"), 10); p != 6 {
		t.Errorf("keyPartition(foobar, 10) = %d, want 6", p)
	}
}

func TestInputBodies(t *testing.T) {
	t.Parallel()
	const seed = 7
	t.Logf("seed %d", seed)
	payload := filepath.Join(t.TempDir(), "p.data")
	file := bytes.Repeat([]byte("omb!"), 25)
	if err := os.WriteFile(payload, file, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		spec  workloads.Spec
		check func(t *testing.T, b *inputBodies)
	}{
		{"zeros", workloads.Spec{MessageSizeBytes: 64}, func(t *testing.T, b *inputBodies) {
			v := make([]byte, 64)
			v[40] = 1
			b.fill(v, 3)
			if !bytes.Equal(v, make([]byte, 64)) {
				t.Errorf("body %x, want zeros", v)
			}
		}},
		{"payload-file", workloads.Spec{MessageSizeBytes: 100, PayloadFile: payload}, func(t *testing.T, b *inputBodies) {
			v := make([]byte, 100)
			b.fill(v, 0)
			if !bytes.Equal(v, file) {
				t.Errorf("body %q, want the file", v)
			}
		}},
		{"randomized", workloads.Spec{MessageSizeBytes: 100, RandomizedPayloads: true, RandomBytesRatio: 0.5, RandomizedPayloadPoolSize: 3}, func(t *testing.T, b *inputBodies) {
			if len(b.pool) != 3 {
				t.Fatalf("pool of %d, want 3", len(b.pool))
			}
			for i, p := range b.pool {
				// OMB: 50 random bytes, then 50 zeros.
				if !bytes.Equal(p[50:], make([]byte, 50)) || bytes.Count(p[:50], []byte{0}) > 10 {
					t.Errorf("payload %d %x: want random then zeros", i, p)
				}
			}
			v0, v3 := make([]byte, 100), make([]byte, 100)
			b.fill(v0, 0)
			b.fill(v3, 3)
			if !bytes.Equal(v0, v3) || bytes.Equal(b.pool[0], b.pool[1]) {
				t.Errorf("the pool is not cycled through: value 3 is not payload 0, or payloads repeat")
			}
		}},
		{"round-robin-keys", workloads.Spec{MessageSizeBytes: 64, KeyDistributor: workloads.KeyRoundRobin}, func(t *testing.T, b *inputBodies) {
			k := &keyer{b: b}
			first := k.key()
			if len(first) != 10 || !bytes.Equal(first, b.keys[1]) {
				t.Errorf("first key %q, want the pool's second, 10 characters (7 bytes in base64)", first)
			}
			for range keyPoolSize - 1 {
				k.key()
			}
			if got := k.key(); !bytes.Equal(got, first) {
				t.Errorf("after a full cycle key %q, want %q again", got, first)
			}
		}},
		{"random-keys", workloads.Spec{MessageSizeBytes: 64, KeyDistributor: workloads.KeyRandomNano}, func(t *testing.T, b *inputBodies) {
			k := &keyer{b: b, rng: rand.New(rand.NewPCG(seed, 1))}
			seen := map[string]bool{}
			for range 100 {
				seen[string(k.key())] = true
			}
			if len(seen) < 90 {
				t.Errorf("%d distinct keys of 100 random picks from %d", len(seen), keyPoolSize)
			}
		}},
		{"no-key", workloads.Spec{MessageSizeBytes: 64, KeyDistributor: workloads.KeyNone}, func(t *testing.T, b *inputBodies) {
			if k := (&keyer{b: b}).key(); k != nil {
				t.Errorf("NO_KEY gave key %q", k)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b, err := newInputBodies(&tc.spec, rand.New(rand.NewPCG(seed, 0)))
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, b)
		})
	}
}

// TestRunBuildsAndDrainsABacklog runs an OMB consumer backlog: the workers
// poll nothing before the producers have built it (the first output comes
// after the backlog's last input), and the window opens only once it is
// drained, so the run passes with no backlog note.
func TestRunBuildsAndDrainsABacklog(t *testing.T) {
	t.Parallel()
	const backlog = 4000
	spec := quickSpec(t, "explicit")
	spec.ConsumerBacklogSizeGB = float64(backlog*spec.MessageSizeBytes) / (1 << 30)
	if err := spec.Validate(); err != nil || spec.BacklogRecords() != backlog {
		t.Fatalf("backlog spec: %v, %d records", err, spec.BacklogRecords())
	}
	res, err := Run(runCtx(t), Config{Workload: spec, Target: newMemTarget(), Seed: testSeed})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	m := res.Modes[0]
	if m.Error != "" || m.Verify == nil || !m.Verify.Pass {
		t.Fatalf("mode: error %q verdict %+v", m.Error, m.Verify)
	}
	var inputs int64
	for _, s := range m.Series {
		inputs += s.Inputs
		if s.Outputs > 0 {
			if inputs < backlog {
				t.Errorf("second %d: outputs with only %d inputs produced, before the backlog of %d was built", s.T, inputs, backlog)
			}
			break
		}
	}
	for _, n := range m.Notes {
		if strings.Contains(n, "consumer backlog") {
			t.Errorf("note %q", n)
		}
	}
}

// recordingTarget keeps a copy of the first input records its producers
// send (loadgen reuses its buffers, so a copy is what was sent).
type recordingTarget struct {
	*memTarget
	mu   sync.Mutex
	sent []targets.Record
}

type recordingProducer struct {
	targets.Producer
	t *recordingTarget
}

func (r *recordingTarget) NewProducer(ctx context.Context, cfg targets.Config, id int) (targets.Producer, error) {
	p, err := r.memTarget.NewProducer(ctx, cfg, id)
	return &recordingProducer{p, r}, err
}

func (p *recordingProducer) Produce(ctx context.Context, recs []*targets.Record) error {
	p.t.mu.Lock()
	for _, r := range recs {
		if len(p.t.sent) < 2000 {
			p.t.sent = append(p.t.sent, targets.Record{Partition: r.Partition, Key: bytes.Clone(r.Key), Value: bytes.Clone(r.Value)})
		}
	}
	p.t.mu.Unlock()
	return p.Producer.Produce(ctx, recs)
}

// TestRunSendsOMBBodiesAndKeys runs the OMB payload and key settings
// through the producers: every record sent carries the payload file after
// its header, or a pooled payload of OMB's layout; keyed records sit on
// their key's murmur2 partition; and the runs still verify.
func TestRunSendsOMBBodiesAndKeys(t *testing.T) {
	t.Parallel()
	payload := filepath.Join(t.TempDir(), "p.data")
	file := bytes.Repeat([]byte("0123456789abcdef"), 16) // 256 bytes, no zero byte
	if err := os.WriteFile(payload, file, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		set   func(s *workloads.Spec)
		check func(t *testing.T, r targets.Record, parts int32)
	}{
		{"payload-file-round-robin-keys", func(s *workloads.Spec) {
			s.PayloadFile, s.KeyDistributor = payload, workloads.KeyRoundRobin
		}, func(t *testing.T, r targets.Record, parts int32) {
			if !bytes.Equal(r.Value[HeaderBytes:], file[HeaderBytes:]) {
				t.Fatalf("value tail %q, want the payload file's", r.Value[HeaderBytes:])
			}
			if len(r.Key) == 0 || r.Partition != keyPartition(r.Key, parts) {
				t.Fatalf("key %q on partition %d, want its murmur2 partition %d", r.Key, r.Partition, keyPartition(r.Key, parts))
			}
		}},
		{"randomized-no-key", func(s *workloads.Spec) {
			s.RandomizedPayloads, s.RandomBytesRatio, s.RandomizedPayloadPoolSize = true, 0.5, 7
		}, func(t *testing.T, r targets.Record, _ int32) {
			if !bytes.Equal(r.Value[128:], make([]byte, 128)) || bytes.Count(r.Value[HeaderBytes:128], []byte{0}) > 20 {
				t.Fatalf("value %x: want random bytes up to 128, then zeros", r.Value)
			}
			if r.Key != nil {
				t.Fatalf("key %q without a key distributor", r.Key)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			spec := quickSpec(t, "explicit")
			spec.WarmupLength = 0
			tc.set(spec)
			if err := spec.Validate(); err != nil {
				t.Fatal(err)
			}
			tgt := &recordingTarget{memTarget: newMemTarget()}
			res, err := Run(runCtx(t), Config{Workload: spec, Target: tgt, Seed: testSeed})
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if m := res.Modes[0]; m.Error != "" || m.Verify == nil || !m.Verify.Pass {
				t.Fatalf("mode: error %q verdict %+v", m.Error, m.Verify)
			}
			tgt.mu.Lock()
			defer tgt.mu.Unlock()
			if len(tgt.sent) == 0 {
				t.Fatal("nothing sent")
			}
			distinct := map[string]bool{}
			for _, r := range tgt.sent {
				tc.check(t, r, int32(spec.PartitionsPerTopic))
				distinct[string(r.Value[HeaderBytes:])] = true
			}
			if tc.name == "randomized-no-key" && len(distinct) != 7 {
				t.Errorf("%d distinct payloads sent, want the pool's 7", len(distinct))
			}
		})
	}
}

// topicsTarget is the engine target, counting the input records its
// producers send to each topic.
type topicsTarget struct {
	*enginetarget.Target
	mu   sync.Mutex
	sent map[string]int
}

type topicsProducer struct {
	targets.Producer
	t *topicsTarget
}

func (tt *topicsTarget) NewProducer(ctx context.Context, cfg targets.Config, id int) (targets.Producer, error) {
	p, err := tt.Target.NewProducer(ctx, cfg, id)
	return &topicsProducer{p, tt}, err
}

func (p *topicsProducer) Produce(ctx context.Context, recs []*targets.Record) error {
	p.t.mu.Lock()
	for _, r := range recs {
		p.t.sent[r.Topic]++
	}
	p.t.mu.Unlock()
	return p.Producer.Produce(ctx, recs)
}

// TestRunSeveralTopics runs every mode of an OMB workload with three input
// topics on the engine: each topic gets its producers' records, the
// workers' group reads all three, and every mode verifies.
func TestRunSeveralTopics(t *testing.T) {
	t.Parallel()
	eng, err := enginetarget.New(enginetarget.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	tgt := &topicsTarget{Target: eng, sent: map[string]int{}}
	spec := quickSpec(t)
	spec.Topics, spec.PartitionsPerTopic, spec.ProducersPerTopic, spec.Consumers = 3, 2, 1, 3
	spec.TestLength = 500 * time.Millisecond
	if err := spec.Validate(); err != nil {
		t.Fatal(err)
	}
	res, err := Run(runCtx(t), Config{Workload: spec, Target: tgt, Seed: testSeed})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	for _, m := range res.Modes {
		if m.Error != "" || m.Verify == nil || !m.Verify.Pass || m.TotalOutputs != m.TotalInputs {
			t.Errorf("%s: error %q, %d outputs of %d inputs, verdict %+v", m.Mode, m.Error, m.TotalOutputs, m.TotalInputs, m.Verify)
		}
	}
	tgt.mu.Lock()
	defer tgt.mu.Unlock()
	// Five modes, each with its own three input topics.
	if len(tgt.sent) != 3*len(res.Modes) {
		t.Errorf("inputs sent to %d topics, want %d: %v", len(tgt.sent), 3*len(res.Modes), tgt.sent)
	}
	for topic, n := range tgt.sent {
		if n == 0 {
			t.Errorf("no input sent to %s", topic)
		}
	}
}
