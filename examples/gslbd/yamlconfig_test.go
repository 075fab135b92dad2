package main

import (
	"errors"
	"net"
	"net/netip"
	"os"
	"strings"
	"testing"
)

// TestYAMLErrorsNameFieldAndLine checks that a config error is said once,
// names the field's path and its line, and that keys match by exact case.
func TestYAMLErrorsNameFieldAndLine(t *testing.T) {
	const head = "zone: example.test.\nrecords:\n  - name: app.example.test.\n" // lines 1–3
	cases := []struct{ name, yaml, want string }{
		{"duration in words", head + "    ttl: thirty\n    addresses: [{ip: 127.0.0.1}]\n",
			`config: records[0].ttl (line 4): "thirty" is not a duration`},
		{"wrong case names the right key", "ownerID: x\n" + head,
			`config: ownerID (line 1): unknown field "ownerID": keys are case-sensitive, did you mean "ownerId"?`},
		{"wrong case inside a type with its own decoder", head + "    addresses: [{ip: 127.0.0.1}]\n    probe: {policy: {Interval: 10s}}\n",
			`records[0].probe.policy.Interval (line 5): unknown field "Interval": keys are case-sensitive, did you mean "interval"?`},
		{"wrong case in the provider block", "provider: {type: route53, route53: {HostedZoneID: Z1}}\n",
			`did you mean "hostedZoneID"?`},
		{"unknown field", head + "    addresses: [{ip: 127.0.0.1, port: 80}]\n",
			`config: records[0].addresses[0].port (line 4): unknown field "port" (allowed: ip, probeAddr, regions, weight)`},
		{"a number where a list is wanted", head + "    addresses: 3\n",
			`config: records[0].addresses (line 4): want a list, got "3"`},
		{"a word where a number is wanted", head + "    addresses:\n      - ip: 127.0.0.1\n        weight: heavy\n",
			`config: records[0].addresses[0].weight (line 6): "heavy" is not a whole number`},
		{"a bad duration inside the probe policy", head + "    addresses: [{ip: 127.0.0.1}]\n    probe:\n      policy:\n        timeout: soon\n",
			`config: records[0].probe.policy.timeout (line 7): "soon" is not a duration`},
		{"duplicate key", "zone: a.\nzone: b.\n",
			`config: zone (line 2): key "zone" appears twice (first on line 1)`},
		{"syntax error", "zone: [a\nrecords: x\n",
			`config (line `},
		{"tabs", "zone: a.\n\trecords: []\n",
			`config (line 2): `},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseConfig([]byte(tc.yaml))
			if err == nil {
				t.Fatalf("accepted:\n%s", tc.yaml)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q\nwant it to contain %q", err, tc.want)
			}
			if strings.Count(err.Error(), "config") > 1 || !strings.HasPrefix(err.Error(), "gslbd: invalid config") || strings.Contains(err.Error(), "JSON") {
				t.Errorf("error repeats itself or names JSON: %q", err)
			}
			if !errors.Is(err, ErrInvalidConfig) {
				t.Errorf("%v does not match ErrInvalidConfig", err)
			}
		})
	}
}

// TestYAMLAcceptsWhatTheOldDecoderDid keeps the forms configs use: JSON
// itself, flow and block style, anchors and merge keys, quoted numbers
// where strings are wanted, durations as numbers of seconds.
func TestYAMLAcceptsWhatTheOldDecoderDid(t *testing.T) {
	for name, y := range map[string]string{
		"json":                `{"zone": "example.test.", "records": [{"name": "app.example.test.", "ttl": "30s", "addresses": [{"ip": "127.0.0.1"}]}]}`,
		"anchor":              "zone: example.test.\nprobe: &p {type: TCP, tcp: {port: 5432}}\nrecords:\n  - name: app.example.test.\n    probe: *p\n    addresses: [{ip: 127.0.0.1}]\n",
		"merge":               "zone: example.test.\nbase: &b {ttl: 10s}\n",
		"seconds as a number": "zone: example.test.\nrecords:\n  - name: app.example.test.\n    ttl: 30\n    addresses: [{ip: 127.0.0.1}]\n",
	} {
		t.Run(name, func(t *testing.T) {
			if name == "merge" {
				y = "zone: example.test.\nrecords:\n  - &r {name: app.example.test., ttl: 10s, addresses: [{ip: 127.0.0.1}]}\n  - <<: *r\n    name: db.example.test.\n"
			}
			cfg, err := ParseConfig([]byte(y))
			if err != nil {
				t.Fatal(err)
			}
			if err := cfg.Validate(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestYAMLBillionLaughsIsBounded: nested aliases that would expand to
// 10⁹ values are refused after a bounded amount of work.
func TestYAMLBillionLaughsIsBounded(t *testing.T) {
	y := "zone: example.test.\nrecords:\n  - name: app.example.test.\n    probe:\n      - &a [x, x, x, x, x, x, x, x, x, x]\n"
	prev := "a"
	for _, n := range []string{"b", "c", "d", "e", "f", "g", "h", "i"} {
		y += "      - &" + n + " [" + strings.Repeat("*"+prev+", ", 9) + "*" + prev + "]\n"
		prev = n
	}
	_, err := ParseConfig([]byte(y))
	if err == nil || !strings.Contains(err.Error(), "aliases expanded") {
		t.Fatalf("nested aliases: %v", err)
	}
}

// TestSampleConfigProbesOnlyLoopback: the sample config is valid and never
// probes anything outside this machine.
func TestSampleConfigProbesOnlyLoopback(t *testing.T) {
	data, err := os.ReadFile("gslbd.example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := ParseConfig(data)
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, r := range cfg.Records {
		for _, a := range r.Addresses {
			ip, _ := netip.ParseAddr(a.IP)
			target := probeAddr(a, ip)
			host, _, err := net.SplitHostPort(target)
			if err != nil {
				host = target
			}
			if h, err := netip.ParseAddr(host); err != nil || !h.IsLoopback() {
				t.Errorf("%s %s probes %s, outside this machine", r.Name, a.IP, target)
			}
		}
	}
}
