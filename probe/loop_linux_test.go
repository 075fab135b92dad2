//go:build linux

package probe

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// loopRun probes p once through a fresh event loop, as a Monitor would
// with the given probe timeout, and returns the result.
func loopRun(t testing.TB, p Prober, timeout time.Duration) Result {
	t.Helper()
	lp, err := newEvLoop()
	require.NoError(t, err)
	defer lp.close()
	return loopRunOn(t, lp, p, timeout)
}

// loopRunOn is loopRun on the loop lp.
func loopRunOn(t testing.TB, lp *evLoop, p Prober, timeout time.Duration) Result {
	t.Helper()
	lt, ok := loopTargetOf(p)
	require.True(t, ok, "the event loop cannot run %T", p)
	now := time.Now()
	lp.start(loopJob{t: &monTarget{id: "t"}, lt: lt, start: now, timeout: timeout}, now)
	for {
		if d := lp.takeDone(); len(d) > 0 {
			require.Len(t, d, 1)
			require.Zero(t, lp.inFlight())
			return d[0].r
		}
		now = time.Now()
		lp.expire(now)
		if lp.inFlight() == 0 {
			continue
		}
		until, has := lp.next()
		require.True(t, has, "a probe in flight has a deadline")
		lp.wait(now, until, until.Add(loopTick), has)
	}
}

// loopSame requires the loop's verdict to be the goroutine path's.
func loopSame(t *testing.T, want, got Result) {
	t.Helper()
	assert.Equal(t, want.Status, got.Status, "status: goroutine %q, loop %q", want.Detail, got.Detail)
	assert.Equal(t, want.Kind, got.Kind, "kind: goroutine %q, loop %q", want.Detail, got.Detail)
	assert.Equal(t, want.Code, got.Code)
	assert.Positive(t, got.Latency)
}

// TestLoopTargets: which probers the event loop takes.
func TestLoopTargets(t *testing.T) {
	httpP := func(addr string, mod func(*HTTPConfig)) Prober {
		cfg := DefaultHTTPConfig()
		if mod != nil {
			mod(&cfg)
		}
		h, err := NewHTTP(addr, cfg)
		require.NoError(t, err)
		return h
	}
	tcpP := func(addr string, cfg TCPConfig) Prober {
		p, err := NewTCP(addr, cfg)
		require.NoError(t, err)
		return p
	}
	for _, c := range []struct {
		name string
		p    Prober
		want bool
	}{
		{"http ipv4", httpP("127.0.0.1:80", nil), true},
		{"http ipv6", httpP("[::1]:8080", nil), true},
		{"http mapped", httpP("[::ffff:127.0.0.1]:80", nil), true},
		{"http default port", httpP("127.0.0.1", nil), true},
		{"http host name", httpP("localhost:80", nil), false},
		{"http zone", httpP("[fe80::1%lo]:80", nil), false},
		{"http body match", httpP("127.0.0.1:80", func(c *HTTPConfig) { c.ExpectedResponse = Segments{{Text: "ok"}} }), true},
		{"http body match, window at the bound", httpP("127.0.0.1:80", func(c *HTTPConfig) {
			c.ExpectedResponse, c.MatchWindow = Segments{{Text: "ok"}}, loopMaxWindow
		}), true},
		{"http body match, whole body", httpP("127.0.0.1:80", func(c *HTTPConfig) {
			c.ExpectedResponse, c.MatchWindow = Segments{{Text: "ok"}}, 0
		}), false},
		{"http body match, large window", httpP("127.0.0.1:80", func(c *HTTPConfig) {
			c.ExpectedResponse, c.MatchWindow = Segments{{Text: "ok"}}, loopMaxWindow+1
		}), false},
		{"http whole body, no match", httpP("127.0.0.1:80", func(c *HTTPConfig) { c.MatchWindow = 0 }), true},
		{"https", httpP("127.0.0.1:443", func(c *HTTPConfig) { c.TLS = &TLSConfig{} }), true},
		{"https host name", httpP("localhost:443", func(c *HTTPConfig) { c.TLS = &TLSConfig{} }), false},
		{"nethttp engine", httpP("127.0.0.1:80", func(c *HTTPConfig) { c.Engine = HTTPEngineNetHTTP }), false},
		{"tcp connect-only", tcpP("127.0.0.1:22", TCPConfig{}), true},
		{"tcp complete handshake", tcpP("127.0.0.1:22", TCPConfig{CompleteHandshake: true}), true},
		{"tcp send", tcpP("127.0.0.1:22", TCPConfig{Send: &Payload{Text: "x"}}), false},
		{"tcp receive", tcpP("127.0.0.1:22", TCPConfig{Receive: Segments{{Text: "x"}}}), false},
		{"tcp host name", tcpP("localhost:22", TCPConfig{}), false},
	} {
		lt, ok := loopTargetOf(c.p)
		assert.Equal(t, c.want, ok, c.name)
		if ok {
			assert.False(t, lt.addr.Addr().Is4In6(), "%s: a mapped address is dialled as IPv4", c.name)
			assert.Equal(t, strings.Contains(c.name, "ipv6"), lt.addr.Addr().Is6(), "%s: family", c.name)
		}
	}
	_, ok := loopTargetOf(ProberFunc(func(context.Context) Result { return Result{Status: Pass} }))
	assert.False(t, ok, "a ProberFunc")
}

