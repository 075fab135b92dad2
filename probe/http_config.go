package probe

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/gslbkit/gslb/internal/jsontime"
)

// HTTPEngine selects how the HTTP prober speaks HTTP/1.1.
type HTTPEngine string

const (
	// HTTPEngineLean (the default, also the empty value) writes one request
	// over a fresh net.Conn and reads only the status line, the headers and
	// the body bytes that matching needs: no goroutine per probe, pooled
	// buffers, a handful of allocations.
	HTTPEngineLean HTTPEngine = "lean"
	// HTTPEngineNetHTTP uses net/http's client with keep-alives off. It is
	// the reference the lean engine is fuzzed against; slower, same verdicts.
	HTTPEngineNetHTTP HTTPEngine = "nethttp"
)

// Limits of HTTPConfig's fields.
const (
	// HTTPMaxPath is the longest path accepted (Envoy Gateway's limit).
	HTTPMaxPath = 1024
	// HTTPMaxMatchWindow is the largest matchWindow other than 0 (whole body).
	HTTPMaxMatchWindow = 1 << 20
	// HTTPDefaultMatchWindow is the default matchWindow (Envoy's 1024 bytes).
	HTTPDefaultMatchWindow = 1024
	// HTTPRoute53MatchWindow is Route 53's string-matching window.
	HTTPRoute53MatchWindow = 5120
)

// ErrHTTPConfig is wrapped by every HTTPConfig validation error.
var ErrHTTPConfig = errors.New("probe: http config")

// HTTPConfig configures an HTTP or HTTPS prober. JSON names follow Envoy
// Gateway's HTTP health checker where one exists (path, method, hostname,
// requestBody, expectedStatuses, retriableStatuses, expectedResponse).
//
// Start from DefaultHTTPConfig (or a preset) when decoding JSON: the zero
// value of MatchWindow means "whole body", not the default 1024 bytes.
type HTTPConfig struct {
	// Method is the request method: GET (also when empty), HEAD, POST, PUT,
	// DELETE, OPTIONS, TRACE or PATCH.
	Method string `json:"method,omitempty"`
	// Path is the request target, 1–1024 characters, starting with "/",
	// made of URL characters (a query is allowed, "%" escapes must be valid).
	// Required.
	Path string `json:"path"`
	// Hostname is the Host header. Empty means the target's host and port
	// (the port omitted when it is the scheme's default).
	Hostname string `json:"hostname,omitempty"`
	// Headers are added to the request. Host, Content-Length,
	// Transfer-Encoding and Connection are the prober's and may not be set.
	Headers map[string]string `json:"headers,omitempty"`
	// RequestBody is sent with POST, PUT, PATCH and OPTIONS (Envoy's rule;
	// configs decoded from Envoy Gateway allow POST and PUT only, see
	// ValidateEnvoyGateway). Nil sends no body.
	RequestBody *Payload `json:"requestBody,omitempty"`
	// ExpectedStatuses pass. Empty means [200]. Codes 100–599. A code in
	// both lists counts as expected.
	ExpectedStatuses Statuses `json:"expectedStatuses,omitempty"`
	// RetriableStatuses fail and count toward the failure threshold (Fail);
	// any other unexpected status fails at once (FailNow).
	RetriableStatuses Statuses `json:"retriableStatuses,omitempty"`
	// ExpectedResponse are segments that must appear in order, not
	// necessarily contiguous, within the first MatchWindow bytes of the body.
	// A mismatch fails at once (FailNow), whatever the status. Not allowed
	// with HEAD. JSON: one payload object or a list.
	ExpectedResponse Segments `json:"expectedResponse,omitempty"`
	// MatchWindow is how many body bytes ExpectedResponse is searched in:
	// 0 means the whole body, else 1–1048576. Default 1024; Route 53: 5120.
	MatchWindow int `json:"matchWindow"`
	// Port, when not 0, replaces the target's port (Envoy Gateway's
	// overrides.port); 1–65535.
	Port int `json:"port,omitempty"`
	// TLS, when not nil, makes the prober speak HTTPS with these options.
	TLS *TLSConfig `json:"tls,omitempty"`
	// ConnectTimeout bounds the TCP connect; 0 means only the probe's
	// context bounds it. Route 53: 4s.
	ConnectTimeout jsontime.Duration `json:"connectTimeout,omitempty"`
	// ResponseTimeout bounds everything after the connect (TLS handshake,
	// request, response); 0 means only the probe's context bounds it.
	// Route 53: 2s.
	ResponseTimeout jsontime.Duration `json:"responseTimeout,omitempty"`
	// Engine selects the HTTP implementation: "lean" (default, also empty)
	// or "nethttp" (the reference).
	Engine HTTPEngine `json:"engine,omitempty"`
}

