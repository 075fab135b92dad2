package probe

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"weak"

	"github.com/gslbkit/gslb/internal/hostport"
)

// HTTP is an HTTP or HTTPS prober: one request per probe over a new
// connection (Connection: close), classified by Envoy's rules 5, 6 and 8:
//
//   - connect error, timeout, reset, TLS failure, a malformed or truncated
//     reply → Fail (counts toward the failure threshold);
//   - a body that does not match ExpectedResponse → FailNow (KindBody),
//     checked before the status, so even a retriable status fails at once;
//   - a status in ExpectedStatuses (default [200]) → Pass, even if it is
//     also retriable;
//   - a status in RetriableStatuses → Fail (KindStatus);
//   - any other status → FailNow (KindStatus).
//
// A malformed reply (bad status line, header or chunk encoding) is a
// protocol error: Envoy resets the stream and counts a network failure, so
// it is Fail with KindProtocol, not FailNow. Redirects are never followed: a
// 3xx is judged like any other status (list 300–399 as expected to accept
// them). The request is built once by NewHTTP.
//
// Probe is safe for concurrent use; each call uses its own connection and
// closes it before returning.
type HTTP struct {
	cfg      *HTTPConfig // a private copy, shared with probers of an equal config
	dialAddr string      // host:port dialled
	tls      *httpTLS    // nil: plain HTTP
	segs     [][]byte
	window   int      // 0 = whole body
	req      []byte   // the lean engine's request, written in one call
	ref      *httpRef // the net/http engine, when selected
	useTLS   bool
	head     bool
	// loop is the address the Monitor's event loop probes, or the zero
	// value when the check needs a goroutine (see loopTargetOf).
	loop netip.AddrPort
}

var _ Prober = (*HTTP)(nil)

// NewHTTP returns a prober for the target at addr: "host:port", "host",
// "[v6]:port" or a bare IP address. A missing port is 80 (443 with TLS);
// cfg.Port, when set, replaces the port. The host is dialled as given (a
// name is resolved at each probe). cfg is validated and copied; files named
// in cfg.TLS are read now.
func NewHTTP(addr string, cfg HTTPConfig) (*HTTP, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	defPort := "80"
	if cfg.TLS != nil {
		defPort = "443"
	}
	host, port, err := hostport.Split(addr, defPort, cfg.Port)
	if err != nil {
		return nil, err
	}
	cfg.Path = cfg.path()
	h := &HTTP{
		cfg:      httpSharedConfig(cfg),
		dialAddr: hostport.Join(addr, host, port),
		useTLS:   cfg.TLS != nil,
		window:   cfg.MatchWindow,
	}
	method := cfg.method()
	h.head = method == http.MethodHead
	if h.segs, err = cfg.ExpectedResponse.decode(ErrHTTPConfig, "expectedResponse"); err != nil {
		return nil, err
	}
	hostHeader := cfg.Hostname
	if hostHeader == "" {
		hostHeader = host
		if strings.Contains(host, ":") {
			hostHeader = "[" + host + "]"
		}
		if port != defPort {
			hostHeader = h.dialAddr // the same text: share it
		}
	}
	if h.useTLS {
		sni := host
		if cfg.Hostname != "" {
			sni = cfg.Hostname
			if hh, _, err := net.SplitHostPort(sni); err == nil {
				sni = hh
			}
		}
		if cfg.TLS.ServerName != "" {
			sni = cfg.TLS.ServerName
		}
		base, err := cfg.TLS.sharedBase()
		if err != nil {
			return nil, err
		}
		h.tls = &httpTLS{base: base, serverName: sni}
		if !cfg.TLS.DisableResumption {
			h.tls.sessions = new(tlsSessionCache)
		}
	}
	var body []byte
	if cfg.RequestBody != nil {
		if body, err = cfg.RequestBody.decode(); err != nil {
			return nil, err
		}
	}
	h.req = httpBuildRequest(method, cfg.Path, hostHeader, cfg.Headers, body)
	if cfg.Engine == HTTPEngineNetHTTP {
		h.ref = newHTTPRef(h, hostHeader, body)
	} else if len(h.segs) == 0 || h.window > 0 && h.window <= loopMaxWindow {
		h.loop = loopAddr(h.dialAddr)
	}
	return h, nil
}

