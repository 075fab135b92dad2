//go:build linux

package probe

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// loopTLSServer serves TLS on a loopback port: after the handshake it
// reads a request and answers with reply. With hangTLS it accepts the
// connection and never answers the ClientHello; with hang it completes the
// handshake and then holds the connection until cleanup.
func loopTLSServer(t *testing.T, cert tls.Certificate, reply []byte, hangTLS, hang bool) string {
	cfg := &tls.Config{Certificates: []tls.Certificate{cert}}
	return probersTCPServer(t, func(c net.Conn, done <-chan struct{}) {
		if hangTLS {
			<-done
			return
		}
		tc := tls.Server(c, cfg)
		_ = tc.SetDeadline(time.Now().Add(10 * time.Second))
		if err := tc.Handshake(); err != nil {
			return
		}
		probersReadRequest(tc)
		if hang {
			<-done
			return
		}
		_, _ = tc.Write(reply)
		_ = tc.Close()
	})
}

// TestLoopHTTPSMatchesGoroutinePath: an HTTPS check in the event loop (a
// coroutine over the loop's socket) reaches the verdict the goroutine path
// reaches, for the replies of the plain HTTP test and for TLS's own
// failures.
func TestLoopHTTPSMatchesGoroutinePath(t *testing.T) {
	ca := probersNewCA(t)
	cert, _, _ := ca.Issue(false, "probe.test")
	other := probersNewCA(t)
	cfg := DefaultHTTPConfig()
	cfg.Hostname = "probe.test"
	cfg.RetriableStatuses = Statuses{OneStatus(503)}
	cfg.TLS = &TLSConfig{CAPEM: string(ca.PEM)}
	replies := []string{
		"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
		"HTTP/1.1 200 OK\r\n\r\nbody until close",
		"HTTP/1.0 503 Service Unavailable\r\n\r\n",
		"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n",
		"HTTP/1.1 200 OK\r\n bad\r\n\r\n",
		"HTTP/1.1 200 OK\r\nX: " + string(bytes.Repeat([]byte("a"), 70<<10)) + "\r\n\r\n",
		"HTTP/1.1 200 OK\r\nX: y\r\n", // closed inside the headers
		"",
	}
	for i, reply := range replies {
		t.Run(strconv.Itoa(i), func(t *testing.T) {
			addr := loopTLSServer(t, cert, []byte(reply), false, false)
			h := probersHTTP(t, addr, cfg, HTTPEngineLean)
			want := h.Probe(probersCtx(t, 5*time.Second))
			loopSame(t, want, loopRun(t, h, 5*time.Second))
		})
	}
	t.Run("body match", func(t *testing.T) {
		bc := cfg
		bc.ExpectedResponse, bc.MatchWindow = Segments{{Text: "ok"}}, 8
		addr := loopTLSServer(t, cert, []byte("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n"), false, false)
		h := probersHTTP(t, addr, bc, HTTPEngineLean)
		want := h.Probe(probersCtx(t, 5*time.Second))
		got := loopRun(t, h, 5*time.Second)
		loopSame(t, want, got)
		assert.Equal(t, Pass, got.Status, got.Detail)
	})
	t.Run("untrusted certificate", func(t *testing.T) {
		bad, _, _ := other.Issue(false, "probe.test")
		addr := loopTLSServer(t, bad, []byte("HTTP/1.1 200 OK\r\n\r\n"), false, false)
		h := probersHTTP(t, addr, cfg, HTTPEngineLean)
		want := h.Probe(probersCtx(t, 5*time.Second))
		got := loopRun(t, h, 5*time.Second)
		loopSame(t, want, got)
		assert.Equal(t, KindTLS, got.Kind, got.Detail)
	})
	t.Run("not TLS", func(t *testing.T) {
		addr := probersTCPServer(t, func(c net.Conn, _ <-chan struct{}) {
			_, _ = c.Write([]byte("HTTP/1.1 200 OK\r\n\r\n"))
		})
		h := probersHTTP(t, addr, cfg, HTTPEngineLean)
		want := h.Probe(probersCtx(t, 5*time.Second))
		got := loopRun(t, h, 5*time.Second)
		loopSame(t, want, got)
		assert.Contains(t, got.Detail, "tls handshake")
	})
	t.Run("silent handshake", func(t *testing.T) {
		addr := loopTLSServer(t, cert, nil, true, false)
		h := probersHTTP(t, addr, cfg, HTTPEngineLean)
		want := h.Probe(probersCtx(t, 100*time.Millisecond))
		got := loopRun(t, h, 100*time.Millisecond)
		loopSame(t, want, got)
		assert.Equal(t, KindTimeout, got.Kind, got.Detail)
		assert.Contains(t, got.Detail, "tls handshake: read tcp "+addr+": i/o timeout")
		assert.GreaterOrEqual(t, got.Latency, 100*time.Millisecond)
	})
	t.Run("response timeout", func(t *testing.T) {
		addr := loopTLSServer(t, cert, nil, false, true)
		c := cfg
		c.ResponseTimeout = 50 * time.Millisecond
		h := probersHTTP(t, addr, c, HTTPEngineLean)
		got := loopRun(t, h, time.Hour)
		assert.Equal(t, KindTimeout, got.Kind, got.Detail)
		assert.GreaterOrEqual(t, got.Latency, 50*time.Millisecond)
	})
	t.Run("refused", func(t *testing.T) {
		h := probersHTTP(t, probersClosedPort(t), cfg, HTTPEngineLean)
		want := h.Probe(probersCtx(t, 5*time.Second))
		got := loopRun(t, h, 5*time.Second)
		loopSame(t, want, got)
		assert.Equal(t, KindRefused, got.Kind)
	})
}

