// This file holds the Server: the listener, the connection loop (frames in,
// frames out, one request at a time per connection, as Kafka does), the
// table of APIs and the dispatch through it.

package serve

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"runtime/debug"
	"strconv"
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
	e    *engine.Engine
	cfg  config
	ln   net.Listener
	host string
	port int32
	apis map[int16]api
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
	ln, err := net.Listen("tcp", cfg.listen)
	if err != nil {
		return nil, fmt.Errorf("serve: listening on %s: %w", cfg.listen, err)
	}
	s := &Server{e: e, cfg: cfg, ln: ln, closing: make(chan struct{})}
	addr := ln.Addr().(*net.TCPAddr)
	s.host = advertisedHost(cfg.listen, addr)
	s.port = int32(addr.Port)
	s.apis = make(map[int16]api, len(apiTable)+1)
	for k, a := range apiTable {
		s.apis[k] = a
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

// advertisedHost is the host Metadata names: the listen host, or the
// loopback address when the server listens on every interface.
func advertisedHost(listen string, addr *net.TCPAddr) string {
	host, _, _ := net.SplitHostPort(listen)
	if host == "" || host == "0.0.0.0" || host == "::" {
		return "127.0.0.1"
	}
	return host
}

// Addr returns the address the server listens on (host:port).
func (s *Server) Addr() string {
	return net.JoinHostPort(s.host, strconv.Itoa(int(s.port)))
}

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
			defer s.nconns.Add(-1)
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
// only, except done, which Close and the share sessions read.
type conn struct {
	srv      *Server
	nc       net.Conn
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
}

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
	frames := make(chan []byte, readAhead)
	go s.readFrames(c, frames)
	bw := bufio.NewWriterSize(c.nc, 64<<10)
	var out []byte
	defer func() { putBuf(out) }()
	for frame := range frames {
		var err error
		var send bool
		out, send, err = s.handleFrame(c, frame, out[:0])
		if err != nil {
			s.logf("closing %s: %v", c.nc.RemoteAddr(), err)
			return
		}
		if !send {
			continue
		}
		if _, err := bw.Write(out); err != nil {
			return
		}
		if len(frames) == 0 {
			if err := bw.Flush(); err != nil {
				return
			}
		}
		if cap(out) > 1<<20 {
			// A large response's buffer goes back to the pool rather
			// than stay with an idle connection.
			putBuf(out)
			out = nil
		}
	}
}

// readFrames reads request frames into frames until the connection fails
// or a frame is malformed; then it closes c.gone and frames.
func (s *Server) readFrames(c *conn, frames chan<- []byte) {
	defer close(frames)
	defer close(c.gone)
	br := bufio.NewReaderSize(c.nc, 64<<10)
	var sizeBuf [4]byte
	for {
		if _, err := io.ReadFull(br, sizeBuf[:]); err != nil {
			return
		}
		size := int32(binary.BigEndian.Uint32(sizeBuf[:]))
		if size < 8 || size > s.cfg.maxRequestBytes {
			s.logf("closing %s: request frame of %d bytes (valid: 8 to %d)", c.nc.RemoteAddr(), size, s.cfg.maxRequestBytes)
			c.nc.Close()
			return
		}
		frame := make([]byte, size)
		if _, err := io.ReadFull(br, frame); err != nil {
			return // disconnected mid-request: nothing was applied
		}
		select {
		case frames <- frame:
		case <-s.closing:
			return
		}
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