// DefaultHTTPConfig returns Envoy's HTTP check: GET /, expected [200], no
// retriable statuses, a 1024-byte match window, plain HTTP, the lean engine,
// timeouts from the probe's context only.
func DefaultHTTPConfig() HTTPConfig {
	return HTTPConfig{
		Method:           http.MethodGet,
		Path:             "/",
		ExpectedStatuses: Statuses{OneStatus(200)},
		MatchWindow:      HTTPDefaultMatchWindow,
	}
}

// Route53HTTP returns Route 53's HTTP check: any 2xx or 3xx passes (other
// statuses fail at once), connect within 4 s and answer within 2 s of
// connecting, a 5120-byte match window for ExpectedResponse.
func Route53HTTP() HTTPConfig {
	c := DefaultHTTPConfig()
	c.ExpectedStatuses = Statuses{{Min: 200, Max: 399}}
	c.MatchWindow = HTTPRoute53MatchWindow
	c.ConnectTimeout = jsontime.Duration(4 * time.Second)
	c.ResponseTimeout = jsontime.Duration(2 * time.Second)
	return c
}

// Route53HTTPS is Route53HTTP over TLS without certificate verification,
// as Route 53 does.
func Route53HTTPS() HTTPConfig {
	c := Route53HTTP()
	c.TLS = &TLSConfig{InsecureSkipVerify: true}
	return c
}

var httpMethods = []string{
	http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut,
	http.MethodDelete, http.MethodOptions, http.MethodTrace, http.MethodPatch,
}

// method returns the effective method.
func (c HTTPConfig) method() string {
	if c.Method == "" {
		return http.MethodGet
	}
	return c.Method
}

// Validate checks every field against the ranges documented on HTTPConfig;
// the error names the field, the value and what is allowed.
func (c HTTPConfig) Validate() error {
	return c.validate(false)
}

// ValidateEnvoyGateway is Validate with Envoy Gateway's stricter rule: a
// request body only with POST or PUT. Config decoders for Envoy Gateway's
// healthCheck.active.http block call it instead of Validate.
func (c HTTPConfig) ValidateEnvoyGateway() error {
	return c.validate(true)
}

