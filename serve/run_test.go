package serve_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/sharebench/sharebench/internal/cli"
)

// TestRunEveryModeThroughKafkaTarget runs `sharebench run --target kafka`
// against the server with every mode, transactional included, and wants
// every verdict PASS.
func TestRunEveryModeThroughKafkaTarget(t *testing.T) {
	if testing.Short() {
		t.Skip("runs five modes over the wire (about 20s)")
	}
	for _, key := range []string{"95", "93"} {
		t.Run("txn-share-ack="+key, func(t *testing.T) {
			var opt = serveKey(key)
			s, _ := start(t, opt)
			modes := "implicit,explicit,deferred,transactional,classic-eos"
			if key == "93" {
				modes = "transactional"
			}
			var stdout, stderr bytes.Buffer
			env := &cli.Env{Stdout: &stdout, Stderr: &stderr, Getenv: func(string) string { return "" }}
			code := cli.Main([]string{"sharebench", "run", "--workload", "../internal/cli/testdata/tiny.yaml", "--target", "kafka",
				"--brokers", s.Addr(), "--modes", modes, "--out", t.TempDir()}, env)
			out := stdout.String()
			if code != 0 {
				t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, stderr.String())
			}
			for _, m := range strings.Split(modes, ",") {
				found := false
				for _, line := range strings.Split(out, "\n") {
					f := strings.Fields(line)
					if len(f) > 0 && f[0] == m {
						found = true
						if f[len(f)-1] != "PASS" {
							t.Errorf("mode %s: %s", m, line)
						}
					}
				}
				if !found {
					t.Errorf("mode %s: no result line in\n%s", m, out)
				}
			}
		})
	}
}
