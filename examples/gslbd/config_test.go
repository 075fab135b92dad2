package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gslbkit/gslb/probe"
	"github.com/gslbkit/gslb/probe/probecheck"
	"github.com/gslbkit/gslb/provider/dnsserver"
)

const goodYAML = `zone: gslb.example.test.
probe:
  policy: {interval: 10s, timeout: 1s}
  http: {path: /healthz}
records:
  - name: app.gslb.example.test
    failover: app.backup.example.net
    addresses:
      - {ip: 192.0.2.1, regions: [eu]}
      - {ip: "2001:db8::1"}
`

func TestParseConfigDefaultsAndOverrides(t *testing.T) {
	cfg, err := ParseConfig([]byte(goodYAML + `  - name: db.gslb.example.test.
    ttl: 10s
    probe: {type: TCP, tcp: {port: 5432}, policy: {criticalThreshold: 5}}
    addresses: [{ip: 192.0.2.9}]
`))
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	app, db := cfg.Records[0], cfg.Records[1]
	if app.Name != "app.gslb.example.test." || app.Failover != "app.backup.example.net." || app.TTL.D() != 30*time.Second {
		t.Errorf("app record not normalised: %+v", app)
	}
	if app.check.Type != probecheck.CheckHTTP || app.check.HTTP.Path != "/healthz" || app.check.HTTP.MatchWindow != probe.HTTPDefaultMatchWindow {
		t.Errorf("app check: %+v", app.check)
	}
	if db.check.Type != probecheck.CheckTCP || db.check.HTTP != nil || db.check.TCP.Port != 5432 {
		t.Errorf("db check did not switch to TCP alone: %+v", db.check)
	}
	if db.check.Policy.CriticalThreshold != 5 || db.check.Policy.Interval != 10*time.Second || db.check.Policy.WarningThreshold != 1 {
		t.Errorf("db policy not decoded onto the default probe's: %+v", db.check.Policy)
	}
	if cfg.OwnerID != "gslbd" || cfg.DNS.Addr != "127.0.0.1:5353" || cfg.HTTP.Addr != "127.0.0.1:8053" {
		t.Errorf("defaults lost: %+v", cfg)
	}
}

// TestConfigErrorsNameTheField checks that every bad value is refused with
// an error that names the field and says what is allowed.
func TestConfigErrorsNameTheField(t *testing.T) {
	rec := func(s string) string {
		return strings.Replace(goodYAML, "    failover: app.backup.example.net\n", s, 1)
	}
	cases := []struct {
		name, yaml, field string
	}{
		{"interval below the record-service minimum", strings.Replace(goodYAML, "interval: 10s", "interval: 5s", 1), "records[0].probe.policy.interval"},
		{"interval above the maximum", strings.Replace(goodYAML, "interval: 10s", "interval: 301s, maxBackoff: 600s", 1), "records[0].probe.policy.interval"},
		{"max back-off below the interval", strings.Replace(goodYAML, "interval: 10s", "interval: 301s", 1), "records[0].probe.policy.maxBackoff"},
		{"timeout above 3s", strings.Replace(goodYAML, "timeout: 1s", "timeout: 3500ms", 1), "records[0].probe.policy.timeout"},
		{"timeout below 0.1s", strings.Replace(goodYAML, "timeout: 1s", "timeout: 50ms", 1), "records[0].probe.policy.timeout"},
		{"no zone", strings.Replace(goodYAML, "zone: gslb.example.test.", "", 1), "zone"},
		{"record outside the zone", strings.Replace(goodYAML, "app.gslb.example.test", "app.other.test", 1), "records[0].name"},
		{"bad ip", strings.Replace(goodYAML, "192.0.2.1", "192.0.2.300", 1), "records[0].addresses[0].ip"},
		{"duplicate ip", strings.Replace(goodYAML, `"2001:db8::1"`, "192.0.2.1", 1), "records[0].addresses[1].ip"},
		{"ttl zero seconds", rec("    ttl: 500ms\n"), "records[0].ttl"},
		{"weight", strings.Replace(goodYAML, "regions: [eu]", "weight: 70000", 1), "records[0].addresses[0].weight"},
		{"no records", "zone: gslb.example.test.\n", "records"},
		{"unknown provider", goodYAML + "provider: {type: bind}\n", "provider.type"},
		{"provider block missing", goodYAML + "provider: {type: rfc2136}\n", "provider.rfc2136"},
		{"short secret", goodYAML + "replication: {secret: short}\n", "replication.secret"},
		{"notify without secret", goodYAML + "replication: {notify: [\"http://node/replication\"]}\n", "replication.secret"},
		{"bad style", goodYAML + "style: fast\n", "style"},
		{"owner id with a backslash", goodYAML + "ownerId: a\\b\n", "ownerId"},
		{"bad dns addr", goodYAML + "dns: {addr: nowhere}\n", "dns.addr"},
		{"transfer rule with an unknown key", goodYAML + "transfer: {allow: [{key: nokey}]}\n", "transfer.allow[0].key"},
		{"transfer without a DNS server", goodYAML + "dns: {addr: \"\"}\ntransfer: {allow: [{prefix: 192.0.2.0/24}]}\n", "dns.addr"},
		{"bad probe type", strings.Replace(goodYAML, "  http: {path: /healthz}", "  type: ICMP", 1), "records[0].probe"},
		{"tcp without port", strings.Replace(goodYAML, "  http: {path: /healthz}", "  type: TCP", 1), "records[0].addresses[0].probeAddr"},
		{"failover equal to name", rec("    failover: app.gslb.example.test\n"), "records[0]"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := ParseConfig([]byte(tc.yaml))
			if err == nil {
				err = cfg.Validate()
			}
			var ce *FieldError
			if !errors.As(err, &ce) || !errors.Is(err, ErrInvalidConfig) {
				t.Fatalf("err = %v, want a *FieldError", err)
			}
			if ce.Path != tc.field || ce.Allowed == "" {
				t.Fatalf("err = %v: field %q, want %q with an allowed range", err, ce.Path, tc.field)
			}
		})
	}
}

