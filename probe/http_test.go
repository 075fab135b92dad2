package probe

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// probersEngines are the HTTP engines every HTTP test runs against.
var probersEngines = []HTTPEngine{HTTPEngineLean, HTTPEngineNetHTTP}

// probersCtx returns a context with a generous hang guard.
func probersCtx(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// probersServe starts an httptest server (closed at cleanup) answering
// status with body.
func probersServe(t *testing.T, status int, body string) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func probersAddr(srv *httptest.Server) string { return srv.Listener.Addr().String() }

// probersRaw is a loopback TCP server that reads a request up to its blank
// line and answers with fixed bytes; with hang it answers nothing and holds
// the connection until cleanup; with drop it closes after reading the
// request, without answering.
type probersRaw struct {
	ln   net.Listener
	wg   sync.WaitGroup
	done chan struct{}
}

func probersRawServer(t testing.TB, resp []byte, hang, drop bool) *probersRaw {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	s := &probersRaw{ln: ln, done: make(chan struct{})}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				defer c.Close()
				probersReadRequest(c)
				if drop {
					return
				}
				if hang {
					<-s.done
					return
				}
				_, _ = c.Write(resp)
			}()
		}
	}()
	t.Cleanup(s.close)
	return s
}

func (s *probersRaw) close() {
	select {
	case <-s.done:
		return
	default:
	}
	close(s.done)
	_ = s.ln.Close()
	s.wg.Wait()
}

func (s *probersRaw) addr() string { return s.ln.Addr().String() }

// probersReadRequest reads up to the end of a request's header block (and a
// Content-Length body), with a guard so a silent client cannot hang it.
func probersReadRequest(c net.Conn) {
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	defer func() { _ = c.SetReadDeadline(time.Time{}) }()
	var buf []byte
	one := make([]byte, 1)
	for !bytes.HasSuffix(buf, []byte("\r\n\r\n")) {
		if _, err := c.Read(one); err != nil {
			return
		}
		buf = append(buf, one[0])
	}
	if i := bytes.Index(bytes.ToLower(buf), []byte("content-length: ")); i >= 0 {
		var n int
		for _, b := range buf[i+len("content-length: "):] {
			if b < '0' || b > '9' {
				break
			}
			n = n*10 + int(b-'0')
		}
		_, _ = io.ReadFull(c, make([]byte, n))
	}
}

func probersHTTP(t *testing.T, addr string, cfg HTTPConfig, engine HTTPEngine) *HTTP {
	t.Helper()
	cfg.Engine = engine
	h, err := NewHTTP(addr, cfg)
	require.NoError(t, err)
	return h
}