// TestHTTPSMaxVersion: MaxVersion "1.2" keeps the probe to TLS 1.2, whose
// resumed handshakes (session tickets) make no key exchange; the default
// is TLS 1.3. On a worker goroutine and in the event loop alike.
func TestHTTPSMaxVersion(t *testing.T) {
	ca := probersNewCA(t)
	cert, _, _ := ca.Issue(false, "probe.test")
	type hs struct {
		version uint16
		resumed bool
	}
	got := make(chan hs, 8)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert},
		VerifyConnection: func(cs tls.ConnectionState) error { got <- hs{cs.Version, cs.DidResume}; return nil }}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	for _, tc := range []struct {
		max  string
		want uint16
	}{{"1.2", tls.VersionTLS12}, {"", tls.VersionTLS13}, {"1.3", tls.VersionTLS13}} {
		for _, loop := range []bool{false, true} {
			cfg := DefaultHTTPConfig()
			cfg.Hostname = "probe.test"
			cfg.TLS = &TLSConfig{CAPEM: string(ca.PEM), MaxVersion: tc.max}
			h := probersHTTP(t, probersAddr(srv), cfg, HTTPEngineLean)
			for i := range 2 {
				var r Result
				if loop {
					r = loopRun(t, h, 30*time.Second)
				} else {
					r = h.Probe(probersCtx(t, 30*time.Second))
				}
				require.Equal(t, Pass, r.Status, r.Detail)
				assert.Equal(t, hs{tc.want, i == 1}, <-got, "max %q, loop %v, probe %d", tc.max, loop, i)
			}
		}
	}
}

// TestLoopTLSReusesCoroutine: a loop runs its HTTPS checks one after
// another in one coroutine, also after a check that timed out mid-handshake
// or panicked, and ends its idle coroutines when closed (the package's
// goleak check finds any left behind).
func TestLoopTLSReusesCoroutine(t *testing.T) {
	ca := probersNewCA(t)
	cert, _, _ := ca.Issue(false, "probe.test")
	cfg := DefaultHTTPConfig()
	cfg.Hostname = "probe.test"
	cfg.TLS = &TLSConfig{CAPEM: string(ca.PEM)}
	ok := probersHTTP(t, loopTLSServer(t, cert, []byte("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"), false, false), cfg, HTTPEngineLean)
	silent := probersHTTP(t, loopTLSServer(t, cert, nil, true, false), cfg, HTTPEngineLean)
	lp, err := newEvLoop()
	require.NoError(t, err)
	var co *loopTLS
	same := func(what string) {
		t.Helper()
		require.Len(t, lp.idleCos, 1, what)
		if co == nil {
			co = lp.idleCos[0]
		}
		assert.Same(t, co, lp.idleCos[0], what)
	}
	for i := range 3 {
		r := loopRunOn(t, lp, ok, 5*time.Second)
		require.Equal(t, Pass, r.Status, r.Detail)
		same(fmt.Sprintf("check %d", i))
	}
	r := loopRunOn(t, lp, silent, 50*time.Millisecond)
	assert.Equal(t, KindTimeout, r.Kind, r.Detail)
	same("after a timeout")
	orig := loopTLSExchange
	loopTLSExchange = func(*HTTP, net.Conn) Result { panic("boom") }
	r = loopRunOn(t, lp, ok, 5*time.Second)
	loopTLSExchange = orig
	assert.Equal(t, "prober panicked: boom", r.Detail)
	same("after a panic")
	r = loopRunOn(t, lp, ok, 5*time.Second)
	require.Equal(t, Pass, r.Status, r.Detail)
	same("once more")
	p := &loopProbe{co: lp.tlsCo(ok, -1, netip.AddrPort{}, false)}
	extra := p.co
	for len(lp.idleCos) < loopIdleCos {
		lp.idleCos = append(lp.idleCos, newLoopTLS())
	}
	lp.endTLS(p)
	assert.Len(t, lp.idleCos, loopIdleCos)
	assert.NotContains(t, lp.idleCos, extra, "a coroutine past the idle ones is ended, not kept")
	lp.close()
	assert.Empty(t, lp.idleCos, "ended when the loop closes")
}

