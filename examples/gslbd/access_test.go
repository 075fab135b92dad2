package main

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/libdns/libdns"
)

// send posts path to srv with the given headers (Host among them) and
// returns the status.
func send(t *testing.T, srv *httptest.Server, method, path string, hdr map[string]string) int {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}

// TestAPIClosedWithoutToken: with no token, a change is accepted only from
// a local client: JSON content type, a Host naming the listener, no
// foreign Origin. (Before, drain worked with no header at all, and with a
// forged Host or Origin.)
func TestAPIClosedWithoutToken(t *testing.T) {
	c := newTestController(t, strings.Replace(apiYAML, "http: {apiToken: let-me-in-0123456789}\n", "", 1))
	srv := httptest.NewServer(c.handler()) // on 127.0.0.1
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	const drain = "/api/records/app.example.test/addresses/192.0.2.1/drain"
	const undrain = "/api/records/app.example.test/addresses/192.0.2.1/undrain"
	json := "application/json"
	for _, tc := range []struct {
		name string
		hdr  map[string]string
		want int
	}{
		{"no content type (a cross-site form)", map[string]string{}, http.StatusUnsupportedMediaType},
		{"text/plain", map[string]string{"Content-Type": "text/plain"}, http.StatusUnsupportedMediaType},
		{"forged Host (DNS rebinding)", map[string]string{"Content-Type": json, "Host": "evil.example:80"}, http.StatusForbidden},
		{"Host with another port", map[string]string{"Content-Type": json, "Host": "127.0.0.1:1"}, http.StatusForbidden},
		{"foreign Origin", map[string]string{"Content-Type": json, "Origin": "http://evil.example"}, http.StatusForbidden},
		{"local client", map[string]string{"Content-Type": json}, http.StatusOK},
		{"local client, localhost and same Origin", map[string]string{"Content-Type": "application/json; charset=utf-8",
			"Host": strings.Replace(host, "127.0.0.1", "localhost", 1), "Origin": "http://" + strings.Replace(host, "127.0.0.1", "localhost", 1)}, http.StatusOK},
	} {
		if got := send(t, srv, "POST", drain, tc.hdr); got != tc.want {
			t.Errorf("%s: drain status %d, want %d", tc.name, got, tc.want)
		}
		send(t, srv, "POST", undrain, map[string]string{"Content-Type": json})
	}
	if got := send(t, srv, "GET", "/api/records", nil); got != http.StatusOK {
		t.Errorf("reads stay open: %d", got)
	}
}

// TestAPIToken: a wrong or missing token is refused; the right one is
// accepted whatever the Host; with protectReads the reads need it too,
// /healthz and /readyz do not.
func TestAPIToken(t *testing.T) {
	c := newTestController(t, strings.Replace(apiYAML, "http: {apiToken: let-me-in-0123456789}", "http: {apiToken: let-me-in-0123456789, protectReads: true}", 1))
	srv := httptest.NewServer(c.handler())
	defer srv.Close()
	const drain = "/api/records/app.example.test/addresses/192.0.2.1/drain"
	for _, tc := range []struct {
		auth string
		want int
	}{
		{"", http.StatusUnauthorized},
		{"Bearer let-me-i", http.StatusUnauthorized},
		{"Bearer let-me-in-0123456789-please", http.StatusUnauthorized},
		{"let-me-in-0123456789", http.StatusUnauthorized},
		{"Bearer let-me-in-0123456789", http.StatusOK},
	} {
		hdr := map[string]string{"Host": "gslb.example.net"}
		if tc.auth != "" {
			hdr["Authorization"] = tc.auth
		}
		if got := send(t, srv, "POST", drain, hdr); got != tc.want {
			t.Errorf("Authorization %q: status %d, want %d", tc.auth, got, tc.want)
		}
	}
	for _, p := range []string{"/api/records", "/metrics", "/"} {
		if got := send(t, srv, "GET", p, nil); got != http.StatusUnauthorized {
			t.Errorf("GET %s without token under protectReads: %d", p, got)
		}
		if got := send(t, srv, "GET", p, map[string]string{"Authorization": "Bearer let-me-in-0123456789"}); got != http.StatusOK {
			t.Errorf("GET %s with token: %d", p, got)
		}
	}
	for _, p := range []string{"/healthz", "/readyz"} {
		if got := send(t, srv, "GET", p, nil); got == http.StatusUnauthorized {
			t.Errorf("GET %s needs no token: %d", p, got)
		}
	}
}