func TestHTTPEnvoyRules(t *testing.T) {
	seg := func(s ...string) Segments {
		var out Segments
		for _, x := range s {
			out = append(out, textPayload(x))
		}
		return out
	}
	cases := []struct {
		name   string
		status int
		body   string
		edit   func(*HTTPConfig)
		want   Status
		kind   Kind
	}{
		{"default: 200 passes", 200, "ok", nil, Pass, KindNone},
		{"Envoy rule 5: a status neither expected nor retriable fails at once", 500, "", nil, FailNow, KindStatus},
		{"Envoy rule 6: a retriable status counts toward the threshold", 503, "",
			func(c *HTTPConfig) { c.RetriableStatuses = Statuses{OneStatus(503)} }, Fail, KindStatus},
		{"Envoy rule 6: a status in both lists is expected", 503, "",
			func(c *HTTPConfig) {
				c.ExpectedStatuses = Statuses{{Min: 200, Max: 599}}
				c.RetriableStatuses = Statuses{OneStatus(503)}
			}, Pass, KindNone},
		{"expected status ranges", 204, "",
			func(c *HTTPConfig) { c.ExpectedStatuses = Statuses{OneStatus(200), {Min: 201, Max: 204}} }, Pass, KindNone},
		{"Envoy rule 5: body mismatch fails at once with retriable status", 503, "draining",
			func(c *HTTPConfig) {
				c.RetriableStatuses = Statuses{OneStatus(503)}
				c.ExpectedResponse = seg("ok")
			}, FailNow, KindBody},
		{"Envoy rule 5: body mismatch fails at once with expected status", 200, "nope",
			func(c *HTTPConfig) { c.ExpectedResponse = seg("ok") }, FailNow, KindBody},
		{"Envoy rule 5: matching body with unexpected status still fails at once", 500, "ok",
			func(c *HTTPConfig) { c.ExpectedResponse = seg("ok") }, FailNow, KindStatus},
		{"Envoy rule 8: segments in order need not be contiguous", 200, "alpha beta gamma",
			func(c *HTTPConfig) { c.ExpectedResponse = seg("alpha", "gamma") }, Pass, KindNone},
		{"Envoy rule 8: segments out of order do not match", 200, "alpha beta gamma",
			func(c *HTTPConfig) { c.ExpectedResponse = seg("gamma", "alpha") }, FailNow, KindBody},
		{"Envoy rule 8: each segment is searched after the previous match", 200, "abab",
			func(c *HTTPConfig) { c.ExpectedResponse = seg("ab", "ab", "ab") }, FailNow, KindBody},
		{"Envoy rule 8: a segment beyond the 1024-byte window does not match", 200, strings.Repeat("x", 1024) + "ok",
			func(c *HTTPConfig) { c.ExpectedResponse = seg("ok") }, FailNow, KindBody},
		{"Envoy rule 8: window 0 searches the whole body", 200, strings.Repeat("x", 100000) + "ok",
			func(c *HTTPConfig) { c.ExpectedResponse = seg("ok"); c.MatchWindow = 0 }, Pass, KindNone},
		{"Route 53 window: 5120 bytes", 200, strings.Repeat("x", 5000) + "ok",
			func(c *HTTPConfig) { c.ExpectedResponse = seg("ok"); c.MatchWindow = httpRoute53MatchWindow }, Pass, KindNone},
		{"hex segment", 200, "pong",
			func(c *HTTPConfig) { c.ExpectedResponse = Segments{hexPayload("706f6e67")} }, Pass, KindNone},
		{"redirects are not followed", 302, "",
			nil, FailNow, KindStatus},
		{"3xx accepted when listed", 302, "",
			func(c *HTTPConfig) { c.ExpectedStatuses = Statuses{{Min: 200, Max: 399}} }, Pass, KindNone},
		{"HEAD passes without a body", 200, "",
			func(c *HTTPConfig) { c.Method = http.MethodHead }, Pass, KindNone},
		{"empty body does not match", 204, "",
			func(c *HTTPConfig) { c.ExpectedStatuses = Statuses{OneStatus(204)}; c.ExpectedResponse = seg("x") }, FailNow, KindBody},
	}
	for _, engine := range probersEngines {
		for _, tc := range cases {
			t.Run(string(engine)+"/"+tc.name, func(t *testing.T) {
				srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if tc.status == 302 {
						w.Header().Set("Location", "/elsewhere")
					}
					w.WriteHeader(tc.status)
					_, _ = io.WriteString(w, tc.body)
				}))
				defer srv.Close()
				cfg := DefaultHTTPConfig()
				if tc.edit != nil {
					tc.edit(&cfg)
				}
				h := probersHTTP(t, probersAddr(srv), cfg, engine)
				r := h.Probe(probersCtx(t, 10*time.Second))
				assert.Equal(t, tc.want, r.Status, "status; detail %q", r.Detail)
				assert.Equal(t, tc.kind, r.Kind, "kind; detail %q", r.Detail)
				assert.Equal(t, tc.status, r.Code)
				assert.Positive(t, r.Latency)
			})
		}
	}
}

