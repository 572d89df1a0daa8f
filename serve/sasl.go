// This file holds SASL: the users and mechanisms a listener accepts
// (PLAIN, and SCRAM-SHA-256 and SCRAM-SHA-512 per RFC 5802 and RFC 7677),
// the server side of each exchange, and the raw-token framing that
// follows a v0 SaslHandshake. The Kafka messages are in
// 17_sasl_handshake.go and 36_sasl_authenticate.go.

package serve

import (
	"bufio"
	"bytes"
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/subtle"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// The SASL mechanisms the server implements.
const (
	MechPlain       = "PLAIN"
	MechScramSHA256 = "SCRAM-SHA-256"
	MechScramSHA512 = "SCRAM-SHA-512"
)

// Mechanisms lists the SASL mechanisms the server implements, in the
// order SaslHandshake offers them.
var Mechanisms = []string{MechPlain, MechScramSHA256, MechScramSHA512}

// scramIterations is the PBKDF2 iteration count of the SCRAM credentials
// the server derives: 4096, the minimum RFC 7677 and Kafka require.
const scramIterations = 4096

type saslUser struct{ name, password string }

// WithSASLUser adds a user that authenticates with password (default:
// none). With any user, clients must authenticate by SASL before any
// request but ApiVersions.
func WithSASLUser(name, password string) Option {
	return func(c *config) { c.saslUsers = append(c.saslUsers, saslUser{name, password}) }
}

// WithSASLUsersFile adds the users of a file: one "user:password" a line
// (the user ends at the first colon; the password is the rest), blank
// lines and lines starting with # ignored, each user valid for every
// enabled mechanism.
func WithSASLUsersFile(path string) Option { return func(c *config) { c.saslUsersFile = path } }

// WithSASLMechanisms sets the mechanisms offered (default: all of
// Mechanisms when there are users).
func WithSASLMechanisms(names ...string) Option {
	return func(c *config) { c.saslMechs = names }
}

// validateSecurity checks the TLS and SASL options that need no I/O.
func (c *config) validateSecurity() error {
	if (c.tlsCert == "") != (c.tlsKey == "") {
		return fmt.Errorf("%w: --tls-cert and --tls-key go together (the certificate and its private key)", ErrConfig)
	}
	if c.tlsClientCA != "" && c.tlsCert == "" {
		return fmt.Errorf("%w: --tls-client-ca needs --tls-cert and --tls-key (client certificates are checked on a TLS listener)", ErrConfig)
	}
	for _, m := range c.saslMechs {
		if !slices.Contains(Mechanisms, m) {
			return fmt.Errorf("%w: --sasl-mechanisms: %q (valid: %s)", ErrConfig, m, strings.Join(Mechanisms, ", "))
		}
	}
	if len(c.saslMechs) > 0 && len(c.saslUsers) == 0 && c.saslUsersFile == "" {
		return fmt.Errorf("%w: --sasl-mechanisms needs users (--sasl-user USER:PASSWORD or --sasl-users FILE)", ErrConfig)
	}
	for _, u := range c.saslUsers {
		if err := checkSASLUser(u); err != nil {
			return fmt.Errorf("%w: --sasl-user %q: %v", ErrConfig, u.name, err)
		}
	}
	return nil
}

func checkSASLUser(u saslUser) error {
	switch {
	case u.name == "":
		return errors.New("empty user name (want USER:PASSWORD)")
	case u.password == "":
		return errors.New("empty password (want USER:PASSWORD)")
	case strings.ContainsRune(u.name, 0) || strings.ContainsRune(u.password, 0):
		return errors.New("a NUL byte (PLAIN separates fields with it)")
	}
	return nil
}

// readSASLUsers parses a users file's text (the format of
// WithSASLUsersFile); name, the file's name, prefixes its errors.
func readSASLUsers(name string, data []byte) ([]saslUser, error) {
	var users []saslUser
	sc := bufio.NewScanner(bytes.NewReader(data))
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		user, pass, ok := strings.Cut(text, ":")
		u := saslUser{user, pass}
		if !ok {
			return nil, fmt.Errorf("%s:%d: want user:password", name, line)
		}
		if err := checkSASLUser(u); err != nil {
			return nil, fmt.Errorf("%s:%d: %v", name, line, err)
		}
		users = append(users, u)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	if len(users) == 0 {
		return nil, fmt.Errorf("%s: no users (want one user:password a line)", name)
	}
	return users, nil
}

// saslConfig is what a SASL listener accepts. It is read-only once built.
type saslConfig struct {
	mechs    []string
	password map[string]string                // PLAIN: user -> password
	scram    map[string]map[string]*scramCred // mechanism -> user -> credential
}

// scramCred is a user's stored SCRAM credential (RFC 5802 section 3): the
// server keeps the keys, not the password.
type scramCred struct {
	salt                 []byte
	storedKey, serverKey []byte
}

func scramHash(mech string) func() hash.Hash {
	if mech == MechScramSHA512 {
		return sha512.New
	}
	return sha256.New
}

// loadSASL reads the users file and derives the credentials; nil when no
// user is configured.
func (c *config) loadSASL() (*saslConfig, error) {
	users := slices.Clone(c.saslUsers)
	if c.saslUsersFile != "" {
		data, err := os.ReadFile(c.saslUsersFile)
		if err != nil {
			return nil, fmt.Errorf("%w: --sasl-users: %v", ErrConfig, err)
		}
		fu, err := readSASLUsers(c.saslUsersFile, data)
		if err != nil {
			return nil, fmt.Errorf("%w: --sasl-users %v", ErrConfig, err)
		}
		users = append(users, fu...)
	}
	if len(users) == 0 {
		return nil, nil
	}
	sc := &saslConfig{mechs: c.saslMechs, password: map[string]string{}, scram: map[string]map[string]*scramCred{}}
	if len(sc.mechs) == 0 {
		sc.mechs = slices.Clone(Mechanisms)
	}
	for _, u := range users {
		if _, dup := sc.password[u.name]; dup {
			return nil, fmt.Errorf("%w: SASL user %q given twice (--sasl-user, --sasl-users)", ErrConfig, u.name)
		}
		sc.password[u.name] = u.password
	}
	for _, m := range sc.mechs {
		if m == MechPlain {
			continue
		}
		creds := map[string]*scramCred{}
		h := scramHash(m)
		for _, u := range users {
			salt := make([]byte, 16)
			rand.Read(salt)
			salted, err := pbkdf2.Key(h, u.password, salt, scramIterations, h().Size())
			if err != nil {
				return nil, fmt.Errorf("%w: SASL user %q: %v", ErrConfig, u.name, err)
			}
			clientKey := hmacOf(h, salted, "Client Key")
			creds[u.name] = &scramCred{salt: salt, storedKey: hashOf(h, clientKey), serverKey: hmacOf(h, salted, "Server Key")}
		}
		sc.scram[m] = creds
	}
	return sc, nil
}

func hmacOf(h func() hash.Hash, key []byte, msg string) []byte {
	m := hmac.New(h, key)
	m.Write([]byte(msg))
	return m.Sum(nil)
}

func hashOf(h func() hash.Hash, b []byte) []byte {
	d := h()
	d.Write(b)
	return d.Sum(nil)
}

// saslConn is a connection's SASL exchange, used by its goroutine only.
type saslConn struct {
	// mech is the mechanism SaslHandshake chose ("" before it).
	mech string
	// raw: the handshake was v0, so the tokens come as bare
	// size-prefixed frames, not SaslAuthenticate requests.
	raw bool
	// scram is a SCRAM exchange past its first message.
	scram *scramExchange
}

// errAuthFailed is wrapped by every failed exchange; its text is the
// error message SaslAuthenticate returns.
var errAuthFailed = errors.New("authentication failed")

// errUnauthenticated closes a connection that sends a request other than
// the SASL exchange's before authenticating.
var errUnauthenticated = errors.New("serve: unauthenticated request")

// saslOpen reports whether key is served before authentication.
func saslOpen(key int16) bool {
	switch key {
	case int16(kmsg.ApiVersions), int16(kmsg.SASLHandshake), int16(kmsg.SASLAuthenticate):
		return true
	}
	return false
}

// saslStep runs one client token of c's exchange and returns the
// server's reply; c.authed is set when the exchange has succeeded.
func (s *Server) saslStep(c *conn, token []byte) ([]byte, error) {
	switch mech := c.sasl.mech; {
	case mech == MechPlain:
		if err := s.sasl.plain(token); err != nil {
			return nil, err
		}
		c.authed.Store(true)
		return []byte{}, nil
	case c.sasl.scram == nil:
		x, reply, err := s.sasl.scramFirst(mech, token)
		if err != nil {
			return nil, err
		}
		c.sasl.scram = x
		return reply, nil
	default:
		reply, err := c.sasl.scram.final(token)
		c.sasl.scram = nil
		if err != nil {
			return nil, err
		}
		c.authed.Store(true)
		return reply, nil
	}
}

// plain checks a PLAIN message, "authzid NUL user NUL password" (RFC
// 4616); an authorization id other than the user is refused, as Kafka
// refuses it.
func (sc *saslConfig) plain(token []byte) error {
	parts := strings.Split(string(token), "\x00")
	if len(parts) != 3 {
		return fmt.Errorf("%w: malformed PLAIN message (want authzid NUL user NUL password)", errAuthFailed)
	}
	authz, user, pass := parts[0], parts[1], parts[2]
	want, ok := sc.password[user]
	// The comparison runs for unknown users too, so its time does not
	// tell which users exist.
	match := subtle.ConstantTimeCompare([]byte(pass), []byte(want)) == 1
	if !ok || !match {
		return fmt.Errorf("%w: invalid username or password (SASL mechanism PLAIN)", errAuthFailed)
	}
	if authz != "" && authz != user {
		return fmt.Errorf("%w: authorization id %q differs from user %q (SASL mechanism PLAIN)", errAuthFailed, authz, user)
	}
	return nil
}

// scramExchange is a SCRAM exchange between its two client messages.
type scramExchange struct {
	mech            string
	cred            *scramCred
	gs2Header       string
	clientFirstBare string
	serverFirst     string
	nonce           string
}

func scramFailed(mech, why string) error {
	return fmt.Errorf("%w: %s (SASL mechanism %s)", errAuthFailed, why, mech)
}

// scramFirst takes client-first-message, "gs2-header n=user,r=nonce[,ext]"
// (RFC 5802 section 7), and answers server-first-message,
// "r=nonce,s=salt,i=iterations". Channel binding is not offered, so a
// client asking for it ("p=") is refused.
func (sc *saslConfig) scramFirst(mech string, token []byte) (*scramExchange, []byte, error) {
	msg := string(token)
	cbind, rest, ok1 := strings.Cut(msg, ",")
	authz, bare, ok2 := strings.Cut(rest, ",")
	if !ok1 || !ok2 {
		return nil, nil, scramFailed(mech, "malformed client-first-message")
	}
	if cbind != "n" && cbind != "y" {
		return nil, nil, scramFailed(mech, "channel binding is not supported")
	}
	attrs := strings.Split(bare, ",")
	if len(attrs) < 2 || !strings.HasPrefix(attrs[0], "n=") || !strings.HasPrefix(attrs[1], "r=") || len(attrs[1]) < 3 {
		return nil, nil, scramFailed(mech, "malformed client-first-message (want n=USER,r=NONCE)")
	}
	for _, ext := range attrs[2:] {
		if ext == "tokenauth=true" {
			return nil, nil, scramFailed(mech, "delegation tokens are not supported")
		}
	}
	user, err := scramName(attrs[0][2:])
	if err != nil {
		return nil, nil, scramFailed(mech, err.Error())
	}
	if authz != "" {
		a, err := scramName(strings.TrimPrefix(authz, "a="))
		if !strings.HasPrefix(authz, "a=") || err != nil || a != user {
			return nil, nil, scramFailed(mech, "authorization id differs from the user")
		}
	}
	cred, ok := sc.scram[mech][user]
	if !ok {
		return nil, nil, scramFailed(mech, "invalid username or password")
	}
	var sn [24]byte
	rand.Read(sn[:])
	x := &scramExchange{
		mech: mech, cred: cred,
		gs2Header:       cbind + "," + authz + ",",
		clientFirstBare: bare,
		nonce:           attrs[1][2:] + base64.RawURLEncoding.EncodeToString(sn[:]),
	}
	x.serverFirst = "r=" + x.nonce + ",s=" + base64.StdEncoding.EncodeToString(cred.salt) + ",i=" + strconv.Itoa(scramIterations)
	return x, []byte(x.serverFirst), nil
}

// scramName decodes a SCRAM saslname: "=2C" is a comma, "=3D" an equals
// sign, and any other "=" is malformed.
func scramName(s string) (string, error) {
	if !strings.Contains(s, "=") {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '=' {
			b.WriteByte(s[i])
			continue
		}
		switch {
		case strings.HasPrefix(s[i:], "=2C"):
			b.WriteByte(',')
		case strings.HasPrefix(s[i:], "=3D"):
			b.WriteByte('=')
		default:
			return "", errors.New("malformed user name escape")
		}
		i += 2
	}
	return b.String(), nil
}

// final takes client-final-message, "c=binding,r=nonce[,ext],p=proof",
// checks the proof against the stored key and answers
// server-final-message, "v=signature" (RFC 5802 section 3).
func (x *scramExchange) final(token []byte) ([]byte, error) {
	msg := string(token)
	i := strings.LastIndex(msg, ",p=")
	if i < 0 {
		return nil, scramFailed(x.mech, "malformed client-final-message (no proof)")
	}
	withoutProof, proofB64 := msg[:i], msg[i+3:]
	attrs := strings.Split(withoutProof, ",")
	if len(attrs) < 2 || attrs[0] != "c="+base64.StdEncoding.EncodeToString([]byte(x.gs2Header)) {
		return nil, scramFailed(x.mech, "channel binding does not match the client-first-message")
	}
	// The nonce must end with the combined one, not equal it:
	// librdkafka before 2.6.1 (Debian's kcat among its users) sends its
	// client nonce again before the combined one, which Kafka brokers
	// from 3.8.1 accepted the same way (4.4.0 compares exactly and
	// refuses those clients). The fresh server part must still be
	// echoed and the proof covers the message as sent, so a replayed
	// exchange still fails.
	if !strings.HasPrefix(attrs[1], "r=") || !strings.HasSuffix(attrs[1], x.nonce) {
		return nil, scramFailed(x.mech, "nonce does not match")
	}
	h := scramHash(x.mech)
	proof, err := base64.StdEncoding.DecodeString(proofB64)
	if err != nil || len(proof) != h().Size() {
		return nil, scramFailed(x.mech, "malformed proof")
	}
	authMessage := x.clientFirstBare + "," + x.serverFirst + "," + withoutProof
	clientSig := hmacOf(h, x.cred.storedKey, authMessage)
	clientKey := make([]byte, len(proof))
	subtle.XORBytes(clientKey, proof, clientSig)
	if subtle.ConstantTimeCompare(hashOf(h, clientKey), x.cred.storedKey) != 1 {
		return nil, scramFailed(x.mech, "invalid username or password")
	}
	serverSig := hmacOf(h, x.cred.serverKey, authMessage)
	return []byte("v=" + base64.StdEncoding.EncodeToString(serverSig)), nil
}

// saslRawToken serves one frame after a v0 SaslHandshake: the frame is a
// bare token and so is the reply, size-prefixed, with no Kafka header. A
// failed exchange closes the connection, which is all the raw framing can
// say.
func (s *Server) saslRawToken(c *conn, frame, dst []byte) ([]byte, bool, error) {
	reply, err := s.saslStep(c, bytes.Clone(frame))
	if err != nil {
		return dst, false, err
	}
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(reply)))
	return append(dst, reply...), true, nil
}
