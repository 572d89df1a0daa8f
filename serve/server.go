// This file holds the Server: the listener, the connection loop (frames in,
// frames out, one request at a time per connection, as Kafka does), the
// table of APIs and the dispatch through it.

package serve

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sharebench/sharebench/engine"
)

// nodeID is the broker id the server gives itself.
const nodeID int32 = 0

// Server is the engine behind a Kafka-protocol listener.
type Server struct {
	e   *engine.Engine
	cfg config
	ln  net.Listener
	// host and port are the advertised address (WithAdvertise, else the
	// listen address).
	host string
	port int32
	apis map[int16]api
	// tls is the listener's TLS configuration, nil for plaintext; sasl
	// the SASL users and mechanisms, nil when clients need not
	// authenticate.
	tls  *tls.Config
	sasl *saslConfig
	// topicsMu is held across a partition cap's check and the creation
	// or growth it allows (limits.go).
	topicsMu sync.Mutex
	// tsBase turns engine timestamps into Unix milliseconds.
	tsBase int64

	conns   sync.WaitGroup
	nconns  atomic.Int64
	closing chan struct{}
	once    sync.Once

	state
}

// handler serves one decoded request. A nil response means no response is
// sent (Produce with acks=0). An error closes the connection.
type handler func(s *Server, c *conn, req kmsg.Request) (kmsg.Response, error)

// api is one entry of the API table.
type api struct {
	min, max int16
	newReq   func() kmsg.Request // nil: kmsg.RequestForKey
	fn       handler
}

// apiTable is filled by the init function of each API's file.
var apiTable = map[int16]api{}

func register(key, min, max int16, fn handler) {
	if _, dup := apiTable[key]; dup {
		panic(fmt.Sprintf("serve: API key %d registered twice", key))
	}
	apiTable[key] = api{min: min, max: max, fn: fn}
}