func TestHTTPRequest(t *testing.T) {
	for _, engine := range probersEngines {
		t.Run(string(engine), func(t *testing.T) {
			type seen struct {
				method, path, host, hdr, ua, body string
			}
			got := make(chan seen, 1)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				b, _ := io.ReadAll(r.Body)
				got <- seen{r.Method, r.RequestURI, r.Host, r.Header.Get("X-Probe"), r.UserAgent(), string(b)}
			}))
			defer srv.Close()
			cfg := DefaultHTTPConfig()
			cfg.Method = http.MethodPost
			cfg.Path = "/health?deep=1&x=%2F"
			cfg.Hostname = "svc.example"
			cfg.Headers = map[string]string{"X-Probe": "yes"}
			body := textPayload("ping")
			cfg.RequestBody = &body
			h := probersHTTP(t, probersAddr(srv), cfg, engine)
			r := h.Probe(probersCtx(t, 10*time.Second))
			require.Equal(t, Pass, r.Status, r.Detail)
			s := <-got
			assert.Equal(t, seen{"POST", "/health?deep=1&x=%2F", "svc.example", "yes", httpUserAgent, "ping"}, s)
		})
	}
}

func TestHTTPPortOverrideAndDefaultHost(t *testing.T) {
	srv := probersServe(t, 200, "")
	_, port, _ := net.SplitHostPort(probersAddr(srv))
	cfg := DefaultHTTPConfig()
	cfg.Port = atoiMust(t, port)
	for _, engine := range probersEngines {
		h := probersHTTP(t, "127.0.0.1:1", cfg, engine)
		require.Equal(t, "127.0.0.1:"+port, h.Addr())
		r := h.Probe(probersCtx(t, 10*time.Second))
		require.Equal(t, Pass, r.Status, r.Detail)
	}
}

func atoiMust(t *testing.T, s string) int {
	n := 0
	for _, c := range s {
		require.True(t, c >= '0' && c <= '9')
		n = n*10 + int(c-'0')
	}
	return n
}

func TestHTTPFailures(t *testing.T) {
	closedAddr := func(t *testing.T) string {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		a := ln.Addr().String()
		require.NoError(t, ln.Close())
		return a
	}
	cases := []struct {
		name    string
		addr    func(t *testing.T) string
		edit    func(*HTTPConfig)
		timeout time.Duration
		want    Status
		kind    Kind
	}{
		{"Envoy rule 6: connection refused counts toward the threshold", closedAddr, nil, 5 * time.Second, Fail, KindRefused},
		{"Envoy rule 6: a timeout counts toward the threshold", func(t *testing.T) string {
			return probersRawServer(t, nil, true, false).addr()
		}, nil, 300 * time.Millisecond, Fail, KindTimeout},
		{"Envoy rule 6: the response timeout bounds the answer (Route 53 style)", func(t *testing.T) string {
			return probersRawServer(t, nil, true, false).addr()
		}, func(c *HTTPConfig) { c.ResponseTimeout = 200 * time.Millisecond }, time.Minute, Fail, KindTimeout},
		{"Envoy rule 6: an unexpected close counts toward the threshold", func(t *testing.T) string {
			return probersRawServer(t, nil, false, true).addr()
		}, nil, 5 * time.Second, Fail, KindReset},
		{"truncated body counts toward the threshold", func(t *testing.T) string {
			return probersRawServer(t, []byte("HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\nshort"), false, false).addr()
		}, func(c *HTTPConfig) { c.ExpectedResponse = Segments{textPayload("ok")} }, 5 * time.Second, Fail, KindReset},
		{"a malformed status line is a protocol error that counts toward the threshold", func(t *testing.T) string {
			return probersRawServer(t, []byte("SSH-2.0-OpenSSH_9.6\r\n"), false, false).addr()
		}, nil, 5 * time.Second, Fail, KindProtocol},
		{"100 Continue is skipped", func(t *testing.T) string {
			return probersRawServer(t, []byte("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"), false, false).addr()
		}, func(c *HTTPConfig) { c.ExpectedResponse = Segments{textPayload("ok")} }, 5 * time.Second, Pass, KindNone},
		{"chunked body is decoded for matching", func(t *testing.T) string {
			return probersRawServer(t, []byte("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nhea\r\n4;x=y\r\nlthy\r\n0\r\n\r\n"), false, false).addr()
		}, func(c *HTTPConfig) { c.ExpectedResponse = Segments{textPayload("healthy")} }, 5 * time.Second, Pass, KindNone},
		{"body until close (HTTP/1.0)", func(t *testing.T) string {
			return probersRawServer(t, []byte("HTTP/1.0 200 OK\r\n\r\nall good"), false, false).addr()
		}, func(c *HTTPConfig) { c.ExpectedResponse = Segments{textPayload("good")} }, 5 * time.Second, Pass, KindNone},
		{"headers beyond 64 KiB are a protocol error", func(t *testing.T) string {
			return probersRawServer(t, []byte("HTTP/1.1 200 OK\r\nX: "+strings.Repeat("y", 100<<10)+"\r\n\r\n"), false, false).addr()
		}, nil, 5 * time.Second, Fail, KindProtocol},
		{"bad chunk encoding is a protocol error", func(t *testing.T) string {
			return probersRawServer(t, []byte("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nxx\r\n0\r\n\r\n"), false, false).addr()
		}, func(c *HTTPConfig) { c.ExpectedResponse = Segments{textPayload("x")} }, 5 * time.Second, Fail, KindProtocol},
	}
	for _, engine := range probersEngines {
		for _, tc := range cases {
			t.Run(string(engine)+"/"+tc.name, func(t *testing.T) {
				cfg := DefaultHTTPConfig()
				if tc.edit != nil {
					tc.edit(&cfg)
				}
				h := probersHTTP(t, tc.addr(t), cfg, engine)
				r := h.Probe(probersCtx(t, tc.timeout))
				assert.Equal(t, tc.want, r.Status, "status; detail %q", r.Detail)
				assert.Equal(t, tc.kind, r.Kind, "kind; detail %q", r.Detail)
			})
		}
	}
}