// TestLoopHTTPMatchesGoroutinePath: the same replies, refusals, resets and
// silences get the same verdict from the loop as from HTTP.Probe.
func TestLoopHTTPMatchesGoroutinePath(t *testing.T) {
	replies := []string{
		"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
		"HTTP/1.1 200 OK\r\n\r\nbody until close",
		"HTTP/1.0 503 Service Unavailable\r\n\r\n",
		"HTTP/1.1 302 Found\r\nLocation: /x\r\n\r\n",
		"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nok",
		"HTTP/1.1 200 OK\r\n bad\r\n\r\n",
		"HTTP/1.1 200 OK\r\nX: " + string(bytes.Repeat([]byte("a"), 70<<10)) + "\r\n\r\n",
		"HTTP/1.1 200 OK\r\nX: y\r\n", // closed inside the headers
		"HTTP/1.1 2",
		"SSH-2.0-OpenSSH_9.6\r\n",
		"",
	}
	cfg := DefaultHTTPConfig()
	cfg.RetriableStatuses = Statuses{OneStatus(503)}
	for i, reply := range replies {
		t.Run(strconv.Itoa(i), func(t *testing.T) {
			srv := probersRawServer(t, []byte(reply), false, false)
			h := probersHTTP(t, srv.addr(), cfg, HTTPEngineLean)
			want := h.Probe(probersCtx(t, 5*time.Second))
			loopSame(t, want, loopRun(t, h, 5*time.Second))
		})
	}
	// The same replies judged by a body match (Route 53's window, and a
	// small one).
	for _, window := range []int{httpRoute53MatchWindow, 8} {
		bc := cfg
		bc.ExpectedResponse, bc.MatchWindow = Segments{{Text: "ok"}, {Text: "until"}}, window
		for i, reply := range append(replies,
			"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n5\r\nuntil\r\n0\r\n\r\n",
			"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nok until",
			"HTTP/1.1 200 OK\r\nContent-Length: 20\r\n\r\nno match in this one") {
			t.Run("body/"+strconv.Itoa(window)+"/"+strconv.Itoa(i), func(t *testing.T) {
				srv := probersRawServer(t, []byte(reply), false, false)
				h := probersHTTP(t, srv.addr(), bc, HTTPEngineLean)
				_, ok := loopTargetOf(h)
				require.True(t, ok)
				want := h.Probe(probersCtx(t, 5*time.Second))
				loopSame(t, want, loopRun(t, h, 5*time.Second))
			})
		}
	}
	t.Run("dropped", func(t *testing.T) {
		srv := probersRawServer(t, nil, false, true)
		h := probersHTTP(t, srv.addr(), cfg, HTTPEngineLean)
		want := h.Probe(probersCtx(t, 5*time.Second))
		loopSame(t, want, loopRun(t, h, 5*time.Second))
		assert.Equal(t, KindReset, want.Kind)
	})
	t.Run("refused", func(t *testing.T) {
		h := probersHTTP(t, probersClosedPort(t), cfg, HTTPEngineLean)
		want := h.Probe(probersCtx(t, 5*time.Second))
		got := loopRun(t, h, 5*time.Second)
		loopSame(t, want, got)
		assert.Equal(t, KindRefused, got.Kind)
		assert.Contains(t, got.Detail, "connection refused")
	})
	t.Run("silent", func(t *testing.T) {
		srv := probersRawServer(t, nil, true, false)
		h := probersHTTP(t, srv.addr(), cfg, HTTPEngineLean)
		want := h.Probe(probersCtx(t, 100*time.Millisecond))
		got := loopRun(t, h, 100*time.Millisecond)
		loopSame(t, want, got)
		assert.Equal(t, KindTimeout, got.Kind)
		assert.GreaterOrEqual(t, got.Latency, 100*time.Millisecond)
	})
	t.Run("response timeout", func(t *testing.T) {
		srv := probersRawServer(t, nil, true, false)
		c := cfg
		c.ResponseTimeout = 50 * time.Millisecond
		h := probersHTTP(t, srv.addr(), c, HTTPEngineLean)
		got := loopRun(t, h, time.Hour)
		assert.Equal(t, KindTimeout, got.Kind, got.Detail)
		assert.GreaterOrEqual(t, got.Latency, 50*time.Millisecond)
	})
}

