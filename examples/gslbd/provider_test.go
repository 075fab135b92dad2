package main

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// noAWSCredentials points the AWS SDK at nothing: no credentials in the
// environment or in files, no instance metadata, and Route 53 at a local
// server that refuses everything (so no request can leave the machine).
func noAWSCredentials(t *testing.T) {
	dir := t.TempDir()
	aws := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusForbidden)
	}))
	t.Cleanup(aws.Close)
	for k, v := range map[string]string{
		"AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": "", "AWS_SESSION_TOKEN": "", "AWS_PROFILE": "",
		"AWS_CONFIG_FILE": filepath.Join(dir, "config"), "AWS_SHARED_CREDENTIALS_FILE": filepath.Join(dir, "credentials"),
		"AWS_EC2_METADATA_DISABLED": "true", "AWS_REGION": "us-east-1", "AWS_ENDPOINT_URL_ROUTE_53": aws.URL,
		"AWS_WEB_IDENTITY_TOKEN_FILE": "", "AWS_CONTAINER_CREDENTIALS_FULL_URI": "", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI": "",
		"GSLB_ROUTE53_HOSTED_ZONE_ID": "",
	} {
		t.Setenv(k, v)
	}
	for _, k := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE",
		"AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_CONTAINER_CREDENTIALS_FULL_URI", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "GSLB_ROUTE53_HOSTED_ZONE_ID"} {
		os.Unsetenv(k) // t.Setenv restores them
	}
}

func route53YAML(t *testing.T, b *backend) string {
	return controllerYAML("provider: {type: route53, route53: {}}",
		fmt.Sprintf("  - name: app.example.test.\n    addresses: [{ip: 192.0.2.1, probeAddr: %q}]\n", b.addr()))
}

// TestCheckOnlineRoute53NoCredentials: -check alone validates offline and
// says so; -check -online makes the read-only call, which fails without
// credentials, and says why instead of "config OK".
func TestCheckOnlineRoute53NoCredentials(t *testing.T) {
	noAWSCredentials(t)
	path := filepath.Join(t.TempDir(), "gslbd.yaml")
	if err := os.WriteFile(path, []byte(route53YAML(t, newBackend(t))), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if err := run(t.Context(), []string{"-config", path, "-check"}, &out, &errb); err != nil || !strings.Contains(out.String(), "config OK") {
		t.Fatalf("-check (offline): %v %q", err, out.String())
	}
	out.Reset()
	err := run(t.Context(), []string{"-config", path, "-check", "-online"}, &out, &errb)
	if err == nil || strings.Contains(out.String(), "config OK") {
		t.Fatalf("-check -online without credentials: err %v, stdout %q", err, out.String())
	}
	if !strings.Contains(err.Error(), "route53") || !strings.Contains(err.Error(), "example.test.") {
		t.Errorf("the error does not name the provider and zone: %v", err)
	}
	t.Logf("-check -online: %v", err)
	if err := run(t.Context(), []string{"-config", path, "-online"}, &out, &errb); err == nil {
		t.Error("-online without -check accepted")
	}
}

// TestProviderFailingIsVisible runs a controller publishing to Route 53
// without credentials: every reconcile fails; /readyz answers 503 naming
// provider_failing with its class and last error, /healthz stays 200 (the
// embedded zone still answers), the status body lists the problem and the
// provider's failure, and the metrics count the errors.
func TestProviderFailingIsVisible(t *testing.T) {
	noAWSCredentials(t)
	d := startDaemon(t, route53YAML(t, newBackend(t)))
	guard := 60 * time.Second
	var body string
	waitFor(t, guard, "/readyz reports the provider failing", func() bool {
		var code int
		code, body = get(t, d.http, "/readyz")
		return code == http.StatusServiceUnavailable && strings.Contains(body, "provider_failing")
	})
	for _, want := range []string{"provider route53 failing (", "since ", "no success yet", "last error at "} {
		if !strings.Contains(body, want) {
			t.Errorf("/readyz lacks %q:\n%s", want, body)
		}
	}
	t.Logf("/readyz: %s", body)
	if code, hb := get(t, d.http, "/healthz"); code != http.StatusOK || !strings.Contains(hb, "provider_failing") {
		t.Errorf("/healthz: %d %s", code, hb)
	}
	waitFor(t, guard, "the embedded zone answers", func() bool {
		got, _ := answer(d.dns, "app.example.test.")
		return len(got) == 1 && got[0] == "192.0.2.1"
	})
	_, st := get(t, d.http, "/api/status")
	for _, want := range []string{`"problems": [`, `"name": "provider_failing"`, `"failingSince"`, `"errorClass"`} {
		if !strings.Contains(st, want) {
			t.Errorf("/api/status lacks %s:\n%s", want, st)
		}
	}
	_, m := get(t, d.http, "/metrics")
	for _, want := range []string{`gslbkit_provider_errors_total{class=`, `gslbkit_provider_failing{provider="route53"} 1`,
		`gslbkit_problem{problem="provider_failing"} 1`, `gslbkit_ready 0`} {
		if !strings.Contains(m, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}
