package serve_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/binary"
	"encoding/pem"
	"errors"
	"io"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/sharebench/sharebench/serve"
)

// testPKI is a CA made for one test, a server certificate for 127.0.0.1
// and a client certificate, all signed by it, as PEM files.
type testPKI struct {
	dir                   string
	caFile                string
	certFile, keyFile     string
	clientCert, clientKey string
	pool                  *x509.CertPool
	client                tls.Certificate
}

func newPKI(t *testing.T) *testPKI {
	t.Helper()
	p := &testPKI{dir: t.TempDir()}
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	ca := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "sharebench test CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, _ := x509.ParseCertificate(caDER)
	p.caFile = p.writePEM(t, "ca.pem", "CERTIFICATE", caDER)
	p.pool = x509.NewCertPool()
	p.pool.AddCert(caCert)
	leaf := func(serial int64, name string, usage x509.ExtKeyUsage) (certFile, keyFile string) {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: name},
			NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage},
			IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost"},
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		kder, err := x509.MarshalECPrivateKey(key)
		if err != nil {
			t.Fatal(err)
		}
		return p.writePEM(t, name+".pem", "CERTIFICATE", der), p.writePEM(t, name+"-key.pem", "EC PRIVATE KEY", kder)
	}
	p.certFile, p.keyFile = leaf(2, "server", x509.ExtKeyUsageServerAuth)
	p.clientCert, p.clientKey = leaf(3, "client", x509.ExtKeyUsageClientAuth)
	if p.client, err = tls.LoadX509KeyPair(p.clientCert, p.clientKey); err != nil {
		t.Fatal(err)
	}
	return p
}