func TestHTTPCanceled(t *testing.T) {
	srv := probersRawServer(t, nil, true, false)
	for _, engine := range probersEngines {
		h := probersHTTP(t, srv.addr(), DefaultHTTPConfig(), engine)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan Result)
		go func() { done <- h.Probe(ctx) }()
		cancel()
		select {
		case r := <-done:
			require.Equal(t, Fail, r.Status)
			require.Equal(t, KindOther, r.Kind)
		case <-time.After(10 * time.Second):
			t.Fatal("probe did not end on cancel")
		}
	}
}

func TestHTTPS(t *testing.T) {
	ca := probersNewCA(t)
	serverCert, _, _ := ca.Issue(false, "probe.test", "127.0.0.1")
	clientCert, clientPEM, clientKey := ca.Issue(true, "client")
	newServer := func(t *testing.T, clientAuth tls.ClientAuthType) *httptest.Server {
		srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.WriteString(w, "secure "+r.TLS.ServerName)
		}))
		srv.TLS = &tls.Config{Certificates: []tls.Certificate{serverCert}, ClientAuth: clientAuth, ClientCAs: ca.Pool}
		srv.Config.ErrorLog = log.New(io.Discard, "", 0) // failed handshakes are the point
		srv.StartTLS()
		t.Cleanup(srv.Close)
		return srv
	}
	_ = clientCert
	cases := []struct {
		name string
		auth tls.ClientAuthType
		tls  TLSConfig
		segs Segments
		want Status
		kind Kind
	}{
		{"verified with the test CA, SNI from the hostname", tls.NoClientCert,
			TLSConfig{CAPEM: string(ca.PEM)}, Segments{textPayload("secure probe.test")}, Pass, KindNone},
		{"verified against the IP address", tls.NoClientCert,
			TLSConfig{CAPEM: string(ca.PEM), ServerName: "127.0.0.1"}, nil, Pass, KindNone},
		{"unknown CA fails the handshake", tls.NoClientCert, TLSConfig{}, nil, Fail, KindTLS},
		{"wrong server name fails the handshake", tls.NoClientCert,
			TLSConfig{CAPEM: string(ca.PEM), ServerName: "other.test"}, nil, Fail, KindTLS},
		{"skip-verify accepts any certificate (Route 53)", tls.NoClientCert,
			TLSConfig{InsecureSkipVerify: true}, nil, Pass, KindNone},
		{"client certificate required and sent", tls.RequireAndVerifyClientCert,
			TLSConfig{CAPEM: string(ca.PEM), CertPEM: string(clientPEM), KeyPEM: string(clientKey)}, nil, Pass, KindNone},
		{"client certificate required and missing", tls.RequireAndVerifyClientCert,
			TLSConfig{CAPEM: string(ca.PEM)}, nil, Fail, KindTLS},
	}
	for _, engine := range probersEngines {
		for _, tc := range cases {
			t.Run(string(engine)+"/"+tc.name, func(t *testing.T) {
				srv := newServer(t, tc.auth)
				cfg := DefaultHTTPConfig()
				cfg.Hostname = "probe.test"
				tl := tc.tls
				cfg.TLS = &tl
				cfg.ExpectedResponse = tc.segs
				h := probersHTTP(t, probersAddr(srv), cfg, engine)
				r := h.Probe(probersCtx(t, 10*time.Second))
				assert.Equal(t, tc.want, r.Status, "status; detail %q", r.Detail)
				assert.Equal(t, tc.kind, r.Kind, "kind; detail %q", r.Detail)
			})
		}
	}
	t.Run("plain HTTP server behind an HTTPS probe", func(t *testing.T) {
		srv := probersServe(t, 200, "")
		for _, engine := range probersEngines {
			cfg := DefaultHTTPConfig()
			cfg.TLS = &TLSConfig{InsecureSkipVerify: true}
			h := probersHTTP(t, probersAddr(srv), cfg, engine)
			r := h.Probe(probersCtx(t, 10*time.Second))
			assert.Equal(t, Fail, r.Status, r.Detail)
			if engine == HTTPEngineLean {
				// net/http replaces the TLS error with a plain one here.
				assert.Equal(t, KindTLS, r.Kind, r.Detail)
			}
		}
	})
}

