package serve_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sharebench/sharebench/engine"
	"github.com/sharebench/sharebench/serve"
)

// The admin endpoint's actions reach the engine while clients are served:
// a stopped engine refuses produces with a retriable error the client
// retries through, start recovers it with the durable records, and bad
// requests are 4xx answers naming the problem.
func TestAdminControl(t *testing.T) {
	e, s, a := durableServeWithAdmin(t)
	call := func(method, path string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(method, "http://"+a.Addr()+path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, strings.TrimSpace(string(b))
	}
	cl := client(t, s, kgo.DefaultProduceTopic("t"), kgo.AllowAutoTopicCreation())
	produceN(t, cl, "t", 10)

	for _, c := range []struct {
		method, path string
		code         int
		body         string
	}{
		{"GET", "/control/status", 200, "running"},
		{"GET", "/control/kill", 405, "use POST"},
		{"POST", "/control/explode", 400, `unknown action "explode"`},
		{"POST", "/control/share-failover?group=g", 400, "needs group, topic and partition"},
		{"POST", "/control/start", 400, "the engine is running"},
		{"POST", "/control/kill", 200, "kill: "},
		{"POST", "/control/coordinator-crash", 200, "coordinator-crash: "},
		{"POST", "/control/stop", 200, "engine stopped"},
		{"GET", "/control/status", 200, "stopped"},
	} {
		code, body := call(c.method, c.path)
		if code != c.code || !strings.Contains(body, c.body) {
			t.Fatalf("%s %s: %d %q, want %d containing %q", c.method, c.path, code, body, c.code, c.body)
		}
	}
	// A produce while the engine is down is retried until start.
	done := make(chan error, 1)
	go func() { done <- cl.ProduceSync(ctx(t), &kgo.Record{Value: []byte("during")}).FirstErr() }()
	if code, body := call("POST", "/control/start"); code != 200 {
		t.Fatalf("start: %d %s", code, body)
	}
	if err := <-done; err != nil {
		t.Fatalf("produce across stop/start: %v", err)
	}
	_, hw, _, err := e.Offsets(engine.TopicPartition{Topic: "t"})
	if err != nil || hw != 11 {
		t.Fatalf("high watermark after restarts: %d, %v; want 11", hw, err)
	}
	if code, body := call("GET", "/debug/pprof/goroutine?debug=1"); code != 200 || !strings.Contains(body, "goroutine profile") {
		t.Fatalf("pprof: %d %.80q", code, body)
	}
}

func TestAdminRefusesRemote(t *testing.T) {
	if _, err := serve.NewAdmin("0.0.0.0:0", nil, nil); err == nil || !strings.Contains(err.Error(), "not a loopback") {
		t.Fatalf("NewAdmin(0.0.0.0:0): %v", err)
	}
}

// durableServeWithAdmin starts a server over a durable engine in a
// temporary directory, and its admin endpoint, both on loopback ports the
// kernel picks; both close when the test ends.
func durableServeWithAdmin(t *testing.T) (*engine.Engine, *serve.Server, *serve.Admin) {
	t.Helper()
	e, err := engine.New(engine.WithDataDir(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	s, err := serve.New(e, serve.WithListen("127.0.0.1:0"))
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve()
	t.Cleanup(func() { s.Close(); e.Close() })
	a, err := serve.NewAdmin("127.0.0.1:0", serve.NewControl(e), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return e, s, a
}