// TestLoopIPv6: the loop connects over IPv6 (skipped where ::1 is absent).
func TestLoopIPv6(t *testing.T) {
	ln, err := net.Listen("tcp", "[::1]:0")
	if err != nil {
		t.Skip("no IPv6 loopback:", err)
	}
	defer ln.Close()
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(204) })}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	cfg := DefaultHTTPConfig()
	cfg.ExpectedStatuses = Statuses{OneStatus(204)}
	h := probersHTTP(t, ln.Addr().String(), cfg, HTTPEngineLean)
	r := loopRun(t, h, 5*time.Second)
	assert.Equal(t, Pass, r.Status, r.Detail)
	assert.Equal(t, 204, r.Code)
	p, err := NewTCP(ln.Addr().String(), TCPConfig{})
	require.NoError(t, err)
	r = loopRun(t, p, 5*time.Second)
	assert.Equal(t, Pass, r.Status, r.Detail)
}

// probersClosedPort returns a loopback address nothing listens on.
func probersClosedPort(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	return addr
}

// loopByteByByteServer serves one exchange per connection: it reads a
// request of at least 4 MiB (headers included), then answers 200 one byte
// per write, with Nagle off so each byte is a segment (over TLS, a record).
// wrap, if not nil, wraps the connection (TLS); the wrapped server reads
// slowly at first, so the client's socket buffer fills mid-handshake
// flight. got is the number of request bytes read.
func loopByteByByteServer(t *testing.T, wrap func(net.Conn) net.Conn) (addr string, got *atomic.Int64) {
	const reply = "HTTP/1.1 200 OK\r\nServer: slow\r\nContent-Length: 0\r\n\r\n"
	got = new(atomic.Int64)
	addr = probersTCPServer(t, func(c net.Conn, _ <-chan struct{}) {
		rw := c
		if wrap != nil {
			rw = wrap(c)
		}
		_ = rw.SetDeadline(time.Now().Add(10 * time.Second))
		var req []byte
		b := make([]byte, 64<<10)
		for !bytes.Contains(req, []byte("\r\n\r\n")) || len(req) < 4<<20 {
			if wrap != nil && len(req) < 64<<10 {
				time.Sleep(time.Millisecond) // pacing, not waiting: see above
			}
			n, err := rw.Read(b)
			req = append(req, b[:n]...)
			if err != nil {
				return
			}
		}
		got.Store(int64(len(req)))
		_ = c.(*net.TCPConn).SetNoDelay(true)
		for i := range len(reply) {
			if _, err := rw.Write([]byte{reply[i]}); err != nil {
				return
			}
		}
	})
	return addr, got
}

// TestLoopHTTPByteByByte: a reply written one byte per segment is judged
// the same whatever reads it arrives in; a request larger than the socket
// buffer is written across several writable events.
func TestLoopHTTPByteByByte(t *testing.T) {
	addr, got := loopByteByByteServer(t, nil)
	cfg := DefaultHTTPConfig()
	cfg.Method = "POST"
	cfg.RequestBody = &Payload{Text: string(bytes.Repeat([]byte("x"), 4<<20))}
	h := probersHTTP(t, addr, cfg, HTTPEngineLean)
	r := loopRun(t, h, 10*time.Second)
	require.Equal(t, Pass, r.Status, r.Detail)
	assert.Equal(t, 200, r.Code)
	assert.GreaterOrEqual(t, got.Load(), int64(4<<20))
}

// TestLoopTCP: connect-only checks in the loop pass on a listener, fail
// refused on a closed port, and by default reset before the handshake
// completes, so the listener never accepts them (as TCP.Probe does; see
// TestTCPConnectOnlyNotAccepted).
func TestLoopTCP(t *testing.T) {
	p, err := NewTCP(probersClosedPort(t), TCPConfig{})
	require.NoError(t, err)
	want := p.Probe(probersCtx(t, 5*time.Second))
	got := loopRun(t, p, 5*time.Second)
	loopSame(t, want, got)
	assert.Equal(t, KindRefused, got.Kind)

	tcpCheckNotAccepted(t, func(t *testing.T, p *TCP) Result { return loopRun(t, p, 5*time.Second) })
}