// TestAPIAccessValidation: no token on a listener that is not loopback
// refuses to start unless the API is off; secrets and tokens padded with
// whitespace are refused (HTTP strips it: they could never match).
func TestAPIAccessValidation(t *testing.T) {
	base := strings.Replace(apiYAML, "http: {apiToken: let-me-in-0123456789}\n", "", 1)
	for _, tc := range []struct {
		name, yaml, field string
	}{
		{"all interfaces, no token", base + "http: {addr: \"0.0.0.0:8053\"}\n", "http.apiToken"},
		{"public address, no token", base + "http: {addr: \"192.0.2.10:8053\"}\n", "http.apiToken"},
		{"token with a space", base + "http: {apiToken: \" let-me-in-0123456789\"}\n", "http.apiToken"},
		{"protectReads without token", base + "http: {protectReads: true}\n", "http.protectReads"},
		{"padded secret", strings.Replace(base, "secret: 0123456789abcdef0123", "secret: \"0123456789abcdef0123 \"", 1), "replication.secret"},
		{"ok: API off", base + "http: {addr: \"0.0.0.0:8053\", disableAPI: true}\n", ""},
		{"ok: token", base + "http: {addr: \"0.0.0.0:8053\", apiToken: let-me-in-0123456789}\n", ""},
		{"ok: localhost", base + "http: {addr: \"localhost:8053\"}\n", ""},
	} {
		cfg, err := ParseConfig([]byte(tc.yaml))
		if err == nil {
			err = cfg.Validate()
		}
		var ce *FieldError
		switch {
		case tc.field == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.field != "" && (!errors.As(err, &ce) || ce.Path != tc.field):
			t.Errorf("%s: error %v, want one naming %s", tc.name, err, tc.field)
		}
	}
	node := "replication: {secret: \"0123456789abcdef0123 \"}\nnode: {url: \"http://127.0.0.1:1/replication\"}\nzone: example.test.\n"
	cfg, err := ParseConfig([]byte(node))
	if err == nil {
		err = cfg.ValidateNode()
	}
	if err == nil || !strings.Contains(err.Error(), "whitespace") {
		t.Errorf("node with a padded secret: %v", err)
	}
}

// TestRefusedNamesShowOnReadyz: a foreign record (no owner marker) at a
// record's name makes the reconciler refuse to publish it; /readyz names
// it (records_refused) while /healthz stays 200.
func TestRefusedNamesShowOnReadyz(t *testing.T) {
	c := newFakeController(t, apiYAML)
	if _, err := c.zone.SetRecords(t.Context(), "example.test.", []libdns.Record{
		libdns.RR{Name: "app", Type: "A", TTL: time.Minute, Data: "203.0.113.9"},
	}); err != nil {
		t.Fatal(err)
	}
	allPassing(t, c)
	c.holding.Store(false)
	c.publish()
	_, _ = c.local.ReconcileOnce(t.Context())
	srv := httptest.NewServer(c.handler())
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(b), "records_refused") || !strings.Contains(string(b), "app") {
		t.Fatalf("/readyz with a foreign record at app: %d %s", resp.StatusCode, b)
	}
	t.Logf("/readyz: %s", b)
	if got := send(t, srv, "GET", "/healthz", nil); got != http.StatusOK {
		t.Errorf("/healthz: %d", got)
	}
}