func (p *testPKI) writePEM(t *testing.T, name, typ string, der []byte) string {
	t.Helper()
	path := filepath.Join(p.dir, name)
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func (p *testPKI) clientTLS() *tls.Config {
	return &tls.Config{RootCAs: p.pool, ServerName: "127.0.0.1"}
}

// TestSASLOverTLS: franz-go clients authenticate with each mechanism over
// TLS and produce and consume through the server.
func TestSASLOverTLS(t *testing.T) {
	pki := newPKI(t)
	s, _ := start(t, serve.WithTLS(pki.certFile, pki.keyFile, ""),
		serve.WithSASLUser("conn", "s3cret:with=colon"), serve.WithSASLUser("other", "x"))
	for name, mech := range map[string]sasl.Mechanism{
		"PLAIN":         plain.Auth{User: "conn", Pass: "s3cret:with=colon"}.AsMechanism(),
		"SCRAM-SHA-256": scram.Auth{User: "conn", Pass: "s3cret:with=colon"}.AsSha256Mechanism(),
		"SCRAM-SHA-512": scram.Auth{User: "conn", Pass: "s3cret:with=colon"}.AsSha512Mechanism(),
	} {
		t.Run(name, func(t *testing.T) {
			topic := "sasl-" + strings.ToLower(name)
			cl := client(t, s, kgo.DialTLSConfig(pki.clientTLS()), kgo.SASL(mech),
				kgo.DefaultProduceTopic(topic), kgo.AllowAutoTopicCreation(),
				kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
			if err := cl.ProduceSync(ctx(t), &kgo.Record{Value: []byte(name)}).FirstErr(); err != nil {
				t.Fatalf("produce with %s over TLS: %v", name, err)
			}
			fs := cl.PollFetches(ctx(t))
			if err := fs.Err(); err != nil || len(fs.Records()) != 1 || string(fs.Records()[0].Value) != name {
				t.Fatalf("fetch with %s over TLS: %v, %d records", name, err, len(fs.Records()))
			}
		})
	}
}

// TestSASLWrongPassword: a wrong password (and an unknown user) fails at
// once with SASL_AUTHENTICATION_FAILED, for each mechanism.
func TestSASLWrongPassword(t *testing.T) {
	var log logBuf
	s, _ := start(t, serve.WithSASLUser("conn", "right"), serve.WithLogger(&log))
	for name, mech := range map[string]sasl.Mechanism{
		"PLAIN":               plain.Auth{User: "conn", Pass: "wrong"}.AsMechanism(),
		"SCRAM-SHA-256":       scram.Auth{User: "conn", Pass: "wrong"}.AsSha256Mechanism(),
		"SCRAM-SHA-512":       scram.Auth{User: "conn", Pass: "wrong"}.AsSha512Mechanism(),
		"SCRAM unknown user":  scram.Auth{User: "nobody", Pass: "right"}.AsSha512Mechanism(),
		"PLAIN unknown user":  plain.Auth{User: "nobody", Pass: "right"}.AsMechanism(),
		"PLAIN other authzid": plain.Auth{Zid: "admin", User: "conn", Pass: "right"}.AsMechanism(),
	} {
		t.Run(name, func(t *testing.T) {
			cl := client(t, s, kgo.SASL(mech), kgo.RequestRetries(0))
			err := cl.Ping(shortCtx(t))
			if !errors.Is(err, kerr.SaslAuthenticationFailed) {
				t.Fatalf("ping with a bad credential: %v, want SASL_AUTHENTICATION_FAILED", err)
			}
		})
	}
	if !strings.Contains(log.String(), "authentication failed: invalid username or password (SASL mechanism SCRAM-SHA-512)") {
		t.Errorf("failed authentication not logged:\n%s", log.String())
	}
}

// TestSASLUnauthenticatedRefused: before authentication ApiVersions is
// answered (listing SaslHandshake and SaslAuthenticate) and any other
// request closes the connection; a server without SASL lists neither.
func TestSASLUnauthenticatedRefused(t *testing.T) {
	var log logBuf
	s, _ := start(t, serve.WithSASLUser("conn", "pw"), serve.WithLogger(&log))
	c := dial(t, s)
	keys := apiKeys(roundTrip(t, c, kmsg.NewPtrApiVersionsRequest(), 3).(*kmsg.ApiVersionsResponse))
	if !slices.Contains(keys, 17) || !slices.Contains(keys, 36) {
		t.Errorf("SASL server's ApiVersions lists %v, want 17 and 36 in it", keys)
	}
	c.Write(sized(frame(kmsg.NewPtrMetadataRequest(), 12)))
	if !closed(t, c) {
		t.Fatal("Metadata before authentication answered")
	}
	if !strings.Contains(log.String(), "Metadata before SASL authentication") {
		t.Errorf("refusal not logged:\n%s", log.String())
	}
	// Before authentication a frame is capped at 512 KiB.
	c = dial(t, s)
	c.Write(binary.BigEndian.AppendUint32(nil, 1<<20))
	if !closed(t, c) || !strings.Contains(log.String(), "request frame of 1048576 bytes (valid: 1 to 524288)") {
		t.Errorf("a 1 MiB frame before authentication was not refused:\n%s", log.String())
	}
	plainSrv, _ := start(t)
	keys = apiKeys(roundTrip(t, dial(t, plainSrv), kmsg.NewPtrApiVersionsRequest(), 3).(*kmsg.ApiVersionsResponse))
	if slices.Contains(keys, 17) || slices.Contains(keys, 36) {
		t.Errorf("server without SASL lists %v, want neither 17 nor 36", keys)
	}
}

func apiKeys(r *kmsg.ApiVersionsResponse) []int16 {
	var keys []int16
	for _, k := range r.ApiKeys {
		keys = append(keys, k.ApiKey)
	}
	return keys
}

// TestSASLRawTokens: after a v0 SaslHandshake the PLAIN token goes as a
// bare size-prefixed frame and so does the reply (empty), then requests
// are served; a wrong password on that framing closes the connection.
func TestSASLRawTokens(t *testing.T) {
	s, _ := start(t, serve.WithSASLUser("conn", "pw"))
	for _, tc := range []struct {
		pass string
		ok   bool
	}{{"pw", true}, {"bad", false}} {
		c := dial(t, s)
		hs := kmsg.NewPtrSASLHandshakeRequest()
		hs.Mechanism = "PLAIN"
		if r := roundTrip(t, c, hs, 0).(*kmsg.SASLHandshakeResponse); r.ErrorCode != 0 {
			t.Fatalf("handshake v0: error %d", r.ErrorCode)
		}
		c.Write(sized([]byte("\x00conn\x00" + tc.pass)))
		var size [4]byte
		_, err := io.ReadFull(c, size[:])
		if !tc.ok {
			if err == nil {
				t.Fatalf("wrong password on raw framing answered %x, want the connection closed", size)
			}
			continue
		}
		if err != nil || binary.BigEndian.Uint32(size[:]) != 0 {
			t.Fatalf("raw PLAIN reply: %x, %v; want an empty token", size, err)
		}
		if md := roundTrip(t, c, kmsg.NewPtrMetadataRequest(), 12).(*kmsg.MetadataResponse); len(md.Brokers) != 1 {
			t.Fatalf("metadata after raw authentication: %d brokers", len(md.Brokers))
		}
	}
}

// TestSASLHandshakeErrors: an unoffered mechanism answers
// UNSUPPORTED_SASL_MECHANISM with the offered ones and closes.
func TestSASLHandshakeErrors(t *testing.T) {
	s, _ := start(t, serve.WithSASLUser("conn", "pw"), serve.WithSASLMechanisms(serve.MechScramSHA512))
	c := dial(t, s)
	hs := kmsg.NewPtrSASLHandshakeRequest()
	hs.Mechanism = "PLAIN"
	r := roundTrip(t, c, hs, 1).(*kmsg.SASLHandshakeResponse)
	if r.ErrorCode != kerr.UnsupportedSaslMechanism.Code || !slices.Equal(r.SupportedMechanisms, []string{"SCRAM-SHA-512"}) {
		t.Fatalf("PLAIN on a SCRAM-SHA-512 server: error %d, mechanisms %v", r.ErrorCode, r.SupportedMechanisms)
	}
	if !closed(t, c) {
		t.Fatal("connection open after an unsupported mechanism")
	}
}

// TestTLSMismatch: a TLS client on a plaintext listener and a plaintext
// client on a TLS listener are closed, each with a log line, and neither
// makes the server read a giant frame.
func TestTLSMismatch(t *testing.T) {
	pki := newPKI(t)
	var plainLog, tlsLog logBuf
	plainSrv, _ := start(t, serve.WithLogger(&plainLog))
	tlsSrv, _ := start(t, serve.WithTLS(pki.certFile, pki.keyFile, ""), serve.WithLogger(&tlsLog))

	raw := dial(t, plainSrv)
	tc := tls.Client(raw, pki.clientTLS())
	if err := tc.Handshake(); err == nil {
		t.Fatal("TLS handshake with a plaintext listener succeeded")
	}
	if !closed(t, raw) {
		t.Error("plaintext listener kept a TLS client's connection open")
	}
	if !strings.Contains(plainLog.String(), "TLS client on a plaintext listener") {
		t.Errorf("plaintext listener's log:\n%s", plainLog.String())
	}

	c := dial(t, tlsSrv)
	c.Write(sized(frame(kmsg.NewPtrApiVersionsRequest(), 3)))
	if _, err := io.ReadAll(c); err != nil && !isReset(err) {
		t.Errorf("plaintext client on the TLS listener: %v, want the connection closed", err)
	}
	if !strings.Contains(tlsLog.String(), "TLS handshake") {
		t.Errorf("TLS listener's log:\n%s", tlsLog.String())
	}
	// Both still serve.
	roundTrip(t, dial(t, plainSrv), kmsg.NewPtrApiVersionsRequest(), 3)
	cl := client(t, tlsSrv, kgo.DialTLSConfig(pki.clientTLS()))
	if err := cl.Ping(ctx(t)); err != nil {
		t.Errorf("TLS client after the mismatches: %v", err)
	}
}

// isReset reports whether err is the peer resetting the connection, which
// is how a close with unread data reaches a client.
func isReset(err error) bool {
	return strings.Contains(err.Error(), "connection reset")
}

// TestTLSClientCA: with a client CA, a client without a certificate is
// refused and one with a certificate the CA signed gets in.
func TestTLSClientCA(t *testing.T) {
	pki := newPKI(t)
	s, _ := start(t, serve.WithTLS(pki.certFile, pki.keyFile, pki.caFile))
	if got := s.SecurityProtocol(); got != "SSL, client certificates required" {
		t.Errorf("security protocol %q", got)
	}
	anon := client(t, s, kgo.DialTLSConfig(pki.clientTLS()), kgo.RequestRetries(0))
	if err := anon.Ping(shortCtx(t)); err == nil {
		t.Fatal("client without a certificate got in")
	}
	withCert := pki.clientTLS()
	withCert.Certificates = []tls.Certificate{pki.client}
	cl := client(t, s, kgo.DialTLSConfig(withCert))
	if err := cl.Ping(ctx(t)); err != nil {
		t.Fatalf("client with a certificate the CA signed: %v", err)
	}
}

// TestSecurityConfig: bad TLS and SASL settings are one error naming the
// flag.
func TestSecurityConfig(t *testing.T) {
	dir := t.TempDir()
	users := filepath.Join(dir, "users")
	os.WriteFile(users, []byte("# comment\n\nalice:pw\nbob\n"), 0o600)
	empty := filepath.Join(dir, "empty")
	os.WriteFile(empty, []byte("# nobody\n"), 0o600)
	for _, tc := range []struct {
		opt  serve.Option
		want string
	}{
		{serve.WithTLS("cert.pem", "", ""), "--tls-cert and --tls-key go together"},
		{serve.WithTLS("", "", "ca.pem"), "--tls-client-ca needs --tls-cert"},
		{serve.WithTLS(filepath.Join(dir, "none.pem"), filepath.Join(dir, "none-key.pem"), ""), "--tls-cert"},
		{serve.WithSASLUsersFile(users), users + ":4: want user:password"},
		{serve.WithSASLUsersFile(empty), "no users"},
		{serve.WithSASLUsersFile(filepath.Join(dir, "missing")), "--sasl-users"},
		{serve.WithSASLUser("", "pw"), "--sasl-user"},
		{serve.WithSASLMechanisms("GSSAPI"), "--sasl-mechanisms: \"GSSAPI\" (valid: PLAIN, SCRAM-SHA-256, SCRAM-SHA-512)"},
	} {
		_, err := serve.New(nil, serve.WithListen("127.0.0.1:0"), tc.opt)
		if !errors.Is(err, serve.ErrConfig) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("got %v, want a configuration error containing %q", err, tc.want)
		}
	}
}

// TestSASLUsersFile: users from a file authenticate.
func TestSASLUsersFile(t *testing.T) {
	users := filepath.Join(t.TempDir(), "users")
	os.WriteFile(users, []byte("# sharebench users\nalice:a:b\n  bob:pw  \n"), 0o600)
	s, _ := start(t, serve.WithSASLUsersFile(users))
	for user, pass := range map[string]string{"alice": "a:b", "bob": "pw"} {
		cl := client(t, s, kgo.SASL(scram.Auth{User: user, Pass: pass}.AsSha256Mechanism()))
		if err := cl.Ping(ctx(t)); err != nil {
			t.Errorf("%s from the users file: %v", user, err)
		}
	}
}

// TestKcatSASLSSL: kcat (librdkafka) lists metadata over SASL_SSL with
// SCRAM-SHA-512.
func TestKcatSASLSSL(t *testing.T) {
	kcat, err := exec.LookPath("kcat")
	if err != nil {
		t.Skip("kcat is not installed (apt-get install kcat)")
	}
	pki := newPKI(t)
	s, e := start(t, serve.WithTLS(pki.certFile, pki.keyFile, ""), serve.WithSASLUser("conn", "kcat-pw"))
	if err := e.CreateTopic("kcat-topic", 3); err != nil {
		t.Fatal(err)
	}
	out, err := exec.CommandContext(ctx(t), kcat, "-b", s.Addr(), "-L",
		"-X", "security.protocol=SASL_SSL", "-X", "sasl.mechanism=SCRAM-SHA-512",
		"-X", "sasl.username=conn", "-X", "sasl.password=kcat-pw", "-X", "ssl.ca.location="+pki.caFile).CombinedOutput()
	if err != nil {
		t.Fatalf("kcat -L over SASL_SSL: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), `topic "kcat-topic" with 3 partitions`) {
		t.Fatalf("kcat -L output lacks the topic:\n%s", out)
	}
	out, err = exec.CommandContext(ctx(t), kcat, "-b", s.Addr(), "-L",
		"-X", "security.protocol=SASL_SSL", "-X", "sasl.mechanism=SCRAM-SHA-512",
		"-X", "sasl.username=conn", "-X", "sasl.password=wrong", "-X", "ssl.ca.location="+pki.caFile,
		"-m", "5").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "authentication failed: invalid username or password (SASL mechanism SCRAM-SHA-512)") {
		t.Fatalf("kcat with a wrong password: %v\n%s", err, out)
	}
}