func (c HTTPConfig) validate(envoyGateway bool) error {
	m := c.method()
	if !slices.Contains(httpMethods, m) {
		return fmt.Errorf("%w: method %q: want one of %v", ErrHTTPConfig, c.Method, httpMethods)
	}
	if n := len(c.Path); n < 1 || n > HTTPMaxPath {
		return fmt.Errorf("%w: path %q: length %d, want 1–%d characters", ErrHTTPConfig, c.Path, n, HTTPMaxPath)
	}
	if err := httpCheckPath(c.Path); err != nil {
		return fmt.Errorf("%w: path %q: %w", ErrHTTPConfig, c.Path, err)
	}
	if c.Hostname != "" {
		if len(c.Hostname) > 255 {
			return fmt.Errorf("%w: hostname %q: longer than 255 characters", ErrHTTPConfig, c.Hostname)
		}
		for i := 0; i < len(c.Hostname); i++ {
			if b := c.Hostname[i]; b <= ' ' || b >= 0x7f || b == '/' || b == '@' {
				return fmt.Errorf("%w: hostname %q: character %q at %d, want a host name or host:port", ErrHTTPConfig, c.Hostname, b, i)
			}
		}
	}
	for k, v := range c.Headers {
		if err := httpCheckHeader(k, v); err != nil {
			return fmt.Errorf("%w: headers[%q]: %w", ErrHTTPConfig, k, err)
		}
	}
	if c.RequestBody != nil {
		allowed := []string{http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodOptions}
		if envoyGateway {
			allowed = allowed[:2]
		}
		if !slices.Contains(allowed, m) {
			return fmt.Errorf("%w: requestBody with method %s: a body is allowed only with %v", ErrHTTPConfig, m, allowed)
		}
		if err := c.RequestBody.Validate(); err != nil {
			return fmt.Errorf("%w: requestBody: %w", ErrHTTPConfig, err)
		}
	}
	if err := c.ExpectedStatuses.validate("expectedStatuses"); err != nil {
		return fmt.Errorf("%w: %w", ErrHTTPConfig, err)
	}
	if err := c.RetriableStatuses.validate("retriableStatuses"); err != nil {
		return fmt.Errorf("%w: %w", ErrHTTPConfig, err)
	}
	if len(c.ExpectedResponse) > 0 && m == http.MethodHead {
		return fmt.Errorf("%w: expectedResponse with method HEAD: a HEAD response has no body to match", ErrHTTPConfig)
	}
	if _, err := c.ExpectedResponse.decode("expectedResponse"); err != nil {
		return fmt.Errorf("%w: %w", ErrHTTPConfig, err)
	}
	if c.MatchWindow < 0 || c.MatchWindow > HTTPMaxMatchWindow {
		return fmt.Errorf("%w: matchWindow %d: want 0 (whole body) or 1–%d bytes", ErrHTTPConfig, c.MatchWindow, HTTPMaxMatchWindow)
	}
	if c.Port < 0 || c.Port > 65535 {
		return fmt.Errorf("%w: port %d: want 1–65535, or 0 for the target's port", ErrHTTPConfig, c.Port)
	}
	if c.ConnectTimeout < 0 {
		return fmt.Errorf("%w: connectTimeout %s: must not be negative (0 = the probe's timeout)", ErrHTTPConfig, c.ConnectTimeout)
	}
	if c.ResponseTimeout < 0 {
		return fmt.Errorf("%w: responseTimeout %s: must not be negative (0 = the probe's timeout)", ErrHTTPConfig, c.ResponseTimeout)
	}
	switch c.Engine {
	case "", HTTPEngineLean, HTTPEngineNetHTTP:
	default:
		return fmt.Errorf("%w: engine %q: want %q or %q", ErrHTTPConfig, c.Engine, HTTPEngineLean, HTTPEngineNetHTTP)
	}
	if err := c.TLS.Validate(); err != nil {
		return fmt.Errorf("%w: tls: %w", ErrHTTPConfig, err)
	}
	return nil
}

// httpCheckPath accepts an origin-form request target: "/" followed by URL
// characters (RFC 3986 pchar, "/", "?"), with valid "%XX" escapes.
func httpCheckPath(p string) error {
	if p[0] != '/' {
		return errors.New("must start with \"/\"")
	}
	if len(p) > 1 && p[1] == '/' {
		return errors.New("must not start with \"//\" (it would read as a host)")
	}
	for i := 0; i < len(p); i++ {
		b := p[i]
		switch {
		case 'a' <= b && b <= 'z', 'A' <= b && b <= 'Z', '0' <= b && b <= '9':
		case b == '%':
			if i+2 >= len(p) || !httpIsHex(p[i+1]) || !httpIsHex(p[i+2]) {
				return fmt.Errorf("bad %%-escape at %d", i)
			}
		default:
			if !httpIsPathPunct(b) {
				return fmt.Errorf("character %q at %d is not allowed in a URL path", b, i)
			}
		}
	}
	return nil
}

func httpIsPathPunct(b byte) bool {
	switch b {
	case '-', '.', '_', '~', '!', '$', '&', '\'', '(', ')', '*', '+', ',', ';', '=', ':', '@', '/', '?':
		return true
	}
	return false
}

func httpIsHex(b byte) bool {
	return '0' <= b && b <= '9' || 'a' <= b && b <= 'f' || 'A' <= b && b <= 'F'
}

// httpCheckHeader accepts a token name that the prober does not own and a
// value without control characters other than tab.
func httpCheckHeader(k, v string) error {
	if k == "" {
		return errors.New("empty header name")
	}
	for i := 0; i < len(k); i++ {
		if !httpTokenByte(k[i]) {
			return fmt.Errorf("character %q at %d is not allowed in a header name", k[i], i)
		}
	}
	switch http.CanonicalHeaderKey(k) {
	case "Host", "Content-Length", "Transfer-Encoding", "Connection":
		return errors.New("the prober sets this header (use hostname for Host)")
	}
	for i := 0; i < len(v); i++ {
		if b := v[i]; (b < ' ' && b != '\t') || b == 0x7f {
			return fmt.Errorf("control character %q at %d in the value", b, i)
		}
	}
	return nil
}
