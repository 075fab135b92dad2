package probe

import (
	"bufio"
	"context"
	"crypto/tls"
	"io"
	"net"
	"sync"
	"time"
)

// The lean engine speaks just enough HTTP/1.1 for a health check: it writes
// the prepared request in one call, reads the status line and headers, and
// reads the body only when ExpectedResponse needs it, stopping as soon as
// the segments matched or the window is full. It runs on the caller's
// goroutine (the context is honoured through the connection's deadline)
// and borrows its buffers from a pool.
//
// Its parser follows net/http's client (net/http.ReadResponse and the
// transport) rule for rule on everything that changes a verdict, so both
// engines classify any reply the same way; FuzzHTTPEngines and
// FuzzHTTPEnginesHeaders check it. One known difference: both bound the
// response headers to 64 KiB, but net/http counts the bytes it reads from
// the connection (body bytes read ahead included) where the lean engine
// counts header lines, so replies with headers just under the bound may be
// judged differently.

// httpMaxHeaderBytes bounds the status lines and headers of one exchange
// (both engines), so a target cannot make a probe buffer without limit.
const httpMaxHeaderBytes = 64 << 10

// httpLeanBufSize is the read buffer of probes that read the body:
// net/http's transport uses the same size, and the size matters there (a
// chunk-size line or a trailer must fit).
const httpLeanBufSize = 4096

// httpLeanHeadBufSize is the read buffer of probes that stop after the
// headers (no ExpectedResponse). Nothing the header parser decides depends
// on the buffer's size (lines of any length are joined, the 64 KiB bound
// counts line bytes), so a buffer that holds a health check's usual reply
// in one read is enough; it keeps the pool small when many probes are in
// flight.
const httpLeanHeadBufSize = 1024

// httpLeanState is one probe's pooled scratch.
type httpLeanState struct {
	br     *bufio.Reader
	budget int    // header bytes the response may still use
	line   []byte // a status or header line longer than the buffer
	cont   []byte // a header line with continuations
	first  []byte // the first Content-Length value
	body   []byte // body bytes read for matching
	m      segMatcher
	hdr    httpHeaderInfo
}

// httpLeanPool and httpLeanBodyPool share probes' scratch; they are the
// only package-level state the lean engine keeps. Probes that match the body
// take theirs from httpLeanBodyPool (a 4 KiB reader and a 4 KiB body
// buffer), the others from httpLeanPool (a 1 KiB reader, no body buffer):
// each pool grows to the peak number of its probes in flight.
var (
	httpLeanPool = sync.Pool{New: func() any {
		return &httpLeanState{br: bufio.NewReaderSize(nil, httpLeanHeadBufSize)}
	}}
	httpLeanBodyPool = sync.Pool{New: func() any {
		return &httpLeanState{br: bufio.NewReaderSize(nil, httpLeanBufSize), body: make([]byte, httpLeanBufSize)}
	}}
)

// httpLongAgo is a deadline in the past, to interrupt blocked I/O.
var httpLongAgo = time.Unix(1, 0)

// probeLean is Probe for the lean engine, without the latency.
func (h *HTTP) probeLean(ctx context.Context) Result {
	conn, err := h.dial(ctx)
	if err != nil {
		return httpFailed("connect", err)
	}
	defer conn.Close()
	probeSetDeadline(ctx, conn, h.conf().ResponseTimeout)
	if ctx.Done() != nil {
		stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(httpLongAgo) })
		defer stop()
	}
	return h.leanExchange(conn)
}

// leanExchange runs the TLS handshake when the prober has one, sends the
// request over conn and judges the reply. The caller has set conn's
// deadlines (or enforces them itself, as the event loop does) and closes
// it.
func (h *HTTP) leanExchange(conn net.Conn) Result {
	c := conn
	if h.useTLS {
		tc := tls.Client(conn, h.tls.config())
		if err := tc.Handshake(); err != nil {
			return httpFailed("tls handshake", err)
		}
		c = tc
	}
	if _, err := c.Write(h.req); err != nil {
		return httpFailed("write request", err)
	}
	pool := &httpLeanPool
	if len(h.segs) > 0 {
		pool = &httpLeanBodyPool
	}
	st := pool.Get().(*httpLeanState)
	st.br.Reset(c)
	r := st.exchange(h)
	st.br.Reset(nil)
	st.m.reset(nil)
	if cap(st.line) > httpLeanBufSize || cap(st.cont) > httpLeanBufSize {
		st.line, st.cont = nil, nil // do not keep a huge header's buffers
	}
	pool.Put(st)
	return r
}

