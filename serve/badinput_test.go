package serve_test

import (
	"encoding/binary"
	"io"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sharebench/sharebench/serve"
)

func dial(t *testing.T, s *serve.Server) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(10 * time.Second))
	return c
}

func sized(b []byte) []byte {
	return append(binary.BigEndian.AppendUint32(nil, uint32(len(b))), b...)
}

// closed reports whether the server closed c (a read sees EOF).
func closed(t *testing.T, c net.Conn) bool {
	t.Helper()
	var b [1]byte
	_, err := c.Read(b[:])
	return err == io.EOF
}

// TestBadInput: each bad frame closes its connection, and the server keeps
// answering other connections.
func TestBadInput(t *testing.T) {
	s, e := start(t, serve.WithMaxRequestBytes(4096))
	if err := e.CreateTopic("t", 1); err != nil {
		t.Fatal(err)
	}
	valid := frame(kmsg.NewPtrMetadataRequest(), 12)
	cases := map[string][]byte{
		"oversized":         binary.BigEndian.AppendUint32(nil, 1<<20),
		"undersized":        sized([]byte{0, 3}),
		"unknown key":       sized(append([]byte{0x7f, 0x00}, valid[2:]...)),
		"version too high":  sized(append([]byte{0, 3, 0, 99}, valid[4:]...)),
		"truncated body":    sized(valid[:len(valid)-3]),
		"truncated produce": sized(seeds()[2][:40]),
	}
	for name, b := range cases {
		t.Run(name, func(t *testing.T) {
			c := dial(t, s)
			if _, err := c.Write(b); err != nil {
				t.Fatal(err)
			}
			if !closed(t, c) {
				t.Errorf("connection still open after a %s frame", name)
			}
		})
	}
	t.Run("disconnect mid-request", func(t *testing.T) {
		c := dial(t, s)
		p := sized(seeds()[2])
		c.Write(p[:len(p)/2])
		c.Close()
	})
	// The server still serves, and nothing was appended by the bad or
	// half-sent produces.
	c := dial(t, s)
	if _, err := c.Write(sized(valid)); err != nil {
		t.Fatal(err)
	}
	var size [4]byte
	if _, err := io.ReadFull(c, size[:]); err != nil {
		t.Fatalf("no metadata response after the bad frames: %v", err)
	}
	if _, hw, _, _ := e.Offsets(engineTP("t")); hw != 0 {
		t.Errorf("high watermark %d after bad produces, want 0", hw)
	}
}

// TestApiVersionsUnsupported: ApiVersions above what the server serves is
// answered (v0, UNSUPPORTED_VERSION), not closed, and the answer lists
// ApiVersions alone with the versions served, as Kafka's does (KIP-511).
func TestApiVersionsUnsupported(t *testing.T) {
	s, _ := start(t)
	c := dial(t, s)
	b := frame(kmsg.NewPtrApiVersionsRequest(), 0)
	binary.BigEndian.PutUint16(b[2:], 99)
	c.Write(sized(b))
	var size [4]byte
	if _, err := io.ReadFull(c, size[:]); err != nil {
		t.Fatal(err)
	}
	body := make([]byte, binary.BigEndian.Uint32(size[:]))
	io.ReadFull(c, body)
	resp := kmsg.NewPtrApiVersionsResponse()
	if err := resp.ReadFrom(body[4:]); err != nil {
		t.Fatal(err)
	}
	if resp.ErrorCode != 35 {
		t.Fatalf("error %d, want 35 (UNSUPPORTED_VERSION)", resp.ErrorCode)
	}
	if len(resp.ApiKeys) != 1 || resp.ApiKeys[0].ApiKey != 18 || resp.ApiKeys[0].MinVersion != 0 || resp.ApiKeys[0].MaxVersion != 5 {
		t.Fatalf("keys %+v, want ApiVersions (18) alone, versions 0 to 5", resp.ApiKeys)
	}
}

// TestApiVersionsNamesClusterAndNode: a v5 ApiVersions (KIP-1242) that
// names this server's cluster and node, or neither, gets the table; one
// naming another cluster or node gets REBOOTSTRAP_REQUIRED, and one naming
// only a cluster or only a node INVALID_REQUEST, as Kafka answers.
func TestApiVersionsNamesClusterAndNode(t *testing.T) {
	s, _ := start(t)
	str := func(v string) *string { return &v }
	for _, c := range []struct {
		name    string
		cluster *string
		node    int32
		want    int16
	}{
		{"neither", nil, -1, 0},
		{"this cluster and node", str(serve.ClusterID), 0, 0},
		{"another cluster", str("another-cluster"), 0, kerr.RebootstrapRequired.Code},
		{"another node", str(serve.ClusterID), 7, kerr.RebootstrapRequired.Code},
		{"a cluster without a node", str(serve.ClusterID), -1, kerr.InvalidRequest.Code},
		{"a node without a cluster", nil, 0, kerr.InvalidRequest.Code},
	} {
		t.Run(c.name, func(t *testing.T) {
			req := kmsg.NewPtrApiVersionsRequest()
			req.ClusterID, req.NodeID = c.cluster, c.node
			resp := roundTrip(t, dial(t, s), req, 5).(*kmsg.ApiVersionsResponse)
			if resp.ErrorCode != c.want {
				t.Fatalf("error %d, want %d", resp.ErrorCode, c.want)
			}
			if listed := len(resp.ApiKeys) > 0; listed != (c.want == 0) {
				t.Errorf("%d keys listed with error %d; want the table only without an error", len(resp.ApiKeys), resp.ErrorCode)
			}
			if c.want != 0 {
				return
			}
			var tv int16 = -1
			for _, f := range resp.FinalizedFeatures {
				if f.Name == "transaction.version" {
					tv = f.MaxVersionLevel
				}
			}
			if tv != 2 {
				t.Errorf("finalized transaction.version %d, want 2", tv)
			}
		})
	}
}

// TestConnectionCap: connections past the cap are closed at once.
func TestConnectionCap(t *testing.T) {
	s, _ := start(t, serve.WithMaxConns(2))
	for range 2 {
		// A round trip: the server has accepted and counted it.
		c := dial(t, s)
		c.Write(sized(frame(kmsg.NewPtrApiVersionsRequest(), 3)))
		var size [4]byte
		if _, err := io.ReadFull(c, size[:]); err != nil {
			t.Fatal(err)
		}
	}
	c := dial(t, s)
	if !closed(t, c) {
		t.Fatal("third connection accepted past a cap of 2")
	}
}

// TestNonLoopbackRefused: a non-loopback listen address needs
// WithAllowRemote.
func TestNonLoopbackRefused(t *testing.T) {
	if _, err := serve.New(nil, serve.WithListen("0.0.0.0:0")); err == nil {
		t.Fatal("listening on 0.0.0.0 without WithAllowRemote")
	}
}