// New returns a server over e; Serve starts it. The engine stays the
// caller's: Close does not close it.
func New(e *engine.Engine, opts ...Option) (*Server, error) {
	cfg := defaultConfig()
	for _, o := range opts {
		o(&cfg)
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	tlsCfg, err := cfg.loadTLS()
	if err != nil {
		return nil, err
	}
	sasl, err := cfg.loadSASL()
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", cfg.listen)
	if err != nil {
		return nil, fmt.Errorf("serve: listening on %s: %w", cfg.listen, err)
	}
	s := &Server{e: e, cfg: cfg, ln: ln, tls: tlsCfg, sasl: sasl, closing: make(chan struct{})}
	s.host, s.port = advertisedAddr(cfg, ln.Addr().(*net.TCPAddr))
	s.apis = make(map[int16]api, len(apiTable)+3)
	for k, a := range apiTable {
		s.apis[k] = a
	}
	if sasl != nil {
		// Listed in ApiVersions only when clients must authenticate: a
		// client that sees them may try SASL, and a plaintext broker
		// refuses it.
		s.apis[int16(kmsg.SASLHandshake)] = saslHandshakeAPI
		s.apis[int16(kmsg.SASLAuthenticate)] = saslAuthenticateAPI
	}
	if cfg.txnVersion < 2 {
		a := s.apis[int16(kmsg.EndTxn)]
		a.max = 4 // v5 is KIP-890 part 2's
		s.apis[int16(kmsg.EndTxn)] = a
	}
	if k := cfg.txnShareAck; k != 0 {
		s.apis[k] = txnShareAckAPI(k)
	}
	s.tsBase = time.Now().UnixMilli() - int64(e.Now()/time.Millisecond)
	s.initState()
	go s.sweepGroups()
	return s, nil
}

// advertisedAddr is the address Metadata names: WithAdvertise's, else the
// listen host (the loopback address when the server listens on every
// interface of a loopback-only server, which validate ensures) and the
// port it listens on.
func advertisedAddr(cfg config, addr *net.TCPAddr) (string, int32) {
	if cfg.advertise != "" {
		h, p, _ := net.SplitHostPort(cfg.advertise) // checked by validate
		n, _ := strconv.Atoi(p)
		return h, int32(n)
	}
	host, _, _ := net.SplitHostPort(cfg.listen)
	if wildcard(host) {
		host = "127.0.0.1"
	}
	return host, int32(addr.Port)
}

// Addr returns the address the server advertises (host:port): the one
// clients are told to connect to.
func (s *Server) Addr() string {
	return net.JoinHostPort(s.host, strconv.Itoa(int(s.port)))
}

// SecurityProtocol names the listener's protocol as a Kafka client's
// security.protocol does (PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL), with
// the SASL mechanisms offered and whether client certificates are
// required.
func (s *Server) SecurityProtocol() string {
	p := "PLAINTEXT"
	switch {
	case s.sasl != nil && s.tls != nil:
		p = "SASL_SSL"
	case s.sasl != nil:
		p = "SASL_PLAINTEXT"
	case s.tls != nil:
		p = "SSL"
	}
	if s.sasl != nil {
		p += " " + strings.Join(s.sasl.mechs, ",")
	}
	if s.tls != nil && s.tls.ClientAuth == tls.RequireAndVerifyClientCert {
		p += ", client certificates required"
	}
	return p
}

// ListenAddr returns the address the server listens on (host:port, the
// port resolved when the listen address asked for port 0).
func (s *Server) ListenAddr() string { return s.ln.Addr().String() }

// Serve accepts connections until Close; it returns nil after Close.
func (s *Server) Serve() error {
	for {
		nc, err := s.ln.Accept()
		if err != nil {
			select {
			case <-s.closing:
				return nil
			default:
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return fmt.Errorf("serve: accept: %w", err)
		}
		if s.nconns.Add(1) > int64(s.cfg.maxConns) {
			s.nconns.Add(-1)
			s.logf("refusing connection from %s: %d connections open (the cap)", nc.RemoteAddr(), s.cfg.maxConns)
			nc.Close()
			continue
		}
		c := s.newConn(nc)
		s.conns.Add(1)
		go func() {
			defer s.conns.Done()
			s.serveConn(c)
		}()
	}
}

// Close stops accepting, closes every connection and waits for their
// goroutines to exit.
func (s *Server) Close() error {
	s.once.Do(func() {
		close(s.closing)
		s.ln.Close()
		s.closeAllConns()
	})
	s.conns.Wait()
	return nil
}

func (s *Server) logf(format string, args ...any) {
	if s.cfg.logger != nil {
		fmt.Fprintf(s.cfg.logger, "serve: "+format+"\n", args...)
	}
}

// conn is one client connection. Its fields are used by its own goroutine
// only, except done, which Close and the share sessions read, raw, which
// Close closes, and the atomics its frame reader shares with it.
type conn struct {
	srv *Server
	// nc is the connection requests are read from and answered on: raw,
	// the socket, or TLS over it.
	nc       net.Conn
	raw      net.Conn
	id       int64
	clientID string
	// gone is closed when the client's side is gone (read failed); done
	// when the connection's goroutine has exited.
	gone chan struct{}
	done chan struct{}
	// pollBuf is the records buffer fetches and share fetches read into,
	// reused from read to read (a connection serves one request at a
	// time; the records are encoded before the next read). At most
	// maxPollBuf records, so what stale entries keep alive is bounded.
	pollBuf []engine.Record
	// recBuf is the buffer produced records are decoded into, reused the
	// same way; at most maxRecBuf records.
	recBuf []engine.ProduceRecord
	// sasl is the connection's SASL exchange; authed is set once it
	// succeeded (read by the frame reader too, hence atomic).
	sasl   saslConn
	authed atomic.Bool
	// closeAfter closes the connection once the response being sent is
	// written (a failed SASL exchange).
	closeAfter bool
	// inFlight counts frames read and not yet answered; active is when
	// the connection last read a frame or wrote a response (Unix
	// nanoseconds). The idle timeout runs from active while inFlight is 0.
	inFlight atomic.Int32
	active   atomic.Int64
}

func (c *conn) touch() { c.active.Store(timeNow().UnixNano()) }

// maxRecBuf bounds the decode buffer a connection keeps between produces.
const maxRecBuf = 8192

// errConnClosed ends a request whose connection or server closed while it
// waited.
var errConnClosed = errors.New("serve: connection closed while the request waited")

var timeNow = time.Now

// errFrame is wrapped by errors that close a connection for a bad frame.
var errFrame = errors.New("serve: bad request frame")

// readAhead is how many request frames a connection reads ahead of the
// one being served. Reading ahead lets a handler that waits (a join round,
// a long poll) notice at once that its client went away.
const readAhead = 2

func (s *Server) serveConn(c *conn) {
	defer s.connClosed(c)
	c.touch()
	if tc, ok := c.nc.(*tls.Conn); ok {
		if err := s.handshake(tc); err != nil {
			s.logf("closing %s: TLS handshake: %v", c.nc.RemoteAddr(), err)
			return
		}
	}
	frames := make(chan []byte, readAhead)
	go s.readFrames(c, frames)
	bw := bufio.NewWriterSize(c.nc, 64<<10)
	var out []byte
	defer func() { putBuf(out) }()
	for frame := range frames {
		var err error
		var send bool
		out, send, err = s.handleFrame(c, frame, out[:0])
		recycleFrame(frame)
		if err != nil {
			s.logf("closing %s: %v", c.nc.RemoteAddr(), err)
			return
		}
		if !send {
			c.inFlight.Add(-1)
			c.touch()
			continue
		}
		// A client that reads no response for the idle timeout is idle
		// too; the deadline keeps it from holding the goroutine forever.
		c.nc.SetWriteDeadline(timeNow().Add(s.cfg.idleTimeout))
		if _, err := bw.Write(out); err != nil {
			return
		}
		if len(frames) == 0 || c.closeAfter {
			if err := bw.Flush(); err != nil {
				return
			}
		}
		c.inFlight.Add(-1)
		c.touch()
		if c.closeAfter {
			return
		}
		if cap(out) > 1<<20 {
			// A large response's buffer goes back to the pool rather
			// than stay with an idle connection.
			putBuf(out)
			out = nil
		}
	}
}

// maxSASLFrame caps a frame before SASL authentication, as Kafka's
// sasl.server.max.receive.size does (its default): an unauthenticated
// client cannot make the server allocate more.
const maxSASLFrame = 512 << 10

// readFrames reads request frames into frames until the connection fails,
// idles past the idle timeout, takes longer than the partial-frame
// timeout to send a frame or sends a malformed one; then it closes c.gone
// and frames.
func (s *Server) readFrames(c *conn, frames chan<- []byte) {
	defer close(frames)
	defer close(c.gone)
	br := bufio.NewReaderSize(c.nc, 64<<10)
	var sizeBuf [4]byte
	for {
		if err := s.awaitFrame(c, br); err != nil {
			if errors.Is(err, errIdle) {
				s.logf("closing %s: idle for %v (--idle-timeout)", c.nc.RemoteAddr(), s.cfg.idleTimeout)
			}
			return
		}
		// The frame has begun: the rest must come within the
		// partial-frame timeout.
		c.nc.SetReadDeadline(timeNow().Add(s.cfg.partialTimeout))
		if _, err := io.ReadFull(br, sizeBuf[:]); err != nil {
			s.logPartial(c, err)
			return
		}
		if s.tls == nil && sizeBuf[0] == 0x16 && sizeBuf[1] == 0x03 {
			// A TLS record header (handshake, version 3.x) read as a
			// size would be a frame of 369 MB or more.
			s.logf("closing %s: TLS client on a plaintext listener (its ClientHello is not a Kafka request)", c.nc.RemoteAddr())
			return
		}
		size := int32(binary.BigEndian.Uint32(sizeBuf[:]))
		minSize, maxSize := int32(8), s.cfg.maxRequestBytes
		if s.sasl != nil && !c.authed.Load() {
			// Raw SASL tokens (SaslHandshake v0) have no request
			// header, so may be shorter.
			minSize, maxSize = 1, min(maxSize, maxSASLFrame)
		}
		if size < minSize || size > maxSize {
			s.logf("closing %s: request frame of %d bytes (valid: %d to %d)", c.nc.RemoteAddr(), size, minSize, maxSize)
			c.nc.Close()
			return
		}
		var key int16 = -1
		if k, err := br.Peek(2); err == nil {
			key = int16(binary.BigEndian.Uint16(k))
		}
		frame := newFrame(key, int(size))
		if _, err := io.ReadFull(br, frame); err != nil {
			s.logPartial(c, err)
			return // disconnected mid-request: nothing was applied
		}
		c.inFlight.Add(1)
		c.touch()
		select {
		case frames <- frame:
		case <-s.closing:
			return
		}
	}
}

// errIdle ends a connection that sent nothing for the idle timeout.
var errIdle = errors.New("serve: connection idle")

// awaitFrame waits for the first byte of the next frame. It returns
// errIdle once the connection has had no request in flight and no
// activity for the idle timeout; a request being served (a long poll, a
// join round) keeps it open.
func (s *Server) awaitFrame(c *conn, br *bufio.Reader) error {
	for {
		last := c.active.Load()
		deadline := time.Unix(0, last).Add(s.cfg.idleTimeout)
		if c.inFlight.Load() > 0 {
			deadline = timeNow().Add(s.cfg.idleTimeout)
		}
		c.nc.SetReadDeadline(deadline)
		_, err := br.Peek(1)
		if err == nil {
			return nil
		}
		var ne net.Error
		if !errors.As(err, &ne) || !ne.Timeout() {
			return err
		}
		if c.inFlight.Load() == 0 && c.active.Load() == last {
			return errIdle
		}
	}
}

// logPartial logs a frame that stopped arriving before the partial-frame
// timeout; a client that disconnected is not logged.
func (s *Server) logPartial(c *conn, err error) {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		s.logf("closing %s: request frame incomplete %v after its first byte (--partial-request-timeout)", c.nc.RemoteAddr(), s.cfg.partialTimeout)
	}
}

// handshake runs the TLS handshake within the partial-frame timeout.
func (s *Server) handshake(tc *tls.Conn) error {
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.partialTimeout)
	defer cancel()
	err := tc.HandshakeContext(ctx)
	tc.SetDeadline(time.Time{})
	return err
}