// TestLoopReusesSockets: a loop that runs checks one after another reuses
// the socket of a check that ended with a reset for the next one (see
// evLoop.recycle), and a reused socket behaves as a new one: connect-only
// checks still reset the handshake before its last ACK (the listener
// accepts none; with CompleteHandshake it does), a refused check after a
// passing one and a passing one after a refused one get their own
// verdicts, not an error left from before, and HTTP checks whose target
// closed first pass on a socket a TCP check used and the reverse.
func TestLoopReusesSockets(t *testing.T) {
	lp, err := newEvLoop()
	require.NoError(t, err)
	defer lp.close()
	run := func(t *testing.T, p Prober) Result { return loopRunOn(t, lp, p, 5*time.Second) }

	tcpCheckNotAccepted(t, func(t *testing.T, p *TCP) Result { return run(t, p) })
	hold, _ := lp.spareOf(loopTarget{holdACK: true})
	plain, _ := lp.spareOf(loopTarget{})
	require.Len(t, *hold, 1, "idle connect-only sockets after checks one at a time")
	fd := (*hold)[0]

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	open, err := NewTCP(ln.Addr().String(), TCPConfig{})
	require.NoError(t, err)
	closed, err := NewTCP(probersClosedPort(t), TCPConfig{})
	require.NoError(t, err)
	for i, c := range []struct {
		p    *TCP
		want Kind
	}{{open, KindNone}, {closed, KindRefused}, {closed, KindRefused}, {open, KindNone}, {open, KindNone}} {
		r := run(t, c.p)
		assert.Equal(t, c.want, r.Kind, "check %d: %s", i, r.Detail)
		require.Equal(t, []int32{fd}, *hold, "check %d reused the idle socket and gave it back", i)
	}

	h, err := NewHTTP(probersTCPServer(t, func(c net.Conn, _ <-chan struct{}) {
		probersReadRequest(c)
		_, _ = c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"))
	}), DefaultHTTPConfig())
	require.NoError(t, err)
	complete, err := NewTCP(ln.Addr().String(), TCPConfig{CompleteHandshake: true})
	require.NoError(t, err)
	for i, p := range []Prober{h, complete, h, complete, h} {
		r := run(t, p)
		require.Equal(t, Pass, r.Status, "check %d: %s", i, r.Detail)
	}
	assert.NotEmpty(t, *plain, "idle sockets of complete-handshake checks")

	// Sockets no probe took for a trim period are closed.
	now := time.Now()
	lp.trimSpare(now.Add(loopSpareTrim)) // starts a period: the low-water marks are the pools' sizes
	n := len(*plain)
	require.True(t, run(t, open).Passed())
	lp.trimSpare(now.Add(2 * loopSpareTrim))
	assert.Len(t, *hold, 1, "the connect-only socket used in the period is kept")
	assert.Empty(t, *plain, "the %d idle sockets not used in the period are closed", n)
	lp.closeSpare()
	assert.Empty(t, *hold, "idle sockets after closeSpare")
}

// TestLoopConnectSyscalls: a connect that succeeded costs no getsockopt
// (the writable event says so); a refused one reads its error with one.
// Both the TCP check and the HTTP check go through it.
func TestLoopConnectSyscalls(t *testing.T) {
	var calls atomic.Int64
	defer func(f func(int) syscall.Errno) { loopSoError = f }(loopSoError)
	loopSoError = func(fd int) syscall.Errno { calls.Add(1); return rawSoError(fd) }

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	tc, err := NewTCP(ln.Addr().String(), TCPConfig{})
	require.NoError(t, err)
	for i := range 3 {
		r := loopRun(t, tc, 5*time.Second)
		require.Equal(t, Pass, r.Status, "probe %d: %s", i, r.Detail)
	}
	h, err := NewHTTP(probersTCPServer(t, func(c net.Conn, _ <-chan struct{}) {
		probersReadRequest(c)
		_, _ = c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"))
	}), DefaultHTTPConfig())
	require.NoError(t, err)
	r := loopRun(t, h, 5*time.Second)
	require.Equal(t, Pass, r.Status, r.Detail)
	assert.Zero(t, calls.Load(), "getsockopt calls for connects that succeeded")

	refused, err := NewTCP(probersClosedPort(t), TCPConfig{})
	require.NoError(t, err)
	r = loopRun(t, refused, 5*time.Second)
	assert.Equal(t, KindRefused, r.Kind, r.Detail)
	assert.Equal(t, int64(1), calls.Load(), "getsockopt calls for a refused connect")
}

// loopPollFDs counts the process's open epoll sets and pipes.
func loopPollFDs(t *testing.T) int {
	es, err := os.ReadDir("/proc/self/fd")
	require.NoError(t, err)
	n := 0
	for _, e := range es {
		l, err := os.Readlink("/proc/self/fd/" + e.Name())
		if err == nil && (l == "anon_inode:[eventpoll]" || strings.HasPrefix(l, "pipe:")) {
			n++
		}
	}
	return n
}

// loopCounter counts events and closes reached once there were n.
type loopCounter struct {
	n       int64
	count   atomic.Int64
	reached chan struct{}
}

func newLoopCounter(n int64) *loopCounter {
	return &loopCounter{n: n, reached: make(chan struct{})}
}

func (c *loopCounter) add() {
	if c.count.Add(1) == c.n {
		close(c.reached)
	}
}

