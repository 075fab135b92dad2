package main

import (
	"errors"
	"io"
	"strings"
	"testing"
)

const testSecret = "YSB0ZXN0IHNlY3JldCBvZiAzMiBieXRlcywgZml4ZWQ="

func TestParseConfig(t *testing.T) {
	env := func(string) string { return "" }
	base := []string{"-cluster", "eu-1", "-clusters", "eu-1=eu-west,us-1=us-east", "-domain", "example.test", "-heartbeat-secret", testSecret}
	c, err := parseConfig(base, io.Discard, env)
	if err != nil {
		t.Fatal(err)
	}
	if c.region != "eu-west" || len(c.clusters) != 2 || c.healthy != 6*c.interval || c.namespace != "default" {
		t.Fatalf("parsed %+v", c)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-cluster", "xx"}, `-cluster = "xx": allowed a cluster in -clusters`},
		{[]string{"-clusters", "eu-1"}, `-clusters = "eu-1": allowed name=region pairs`},
		{[]string{"-clusters", "eu-1=eu-west,eu-1=us-east"}, `allowed each cluster once ("eu-1" twice)`},
		{[]string{"-domain", "test"}, `-domain = "test"`},
		{[]string{"-heartbeat-secret", "c2hvcnQ="}, "kubernetes: invalid flags: -heartbeat-secret = 5 bytes: allowed >= 16 bytes"},
		{[]string{"-renew-deadline", "20s"}, "-renew-deadline = 20s: allowed more than -retry-period (2s) and less than -lease-duration (15s)"},
		{[]string{"-app-names", "app.other.test"}, `-app-names = "app.other.test.": allowed names inside -domain "example.test"`},
		{[]string{"-provider", "cloudflare"}, `kubernetes: invalid flags: -provider = "cloudflare": allowed one of "memory", "rfc2136", "route53"`},
		{[]string{"-provider", "rfc2136"}, "kubernetes: invalid flags: -provider rfc2136: rfc2136: invalid config: server"},
		{[]string{"-gateway-api", "maybe"}, `-gateway-api = "maybe": allowed one of "auto", "on", "off"`},
		{[]string{"-panic", "101"}, "kubernetes: invalid flags: -panic = 101: allowed [0, 100]"},
	} {
		_, err := parseConfig(append(append([]string(nil), base...), tc.args...), io.Discard, env)
		if !errors.Is(err, errFlags) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want %q", tc.args, err, tc.want)
		}
	}
}

// FuzzParseConfig: the flags are the operator's input; no value panics,
// and an accepted inventory names this cluster's region.
func FuzzParseConfig(f *testing.F) {
	f.Add("eu-1", "eu-1=eu-west,us-1=us-east", "example.test", "app.example.test")
	f.Add("a", "a=b", "x.y", "")
	f.Add("", ",,=", "..", ",")
	f.Fuzz(func(t *testing.T, cluster, clusters, domain, apps string) {
		c, err := parseConfig([]string{"-cluster", cluster, "-clusters", clusters, "-domain", domain, "-app-names", apps, "-heartbeat-secret", testSecret},
			io.Discard, func(string) string { return "" })
		if err != nil {
			return
		}
		if c.region == "" || c.cluster == "" {
			t.Fatalf("accepted without a region: %+v", c)
		}
		if _, err := newReplica(c, nil, nil, newMetrics(), nil); err != nil {
			t.Fatalf("accepted config rejected by the topology: %v", err)
		}
	})
}