// newFrame returns a buffer for a request frame of size bytes with API
// key key (the frame's first two bytes, peeked before it is read). A
// Produce frame comes from the buffer pool: its handler keeps none of its
// bytes (the engine copies the records it appends, kmsg copies strings),
// so recycleFrame returns it once served. Every other request gets a
// buffer of its own, since some keep slices of it (group member metadata,
// assignments).
func newFrame(key int16, size int) []byte {
	if key == int16(kmsg.Produce) {
		return getBuf(size)[:size]
	}
	return make([]byte, size)
}

// recycleFrame returns a served Produce frame to the buffer pool (see
// newFrame); other frames are left to the collector.
func recycleFrame(frame []byte) {
	if len(frame) >= 2 && int16(binary.BigEndian.Uint16(frame)) == int16(kmsg.Produce) {
		putBuf(frame)
	}
}

// HandleFrame decodes one request frame (without its 4-byte size), runs it
// and appends the response frame (with its size) to dst. send is false
// when the request takes no response. An error means the connection must
// close. It never panics: a handler's panic becomes an error.
func (s *Server) handleFrame(c *conn, frame []byte, dst []byte) (out []byte, send bool, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("internal error serving a request: %v\n%s", r, debug.Stack())
			out, send = nil, false
		}
	}()
	if c.sasl.raw && !c.authed.Load() {
		return s.saslRawToken(c, frame, dst)
	}
	r := kbin.Reader{Src: frame}
	key := r.Int16()
	version := r.Int16()
	corr := r.Int32()
	clientID := r.NullableString()
	if !r.Ok() {
		return dst, false, fmt.Errorf("%w: truncated header", errFrame)
	}
	if clientID != nil {
		c.clientID = *clientID
	}
	a, ok := s.apis[key]
	if !ok {
		return dst, false, fmt.Errorf("%w: unknown or disabled API key %d", errFrame, key)
	}
	if s.sasl != nil && !c.authed.Load() && !saslOpen(key) {
		// Kafka closes such a connection too: nothing but the
		// exchange is served before it succeeds.
		return dst, false, fmt.Errorf("%w: %s before SASL authentication", errUnauthenticated, apiName(key))
	}
	if version < a.min || version > a.max {
		if key == int16(kmsg.ApiVersions) {
			return s.apiVersionsUnsupported(dst, corr), true, nil
		}
		return dst, false, fmt.Errorf("%w: %s v%d is not served (versions %d to %d)", errFrame, apiName(key), version, a.min, a.max)
	}
	var req kmsg.Request
	if a.newReq != nil {
		req = a.newReq()
	} else {
		req = kmsg.RequestForKey(key)
	}
	req.SetVersion(version)
	if req.IsFlexible() {
		skipTags(&r)
		if !r.Ok() {
			return dst, false, fmt.Errorf("%w: truncated header tags", errFrame)
		}
	}
	if err := req.ReadFrom(r.Src); err != nil {
		return dst, false, fmt.Errorf("%w: %s v%d: %v", errFrame, apiName(key), version, err)
	}
	if s.cfg.trace {
		s.logf("%s %s v%d from %s (%s)", time.Now().Format("15:04:05.000000"), apiName(key), version, c.nc.RemoteAddr(), c.clientID)
	}
	if key != int16(kmsg.ApiVersions) {
		s.awaitEngine(c)
	}
	resp, err := a.fn(s, c, req)
	if err != nil {
		return dst, false, err
	}
	if resp == nil {
		return dst, false, nil
	}
	resp.SetVersion(version)
	if hint := sizeHint(resp); cap(dst)-len(dst) < hint {
		putBuf(dst)
		dst = getBuf(hint)
	}
	start := len(dst)
	dst = append(dst, 0, 0, 0, 0)
	dst = kbin.AppendInt32(dst, corr)
	if resp.IsFlexible() && key != int16(kmsg.ApiVersions) {
		dst = append(dst, 0) // response header tags
	}
	dst = resp.AppendTo(dst)
	releaseRecordBuffers(resp)
	binary.BigEndian.PutUint32(dst[start:], uint32(len(dst)-start-4))
	return dst, true, nil
}

