package main

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/gslbkit/gslb/failover"
	"github.com/gslbkit/gslb/probe"
	"github.com/gslbkit/gslb/provider/replication"
)

const apiYAML = `zone: example.test.
http: {apiToken: let-me-in-0123456789}
replication: {secret: 0123456789abcdef0123}
records:
  - name: app.example.test.
    addresses:
      - {ip: 192.0.2.1, regions: [eu], probeAddr: "10.0.0.1:80"}
      - {ip: 192.0.2.2, regions: [us], probeAddr: "10.0.0.2:80"}
      - {ip: 192.0.2.3, regions: [eu, us], probeAddr: "10.0.0.3:80"}
`

// newTestController builds a controller with in-memory probers and
// publishes its initial state into the embedded zone (no goroutines).
func newTestController(t *testing.T, yaml string) *controller {
	t.Helper()
	c := newFakeController(t, yaml)
	c.holding.Store(false) // no Run: the test publishes the initial state itself
	allPassing(t, c)
	c.publish()
	if _, err := c.local.ReconcileOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	return c
}

// allPassing makes every address of c passing, as if its first probe had
// passed (a start without a state file starts them critical, their first
// result deciding), and opens DNS and replication.
func allPassing(t *testing.T, c *controller) {
	t.Helper()
	for _, rs := range c.records {
		for _, a := range rs.addrs {
			if err := c.mon.Override(a.id, probe.Passing); err != nil {
				t.Fatal(err)
			}
			a.state, a.health = probe.Passing, failover.Health(probe.Passing)
		}
	}
	c.markAnswering()
}

// newFakeController parses and validates yaml and builds a controller
// whose probers are fakes; nothing is started or published.
func newFakeController(t *testing.T, yaml string) *controller {
	t.Helper()
	cfg, err := ParseConfig([]byte(withStateDir(yaml)))
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	c, err := newController(cfg, deps{prober: (&fakeProbers{}).prober}, newMetrics(), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func do(h http.Handler, method, path string, hdr map[string]string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, path, nil)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func TestAPIStatusCodes(t *testing.T) {
	c := newTestController(t, apiYAML)
	h := c.handler()
	auth := map[string]string{"Authorization": "Bearer let-me-in-0123456789"}
	cases := []struct {
		name, method, path string
		hdr                map[string]string
		want               int
	}{
		{"list", "GET", "/api/records", nil, 200},
		{"one, without the final dot", "GET", "/api/records/APP.example.test", nil, 200},
		{"unknown record", "GET", "/api/records/nope.example.test", nil, 404},
		{"drain without token", "POST", "/api/records/app.example.test/addresses/192.0.2.1/drain", nil, 401},
		{"drain with a wrong token", "POST", "/api/records/app.example.test/addresses/192.0.2.1/drain", map[string]string{"Authorization": "Bearer let-me-out"}, 401},
		{"drain", "POST", "/api/records/app.example.test/addresses/192.0.2.1/drain", auth, 200},
		{"undrain", "POST", "/api/records/app.example.test/addresses/192.0.2.1/undrain", auth, 200},
		{"unknown address", "POST", "/api/records/app.example.test/addresses/192.0.2.9/drain", auth, 404},
		{"bad address", "POST", "/api/records/app.example.test/addresses/nope/drain", auth, 400},
		{"unknown address action", "POST", "/api/records/app.example.test/addresses/192.0.2.1/explode", auth, 404},
		{"disable without a failover name", "POST", "/api/records/app.example.test/disable", auth, 409},
		{"disable without a failover name, forced", "POST", "/api/records/app.example.test/disable?force=true", auth, 200},
		{"enable", "POST", "/api/records/app.example.test/enable", auth, 200},
		{"unknown record action", "POST", "/api/records/app.example.test/explode", auth, 404},
		{"notify with no nodes", "POST", "/api/notify", auth, 200},
		{"snapshot without secret", "GET", "/replication/snapshot", nil, 401},
		{"snapshot", "GET", "/replication/snapshot", map[string]string{replication.DefaultSecretHeader: "0123456789abcdef0123"}, 200},
		{"changes", "GET", "/replication/changes?since=0", map[string]string{replication.DefaultSecretHeader: "0123456789abcdef0123"}, 200},
		{"metrics", "GET", "/metrics", nil, 200},
		{"healthz", "GET", "/healthz", nil, 200},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec := do(h, tc.method, tc.path, tc.hdr)
			if rec.Code != tc.want {
				t.Fatalf("%s %s: %d, want %d\n%s", tc.method, tc.path, rec.Code, tc.want, rec.Body.String())
			}
		})
	}
}

