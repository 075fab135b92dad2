package main

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestHostGuardAgainstRebinding: reads with a Host
// naming another site (a page that rebound its own name to gslbd's
// address) are answered 421; IP literals, localhost and the names of
// http.allowedHosts are served; /healthz and /readyz answer whatever the
// Host. Before, /api/status, /api/records, /metrics and / answered 200.
func TestHostGuardAgainstRebinding(t *testing.T) {
	y := strings.Replace(apiYAML, "http: {apiToken: let-me-in-0123456789}", "http: {apiToken: let-me-in-0123456789, allowedHosts: [gslb.example.net]}", 1)
	c := newTestController(t, y)
	srv := httptest.NewServer(newHTTPServer(hostGuard(c.cfg.HTTP.Addr, c.cfg.HTTP.AllowedHosts, c.handler())).Handler)
	defer srv.Close()
	for _, p := range []string{"/api/status", "/api/records", "/metrics", "/"} {
		if got := send(t, srv, "GET", p, map[string]string{"Host": "evil.test"}); got != http.StatusMisdirectedRequest {
			t.Errorf("GET %s with Host evil.test: %d, want 421", p, got)
		}
		if got := send(t, srv, "GET", p, map[string]string{"Host": "evil.test:8053"}); got != http.StatusMisdirectedRequest {
			t.Errorf("GET %s with Host evil.test:8053: %d, want 421", p, got)
		}
		for _, h := range []string{"", "127.0.0.1:8053", "localhost:8053", "[::1]:8053", "192.0.2.7", "GSLB.example.net:443"} {
			hdr := map[string]string{}
			if h != "" {
				hdr["Host"] = h
			}
			if got := send(t, srv, "GET", p, hdr); got != http.StatusOK {
				t.Errorf("GET %s with Host %q: %d, want 200", p, h, got)
			}
		}
	}
	for _, p := range []string{"/healthz", "/readyz"} {
		if got := send(t, srv, "GET", p, map[string]string{"Host": "evil.test"}); got == http.StatusMisdirectedRequest {
			t.Errorf("GET %s with Host evil.test: 421; probes must answer whatever the Host", p)
		}
	}
	if got := send(t, srv, "GET", "/replication/snapshot", map[string]string{"Host": "controller.internal"}); got != http.StatusUnauthorized {
		t.Errorf("/replication/ with another Host and no secret: %d, want 401 (the secret guards it, not the Host)", got)
	}
}

// TestBearerSchemeAnyCase: the auth scheme is case-insensitive (RFC 9110
// §11.1): "bearer", "BEARER" and "Bearer" all work; before, lower case got
// 401. A 401 names the scheme in WWW-Authenticate.
func TestBearerSchemeAnyCase(t *testing.T) {
	c := newTestController(t, apiYAML)
	srv := httptest.NewServer(c.handler())
	defer srv.Close()
	const drain = "/api/records/app.example.test/addresses/192.0.2.1/drain"
	for _, scheme := range []string{"Bearer", "bearer", "BEARER"} {
		if got := send(t, srv, "POST", drain, map[string]string{"Authorization": scheme + " let-me-in-0123456789"}); got != http.StatusOK {
			t.Errorf("%s: %d, want 200", scheme, got)
		}
	}
	for _, bad := range []string{"Basic let-me-in-0123456789", "Bearerlet-me-in-0123456789", "Bearer let-me-in-012345678"} {
		if got := send(t, srv, "POST", drain, map[string]string{"Authorization": bad}); got != http.StatusUnauthorized {
			t.Errorf("%q: %d, want 401", bad, got)
		}
	}
	rec := do(c.handler(), "POST", drain, nil)
	if rec.Header().Get("WWW-Authenticate") == "" {
		t.Error("a 401 without WWW-Authenticate")
	}
}

// TestShortAPITokenRefused: a token shorter than 16 bytes ("a") is refused
// with an error naming http.apiToken and the minimum; before it was
// accepted.
func TestShortAPITokenRefused(t *testing.T) {
	base := strings.Replace(apiYAML, "http: {apiToken: let-me-in-0123456789}\n", "", 1)
	for _, tc := range []struct {
		tok  string
		want bool
	}{{"a", false}, {"0123456789abcde", false}, {"0123456789abcdef", true}} {
		cfg, err := ParseConfig([]byte(base + "http: {apiToken: \"" + tc.tok + "\"}\n"))
		if err == nil {
			err = cfg.Validate()
		}
		var ce *FieldError
		switch {
		case tc.want && err != nil:
			t.Errorf("token of %d bytes: %v", len(tc.tok), err)
		case !tc.want && (!errors.As(err, &ce) || ce.Path != "http.apiToken" || !strings.Contains(err.Error(), "16 bytes")):
			t.Errorf("token of %d bytes: %v, want an error naming http.apiToken and 16 bytes", len(tc.tok), err)
		case !tc.want && strings.Contains(err.Error(), tc.tok+"\""):
			t.Errorf("the error shows the token: %v", err)
		}
	}
	cfg, _ := ParseConfig([]byte(base + "http: {allowedHosts: [\"evil.test:80\"]}\n"))
	var ce *FieldError
	if err := cfg.Validate(); !errors.As(err, &ce) || ce.Path != "http.allowedHosts[0]" {
		t.Errorf("allowedHosts with a port: %v", err)
	}
}

// TestRRLConfig: dns.rrl is a known key, on by default at rate 200 and
// slip 2 with loopback exempt, and a bad value is refused naming its path.
func TestRRLConfig(t *testing.T) {
	base := strings.Replace(apiYAML, "http: {apiToken: let-me-in-0123456789}\n", "", 1)
	cfg, err := ParseConfig([]byte(base))
	if err != nil {
		t.Fatal(err)
	}
	if r := cfg.DNS.RRL; r.Rate != 200 || r.Slip != 2 || len(r.Exempt) != 2 {
		t.Errorf("default rrl: %+v", r)
	}
	for _, tc := range []struct{ yaml, field string }{
		{"dns: {rrl: {rate: 0}}\n", ""},
		{"dns: {rrl: {rate: 50, slip: 1, exempt: [10.0.0.0/8]}}\n", ""},
		{"dns: {rrl: {slip: 101}}\n", "dns.rrl.slip"},
		{"dns: {rrl: {rate: -1}}\n", "dns.rrl.rate"},
	} {
		cfg, err := ParseConfig([]byte(base + tc.yaml))
		if err == nil {
			err = cfg.Validate()
		}
		var ce *FieldError
		switch {
		case tc.field == "" && err != nil:
			t.Errorf("%s: %v", tc.yaml, err)
		case tc.field != "" && (!errors.As(err, &ce) || ce.Path != tc.field):
			t.Errorf("%s: %v, want an error naming %s", tc.yaml, err, tc.field)
		}
	}
}
