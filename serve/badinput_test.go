package serve_test

import (
	"encoding/binary"
	"io"
	"net"
	"testing"
	"time"

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
// answered (v0, UNSUPPORTED_VERSION, with the list), not closed.
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
	if resp.ErrorCode != 35 || len(resp.ApiKeys) == 0 {
		t.Fatalf("error %d with %d keys, want 35 (UNSUPPORTED_VERSION) and the key list", resp.ErrorCode, len(resp.ApiKeys))
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