// probeSetDeadline sets conn's deadline to the earlier of ctx's deadline
// and now+after (after 0 = no such bound).
func probeSetDeadline(ctx context.Context, conn net.Conn, after time.Duration) {
	d, ok := ctx.Deadline()
	if after > 0 {
		if a := time.Now().Add(after); !ok || a.Before(d) {
			d, ok = a, true
		}
	}
	if ok {
		_ = conn.SetDeadline(d)
	}
}

// exchange reads the response and classifies it.
func (st *httpLeanState) exchange(h *HTTP) Result {
	var (
		code int
		body httpBodyKind
		size int64
		err  error
	)
	// The header bytes of the final response and any interim ones share
	// one budget, as in net/http's transport (MaxResponseHeaderBytes).
	st.budget = httpMaxHeaderBytes
	for {
		code, body, size, err = st.readHead(h.head)
		if err != nil {
			return httpFailed("read response", err)
		}
		// 1xx interim responses (100 Continue, 103 Early Hints) are skipped;
		// 101 is final.
		if code < 100 || code > 199 || code == 101 {
			break
		}
	}
	if len(h.segs) == 0 {
		return h.verdict(code, nil, false)
	}
	st.m.reset(h.segs)
	matched, err := st.readBody(body, size, h.window)
	return h.verdict(code, err, matched)
}

// httpBodyKind says how a response's body is delimited.
type httpBodyKind uint8

const (
	httpBodyNone    httpBodyKind = iota // no body
	httpBodyLength                      // Content-Length bytes
	httpBodyChunked                     // chunked transfer coding
	httpBodyEOF                         // until the connection closes
)

// readHead reads one response's status line and headers and works out its
// body, as net/http.ReadResponse does.
func (st *httpLeanState) readHead(head bool) (code int, body httpBodyKind, size int64, err error) {
	line, err := st.readLine(st.br, -1)
	if err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return 0, 0, 0, err
	}
	var major, minor int
	if code, major, minor, err = httpParseStatusLine(line); err != nil {
		return 0, 0, 0, err
	}
	st.hdr = httpHeaderInfo{}
	st.first = st.first[:0]
	if err := st.readHeader(false); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return 0, 0, 0, err
	}
	body, size, err = st.hdr.transfer(st.first, code, major, minor, head)
	return code, body, size, err
}

// readBody reads the body until every segment matched, the window is full
// or the body ends, and reports whether the segments matched. An error
// before that decides is returned.
func (st *httpLeanState) readBody(kind httpBodyKind, size int64, window int) (bool, error) {
	left := int64(window) // bytes the window still takes
	if window == 0 {
		left = -1
	}
	// feed hands the matcher at most the rest of the window and reports
	// whether the verdict is decided.
	feed := func(p []byte) bool {
		if left >= 0 && int64(len(p)) > left {
			p = p[:left]
		}
		if st.m.feed(p) {
			return true
		}
		if left >= 0 {
			left -= int64(len(p))
			return left == 0
		}
		return false
	}
	if left == 0 {
		return st.m.done(), nil
	}
	switch kind {
	case httpBodyNone:
		return false, nil
	case httpBodyLength:
		for size > 0 {
			buf := st.body
			if int64(len(buf)) > size {
				buf = buf[:size]
			}
			n, err := st.br.Read(buf)
			size -= int64(n)
			if feed(buf[:n]) {
				return st.m.done(), nil
			}
			if err != nil {
				if err == io.EOF {
					err = io.ErrUnexpectedEOF
				}
				return false, err
			}
		}
		return false, nil
	case httpBodyEOF:
		for {
			n, err := st.br.Read(st.body)
			if feed(st.body[:n]) {
				return st.m.done(), nil
			}
			if err == io.EOF {
				return false, nil
			}
			if err != nil {
				return false, err
			}
		}
	}
	return st.readChunked(feed)
}