// httpTLS is an HTTPS prober's TLS state: the configuration it shares with
// other probers of the same TLS settings, and its own server name and
// session cache, set on a copy of the shared configuration at each probe
// (the copy is garbage at once; a tls.Config per target would be ~0.5 KB
// of every target's memory).
type httpTLS struct {
	base       *tls.Config
	serverName string
	sessions   *tlsSessionCache // nil: resumption off
}

// config returns the configuration of one connection.
func (t *httpTLS) config() *tls.Config {
	c := t.base.Clone()
	c.ServerName = t.serverName
	if t.sessions != nil {
		c.ClientSessionCache = t.sessions
	}
	return c
}

// Config returns a copy of the prober's configuration.
func (h *HTTP) Config() HTTPConfig { return httpCopyConfig(*h.conf()) }

// conf returns the prober's config: the zero config for the zero HTTP.
func (h *HTTP) conf() *HTTPConfig {
	if h.cfg == nil {
		return &httpZeroConfig
	}
	return h.cfg
}

// httpZeroConfig is the zero HTTP's config; nothing modifies it.
var httpZeroConfig HTTPConfig

// Addr returns the host:port the prober connects to.
func (h *HTTP) Addr() string { return h.dialAddr }

// Probe sends one request and classifies the answer. ctx's deadline is the
// probe's timeout; cancelling ctx ends the probe early (Fail, KindOther).
func (h *HTTP) Probe(ctx context.Context) Result {
	start := time.Now()
	var r Result
	if h.ref != nil {
		r = h.ref.probe(ctx)
	} else {
		r = h.probeLean(ctx)
	}
	if r.Status != Pass && ctx.Err() == context.Canceled {
		r.Status, r.Kind, r.Detail = Fail, KindOther, "canceled"
	}
	r.Latency = time.Since(start)
	return r
}

// verdict classifies a complete exchange: the status code, and when the
// prober matches the body, whether it matched and any error that ended the
// body early. Envoy's rule 5: the body is checked before the status.
func (h *HTTP) verdict(code int, bodyErr error, matched bool) Result {
	if bodyErr != nil {
		return Result{Status: Fail, Kind: httpErrKind(bodyErr), Code: code, Detail: "reading body: " + bodyErr.Error()}
	}
	if len(h.segs) > 0 && !matched {
		return Result{Status: FailNow, Kind: KindBody, Code: code, Detail: "body mismatch (status " + strconv.Itoa(code) + ")"}
	}
	switch {
	case h.expectedStatus(code):
		return Result{Status: Pass, Code: code, Detail: httpPassDetail(code)}
	case h.conf().RetriableStatuses.Contains(code):
		return Result{Status: Fail, Kind: KindStatus, Code: code, Detail: "retriable status " + strconv.Itoa(code)}
	}
	return Result{Status: FailNow, Kind: KindStatus, Code: code, Detail: "unexpected status " + strconv.Itoa(code)}
}

// expectedStatus reports whether code is in ExpectedStatuses (default 200).
// The prober reads its private copy of the config rather than keeping
// second copies of the lists: it is per-target memory.
func (h *HTTP) expectedStatus(code int) bool {
	if len(h.conf().ExpectedStatuses) == 0 {
		return code == http.StatusOK
	}
	return h.conf().ExpectedStatuses.Contains(code)
}

// httpPassDetail is a passing result's Detail, "status 200": a constant for
// the usual passing codes, so a passing probe allocates no string (a
// Monitor keeps each target's last result).
func httpPassDetail(code int) string {
	switch code {
	case 200:
		return "status 200"
	case 201:
		return "status 201"
	case 202:
		return "status 202"
	case 204:
		return "status 204"
	case 301:
		return "status 301"
	case 302:
		return "status 302"
	case 304:
		return "status 304"
	}
	return "status " + strconv.Itoa(code)
}

// dial connects to the target; an IP literal skips the resolver. The
// dialer is built on the stack for each probe rather than kept per target.
func (h *HTTP) dial(ctx context.Context) (net.Conn, error) {
	// One request per connection: keep-alive probes would only cost a setsockopt.
	d := net.Dialer{Timeout: h.conf().ConnectTimeout, KeepAlive: -1}
	return probeDial(ctx, &d, h.dialAddr)
}