// TestMonitorEventLoop: a Monitor runs HTTP and TCP targets in its event
// loop and the rest on workers; a target removed while its probe is in the
// loop leaves that probe in flight, and stopping Run closes its socket (the
// server sees the close) and the loop's own descriptors. With NoEventLoop
// the same targets run on workers and no loop is opened.
func TestMonitorEventLoop(t *testing.T) {
	for _, noLoop := range []bool{false, true} {
		t.Run(map[bool]string{false: "loop", true: "NoEventLoop"}[noLoop], func(t *testing.T) {
			// Each server counts its probes; the fourth starts only after the
			// third's result was recorded.
			httpHits, tcpHits, workerHits := newLoopCounter(4), newLoopCounter(4), newLoopCounter(4)
			silentHit, silentClosed := newLoopCounter(1), newLoopCounter(1)
			httpAddr := probersTCPServer(t, func(c net.Conn, _ <-chan struct{}) {
				probersReadRequest(c)
				httpHits.add()
				_, _ = c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"))
			})
			tcpAddr := probersTCPServer(t, func(net.Conn, <-chan struct{}) { tcpHits.add() })
			silentAddr := probersTCPServer(t, func(c net.Conn, _ <-chan struct{}) {
				probersReadRequest(c)
				silentHit.add()
				_ = c.SetReadDeadline(time.Now().Add(time.Minute)) // a guard
				_, _ = c.Read(make([]byte, 1))                     // until the prober closes
				silentClosed.add()
			})
			polls := loopPollFDs(t)

			cfg := DefaultMonitorConfig()
			cfg.NoEventLoop = noLoop
			m, err := NewMonitor(cfg, nil, nil)
			require.NoError(t, err)
			pol := DefaultPolicy()
			pol.Interval = 100 * time.Millisecond
			pol.Timeout = pol.Interval
			pol.InitialJitter = 0
			add := func(id string, p Prober) {
				t.Helper()
				tp := pol
				if id == "silent" { // its probe stays in flight
					tp.Interval, tp.Timeout, tp.MaxBackoff = time.Hour, time.Hour, time.Hour
				}
				require.NoError(t, m.Add(Target{ID: id, Prober: p, Policy: tp}))
			}
			h, err := NewHTTP(httpAddr, DefaultHTTPConfig())
			require.NoError(t, err)
			add("http", h)
			tc, err := NewTCP(tcpAddr, TCPConfig{CompleteHandshake: true}) // accepted, so counted
			require.NoError(t, err)
			add("tcp", tc)
			sh, err := NewHTTP(silentAddr, DefaultHTTPConfig())
			require.NoError(t, err)
			add("silent", sh)
			add("worker", ProberFunc(func(context.Context) Result { workerHits.add(); return Result{Status: Pass} }))

			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- m.Run(ctx) }()
			for _, c := range []*loopCounter{httpHits, tcpHits, workerHits, silentHit} {
				waitOrGuard(t, 30*time.Second, "probes", func() { <-c.reached })
			}
			assert.Equal(t, !noLoop, m.lp.Load() != nil, "event loop open")
			for _, id := range []string{"http", "tcp", "worker"} {
				s, _ := m.Stats(id)
				assert.GreaterOrEqual(t, s.Probes, uint64(3), id)
				assert.Positive(t, s.Passes, "%s: %s", id, s.LastError) // a slow machine may time some out
			}
			s, _ := m.Stats("silent")
			assert.True(t, s.InFlight, "silent target in flight")
			require.NoError(t, m.Remove("silent")) // its probe stays in flight until Run stops
			cancel()
			require.NoError(t, <-done)
			assert.Nil(t, m.lp.Load())
			waitOrGuard(t, 30*time.Second, "the silent probe's socket closed", func() { <-silentClosed.reached })
			assert.Equal(t, polls, loopPollFDs(t), "epoll sets and pipes left open")
		})
	}
}

// BenchmarkLoopProbe measures one probe through the event loop on loopback
// (the in-process server included), one after another on one loop, as a
// Monitor's scheduler runs them; compare BenchmarkHTTPProbe/lean,
// BenchmarkHTTPSProbe/resumed and BenchmarkTCPProbe/connect, the worker
// path.
func BenchmarkLoopProbe(b *testing.B) {
	ca := probersNewCA(b)
	cert, _, _ := ca.Issue(false, "probe.test")
	tlsSrv := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	tlsSrv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	tlsSrv.StartTLS()
	defer tlsSrv.Close()
	scfg := DefaultHTTPConfig()
	scfg.Hostname = "probe.test"
	scfg.TLS = &TLSConfig{CAPEM: string(ca.PEM)}
	hs, err := NewHTTP(tlsSrv.Listener.Addr().String(), scfg)
	require.NoError(b, err)
	httpAddr := probersBenchServer(b)
	tcpLn, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(b, err)
	defer tcpLn.Close()
	h, err := NewHTTP(httpAddr, DefaultHTTPConfig())
	require.NoError(b, err)
	tc, err := NewTCP(tcpLn.Addr().String(), TCPConfig{})
	require.NoError(b, err)
	bcfg := DefaultHTTPConfig()
	bcfg.ExpectedResponse = Segments{textPayload("healthy")}
	hb, err := NewHTTP(httpAddr, bcfg)
	require.NoError(b, err)
	for _, c := range []struct {
		name string
		p    Prober
	}{{"http", h}, {"http-body-match", hb}, {"https-resumed", hs}, {"tcp-connect", tc}} {
		b.Run(c.name, func(b *testing.B) {
			lt, ok := loopTargetOf(c.p)
			require.True(b, ok)
			lp, err := newEvLoop()
			require.NoError(b, err)
			defer lp.close()
			mt := &monTarget{id: "t"}
			b.ReportAllocs()
			defer probersReportCPU(b)()
			for b.Loop() {
				now := time.Now()
				lp.start(loopJob{t: mt, lt: lt, start: now, timeout: time.Minute}, now)
				for lp.inFlight() > 0 {
					until, has := lp.next()
					lp.wait(now, until, until.Add(loopTick), has)
				}
				if d := lp.takeDone(); len(d) != 1 || d[0].r.Status != Pass {
					b.Fatalf("%+v", d)
				}
			}
		})
	}
}