// TestConfigErrorFormat: a bad value reads as every gslbkit config error
// does — one prefix, the whole path, the value as written, what is allowed
// with ranges as [lo, hi] — and matches ErrInvalidConfig (and the library's
// sentinel when a library config refused it).
func TestConfigErrorFormat(t *testing.T) {
	cases := []struct {
		name, yaml, want string
		lib              error
	}{
		{"probe policy nested in a record", strings.Replace(goodYAML, "interval: 10s", "interval: 5s", 1),
			"gslbd: invalid config: records[0].probe.policy.interval = 5s: allowed [10s, 5m]", probe.ErrInvalidPolicy},
		{"rrl block of the DNS server", goodYAML + "dns: {rrl: {slip: 101}}\n",
			"gslbd: invalid config: dns.rrl.slip = 101: allowed [1, 100]", dnsserver.ErrInvalidConfig},
		{"a gslbd duration", goodYAML + "dns: {tcpIdleTimeout: 50ms}\n",
			"gslbd: invalid config: dns.tcpIdleTimeout = 50ms: allowed [100ms, 10m]", nil},
		{"a gslbd number", strings.Replace(goodYAML, "regions: [eu]", "weight: 70000", 1),
			"gslbd: invalid config: records[0].addresses[0].weight = 70000: allowed [0, 65535]", nil},
		{"a gslbd string", goodYAML + "style: fast\n",
			`gslbd: invalid config: style = "fast": allowed "recordService" or "relaxed"`, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := ParseConfig([]byte(tc.yaml))
			if err == nil {
				err = cfg.Validate()
			}
			if err == nil || err.Error() != tc.want {
				t.Fatalf("err = %v\nwant    %s", err, tc.want)
			}
			var fe *FieldError
			if !errors.As(err, &fe) || !errors.Is(err, ErrInvalidConfig) {
				t.Errorf("%v: not a *FieldError matching ErrInvalidConfig", err)
			}
			if tc.lib != nil && !errors.Is(err, tc.lib) {
				t.Errorf("%v: does not match %v", err, tc.lib)
			}
		})
	}
}

func TestParseConfigRefusesUnknownFields(t *testing.T) {
	for name, y := range map[string]string{
		"top level":     goodYAML + "zonee: x\n",
		"probe":         goodYAML + "probe: {intervall: 3s}\n",
		"policy":        strings.Replace(goodYAML, "timeout: 1s", "timeout: 1s, warningTreshold: 2", 1),
		"http":          strings.Replace(goodYAML, "path: /healthz", "path: /healthz, paht: /x", 1),
		"provider":      goodYAML + "provider: {type: rfc2136, rfc2136: {sever: x}}\n",
		"not a mapping": "- 1\n- 2\n",
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := ParseConfig([]byte(y)); err == nil {
				t.Fatal("accepted")
			}
		})
	}
}

func TestRelaxedStyleAllowsShortIntervals(t *testing.T) {
	y := strings.Replace(goodYAML, "interval: 10s, timeout: 1s", "interval: 200ms, timeout: 100ms", 1)
	cfg, err := ParseConfig([]byte(y))
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err == nil {
		t.Fatal("record-service style accepted a 200ms interval")
	}
	cfg, _ = ParseConfig([]byte(y + "style: relaxed\n"))
	if err := cfg.Validate(); err != nil {
		t.Fatalf("relaxed style: %v", err)
	}
	cfg, _ = ParseConfig([]byte(strings.Replace(y, "timeout: 100ms", "timeout: 300ms", 1) + "style: relaxed\n"))
	if err := cfg.Validate(); err == nil {
		t.Fatal("relaxed style accepted a timeout above the interval")
	}
}