// TestLoopHTTPSReplyDuringWrite: a reply that arrives while the coroutine
// waits to write the rest of a large request (its read event taken by that
// wait) is read at once after the write, not waited for: the server here
// answers before it reads the request and then holds the connection open,
// so a read that waited for another event would wait until the timeout.
func TestLoopHTTPSReplyDuringWrite(t *testing.T) {
	ca := probersNewCA(t)
	cert, _, _ := ca.Issue(false, "probe.test")
	scfg := &tls.Config{Certificates: []tls.Certificate{cert}}
	const body = 4 << 20
	addr := probersTCPServer(t, func(c net.Conn, done <-chan struct{}) {
		tc := tls.Server(c, scfg)
		_ = tc.SetDeadline(time.Now().Add(10 * time.Second))
		if err := tc.Handshake(); err != nil {
			return
		}
		_, _ = tc.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"))
		buf := make([]byte, 64<<10)
		for n := 0; n < body; {
			k, err := tc.Read(buf)
			n += k
			if err != nil {
				return
			}
		}
		<-done
	})
	cfg := DefaultHTTPConfig()
	cfg.Hostname = "probe.test"
	cfg.TLS = &TLSConfig{CAPEM: string(ca.PEM)}
	cfg.Method = "POST"
	cfg.RequestBody = &Payload{Text: string(bytes.Repeat([]byte("x"), body))}
	cfg.ResponseTimeout = 5 * time.Second
	h := probersHTTP(t, addr, cfg, HTTPEngineLean)
	r := loopRun(t, h, 5*time.Second)
	require.Equal(t, Pass, r.Status, r.Detail) // a read that waited would time out: the server holds on
}

// TestLoopHTTPSLargeExchange: a request larger than the socket buffer goes
// out across several writable events (the coroutine waits for the loop
// mid-write), and a reply in one-byte records is read across many.
func TestLoopHTTPSLargeExchange(t *testing.T) {
	ca := probersNewCA(t)
	cert, _, _ := ca.Issue(false, "probe.test")
	scfg := &tls.Config{Certificates: []tls.Certificate{cert}}
	addr, got := loopByteByByteServer(t, func(c net.Conn) net.Conn { return tls.Server(c, scfg) })
	cfg := DefaultHTTPConfig()
	cfg.Hostname = "probe.test"
	cfg.TLS = &TLSConfig{CAPEM: string(ca.PEM)}
	cfg.Method = "POST"
	cfg.RequestBody = &Payload{Text: string(bytes.Repeat([]byte("x"), 4<<20))}
	h := probersHTTP(t, addr, cfg, HTTPEngineLean)
	r := loopRun(t, h, 10*time.Second)
	require.Equal(t, Pass, r.Status, r.Detail)
	assert.Equal(t, 200, r.Code)
	assert.GreaterOrEqual(t, got.Load(), int64(4<<20))
}