// probeDial dials addr (host:port; an IP literal skips the resolver).
//
// It does not use net.Dialer.DialTCP: that method turns a zero local address
// into a non-nil one, so every probe socket was bound to port 0 before
// connecting. bind(0) reserves an ephemeral port exclusively, costs a
// syscall and a port search, and at thousands of probes a second wears the
// port range down faster than connect's own port choice, which may reuse a
// port towards a different destination.
func probeDial(ctx context.Context, d *net.Dialer, addr string) (net.Conn, error) {
	return d.DialContext(ctx, "tcp", addr)
}

// httpFailed classifies an error that ended the exchange before a verdict.
func httpFailed(stage string, err error) Result {
	return Result{Status: Fail, Kind: httpErrKind(err), Detail: stage + ": " + err.Error()}
}

// httpErrKind says why an exchange failed. Errors that are neither
// network, TLS nor end-of-stream errors are protocol errors: a reply the
// client could not parse.
func httpErrKind(err error) Kind {
	if k := KindOf(err); k != KindOther {
		return k
	}
	return KindProtocol
}

// KindOf classifies a dial or I/O error the way the built-in probers do:
// KindLocal for a local failure (see KindLocal; an unreachable error is
// local when this host has no route to the address the error names),
// KindTimeout (a deadline, the context's included), KindTLS, KindRefused,
// KindReset (also an early end of stream), KindNetwork (other dial and
// resolution errors), KindNone for nil, else KindOther. Probers outside
// this package (probe/grpcprobe, probe/dnsprobe, a user's) use it to
// classify their transport errors like the HTTP and TCP probers, so that
// their local failures are not counted either.
func KindOf(err error) Kind {
	var (
		ne  net.Error
		rh  tls.RecordHeaderError
		al  tls.AlertError
		cv  *tls.CertificateVerificationError
		op  *net.OpError
		dns *net.DNSError
	)
	switch {
	case err == nil:
		return KindNone
	case probeLocalErrno(err), probeUnreachable(err) && probeNoRoute(err):
		return KindLocal
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return KindTimeout
	case errors.As(err, &rh), errors.As(err, &al), errors.As(err, &cv), errors.Is(err, ErrTLSConfig),
		// crypto/tls reports an alert from the peer as this operation.
		errors.As(err, &op) && op.Op == "remote error":
		return KindTLS
	case probeIsRefused(err):
		return KindRefused
	case probeIsReset(err):
		return KindReset
	case errors.As(err, &dns), errors.As(err, &op):
		return KindNetwork
	}
	return KindOther
}

// httpLastConfig is the config httpSharedConfig last copied, held weakly.
var httpLastConfig struct {
	sync.Mutex
	cfg weak.Pointer[HTTPConfig]
}

// httpSharedConfig returns a private copy of c for a prober, which never
// modifies it: the last copy made, while a prober still holds it and it is
// equal to c, or a new one. Probers built one after the other with one
// config, the usual set-up, then share a single copy rather than each
// keeping 192 bytes and copies of the config's lists. Only configs without
// headers, request body, expected response or programmatic TLS roots and
// certificates are shared (httpConfigEqual compares the rest).
func httpSharedConfig(c HTTPConfig) *HTTPConfig {
	httpLastConfig.Lock()
	defer httpLastConfig.Unlock()
	if last := httpLastConfig.cfg.Value(); last != nil && httpConfigEqual(last, &c) {
		return last
	}
	cp := httpCopyConfig(c)
	httpLastConfig.cfg = weak.Make(&cp)
	return &cp
}