// BenchmarkMonitorLoopTCP measures a Monitor's whole cost per probe for
// TCP connect-only checks in its event loop (scheduler, loop, machine,
// statistics, and the probe's system calls), with 256 targets on one
// loopback listener due every 20 ms (about as many probes a second as the
// loop runs on one core): one op per probe; failures (timeouts, when the
// machine is slower) are reported. Under valgrind's callgrind it gives the
// user-space instructions per probe.
func BenchmarkMonitorLoopTCP(b *testing.B) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(b, err)
	defer ln.Close()
	cfg := DefaultMonitorConfig()
	cfg.Seed = 1
	m, err := NewMonitor(cfg, nil, nil)
	require.NoError(b, err)
	pol := DefaultPolicy()
	pol.Interval = 20 * time.Millisecond
	pol.Timeout, pol.MaxBackoff, pol.InitialJitter = pol.Interval, pol.Interval, pol.Interval
	for i := range 256 {
		p, err := NewTCP(ln.Addr().String(), TCPConfig{})
		require.NoError(b, err)
		require.NoError(b, m.Add(Target{ID: strconv.Itoa(i), Prober: p, Policy: pol}))
	}
	probes := func() (n, fails uint64) {
		m.mu.Lock()
		defer m.mu.Unlock()
		for _, t := range m.targets {
			n += t.st.probes
			fails += t.st.probes - t.st.passes
		}
		return n, fails
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	b.ReportAllocs()
	cpu0 := monCPUTime()
	b.ResetTimer()
	go func() { done <- m.Run(ctx) }()
	for {
		if n, _ := probes(); n >= uint64(b.N) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	b.StopTimer()
	b.ReportMetric(float64(monCPUTime()-cpu0)/float64(b.N), "cpu-ns/op")
	n, fails := probes()
	b.ReportMetric(float64(fails)/float64(n), "failed/op")
	if fails > 0 {
		for _, s := range m.Snapshot() {
			if s.LastError != "" {
				b.Logf("%d failures, e.g. %s", fails, s.LastError)
				break
			}
		}
	}
	cancel()
	require.NoError(b, <-done)
}

// TestMonitorLoopNoAllocs: a probe through the Monitor's event loop, from
// dispatch to the recorded result and the rescheduled target (the
// scheduler's steps, run one after another as schedule runs them), makes
// no allocation once the target's latency window is full: TCP and HTTP
// checks that pass. The HTTP server runs in a child process, so that its
// allocations are not counted.
func TestMonitorLoopNoAllocs(t *testing.T) {
	if testing.CoverMode() != "" {
		t.Skip("allocation counts are not meaningful with -cover")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() }) // connect-only checks are never accepted
	tc, err := NewTCP(ln.Addr().String(), TCPConfig{})
	require.NoError(t, err)

	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestMonitorLoopNoAllocsServer$", "-test.count=1")
	cmd.Env = append(os.Environ(), "GSLBKIT_LOOP_ALLOC_SERVER=1")
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { cancel(); _ = cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	require.NoError(t, err, "the child server's address")
	h, err := NewHTTP(strings.TrimSpace(line), DefaultHTTPConfig())
	require.NoError(t, err)

	for _, c := range []struct {
		name string
		p    Prober
	}{{"tcp", tc}, {"http", h}} {
		t.Run(c.name, func(t *testing.T) {
			cfg := DefaultMonitorConfig()
			cfg.Seed = 1
			m, err := NewMonitor(cfg, nil, nil)
			require.NoError(t, err)
			require.NoError(t, m.Add(Target{ID: "t", Prober: c.p, Policy: DefaultPolicy()}))
			mt := m.targets["t"]
			lp, err := newEvLoop()
			require.NoError(t, err)
			defer lp.close()
			bg := context.Background()
			cycle := func() {
				m.mu.Lock()
				m.sched.remove(mt)
				m.sched.push(mt, time.Now().Add(-time.Millisecond)) // due
				m.mu.Unlock()
				m.dispatch(bg, bg, nil, true, true)
				now := time.Now()
				for i, j := range m.loopJobs {
					lp.start(j, now)
					m.loopJobs[i] = loopJob{}
				}
				m.loopJobs = m.loopJobs[:0]
				for lp.inFlight() > 0 {
					now = time.Now()
					until, has := lp.next()
					lp.wait(now, until, until.Add(loopTick), has)
				}
				m.finishLoop(bg, lp.takeDone())
			}
			for range 2 * cfg.LatencyWindow { // fill the latency window, grow the slices
				cycle()
			}
			allocs := testing.AllocsPerRun(200, cycle)
			s, _ := m.Stats("t")
			require.Equal(t, s.Probes, s.Passes, s.LastError)
			assert.Zero(t, allocs, "allocations per probe")
		})
	}
}

// TestMonitorLoopNoAllocsServer is TestMonitorLoopNoAllocs's HTTP server,
// run as a child process: it prints its address and answers 200 to every
// request until the parent kills it.
func TestMonitorLoopNoAllocsServer(t *testing.T) {
	if os.Getenv("GSLBKIT_LOOP_ALLOC_SERVER") != "1" {
		t.Skip("run by TestMonitorLoopNoAllocs")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	fmt.Println(ln.Addr())
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
			probersReadRequest(c)
			_, _ = c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"))
		}()
	}
}

