// This file tests OpenMessaging Benchmark files: the real ones under
// testdata/omb run unmodified (mapped fields translated, the others listed
// once as ignored), ${VAR:-default} substitutions, free-text names, and
// every error of a file reported at once.

package workloads_test

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sharebench/sharebench/workloads"
)

func TestOMBFilesUnmodified(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		file                             string
		name                             string
		partitions, producers, consumers int
		rate, size                       int
		test                             time.Duration
		ignored                          []string
	}{
		{"1-topic-16-partitions-1kb.yaml", "1-producer-1-consumers-on-1-topic", 16, 1, 1, 50000, 1024, 15 * time.Minute,
			[]string{"payloadFile", "subscriptionsPerTopic", "consumerBacklogSizeGB"}},
		{"1-topic-100-partitions-1kb-4p-4c-200k.yaml", "200k-rate-4-producers-and-4-consumers-on-1-topic-100-partition", 100, 4, 4, 200000, 1024, 5 * time.Minute,
			[]string{"useRandomizedPayloads", "randomBytesRatio", "randomizedPayloadPoolSize", "subscriptionsPerTopic", "consumerBacklogSizeGB"}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			t.Parallel()
			s, notes, err := workloads.LoadWithNotes(filepath.Join("testdata", "omb", tc.file))
			if err != nil {
				t.Fatalf("LoadWithNotes: %v", err)
			}
			if s.Name != tc.name || s.PartitionsPerTopic != tc.partitions || s.ProducersPerTopic != tc.producers ||
				s.Consumers != tc.consumers || s.ProducerRate != tc.rate || s.MessageSizeBytes != tc.size ||
				s.TestDuration() != tc.test || s.Warmup() != time.Minute {
				t.Errorf("translated to %+v", s)
			}
			ignored := ""
			for _, n := range notes {
				if strings.HasPrefix(n, "ignored OpenMessaging Benchmark fields") {
					if ignored != "" {
						t.Errorf("ignored fields listed twice: %q", notes)
					}
					ignored = n
				}
			}
			for _, f := range tc.ignored {
				if strings.Count(ignored, f+" (") != 1 {
					t.Errorf("note %q does not list %s once", ignored, f)
				}
			}
		})
	}
}

func TestOMBSubstitutions(t *testing.T) {
	t.Parallel()
	data := "name: ${SHAREBENCH_TEST_SURELY_UNSET_NAME:-subst}\npartitionsPerTopic: ${SHAREBENCH_TEST_SURELY_UNSET_P:-8}\ntestDurationMinutes: ${SHAREBENCH_TEST_SURELY_UNSET_D:-0.5}\nwarmupDuration: 1s\n"
	s, err := workloads.Parse("subst.yaml", []byte(data))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if s.Name != "subst" || s.PartitionsPerTopic != 8 || s.TestDuration() != 30*time.Second {
		t.Errorf("defaults not substituted: %+v", s)
	}
	_, err = workloads.Parse("unset.yaml", []byte("name: x\npartitionsPerTopic: ${SHAREBENCH_TEST_SURELY_UNSET_P}\n"))
	var e *workloads.Error
	if !errors.As(err, &e) || e.Line != 2 || !strings.Contains(err.Error(), "SHAREBENCH_TEST_SURELY_UNSET_P is not set") {
		t.Errorf("unset variable without default: %v", err)
	}
}

// TestEveryErrorInOneRun gives a file four problems of different kinds:
// all four come back, in file order, each on its own line with its line
// number.
func TestEveryErrorInOneRun(t *testing.T) {
	t.Parallel()
	data := `name: many-errors
partitionsPerTopic: lots
consumers: 2
bogusField: 1
producerRate: -5
transaction:
  maxRecords: x
`
	_, err := workloads.Parse("many.yaml", []byte(data))
	var es workloads.Errors
	if !errors.As(err, &es) {
		t.Fatalf("Parse = %v (%T), want workloads.Errors", err, err)
	}
	want := []string{"many.yaml:2: field \"partitionsPerTopic\"", "many.yaml:4: field \"bogusField\"", "many.yaml:7: field \"transaction.maxRecords\"", "many.yaml:5: field \"producerRate\""}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != len(want) {
		t.Fatalf("%d errors, want %d:\n%v", len(lines), len(want), err)
	}
	for i, w := range want {
		if !strings.Contains(lines[i], w) {
			t.Errorf("error %d %q, want %q", i, lines[i], w)
		}
	}
}