// httpConfigEqual reports whether a and b are equal configs without
// headers, request body, expected response, TLS roots or certificates: a
// and b with any of those are unequal. nil and empty lists differ, so that
// a shared copy's Config is the caller's to the last detail.
func httpConfigEqual(a, b *HTTPConfig) bool {
	for _, c := range []*HTTPConfig{a, b} {
		if c.Headers != nil || c.RequestBody != nil || c.ExpectedResponse != nil ||
			c.TLS != nil && (c.TLS.RootCAs != nil || c.TLS.Certificates != nil) {
			return false
		}
	}
	if (a.TLS == nil) != (b.TLS == nil) || a.TLS != nil && !tlsPlainEqual(a.TLS, b.TLS) {
		return false
	}
	return a.Method == b.Method && a.Path == b.Path && a.Hostname == b.Hostname &&
		sameSlice(a.ExpectedStatuses, b.ExpectedStatuses) && sameSlice(a.RetriableStatuses, b.RetriableStatuses) &&
		a.MatchWindow == b.MatchWindow && a.Port == b.Port &&
		a.ConnectTimeout == b.ConnectTimeout && a.ResponseTimeout == b.ResponseTimeout && a.Engine == b.Engine
}

// tlsPlainEqual reports whether a and b, without RootCAs or Certificates,
// are equal.
func tlsPlainEqual(a, b *TLSConfig) bool {
	return a.ServerName == b.ServerName && a.CAFile == b.CAFile && a.CAPEM == b.CAPEM &&
		a.CertFile == b.CertFile && a.KeyFile == b.KeyFile && a.CertPEM == b.CertPEM && a.KeyPEM == b.KeyPEM &&
		a.InsecureSkipVerify == b.InsecureSkipVerify && a.DisableResumption == b.DisableResumption &&
		sameSlice(a.Curves, b.Curves) && a.MaxVersion == b.MaxVersion
}

// sameSlice reports whether a and b hold the same elements and are both
// nil or both not.
func sameSlice[S ~[]E, E comparable](a, b S) bool {
	return (a == nil) == (b == nil) && slices.Equal(a, b)
}

// httpCopyConfig copies cfg deeply enough that the caller's later edits
// do not reach the prober.
func httpCopyConfig(c HTTPConfig) HTTPConfig {
	if c.Headers != nil {
		m := make(map[string]string, len(c.Headers))
		for k, v := range c.Headers {
			m[k] = v
		}
		c.Headers = m
	}
	if c.RequestBody != nil {
		b := *c.RequestBody
		b.Binary = slices.Clone(b.Binary)
		c.RequestBody = &b
	}
	c.ExpectedStatuses = slices.Clone(c.ExpectedStatuses)
	c.RetriableStatuses = slices.Clone(c.RetriableStatuses)
	c.ExpectedResponse = slices.Clone(c.ExpectedResponse)
	if c.TLS != nil {
		t := *c.TLS
		t.Certificates = slices.Clone(t.Certificates)
		t.Curves = slices.Clone(t.Curves)
		c.TLS = &t
	}
	return c
}

// httpBuildRequest renders the request the lean engine writes.
func httpBuildRequest(method, path, host string, headers map[string]string, body []byte) []byte {
	// Built on the stack and copied once at its size: every target keeps
	// its request, and growing it by appends left about as much garbage
	// again as the request itself.
	var scratch [256]byte
	b := scratch[:0]
	b = append(b, method...)
	b = append(b, ' ')
	b = append(b, path...)
	b = append(b, " HTTP/1.1\r\nHost: "...)
	b = append(b, host...)
	b = append(b, "\r\n"...)
	keys := make([]string, 0, len(headers))
	hasUA := false
	for k := range headers {
		keys = append(keys, k)
		if http.CanonicalHeaderKey(k) == "User-Agent" {
			hasUA = true
		}
	}
	slices.Sort(keys)
	if !hasUA {
		b = append(b, "User-Agent: "+httpUserAgent+"\r\n"...)
	}
	for _, k := range keys {
		b = append(b, k...)
		b = append(b, ": "...)
		b = append(b, headers[k]...)
		b = append(b, "\r\n"...)
	}
	if body != nil || method == http.MethodPost || method == http.MethodPut || method == http.MethodPatch {
		b = append(b, "Content-Length: "...)
		b = strconv.AppendInt(b, int64(len(body)), 10)
		b = append(b, "\r\n"...)
	}
	b = append(b, "Connection: close\r\n\r\n"...)
	return slices.Clone(append(b, body...))
}

// httpUserAgent is sent unless the config sets a User-Agent header.
const httpUserAgent = "gslbkit-probe/1"