// TestLoopSettleReadsBeforeExpiring: when the loop is held up past a
// probe's deadline (here: asked to settle at a time long after it), a
// connect that completed meanwhile is a pass, not a timeout; a probe with
// nothing waiting still times out. The loop used to expire first.
func TestLoopSettleReadsBeforeExpiring(t *testing.T) {
	accepted := make(chan struct{}, 1)
	addr := probersTCPServer(t, func(c net.Conn, done <-chan struct{}) {
		accepted <- struct{}{}
		<-done
	})
	p, err := NewTCP(addr, DefaultTCPConfig())
	require.NoError(t, err)
	lt, ok := loopTargetOf(p)
	require.True(t, ok)
	lp, err := newEvLoop()
	require.NoError(t, err)
	defer lp.close()
	now := time.Now()
	lp.start(loopJob{t: &monTarget{id: "t"}, lt: lt, start: now, timeout: time.Second}, now)
	select { // the connection is established: its event is waiting
	case <-accepted:
	case <-time.After(30 * time.Second):
		t.Fatal("hang guard: the server never accepted")
	}
	lp.settle(now.Add(time.Hour)) // the loop wakes up an hour late
	d := lp.takeDone()
	require.Len(t, d, 1)
	assert.Equal(t, Pass, d[0].r.Status, "a connect that completed before the late wake-up: %+v", d[0].r)

	// An HTTP check whose server never answers: the connect's event is
	// read, the request sent, and the reply, which is not there, times out.
	mute := probersTCPServer(t, func(c net.Conn, done <-chan struct{}) { <-done })
	hp, err := NewHTTP(mute, DefaultHTTPConfig())
	require.NoError(t, err)
	lt, ok = loopTargetOf(hp)
	require.True(t, ok)
	now = time.Now()
	lp.start(loopJob{t: &monTarget{id: "s"}, lt: lt, start: now, timeout: time.Second}, now)
	for lp.inFlight() > 0 {
		lp.settle(time.Now().Add(time.Hour))
	}
	d = lp.takeDone()
	require.Len(t, d, 1)
	assert.NotEqual(t, Pass, d[0].r.Status)
}

// TestLoopHTTPResetsAfterTargetClosed: an HTTP check in the loop whose
// target has closed its side (response and FIN in one segment, as a server
// that answers "Connection: close" and closes sends them) is closed with a
// reset, so the target keeps no TIME_WAIT for it: the target, reading on,
// sees ECONNRESET. A target that keeps the connection open after its
// response gets an orderly close: it reads EOF.
func TestLoopHTTPResetsAfterTargetClosed(t *testing.T) {
	for _, tc := range []struct {
		name       string
		closeFirst bool
		wantReset  bool
	}{
		{name: "target closed first", closeFirst: true, wantReset: true},
		{name: "target kept it open", closeFirst: false, wantReset: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			require.NoError(t, err)
			defer ln.Close()
			after := make(chan error, 1) // what the target read after its response
			go func() {
				c, err := ln.Accept()
				if err != nil {
					after <- err
					return
				}
				defer c.Close()
				tc2 := c.(*net.TCPConn)
				_ = tc2.SetDeadline(time.Now().Add(10 * time.Second))
				var req []byte
				b := make([]byte, 4096)
				for !bytes.Contains(req, []byte("\r\n\r\n")) {
					n, err := c.Read(b)
					if err != nil {
						after <- err
						return
					}
					req = append(req, b[:n]...)
				}
				rc, _ := tc2.SyscallConn()
				if tc.closeFirst {
					// Hold the response so that the FIN rides on its
					// segment: the checker sees both in one event.
					_ = rc.Control(func(fd uintptr) { _ = syscall.SetsockoptInt(int(fd), syscall.IPPROTO_TCP, syscall.TCP_CORK, 1) })
				}
				if _, err := c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")); err != nil {
					after <- err
					return
				}
				if tc.closeFirst {
					_ = tc2.CloseWrite()
				}
				_, err = c.Read(b)
				after <- err
			}()
			h := probersHTTP(t, ln.Addr().String(), DefaultHTTPConfig(), HTTPEngineLean)
			r := loopRun(t, h, 10*time.Second)
			require.Equal(t, Pass, r.Status, r.Detail)
			select {
			case err := <-after:
				if tc.wantReset {
					assert.ErrorIs(t, err, syscall.ECONNRESET, "the checker resets a connection its target closed")
				} else {
					assert.ErrorIs(t, err, io.EOF, "the checker closes an open connection with a FIN")
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the target saw nothing after its response")
			}
		})
	}
}