// probersTLSResumeServer is an HTTPS server for resumption tests: it
// reports, per handshake, whether the handshake resumed, and counts the
// session tickets clients offered it.
type probersTLSResumeServer struct {
	*httptest.Server
	resumed chan bool
	offered atomic.Int64
}

func probersNewTLSResumeServer(t *testing.T, cert tls.Certificate) *probersTLSResumeServer {
	s := &probersTLSResumeServer{resumed: make(chan bool, 64)}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	cfg := &tls.Config{Certificates: []tls.Certificate{cert}}
	cfg.VerifyConnection = func(cs tls.ConnectionState) error {
		s.resumed <- cs.DidResume
		return nil
	}
	cfg.UnwrapSession = func(identity []byte, cs tls.ConnectionState) (*tls.SessionState, error) {
		s.offered.Add(1)
		return s.Server.TLS.DecryptTicket(identity, cs) // StartTLS serves a clone of cfg

	}
	s.TLS = cfg
	s.StartTLS()
	t.Cleanup(s.Close)
	return s
}

// TestHTTPSResumption: by default the second probe of a target resumes the
// session of the first, on both engines; DisableResumption makes every
// handshake a full one; and a prober never offers one target's ticket to
// another, even one with the same server name.
func TestHTTPSResumption(t *testing.T) {
	ca := probersNewCA(t)
	cert, _, _ := ca.Issue(false, "probe.test")
	for _, engine := range probersEngines {
		for _, disable := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/disableResumption=%v", engine, disable), func(t *testing.T) {
				srv := probersNewTLSResumeServer(t, cert)
				cfg := DefaultHTTPConfig()
				cfg.Hostname = "probe.test"
				cfg.TLS = &TLSConfig{CAPEM: string(ca.PEM), DisableResumption: disable}
				h := probersHTTP(t, probersAddr(srv.Server), cfg, engine)
				var got []bool
				for range 3 {
					r := h.Probe(probersCtx(t, 30*time.Second))
					require.Equal(t, Pass, r.Status, r.Detail)
					got = append(got, <-srv.resumed)
				}
				assert.Equal(t, []bool{false, !disable, !disable}, got, "resumed handshakes")
			})
		}
	}
	t.Run("one target's ticket is not offered to another", func(t *testing.T) {
		a, b := probersNewTLSResumeServer(t, cert), probersNewTLSResumeServer(t, cert)
		// Both servers accept each other's tickets (one key), so an
		// offered ticket would resume: the test sees any that leaks.
		key := [32]byte{1}
		a.TLS.SetSessionTicketKeys([][32]byte{key})
		b.TLS.SetSessionTicketKeys([][32]byte{key})
		cfg := DefaultHTTPConfig()
		cfg.Hostname = "probe.test" // the same server name, so crypto/tls's cache key is the same
		cfg.TLS = &TLSConfig{CAPEM: string(ca.PEM)}
		pa := probersHTTP(t, probersAddr(a.Server), cfg, HTTPEngineLean)
		pb := probersHTTP(t, probersAddr(b.Server), cfg, HTTPEngineLean)
		for _, step := range []struct {
			p       *HTTP
			srv     *probersTLSResumeServer
			resumed bool
		}{{pa, a, false}, {pa, a, true}, {pb, b, false}, {pb, b, true}} {
			r := step.p.Probe(probersCtx(t, 30*time.Second))
			require.Equal(t, Pass, r.Status, r.Detail)
			require.Equal(t, step.resumed, <-step.srv.resumed)
		}
		assert.Equal(t, int64(1), a.offered.Load(), "tickets offered to a")
		assert.Equal(t, int64(1), b.offered.Load(), "tickets offered to b: only its own, at its second probe")
	})
}

