// This file holds the tier's frame: the gate, the two servers (sharebench
// serve in process, the Kafka broker from SHAREBENCH_KAFKA), the run of
// every case against each, the agreement check and the conformance table.

package clientconf

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sharebench/sharebench/engine"
	"github.com/sharebench/sharebench/serve"
)

var update = flag.Bool("update", false, "write the conformance table to docs/conformance.md")

const (
	envClients = "SHAREBENCH_CLIENTS"
	envKafka   = "SHAREBENCH_KAFKA"
	tablePath  = "../../docs/conformance.md"
)

// toolTimeout bounds one client invocation and one readback: a client that
// hangs (a consumer that never sees the end of a partition) fails its case
// with what it printed instead of stalling the tier. A JVM tool on a loaded
// 2-core machine takes seconds to start, hence the margin.
const toolTimeout = 2 * time.Minute

// nativeTimeout bounds one kcat run: it starts in milliseconds, so a minute
// is only ever spent waiting for an end of partition that never comes.
const nativeTimeout = time.Minute

// server is one column of the table: where the clients connect, and the
// project's own franz-go clients the cases set up and read back with.
type server struct {
	name string
	addr string
	cl   *kgo.Client
	adm  *kadm.Client
}

// clientCase is one row: a client, one operation, and the run that drives
// the client against a server, checks what it printed and returns what it
// observed (compared between the servers once ids, timestamps and the
// run's nonce are taken out).
type clientCase struct {
	client string
	op     string
	run    func(t *testing.T, s *server, n names) (string, error)
}

// names gives each case its own topics, groups and transactional ids, the
// same on both servers; the run's nonce keeps a rerun against the same
// Kafka broker clear of the last run's state.
type names struct{ prefix string }

func (n names) get(what string) string { return n.prefix + "-" + what }

// cell is one case's outcome against one server.
type cell struct {
	ran bool
	obs string
	err error
}

func (c cell) ok() bool { return c.ran && c.err == nil }

