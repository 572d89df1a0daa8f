package cli_test

import (
	"bytes"
	"context"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sharebench/sharebench/internal/cli"
	"github.com/sharebench/sharebench/reports"
)

// TestServeBadFlags: each bad flag is one usage line and exit code 2.
func TestServeBadFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--listen", "0.0.0.0:0"}, "--allow-remote"},
		{[]string{"--listen", "nonsense"}, "want host:port"},
		{[]string{"--txn-share-ack", "94"}, "valid: off, 93, 95"},
		{[]string{"--flush", "never"}, "--flush applies with --data-dir"},
		{[]string{"--shards", "0"}, "valid: 1 to 65536"},
		{[]string{"--retention-bytes", "-1"}, "must not be negative"},
		{[]string{"--block-profile-rate", "-1"}, "must not be negative"},
		{[]string{"--listen", "127.0.0.1:0", "--transaction-version", "3"}, "valid: 1, 2"},
		{[]string{"--listen", "127.0.0.1:0", "--admin-listen", "0.0.0.0:0"}, "not a loopback address"},
		{[]string{"--listen", "0.0.0.0:0", "--allow-remote"}, "--advertise HOST:PORT"},
		{[]string{"--listen", "127.0.0.1:0", "--advertise", "nonsense"}, "--advertise \"nonsense\""},
		{[]string{"--listen", "127.0.0.1:0", "--sasl-user", "nopassword"}, "want USER:PASSWORD"},
		{[]string{"--listen", "127.0.0.1:0", "--sasl-users", "/nonexistent/users"}, "--sasl-users"},
		{[]string{"--listen", "127.0.0.1:0", "--tls-cert", "x.pem"}, "--tls-cert and --tls-key go together"},
		{[]string{"--listen", "127.0.0.1:0", "--idle-timeout", "0s"}, "--idle-timeout 0s must be positive"},
		{[]string{"--listen", "127.0.0.1:0", "--partitions", "20", "--max-partitions-per-topic", "10"}, "raise the cap"},
	} {
		o := sharebench(t, append([]string{"serve"}, tc.args...)...)
		if o.code != reports.ExitUsage || !strings.Contains(o.stderr, tc.want) || len(lines(o.stderr)) != 1 {
			t.Errorf("serve %v: %v\nwant exit 2 and one line containing %q", tc.args, o, tc.want)
		}
	}
}

// TestServeCommand starts `sharebench serve` on a free port, produces and
// consumes through it with franz-go, and stops it with the interrupt.
func TestServeCommand(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	// The advertised address differs from the listen address and reaches
	// the same socket, so the client's metadata round trip checks it.
	advertise := "localhost:" + strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	stop := make(chan struct{})
	var stdout, stderr bytes.Buffer
	done := make(chan int)
	go func() {
		env := &cli.Env{Stdout: &stdout, Stderr: &stderr, Getenv: func(string) string { return "" }, Interrupt: stop}
		done <- cli.Main([]string{"sharebench", "serve", "--listen", addr, "--advertise", advertise, "--txn-share-ack", "off"}, env)
	}()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DefaultProduceTopic("cli-serve"), kgo.AllowAutoTopicCreation(),
		kgo.ConsumeTopics("cli-serve"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.RetryTimeout(20*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx := shortCtx(t)
	if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte("hello")}).FirstErr(); err != nil {
		t.Fatalf("produce through sharebench serve: %v\n%s", err, stderr.String())
	}
	fs := cl.PollFetches(ctx)
	if err := fs.Err(); err != nil || len(fs.Records()) != 1 || string(fs.Records()[0].Value) != "hello" {
		t.Fatalf("fetch through sharebench serve: %v, %d records", err, len(fs.Records()))
	}
	close(stop)
	if code := <-done; code != reports.ExitOK {
		t.Fatalf("serve exited %d: %s", code, stderr.String())
	}
	if !strings.Contains(stdout.String(), "listening on "+addr+", advertised as "+advertise+" (PLAINTEXT; TxnShareAcknowledge: off") {
		t.Errorf("serve printed %q", stdout.String())
	}
}

func shortCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}
