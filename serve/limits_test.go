package serve_test

import (
	"bytes"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sharebench/sharebench/engine"
	"github.com/sharebench/sharebench/serve"
)

// logBuf is a logger the server's goroutines may write to at once.
type logBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// roundTrip sends req on c and decodes the response into resp.
func roundTrip(t *testing.T, c net.Conn, req kmsg.Request, version int16) kmsg.Response {
	t.Helper()
	if _, err := c.Write(sized(frame(req, version))); err != nil {
		t.Fatalf("%T: write: %v", req, err)
	}
	var size [4]byte
	if _, err := io.ReadFull(c, size[:]); err != nil {
		t.Fatalf("%T: no response: %v", req, err)
	}
	body := make([]byte, binary.BigEndian.Uint32(size[:]))
	if _, err := io.ReadFull(c, body); err != nil {
		t.Fatalf("%T: truncated response: %v", req, err)
	}
	resp := req.ResponseKind()
	resp.SetVersion(version)
	body = body[4:] // correlation id
	if resp.IsFlexible() && req.Key() != int16(kmsg.ApiVersions) {
		body = body[1:] // header tags (none)
	}
	if err := resp.ReadFrom(body); err != nil {
		t.Fatalf("%T: %v", resp, err)
	}
	return resp
}

// TestIdleAndHalfSentClosed: at a cap of 20 connections, 19 idle ones and
// one that sent half a frame are closed after their timeouts, and their
// slots let a new client in.
func TestIdleAndHalfSentClosed(t *testing.T) {
	var log logBuf
	s, _ := start(t, serve.WithMaxConns(20), serve.WithLogger(&log),
		serve.WithIdleTimeout(300*time.Millisecond), serve.WithPartialFrameTimeout(200*time.Millisecond))
	var conns []net.Conn
	for range 19 {
		c := dial(t, s)
		// A round trip: the server has accepted and counted it.
		roundTrip(t, c, kmsg.NewPtrApiVersionsRequest(), 3)
		conns = append(conns, c)
	}
	half := dial(t, s)
	f := sized(frame(kmsg.NewPtrMetadataRequest(), 12))
	if _, err := half.Write(f[:len(f)/2]); err != nil {
		t.Fatal(err)
	}
	conns = append(conns, half)
	for i, c := range conns {
		if !closed(t, c) {
			t.Fatalf("connection %d still open past its timeout", i)
		}
	}
	c := dial(t, s)
	if resp := roundTrip(t, c, kmsg.NewPtrApiVersionsRequest(), 3).(*kmsg.ApiVersionsResponse); resp.ErrorCode != 0 {
		t.Fatalf("new client after the timeouts: ApiVersions error %d", resp.ErrorCode)
	}
	got := log.String()
	if n := strings.Count(got, "idle for 300ms (--idle-timeout)"); n != 19 {
		t.Errorf("%d idle closes logged, want 19:\n%s", n, got)
	}
	if !strings.Contains(got, "request frame incomplete 200ms after its first byte (--partial-request-timeout)") {
		t.Errorf("half-sent frame's close not logged:\n%s", got)
	}
}

// TestMillionPartitionsRefused: CreateTopics for 1 000 000 partitions (a
// 40-byte request) is refused with INVALID_PARTITIONS naming the flag,
// and the server allocates nothing near what the count would take.
func TestMillionPartitionsRefused(t *testing.T) {
	s, e := start(t)
	c := dial(t, s)
	req := kmsg.NewPtrCreateTopicsRequest()
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = "huge", 1_000_000, 1
	req.Topics = append(req.Topics, rt)
	req.TimeoutMillis = 5000
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	resp := roundTrip(t, c, req, 7).(*kmsg.CreateTopicsResponse)
	runtime.ReadMemStats(&after)
	got := resp.Topics[0]
	if got.ErrorCode != kerr.InvalidPartitions.Code || got.ErrorMessage == nil || !strings.Contains(*got.ErrorMessage, "--max-partitions-per-topic") ||
		!strings.Contains(*got.ErrorMessage, "10000") {
		t.Fatalf("error %d %v, want %d (INVALID_PARTITIONS) naming the cap of 10000 and --max-partitions-per-topic",
			got.ErrorCode, kmsg.StringPtr(deref(got.ErrorMessage)), kerr.InvalidPartitions.Code)
	}
	// An idle partition costs the engine about 420 bytes: a million would
	// be hundreds of megabytes.
	grew := after.TotalAlloc - before.TotalAlloc
	if grew > 32<<20 {
		t.Errorf("refusing the request allocated %d bytes", grew)
	}
	t.Logf("refusing 1 000 000 partitions allocated %d bytes", grew)
	if _, err := e.Partitions("huge"); !errors.Is(err, engine.ErrUnknownTopicOrPartition) {
		t.Errorf("refused topic exists: %v", err)
	}
}

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}