// TestLoopDeadlineHeapProperty: after any sequence of pushes, deadline
// changes and removals, the loop's deadline heap holds exactly the probes
// pushed and not removed, its first entry has the earliest deadline, every
// entry sorts no earlier than its parent, and each probe's hidx is its
// entry's index.
func TestLoopDeadlineHeapProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		lp := &evLoop{}
		base := time.Unix(1_000_000, 0)
		in := map[int32]bool{}
		draw := func(label string) time.Time {
			return base.Add(time.Duration(rapid.Int64Range(-1e9, 1e9).Draw(t, label)))
		}
		pick := func() int32 {
			keys := make([]int32, 0, len(in))
			for s := range in {
				keys = append(keys, s)
			}
			slices.Sort(keys)
			return rapid.SampledFrom(keys).Draw(t, "slot")
		}
		for range rapid.IntRange(1, 300).Draw(t, "ops") {
			switch op := rapid.IntRange(0, 2).Draw(t, "op"); {
			case op == 0 || len(in) == 0:
				s := int32(len(lp.slots))
				lp.slots = append(lp.slots, loopProbe{deadline: draw("deadline"), hidx: -1})
				lp.dlPush(s)
				in[s] = true
			case op == 1:
				s := pick()
				lp.slots[s].deadline = draw("new deadline")
				lp.dlFix(lp.slots[s].hidx)
			default:
				s := pick()
				lp.dlRemove(lp.slots[s].hidx)
				if lp.slots[s].hidx != -1 {
					t.Fatalf("slot %d removed, hidx %d", s, lp.slots[s].hidx)
				}
				delete(in, s)
			}
			if len(lp.dl) != len(in) {
				t.Fatalf("%d entries, %d probes in flight", len(lp.dl), len(in))
			}
			for i, e := range lp.dl {
				if !in[e.s] || lp.slots[e.s].hidx != int32(i) {
					t.Fatalf("entry %d: slot %d (in flight %v) has hidx %d", i, e.s, in[e.s], lp.slots[e.s].hidx)
				}
				if e.key != int64(lp.slots[e.s].deadline.Sub(lp.dlBase)) {
					t.Fatalf("entry %d: key %d, slot's deadline is %v", i, e.key, lp.slots[e.s].deadline.Sub(lp.dlBase))
				}
				if p := (i - 1) / 4; i > 0 && lp.slots[e.s].deadline.Before(lp.slots[lp.dl[p].s].deadline) {
					t.Fatalf("entry %d sorts before its parent %d", i, p)
				}
			}
			if first, ok := lp.next(); ok {
				for s := range in {
					if lp.slots[s].deadline.Before(first) {
						t.Fatalf("next is %v, slot %d is due at %v", first.Sub(base), s, lp.slots[s].deadline.Sub(base))
					}
				}
			}
		}
	})
}

// TestLoopHTTPAwaitsTargetsFIN: an HTTP check judged before its target's
// FIN came keeps its socket for the FIN, then resets the connection and
// keeps the socket for the next check, where a close would have sent a FIN
// and left the checker's side in TIME_WAIT.
func TestLoopHTTPAwaitsTargetsFIN(t *testing.T) {
	lp, err := newEvLoop()
	require.NoError(t, err)
	defer lp.close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	closeNow := make(chan struct{})
	after := make(chan error, 1) // what the target read after closing its side
	go func() {
		c, err := ln.Accept()
		if err != nil {
			after <- err
			return
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(10 * time.Second))
		probersReadRequest(c)
		if _, err := c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")); err != nil {
			after <- err
			return
		}
		<-closeNow
		_ = c.(*net.TCPConn).CloseWrite()
		_, err = c.Read(make([]byte, 16))
		after <- err
	}()
	h := probersHTTP(t, ln.Addr().String(), DefaultHTTPConfig(), HTTPEngineLean)
	r := loopRunOn(t, lp, h, 10*time.Second)
	require.Equal(t, Pass, r.Status, r.Detail)

	hold, _ := lp.spareOf(loopTarget{holdACK: true})
	require.Empty(t, *hold, "the socket waits for the target's FIN")
	close(closeNow)
	guard := time.Now().Add(10 * time.Second)
	for len(*hold) == 0 {
		// Events only, no expiry: the wait's time may have run out
		// already on a slow machine.
		now := time.Now()
		require.True(t, now.Before(guard), "hang guard: the target's FIN not handled within 10 s")
		lp.wait(now, guard, guard, true)
	}
	select {
	case err := <-after:
		assert.ErrorIs(t, err, syscall.ECONNRESET, "the checker resets the connection once the target closed")
	case <-time.After(10 * time.Second):
		t.Fatal("hang guard: the target saw nothing after closing")
	}
}