// TestClients runs every client case against serve and, when
// SHAREBENCH_KAFKA is set, against Kafka; each case checks its own output,
// and the two servers must agree on what the clients observed.
func TestClients(t *testing.T) {
	if os.Getenv(envClients) != "1" {
		t.Skipf("client conformance tier is off: %s=1 %s=127.0.0.1:9092 go test -count=1 -v -run TestClients ./internal/clientconf/ (Java 17, python3 with confluent-kafka 2.16.1 and kcat needed; see internal/clientconf/doc.go)", envClients, envKafka)
	}
	nonce := "cc" + strconv.FormatInt(time.Now().UnixNano()%1e10, 36)
	t.Logf("names of this run start with %s", nonce)
	servers := []*server{startServe(t)}
	if b := os.Getenv(envKafka); b != "" {
		servers = append(servers, connect(t, "Kafka 4.4", b))
	} else if *update {
		t.Fatalf("-update writes both columns: set %s to a Kafka 4.4 broker (scripts/kafka/up)", envKafka)
	}
	cases := allCases()
	res := make([][]cell, len(servers))
	t.Run("servers", func(t *testing.T) {
		for i, s := range servers {
			res[i] = make([]cell, len(cases))
			t.Run(s.name, func(t *testing.T) {
				t.Parallel()
				for j, c := range cases {
					t.Run(c.client+"/"+c.op, func(t *testing.T) {
						obs, err := c.run(t, s, names{prefix: nonce + "-" + strconv.Itoa(j)})
						res[i][j] = cell{ran: true, obs: strings.ReplaceAll(obs, nonce, "N")}
						if err != nil {
							t.Errorf("%s %s against %s: %v", c.client, c.op, s.name, err)
							res[i][j].err = errors.New(normalize(err.Error(), nonce, s.addr))
							return
						}
						t.Logf("%s observed: %s", s.name, res[i][j].obs)
					})
				}
			})
		}
	})
	agree := make([]string, len(cases))
	var differ strings.Builder
	for j, c := range cases {
		switch {
		case len(servers) < 2:
			agree[j] = "not compared: " + envKafka + " unset"
		case !res[0][j].ok() || !res[1][j].ok():
			agree[j] = "not compared: a side failed"
		case res[0][j].obs != res[1][j].obs:
			agree[j] = "differ (below)"
			fmt.Fprintf(&differ, "- %s, %s:\n  - serve: %s\n  - Kafka 4.4: %s\n", c.client, c.op, res[0][j].obs, res[1][j].obs)
			t.Errorf("%s %s: serve and Kafka disagree\n  serve: %s\n  Kafka: %s", c.client, c.op, res[0][j].obs, res[1][j].obs)
		default:
			agree[j] = "agree"
		}
	}
	table := formatTable(cases, servers, res, agree)
	if differ.Len() > 0 {
		table += "\nWhere both servers passed but the clients observed different things:\n\n" + differ.String()
	}
	fmt.Print("\n" + table)
	if *update {
		if err := os.WriteFile(tablePath, []byte(tableHeader+table), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// tableHeader opens docs/conformance.md; the table under it is generated.
const tableHeader = `# Client conformance: serve beside Kafka 4.4

Clients this project did not write — Kafka 4.4.0's Java tools, librdkafka 2.16 through
confluent-kafka, kcat — run against ` + "`sharebench serve`" + ` and against a one-node Kafka 4.4.0
broker (scripts/kafka/up). Each case checks what the client printed, then the two servers' answers
are compared once ids, timestamps and the run's names are taken out. The tier is
` + "`internal/clientconf`" + `; the real-Kafka lane of CI runs it:

` + "```" + `
SHAREBENCH_CLIENTS=1 SHAREBENCH_KAFKA=127.0.0.1:9092 go test -count=1 -v -run TestClients ./internal/clientconf/
` + "```" + `

Add ` + "`-update`" + ` to rewrite the table below. A cell is ` + "`ok`" + ` or the check that failed;
"agree" means both servers passed and the clients observed the same.

`

// formatTable is the conformance table in Markdown: client, operation, one
// column per server, agreement.
func formatTable(cases []clientCase, servers []*server, res [][]cell, agree []string) string {
	var b strings.Builder
	b.WriteString("| client | operation | serve | Kafka 4.4 | serve = Kafka |\n|---|---|---|---|---|\n")
	for j, c := range cases {
		cols := []string{c.client, c.op}
		for i := range 2 {
			switch {
			case i >= len(servers):
				cols = append(cols, "not run: "+envKafka+" unset")
			case !res[i][j].ran:
				cols = append(cols, "not run")
			case res[i][j].err != nil:
				cols = append(cols, "FAIL: "+oneLine(res[i][j].err.Error()))
			default:
				cols = append(cols, "ok")
			}
		}
		cols = append(cols, agree[j])
		b.WriteString("| " + strings.Join(cols, " | ") + " |\n")
	}
	return b.String()
}

// logStamp is the timestamp a Java tool's log line opens with.
var logStamp = regexp.MustCompile(`\[\d{4}-\d\d-\d\d [\d:,.]+\] `)

// normalize takes a run's own names, the server's address and log
// timestamps out of a message, so the table reads the same run to run.
func normalize(msg, nonce, addr string) string {
	msg = strings.ReplaceAll(msg, nonce, "N")
	msg = strings.ReplaceAll(msg, addr, "BOOTSTRAP")
	return logStamp.ReplaceAllString(msg, "")
}

// oneLine is an error's message fit for a table cell: one line, bounded,
// with Markdown's cell separator escaped.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 400 {
		s = s[:400] + "…"
	}
	return strings.ReplaceAll(s, "|", `\|`)
}

// startServe runs sharebench serve over an in-memory engine on a free
// loopback port.
func startServe(t *testing.T) *server {
	t.Helper()
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
	return connect(t, "serve", s.Addr())
}

// connect opens the project's clients to a server and checks it answers.
func connect(t *testing.T, name, addr string) *server {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatalf("%s at %s: %v", name, addr, err)
	}
	t.Cleanup(cl.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := cl.Ping(ctx); err != nil {
		t.Fatalf("%s at %s is unreachable (for Kafka: scripts/kafka/up, then %s=127.0.0.1:9092): %v", name, addr, envKafka, err)
	}
	return &server{name: name, addr: addr, cl: cl, adm: kadm.NewClient(cl)}
}

// command runs one client process with stdin and returns its stdout; a
// non-zero exit or toolTimeout is an error carrying the end of its stderr.
func command(stdin string, name string, args ...string) (string, error) {
	return commandWithin(toolTimeout, stdin, name, args...)
}

// commandWithin is command bounded by timeout.
func commandWithin(timeout time.Duration, stdin string, name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Stdin = strings.NewReader(stdin)
	cmd.Env = append(os.Environ(), "KAFKA_TOOL_HEAP_OPTS=-Xmx256m -XX:TieredStopAtLevel=1 -XX:+UseSerialGC")
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		return stdout.String(), fmt.Errorf("%s did not exit within %v; stdout: %s; stderr: %s", filepath.Base(name), timeout, tail(stdout.String()), tail(stderr.String()))
	}
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return stdout.String(), fmt.Errorf("%s exited %d: %s", filepath.Base(name), ee.ExitCode(), tail(stderr.String()+stdout.String()))
		}
		return stdout.String(), fmt.Errorf("%s: %w", filepath.Base(name), err)
	}
	return stdout.String(), nil
}

// tail is the last lines of a client's output that say something: Java's
// deprecation and logging noise is left out.
func tail(s string) string {
	var keep []string
	for _, l := range strings.Split(s, "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.Contains(l, "WARN") || strings.HasPrefix(l, "at ") || strings.Contains(l, "deprecated") {
			continue
		}
		keep = append(keep, l)
	}
	if len(keep) > 4 {
		keep = keep[len(keep)-4:]
	}
	return strings.Join(keep, " / ")
}

// allCases is every row of the table, in the order they run.
func allCases() []clientCase {
	return slices.Concat(javaCases(), rdkafkaCases(), kcatCases())
}