// TestHTTPSCurves: the key exchange offered is the one Curves names; a
// server that accepts none of them fails the handshake (KindTLS).
func TestHTTPSCurves(t *testing.T) {
	ca := probersNewCA(t)
	cert, _, _ := ca.Issue(false, "probe.test")
	curve := make(chan tls.CurveID, 4)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, CurvePreferences: []tls.CurveID{tls.X25519, tls.CurveP256},
		VerifyConnection: func(cs tls.ConnectionState) error { curve <- cs.CurveID; return nil }}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	for _, tc := range []struct {
		curves []string
		want   tls.CurveID
	}{{[]string{"X25519"}, tls.X25519}, {[]string{"P-256"}, tls.CurveP256}, {nil, tls.X25519}} {
		cfg := DefaultHTTPConfig()
		cfg.Hostname = "probe.test"
		cfg.TLS = &TLSConfig{CAPEM: string(ca.PEM), Curves: tc.curves, DisableResumption: true}
		r := probersHTTP(t, probersAddr(srv), cfg, HTTPEngineLean).Probe(probersCtx(t, 30*time.Second))
		require.Equal(t, Pass, r.Status, r.Detail)
		assert.Equal(t, tc.want, <-curve, "curves %v", tc.curves)
	}
	cfg := DefaultHTTPConfig()
	cfg.Hostname = "probe.test"
	cfg.TLS = &TLSConfig{CAPEM: string(ca.PEM), Curves: []string{"P-384"}}
	r := probersHTTP(t, probersAddr(srv), cfg, HTTPEngineLean).Probe(probersCtx(t, 30*time.Second))
	assert.Equal(t, Fail, r.Status, r.Detail)
	assert.Equal(t, KindTLS, r.Kind, r.Detail)
}

func TestTLSSessionCacheOneEntry(t *testing.T) {
	var c tlsSessionCache
	s1, s2 := new(tls.ClientSessionState), new(tls.ClientSessionState)
	_, ok := c.Get("a")
	assert.False(t, ok, "empty")
	c.Put("a", s1)
	got, ok := c.Get("a")
	assert.True(t, ok)
	assert.Same(t, s1, got)
	c.Put("b", s2) // replaces: one entry
	_, ok = c.Get("a")
	assert.False(t, ok, "a was replaced by b")
	got, _ = c.Get("b")
	assert.Same(t, s2, got)
	c.Put("a", nil) // deleting another key leaves b
	_, ok = c.Get("b")
	assert.True(t, ok)
	c.Put("b", nil)
	_, ok = c.Get("b")
	assert.False(t, ok, "deleted")
}