// TestMonitorHTTPSInLoop: a Monitor runs HTTPS checks to IP addresses in
// its event loop, not on worker goroutines, and they resume their sessions
// there; stopping the Monitor mid-handshake ends the coroutines (the
// package's goleak check finds any left behind).
func TestMonitorHTTPSInLoop(t *testing.T) {
	ca := probersNewCA(t)
	cert, _, _ := ca.Issue(false, "probe.test")
	srv := probersNewTLSResumeServer(t, cert)
	silent := loopTLSServer(t, cert, nil, true, false)
	m, err := NewMonitor(DefaultMonitorConfig(), nil, nil)
	require.NoError(t, err)
	pol := DefaultPolicy()
	pol.Interval = 200 * time.Millisecond
	pol.Timeout = 200 * time.Millisecond
	for i, addr := range []string{probersAddr(srv.Server), silent} {
		cfg := DefaultHTTPConfig()
		cfg.Hostname = "probe.test"
		cfg.TLS = &TLSConfig{CAPEM: string(ca.PEM)}
		h, err := NewHTTP(addr, cfg)
		require.NoError(t, err)
		require.NoError(t, m.Add(Target{ID: fmt.Sprint(i), Prober: h, Policy: pol}))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	var got []bool
	for range 3 {
		select {
		case r := <-srv.resumed:
			got = append(got, r)
		case <-ctx.Done():
			t.Fatal("no handshakes before the hang guard")
		}
	}
	assert.Equal(t, []bool{false, true, true}, got, "resumed handshakes")
	cancel() // the silent target's handshake is in flight
	require.NoError(t, <-done)
	m.mu.Lock()
	peak := m.peakWorkers
	m.mu.Unlock()
	assert.Zero(t, peak, "worker goroutines started for HTTPS checks the loop can run")
}

// TestLoopTLSRoom: with one P the loop takes every HTTPS check; with more,
// it stops taking them for a window after one in which it spent more than
// loopTLSShare of its time in their coroutines, and takes them again after
// a quieter one.
func TestLoopTLSRoom(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, procs := range []int{1, 2} {
		runtime.GOMAXPROCS(procs)
		lp := &evLoop{}
		t0 := time.Now()
		lp.tlsSince = t0
		lp.tlsBusy = 90 * time.Millisecond
		assert.True(t, lp.tlsRoom(t0.Add(loopTLSWindow/2)), "%d P: within the first window", procs)
		assert.Equal(t, procs == 1, lp.tlsRoom(t0.Add(loopTLSWindow)), "%d P: after a busy window", procs)
		assert.Equal(t, procs == 1, lp.tlsRoom(t0.Add(loopTLSWindow*3/2)), "%d P: for the next window", procs)
		lp.tlsBusy = 10 * time.Millisecond
		assert.True(t, lp.tlsRoom(t0.Add(2*loopTLSWindow)), "%d P: after a quiet window", procs)
	}
}

// loopTLSPanicking returns an HTTPS prober of a TLS server on loopback
// whose exchanges in the event loop panic ("boom") until restore is called.
func loopTLSPanicking(t *testing.T) (h *HTTP, restore func()) {
	ca := probersNewCA(t)
	cert, _, _ := ca.Issue(false, "probe.test")
	addr := loopTLSServer(t, cert, []byte("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"), false, false)
	cfg := DefaultHTTPConfig()
	cfg.Hostname = "probe.test"
	cfg.TLS = &TLSConfig{CAPEM: string(ca.PEM)}
	h = probersHTTP(t, addr, cfg, HTTPEngineLean)
	orig := loopTLSExchange
	loopTLSExchange = func(*HTTP, net.Conn) Result { panic("boom") }
	return h, func() { loopTLSExchange = orig }
}

// TestLoopTLSPanic: a panic inside an HTTPS coroutine is that probe's
// failure, not the loop's end: the loop, which every other probe of the
// Monitor depends on, goes on with the next probe.
func TestLoopTLSPanic(t *testing.T) {
	h, restore := loopTLSPanicking(t)
	r := loopRun(t, h, 5*time.Second)
	restore()
	assert.Equal(t, Fail, r.Status)
	assert.Equal(t, KindOther, r.Kind)
	assert.Equal(t, "prober panicked: boom", r.Detail)
	r = loopRun(t, h, 5*time.Second)
	assert.Equal(t, Pass, r.Status, r.Detail)
}

// TestMonitorLoopTLSPanicLogged: a panic inside an HTTPS coroutine of a
// Monitor's event loop is reported as a prober's panic on a worker is: the
// same Detail, and an error logged with the target's ID.
func TestMonitorLoopTLSPanicLogged(t *testing.T) {
	h, restore := loopTLSPanicking(t)
	defer restore()
	var logged bytes.Buffer
	var mu sync.Mutex
	changed := make(chan struct{}, 1) // the first failure moves the target to warning
	obs := ObserverFunc(func(Event) {
		select {
		case changed <- struct{}{}:
		default:
		}
	})
	m, err := NewMonitor(DefaultMonitorConfig(), obs, slog.New(slog.NewTextHandler(lockedWriter{&mu, &logged}, nil)))
	require.NoError(t, err)
	pol := DefaultPolicy()
	pol.Interval, pol.Timeout = time.Second, time.Second
	require.NoError(t, m.Add(Target{ID: "t1", Prober: h, Policy: pol}))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	select {
	case <-changed:
	case <-ctx.Done():
		t.Fatal("no state change within 10 s (a hang guard)")
	}
	cancel()
	require.NoError(t, <-done)
	st, _ := m.Stats("t1")
	assert.Equal(t, "prober panicked: boom", st.LastResult.Detail, "the worker path's wording")
	mu.Lock()
	defer mu.Unlock()
	assert.Contains(t, logged.String(), "probe: prober panicked")
	assert.Contains(t, logged.String(), "target=t1")
}

type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