// sizeHint is about the encoded size of a response that carries records,
// so the response buffer is sized once (0 for others).
func sizeHint(resp kmsg.Response) int {
	n := 0
	switch r := resp.(type) {
	case *kmsg.FetchResponse:
		for i := range r.Topics {
			for j := range r.Topics[i].Partitions {
				n += len(r.Topics[i].Partitions[j].RecordBatches) + 128
			}
		}
	case *kmsg.ShareFetchResponse:
		for i := range r.Topics {
			for j := range r.Topics[i].Partitions {
				p := &r.Topics[i].Partitions[j]
				n += len(p.Records) + 20*len(p.AcquiredRecords) + 128
			}
		}
	default:
		return 0
	}
	return n + 1024
}

func apiName(key int16) string {
	switch key {
	case 93, 95:
		return "TxnShareAcknowledge"
	}
	if n := kmsg.NameForKey(key); n != "" {
		return n
	}
	return "key " + strconv.Itoa(int(key))
}

// skipTags skips a tagged-fields section.
func skipTags(b *kbin.Reader) {
	n := b.Uvarint()
	for i := uint32(0); i < n && b.Ok(); i++ {
		b.Uvarint()
		l := b.Uvarint()
		if int(l) > len(b.Src) {
			b.Src = nil
			_ = b.Int8()
			return
		}
		b.Span(int(l))
	}
}