// TestTotalPartitionCap: past the cap on all partitions, CreateTopics (and
// its validate-only form) answers POLICY_VIOLATION naming --max-partitions,
// and a topic Metadata would auto-create is refused the same way.
func TestTotalPartitionCap(t *testing.T) {
	s, e := start(t, serve.WithMaxPartitions(10), serve.WithMaxPartitionsPerTopic(8), serve.WithDefaultPartitions(3))
	c := dial(t, s)
	create := func(name string, n int32, validate bool) kmsg.CreateTopicsResponseTopic {
		req := kmsg.NewPtrCreateTopicsRequest()
		rt := kmsg.NewCreateTopicsRequestTopic()
		rt.Topic, rt.NumPartitions, rt.ReplicationFactor = name, n, 1
		req.Topics, req.ValidateOnly = append(req.Topics, rt), validate
		return roundTrip(t, c, req, 7).(*kmsg.CreateTopicsResponse).Topics[0]
	}
	for _, tc := range []struct {
		name     string
		n        int32
		validate bool
		want     int16
		flag     string
	}{
		{"nine", 9, false, kerr.InvalidPartitions.Code, "--max-partitions-per-topic"},
		{"eight", 8, false, 0, ""},
		{"three", 3, true, kerr.PolicyViolation.Code, "--max-partitions"},
		{"three", 3, false, kerr.PolicyViolation.Code, "--max-partitions"},
		{"two", 2, true, 0, ""},
		{"two", 2, false, 0, ""},
	} {
		got := create(tc.name, tc.n, tc.validate)
		if got.ErrorCode != tc.want || (tc.flag != "" && !strings.Contains(deref(got.ErrorMessage), tc.flag+")")) {
			t.Errorf("create %s with %d (validate only %v): error %d %q, want %d naming %s",
				tc.name, tc.n, tc.validate, got.ErrorCode, deref(got.ErrorMessage), tc.want, tc.flag)
		}
	}
	md := kmsg.NewPtrMetadataRequest()
	mt := kmsg.NewMetadataRequestTopic()
	mt.Topic = kmsg.StringPtr("auto")
	md.Topics, md.AllowAutoTopicCreation = append(md.Topics, mt), true
	if got := roundTrip(t, c, md, 12).(*kmsg.MetadataResponse).Topics[0]; got.ErrorCode != kerr.PolicyViolation.Code {
		t.Errorf("auto-creating past the total cap: error %d, want %d (POLICY_VIOLATION)", got.ErrorCode, kerr.PolicyViolation.Code)
	}
	if topics := e.Topics(); len(topics) != 2 {
		t.Errorf("topics %v, want eight and two", topics)
	}
}

// TestAdvertise: Metadata, FindCoordinator and DescribeCluster name the
// advertised address, and a wildcard listen address open to remote
// clients needs one.
func TestAdvertise(t *testing.T) {
	if _, err := serve.New(nil, serve.WithListen("0.0.0.0:0"), serve.WithAllowRemote(true)); !errors.Is(err, serve.ErrAdvertise) ||
		!strings.Contains(err.Error(), "--advertise HOST:PORT") {
		t.Errorf("wildcard listen without an advertised address: %v, want ErrAdvertise naming --advertise", err)
	}
	for _, bad := range []string{"nonsense", "0.0.0.0:9092", "host:0", ":9092"} {
		if _, err := serve.New(nil, serve.WithAdvertise(bad)); !errors.Is(err, serve.ErrConfig) || !strings.Contains(err.Error(), "--advertise") {
			t.Errorf("advertising %q: %v, want a configuration error naming --advertise", bad, err)
		}
	}
	s, _ := start(t, serve.WithAdvertise("broker.example.com:19092"))
	if s.Addr() != "broker.example.com:19092" {
		t.Errorf("Addr %s, want the advertised address", s.Addr())
	}
	c, err := net.Dial("tcp", s.ListenAddr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	md := roundTrip(t, c, kmsg.NewPtrMetadataRequest(), 12).(*kmsg.MetadataResponse)
	fc := kmsg.NewPtrFindCoordinatorRequest()
	fc.CoordinatorKeys = []string{"g"}
	fcr := roundTrip(t, c, fc, 6).(*kmsg.FindCoordinatorResponse)
	dc := roundTrip(t, c, kmsg.NewPtrDescribeClusterRequest(), 1).(*kmsg.DescribeClusterResponse)
	for what, got := range map[string]string{
		"Metadata":        md.Brokers[0].Host + ":" + itoa(md.Brokers[0].Port),
		"FindCoordinator": fcr.Coordinators[0].Host + ":" + itoa(fcr.Coordinators[0].Port),
		"DescribeCluster": dc.Brokers[0].Host + ":" + itoa(dc.Brokers[0].Port),
	} {
		if got != "broker.example.com:19092" {
			t.Errorf("%s names %s, want broker.example.com:19092", what, got)
		}
	}
}

func itoa(n int32) string { return strconv.Itoa(int(n)) }

// TestIdleTimeoutSparesInFlight: a request still being served (a fetch
// waiting out its MaxWait on an empty partition) keeps its connection open
// past the idle timeout, and is answered.
// Over TLS too: the read deadlines the idle timeout sets and lifts leave a
// TLS connection usable.
func TestIdleTimeoutSparesInFlight(t *testing.T) {
	pki := newPKI(t)
	for _, useTLS := range []bool{false, true} {
		opts := []serve.Option{serve.WithIdleTimeout(50 * time.Millisecond)}
		if useTLS {
			opts = append(opts, serve.WithTLS(pki.certFile, pki.keyFile, ""))
		}
		s, e := start(t, opts...)
		if err := e.CreateTopic("quiet", 1); err != nil {
			t.Fatal(err)
		}
		c := dial(t, s)
		if useTLS {
			c = tls.Client(c, pki.clientTLS())
		}
		for range 2 {
			longPoll(t, c)
		}
	}
}

func longPoll(t *testing.T, c net.Conn) {
	t.Helper()
	req := kmsg.NewPtrFetchRequest()
	req.MaxWaitMillis, req.MinBytes, req.MaxBytes = 1000, 1, 1<<20
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic = "quiet"
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.PartitionMaxBytes = 1 << 20
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp := roundTrip(t, c, req, 11).(*kmsg.FetchResponse)
	if len(resp.Topics) != 1 || resp.Topics[0].Partitions[0].ErrorCode != 0 {
		t.Fatalf("long poll past the idle timeout: %+v", resp.Topics)
	}
}