func TestNodeConfig(t *testing.T) {
	cfg, _ := ParseConfig([]byte("zone: example.test.\nreplication: {secret: 0123456789abcdef}\nnode: {url: http://ctl:8053/replication, region: eu}\n"))
	if err := cfg.ValidateNode(); err != nil {
		t.Fatal(err)
	}
	if cfg.Node.Auth.Secret != "0123456789abcdef" || cfg.Node.DegradedAfter != 2 || len(cfg.Node.Zones) != 1 || cfg.Node.Zones[0] != "example.test." {
		t.Errorf("node config: %+v", cfg.Node)
	}
	cfg, _ = ParseConfig([]byte("node: {url: http://ctl:8053/replication}\n"))
	var ce *FieldError
	if err := cfg.ValidateNode(); !errors.As(err, &ce) || ce.Path != "replication.secret" {
		t.Fatalf("node without secret: %v", err)
	}
	cfg, _ = ParseConfig([]byte("replication: {secret: 0123456789abcdef}\nnode: {url: http://ctl:8053/replication}\n"))
	if err := cfg.ValidateNode(); !errors.As(err, &ce) || ce.Path != "node.zones" {
		t.Fatalf("node without a zone: %v", err)
	}
}

// TestCheckFlag runs gslbd -check on the sample config and on a bad one.
func TestCheckFlag(t *testing.T) {
	var out syncBuffer
	if err := run(context.Background(), []string{"-config", "gslbd.example.yaml", "-check"}, &out, &out); err != nil {
		t.Fatalf("sample config: %v", err)
	}
	if !strings.Contains(out.String(), "config OK: zone gslb.example.test., 4 records, 9 addresses") {
		t.Errorf("summary: %q", out.String())
	}
	out = syncBuffer{}
	if err := run(context.Background(), []string{"-config", "gslbd.example.yaml", "-check", "-node"}, &out, &out); err != nil {
		t.Fatalf("sample config as a node: %v", err)
	}
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte(strings.Replace(goodYAML, "interval: 10s", "interval: 1s", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	err := run(context.Background(), []string{"-config", bad, "-check"}, &out, &out)
	if err == nil || !strings.Contains(err.Error(), "records[0].probe.policy.interval") {
		t.Fatalf("bad config: %v", err)
	}
}

// FuzzParseConfig feeds arbitrary bytes to the config parser and the
// validator: they must return an error or a config, never panic.
func FuzzParseConfig(f *testing.F) {
	sample, err := os.ReadFile("gslbd.example.yaml")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(sample)
	f.Add([]byte(goodYAML))
	f.Add([]byte("zone: a.\nrecords: [{name: b.a., addresses: [{ip: 1.2.3.4}], probe: {type: tcp, tcp: {port: 1}}}]\n"))
	f.Add([]byte("provider: {type: route53, route53: {maxAttempts: 0}}\n"))
	f.Add([]byte("{}"))
	f.Add([]byte("zone: a.\nrecords: [{name: b.a., answer: geo, addresses: [{ip: 1.2.3.4, regions: [x]}, {ip: \"::1\", regions: [y]}]}]\n" +
		"geo: {prefixes: {\"10.0.0.0/8\": x, \"fd00::/8\": y}, preferences: {x: [y]}, default: y}\nnode: {url: http://c/replication}\nreplication: {secret: 0123456789abcdef}\n"))
	f.Add([]byte("zone: a.\nrecords: [{name: b.a., answer: weightedRandom, addresses: [{ip: 1.2.3.4, weight: 2}, {ip: 1.2.3.5}]}]\n"))
	f.Add([]byte("zone: a.\nrecords: [{name: b.a., answer: regionFilter, within: weightedRandom, addresses: [{ip: 1.2.3.4, regions: [x], weight: 2}, {ip: 1.2.3.5, regions: [x]}]}]\n" +
		"geo: {prefixes: {\"10.0.0.0/8\": x}}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := ParseConfig(data)
		if err != nil {
			return
		}
		cfg.StateDir = t.TempDir() // each controller its own
		if err := cfg.Validate(); err == nil {
			// A valid config must build a controller (nothing is started).
			if _, err := newController(cfg, deps{}, newMetrics(), nil); err != nil {
				t.Fatal(err)
			}
		}
		if err := cfg.ValidateNode(); err == nil {
			// A valid node config must build a node (nothing is started).
			if _, err := newNode(cfg, nil, newMetrics(), slog.New(slog.DiscardHandler)); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// Example shows a config being parsed and validated, as -check does.
func Example() {
	cfg, err := ParseConfig([]byte(`zone: gslb.example.com.
records:
  - name: api.gslb.example.com.
    ttl: 20s
    failover: api.backup.example.net.
    addresses:
      - {ip: 192.0.2.10, regions: [eu-west]}
      - {ip: 192.0.2.20, regions: [us-east]}
`))
	if err == nil {
		err = cfg.Validate()
	}
	if err != nil {
		fmt.Println(err)
		return
	}
	r := cfg.Records[0]
	fmt.Println(r.Name, r.TTL, r.Failover, len(r.Addresses), "addresses")
	fmt.Println(r.check.Type, r.check.HTTP.Path, r.check.Policy.Interval, r.check.Policy.Timeout)

	cfg.Records[0].Probe = []byte(`{"policy":{"interval":"5s"}}`)
	fmt.Println(cfg.Validate())
	// Output:
	// api.gslb.example.com. 20s api.backup.example.net. 2 addresses
	// HTTP / 10s 1s
	// gslbd: invalid config: records[0].probe.policy.interval = 5s: allowed [10s, 5m]
}
