package probe

import (
	"encoding/json"
	"errors"
	"fmt"
	"github.com/gslbkit/gslb/internal/fielderr"
	"net/http"
	"slices"
	"strings"
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
	// httpRoute53MatchWindow is Route 53's string-matching window.
	httpRoute53MatchWindow = 5120
)

// ErrHTTPConfig is wrapped by every HTTPConfig validation error (a
// *FieldError).
var ErrHTTPConfig = errors.New("probe: invalid http config")

// HTTPConfig configures an HTTP or HTTPS prober. JSON names follow Envoy
// Gateway's HTTP health checker where one exists (path, method, hostname,
// requestBody, expectedStatuses, retriableStatuses, expectedResponse).
//
// Start from DefaultHTTPConfig (or a preset) and change fields. A field
// left at zero takes its default (Method GET, Path "/", ExpectedStatuses
// [200]), except MatchWindow, whose zero means "whole body", not the
// default 1024 bytes, and the timeouts, whose zero means "the probe's
// context only"; so the zero HTTPConfig is DefaultHTTPConfig with a
// whole-body match window. Decode JSON onto DefaultHTTPConfig for the same
// reason.
type HTTPConfig struct {
	// Method is the request method: GET (also when empty), HEAD, POST, PUT,
	// DELETE, OPTIONS, TRACE or PATCH.
	Method string `json:"method,omitempty"`
	// Path is the request target, 1–1024 characters, starting with "/",
	// made of URL characters (a query is allowed, "%" escapes must be valid).
	// Empty means "/".
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
	ConnectTimeout time.Duration `json:"connectTimeout,omitempty"`
	// ResponseTimeout bounds everything after the connect (TLS handshake,
	// request, response); 0 means only the probe's context bounds it.
	// Route 53: 2s.
	ResponseTimeout time.Duration `json:"responseTimeout,omitempty"`
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
	c.MatchWindow = httpRoute53MatchWindow
	c.ConnectTimeout = 4 * time.Second
	c.ResponseTimeout = 2 * time.Second
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

// httpConfigFields is HTTPConfig without its methods, for the JSON codec.
type httpConfigFields HTTPConfig

// httpConfigWire is HTTPConfig's JSON shape: the durations, which shadow
// the embedded fields of the same name, are Go duration strings.
type httpConfigWire struct {
	*httpConfigFields
	ConnectTimeout  jsontime.Duration `json:"connectTimeout,omitempty"`
	ResponseTimeout jsontime.Duration `json:"responseTimeout,omitempty"`
}

// MarshalJSON writes the config with its camelCase names, durations as Go
// duration strings ("4s").
func (c HTTPConfig) MarshalJSON() ([]byte, error) {
	q := c
	return json.Marshal(httpConfigWire{(*httpConfigFields)(&q), jsontime.Duration(q.ConnectTimeout), jsontime.Duration(q.ResponseTimeout)})
}

// UnmarshalJSON decodes an http block onto c: fields present replace c's,
// absent ones keep their value (decode onto DefaultHTTPConfig). Durations
// are Go duration strings or numbers of seconds. Unknown fields and
// trailing data are errors; on error c is unchanged. It does not validate.
func (c *HTTPConfig) UnmarshalJSON(data []byte) error {
	q := *c
	w := httpConfigWire{(*httpConfigFields)(&q), jsontime.Duration(q.ConnectTimeout), jsontime.Duration(q.ResponseTimeout)}
	if err := machDecodeStrict(data, &w); err != nil {
		return fmt.Errorf("%w: %w", ErrHTTPConfig, err)
	}
	q.ConnectTimeout, q.ResponseTimeout = w.ConnectTimeout.D(), w.ResponseTimeout.D()
	*c = q
	return nil
}

// path returns the effective path.
func (c HTTPConfig) path() string {
	if c.Path == "" {
		return "/"
	}
	return c.Path
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
	bad := func(field string, v any, allowed string) error { return fieldErr(ErrHTTPConfig, field, v, allowed) }
	m := c.method()
	if !slices.Contains(httpMethods, m) {
		return bad("method", c.Method, fielderr.OneOf(httpMethods...))
	}
	p := c.path()
	if n := len(p); n > HTTPMaxPath {
		return bad("path", p, fmt.Sprintf("a path of [1, %d] characters (got %d)", HTTPMaxPath, n))
	}
	if err := httpCheckPath(p); err != nil {
		return bad("path", p, "an origin-form URL path: "+err.Error())
	}
	if c.Hostname != "" {
		if len(c.Hostname) > 255 {
			return bad("hostname", c.Hostname, "at most 255 characters")
		}
		for i := 0; i < len(c.Hostname); i++ {
			if b := c.Hostname[i]; b <= ' ' || b >= 0x7f || b == '/' || b == '@' {
				return bad("hostname", c.Hostname, fmt.Sprintf("a host name or host:port (character %q at %d)", b, i))
			}
		}
	}
	for k, v := range c.Headers {
		if err := httpCheckHeader(k, v); err != nil {
			return bad(fmt.Sprintf("headers[%q]", k), v, err.Error())
		}
	}
	if c.RequestBody != nil {
		allowed := []string{http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodOptions}
		if envoyGateway {
			allowed = allowed[:2]
		}
		if !slices.Contains(allowed, m) {
			return bad("requestBody", c.RequestBody.String(), "only with method "+strings.Join(allowed, ", ")+" (method is "+m+")")
		}
		if err := c.RequestBody.validate(ErrHTTPConfig, "requestBody"); err != nil {
			return err
		}
	}
	if err := c.ExpectedStatuses.validate(ErrHTTPConfig, "expectedStatuses"); err != nil {
		return err
	}
	if err := c.RetriableStatuses.validate(ErrHTTPConfig, "retriableStatuses"); err != nil {
		return err
	}
	if len(c.ExpectedResponse) > 0 && m == http.MethodHead {
		return bad("expectedResponse", c.ExpectedResponse.String(), "empty with method HEAD (a HEAD response has no body to match)")
	}
	if _, err := c.ExpectedResponse.decode(ErrHTTPConfig, "expectedResponse"); err != nil {
		return err
	}
	if c.MatchWindow < 0 || c.MatchWindow > HTTPMaxMatchWindow {
		return bad("matchWindow", c.MatchWindow, fielderr.Range(0, HTTPMaxMatchWindow)+" bytes (0: the whole body)")
	}
	if c.Port < 0 || c.Port > 65535 {
		return bad("port", c.Port, "[1, 65535], or 0 for the target's port")
	}
	if c.ConnectTimeout < 0 {
		return bad("connectTimeout", c.ConnectTimeout, ">= 0s (0: the probe's timeout)")
	}
	if c.ResponseTimeout < 0 {
		return bad("responseTimeout", c.ResponseTimeout, ">= 0s (0: the probe's timeout)")
	}
	switch c.Engine {
	case "", HTTPEngineLean, HTTPEngineNetHTTP:
	default:
		return bad("engine", string(c.Engine), fmt.Sprintf("%q or %q", HTTPEngineLean, HTTPEngineNetHTTP))
	}
	return fieldIn("tls", ErrHTTPConfig, c.TLS.Validate())
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