// TestRegionFilteredSnapshot checks that a region's snapshot carries only
// the addresses tagged with that region.
func TestRegionFilteredSnapshot(t *testing.T) {
	c := newTestController(t, apiYAML)
	h := c.handler()
	for region, want := range map[string][]string{
		"eu": {"192.0.2.1", "192.0.2.3"},
		"us": {"192.0.2.2", "192.0.2.3"},
		"ap": nil,
	} {
		t.Run(region, func(t *testing.T) {
			rec := do(h, "GET", "/replication/snapshot?region="+region, map[string]string{replication.DefaultSecretHeader: "0123456789abcdef0123"})
			if rec.Code != 200 {
				t.Fatalf("status %d: %s", rec.Code, rec.Body.String())
			}
			snap, err := replication.ParseSnapshot(rec.Body.Bytes())
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, z := range snap.Zones {
				for _, r := range z.Records {
					if r.Name == "app" && r.Type == "A" {
						got = append(got, r.Data)
					}
				}
			}
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Fatalf("region %s: %v, want %v", region, got, want)
			}
		})
	}
}

func TestRecordsViewShowsTheAnswer(t *testing.T) {
	c := newTestController(t, apiYAML)
	rec := do(c.handler(), "GET", "/api/records/app.example.test.", nil)
	body := rec.Body.String()
	for _, want := range []string{`"A 192.0.2.1"`, `"state": "passing"`, `"regions": [`} {
		if !strings.Contains(body, want) {
			t.Errorf("view lacks %s:\n%s", want, body)
		}
	}
}

// BenchmarkPublish measures one recomputation of the desired state of 100
// records of 4 addresses (what every state change costs the controller).
func BenchmarkPublish(b *testing.B) {
	var y strings.Builder
	y.WriteString("zone: example.test.\nrecords:\n")
	for i := range 100 {
		y.WriteString("  - name: r" + itoa(i) + ".example.test.\n    addresses:\n")
		for j := range 4 {
			y.WriteString("      - {ip: 10.0." + itoa(i) + "." + itoa(j+1) + ", probeAddr: \"127.0.0.1:1\"}\n")
		}
	}
	cfg, err := ParseConfig([]byte(withStateDir(y.String())))
	if err != nil {
		b.Fatal(err)
	}
	if err := cfg.Validate(); err != nil {
		b.Fatal(err)
	}
	c, err := newController(cfg, deps{prober: (&fakeProbers{}).prober}, newMetrics(), slog.New(slog.DiscardHandler))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		c.publish()
	}
}

// BenchmarkParseConfig measures parsing and validating the sample config.
func BenchmarkParseConfig(b *testing.B) {
	data := []byte(apiYAML)
	b.ReportAllocs()
	for b.Loop() {
		cfg, err := ParseConfig(data)
		if err != nil {
			b.Fatal(err)
		}
		if err := cfg.Validate(); err != nil {
			b.Fatal(err)
		}
	}
}

func itoa(i int) string {
	const digits = "0123456789"
	if i < 10 {
		return digits[i : i+1]
	}
	return itoa(i/10) + digits[i%10:i%10+1]
}
