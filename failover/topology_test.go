package failover_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gslbkit/gslb/failover"
)

const (
	regional = "edge.local.example.com."
	global   = "edge.global.example.com."
	fover    = "global-edge.global.example.com."
)

func topo(t tb, mod ...func(*failover.TopologyConfig)) *failover.Topology {
	t.Helper()
	cfg := failover.DefaultTopologyConfig()
	cfg.Service, cfg.Domain = "edge", "example.com"
	cfg.AppNames = []failover.AppName{{Name: "httpbin.example.com"}}
	for _, m := range mod {
		m(&cfg)
	}
	tp, err := failover.NewTopology(cfg)
	require.NoError(t, err)
	return tp
}

// twoRegions is the eu controller's view of a healthy two-region deployment
// with IPv4 and IPv6 gateways; us's gateways are observed by us.
func twoRegions() failover.Snapshot {
	return failover.Snapshot{
		Regions: []failover.Region{
			{Name: "eu", Zone: "local.example.com", Regional: failover.Published{Read: true, Addrs: ips("192.0.2.1", "192.0.2.2", "2001:db8::1")}},
			{Name: "us", Zone: "local.example.com"},
		},
		Clusters: []failover.Cluster{
			{Name: "eu-1", Region: "eu", Local: failover.Fresh, Global: failover.Fresh, Gateways: []failover.Gateway{
				gw("a", failover.Passing, "192.0.2.1", "2001:db8::1"),
				gw("b", failover.Warning, "192.0.2.2"),
			}},
			{Name: "us-1", Region: "us", Global: failover.Fresh, Gateways: []failover.Gateway{
				gw("c", failover.HealthUnknown, "198.51.100.1", "2001:db8:1::1"),
			}},
		},
		Failover: failover.Published{Read: true, Addrs: ips("192.0.2.1", "192.0.2.2", "2001:db8::1", "198.51.100.1", "2001:db8:1::1")},
	}
}

func addrsOf(t *testing.T, d failover.DesiredState, view, name, typ string) []string {
	t.Helper()
	s, ok := d.Lookup(view, name, typ)
	if !ok {
		return nil
	}
	var out []string
	for _, a := range s.Addrs() {
		out = append(out, a.String())
	}
	return out
}

func target(d failover.DesiredState, name string) string {
	s, ok := d.Lookup("", name, "CNAME")
	if !ok {
		return ""
	}
	return s.Target()
}

func TestTopologyRules(t *testing.T) {
	type want struct {
		euA, euAAAA, foA, foAAAA []string
		global                   string
		failingOver              bool
		held                     []failover.HoldReason
		withdrawn                [][3]string // view, name, type
	}
	cases := []struct {
		name string
		cfg  func(*failover.TopologyConfig)
		snap func(*failover.Snapshot)
		want want
	}{
		{
			name: "scenario 1: all healthy, global points at the regional name",
			want: want{
				euA: []string{"192.0.2.1", "192.0.2.2"}, euAAAA: []string{"2001:db8::1"},
				foA: []string{"192.0.2.1", "192.0.2.2", "198.51.100.1"}, foAAAA: []string{"2001:db8::1", "2001:db8:1::1"},
				global: regional, held: []failover.HoldReason{failover.HoldUnread},
			},
		},
		{
			name: "scenario 2: a failed gateway leaves its regional and failover records",
			snap: func(s *failover.Snapshot) { s.Clusters[0].Gateways[1].Health = failover.Critical },
			want: want{
				euA: []string{"192.0.2.1"}, euAAAA: []string{"2001:db8::1"},
				foA: []string{"192.0.2.1", "198.51.100.1"}, foAAAA: []string{"2001:db8::1", "2001:db8:1::1"},
				global: regional, held: []failover.HoldReason{failover.HoldUnread},
			},
		},
		{
			name: "recovery state is not served",
			snap: func(s *failover.Snapshot) { s.Clusters[0].Gateways[1].Health = failover.Recovery },
			want: want{
				euA: []string{"192.0.2.1"}, euAAAA: []string{"2001:db8::1"},
				foA: []string{"192.0.2.1", "198.51.100.1"}, foAAAA: []string{"2001:db8::1", "2001:db8:1::1"},
				global: regional, held: []failover.HoldReason{failover.HoldUnread},
			},
		},
		{
			name: "losing the last IPv6 gateway withdraws AAAA, not the name",
			snap: func(s *failover.Snapshot) { s.Clusters[0].Gateways[0].Health = failover.Critical },
			want: want{
				euA: []string{"192.0.2.2"}, foA: []string{"192.0.2.2", "198.51.100.1"}, foAAAA: []string{"2001:db8:1::1"},
				global: regional, held: []failover.HoldReason{failover.HoldUnread},
				withdrawn: [][3]string{{"eu", regional, "AAAA"}},
			},
		},
		{
			name: "scenario 3 by controllers: us's beats read stale, global fails over without us",
			snap: func(s *failover.Snapshot) { s.Clusters[1].Global = failover.Stale },
			want: want{
				euA: []string{"192.0.2.1", "192.0.2.2"}, euAAAA: []string{"2001:db8::1"},
				foA: []string{"192.0.2.1", "192.0.2.2"}, foAAAA: []string{"2001:db8::1"},
				global: fover, failingOver: true, held: []failover.HoldReason{failover.HoldUnread},
			},
		},
		{
			name: "scenario 3 by gateways: eu's own gateways all down, regional held at its last set",
			snap: func(s *failover.Snapshot) {
				s.Clusters[0].Gateways[0].Health = failover.Critical
				s.Clusters[0].Gateways[1].Health = failover.Critical
				s.Clusters[0].Local, s.Clusters[0].Global = failover.Stale, failover.Stale
			},
			want: want{
				foA: []string{"198.51.100.1"}, foAAAA: []string{"2001:db8:1::1"},
				global: fover, failingOver: true,
				held: []failover.HoldReason{failover.HoldNoHealthy, failover.HoldUnread},
			},
		},
		{
			name: "before eu's beat goes stale its dead gateways are already out",
			snap: func(s *failover.Snapshot) {
				s.Clusters[0].Gateways[0].Health = failover.Critical
				s.Clusters[0].Gateways[1].Health = failover.Critical
			},
			want: want{
				foA: []string{"198.51.100.1"}, foAAAA: []string{"2001:db8:1::1"},
				global: regional, held: []failover.HoldReason{failover.HoldNoHealthy, failover.HoldUnread},
			},
		},
		{
			name: "unknown region and none dead: the global name is held",
			snap: func(s *failover.Snapshot) { s.Clusters[1].Global = failover.FreshnessUnknown },
			want: want{
				euA: []string{"192.0.2.1", "192.0.2.2"}, euAAAA: []string{"2001:db8::1"},
				foA: []string{"192.0.2.1", "192.0.2.2", "198.51.100.1"}, foAAAA: []string{"2001:db8::1", "2001:db8:1::1"},
				held: []failover.HoldReason{failover.HoldUndecided, failover.HoldUnread},
			},
		},
		{
			name: "unknown cluster's unobserved addresses keep their published membership only",
			snap: func(s *failover.Snapshot) {
				s.Clusters[1].Global = failover.FreshnessUnknown
				s.Failover.Addrs = ips("192.0.2.1", "198.51.100.1")
			},
			want: want{
				euA: []string{"192.0.2.1", "192.0.2.2"}, euAAAA: []string{"2001:db8::1"},
				foA: []string{"192.0.2.1", "192.0.2.2", "198.51.100.1"}, foAAAA: []string{"2001:db8::1"},
				held: []failover.HoldReason{failover.HoldUndecided, failover.HoldUnread},
			},
		},
		{
			name: "fresh cluster's unobserved addresses are not re-added once the set is published",
			snap: func(s *failover.Snapshot) { s.Failover.Addrs = ips("192.0.2.1", "2001:db8:1::1") },
			want: want{
				euA: []string{"192.0.2.1", "192.0.2.2"}, euAAAA: []string{"2001:db8::1"},
				foA: []string{"192.0.2.1", "192.0.2.2"}, foAAAA: []string{"2001:db8::1", "2001:db8:1::1"},
				global: regional, held: []failover.HoldReason{failover.HoldUnread},
			},
		},
		{
			name: "bootstrap: a never-published failover set takes fresh clusters' addresses",
			snap: func(s *failover.Snapshot) { s.Failover.Addrs = nil },
			want: want{
				euA: []string{"192.0.2.1", "192.0.2.2"}, euAAAA: []string{"2001:db8::1"},
				foA: []string{"192.0.2.1", "192.0.2.2", "198.51.100.1"}, foAAAA: []string{"2001:db8::1", "2001:db8:1::1"},
				global: regional, held: []failover.HoldReason{failover.HoldUnread},
			},
		},
		{
			name: "failover set not read back: held, the rest goes on",
			snap: func(s *failover.Snapshot) { s.Failover = failover.Published{} },
			want: want{
				euA: []string{"192.0.2.1", "192.0.2.2"}, euAAAA: []string{"2001:db8::1"},
				global: regional, held: []failover.HoldReason{failover.HoldUnread, failover.HoldUnread},
			},
		},
		{
			name: "regional set not read back but every gateway observed: computed",
			snap: func(s *failover.Snapshot) { s.Regions[0].Regional = failover.Published{} },
			want: want{
				euA: []string{"192.0.2.1", "192.0.2.2"}, euAAAA: []string{"2001:db8::1"},
				foA: []string{"192.0.2.1", "192.0.2.2", "198.51.100.1"}, foAAAA: []string{"2001:db8::1", "2001:db8:1::1"},
				global: regional, held: []failover.HoldReason{failover.HoldUnread},
			},
		},
		{
			name: "a second eu cluster stale: region alive, its addresses out",
			snap: func(s *failover.Snapshot) {
				s.Clusters = append(s.Clusters, failover.Cluster{Name: "eu-2", Region: "eu", Local: failover.Stale, Global: failover.Stale,
					Gateways: []failover.Gateway{gw("d", failover.HealthUnknown, "192.0.2.9")}})
				s.Failover.Addrs = append(s.Failover.Addrs, ips("192.0.2.9")...)
				s.Regions[0].Regional.Addrs = append(s.Regions[0].Regional.Addrs, ips("192.0.2.9")...)
			},
			want: want{
				euA: []string{"192.0.2.1", "192.0.2.2"}, euAAAA: []string{"2001:db8::1"},
				foA: []string{"192.0.2.1", "192.0.2.2", "198.51.100.1"}, foAAAA: []string{"2001:db8::1", "2001:db8:1::1"},
				global: regional, held: []failover.HoldReason{failover.HoldUnread},
			},
		},
		{
			name: "a region without clusters is dead",
			snap: func(s *failover.Snapshot) {
				s.Regions = append(s.Regions, failover.Region{Name: "ap", Zone: "example.com"})
			},
			want: want{
				euA: []string{"192.0.2.1", "192.0.2.2"}, euAAAA: []string{"2001:db8::1"},
				foA: []string{"192.0.2.1", "192.0.2.2", "198.51.100.1"}, foAAAA: []string{"2001:db8::1", "2001:db8:1::1"},
				global: fover, failingOver: true,
				held: []failover.HoldReason{failover.HoldNoHealthy, failover.HoldUnread},
			},
		},
		{
			name: "every region dead, keep last: failover held, global at failover",
			snap: allDead,
			want: want{global: fover, failingOver: true,
				held: []failover.HoldReason{failover.HoldNoHealthy, failover.HoldNoHealthy, failover.HoldNoHealthy}},
		},
		{
			name: "every region dead, fail open: every address",
			cfg:  func(c *failover.TopologyConfig) { c.AllUnhealthy = failover.FailOpen },
			snap: allDead,
			want: want{
				euA: []string{"192.0.2.1", "192.0.2.2"}, euAAAA: []string{"2001:db8::1"},
				foA: []string{"192.0.2.1", "192.0.2.2", "198.51.100.1"}, foAAAA: []string{"2001:db8::1", "2001:db8:1::1"},
				global: fover, failingOver: true,
			},
		},
		{
			name: "every region dead, fail closed: withdraws",
			cfg:  func(c *failover.TopologyConfig) { c.AllUnhealthy = failover.FailClosed },
			snap: allDead,
			want: want{global: fover, failingOver: true,
				withdrawn: [][3]string{{"eu", regional, "A"}, {"us", regional, "AAAA"}, {"", fover, "A"}, {"", fover, "AAAA"}}},
		},
		{
			name: "every region dead, fallback: global points at the fallback target",
			cfg: func(c *failover.TopologyConfig) {
				c.AllUnhealthy, c.FallbackTarget = failover.Fallback, "sorry.example.net"
			},
			snap: allDead,
			want: want{global: "sorry.example.net.", failingOver: true,
				held: []failover.HoldReason{failover.HoldNoHealthy, failover.HoldNoHealthy, failover.HoldNoHealthy}},
		},
		{
			name: "fail open with an unknown cluster: the failover set is left to those who see it",
			cfg:  func(c *failover.TopologyConfig) { c.AllUnhealthy = failover.FailOpen },
			snap: func(s *failover.Snapshot) {
				allDead(s)
				s.Clusters[1].Local, s.Clusters[1].Global = failover.FreshnessUnknown, failover.FreshnessUnknown
			},
			want: want{
				euA: []string{"192.0.2.1", "192.0.2.2"}, euAAAA: []string{"2001:db8::1"},
				global: fover, failingOver: true,
				held: []failover.HoldReason{failover.HoldUndecided, failover.HoldUnread},
			},
		},
		{
			name: "fallback with one region unknown and the others dead: global held",
			cfg: func(c *failover.TopologyConfig) {
				c.AllUnhealthy, c.FallbackTarget = failover.Fallback, "sorry.example.net"
			},
			snap: func(s *failover.Snapshot) {
				allDead(s)
				s.Clusters[1].Local, s.Clusters[1].Global = failover.FreshnessUnknown, failover.FreshnessUnknown
			},
			want: want{
				foA: []string{"198.51.100.1"}, foAAAA: []string{"2001:db8:1::1"},
				failingOver: true,
				held:        []failover.HoldReason{failover.HoldUndecided, failover.HoldNoHealthy, failover.HoldUnread},
			},
		},
		{
			name: "one region dead, fallback: global still at the failover name",
			cfg: func(c *failover.TopologyConfig) {
				c.AllUnhealthy, c.FallbackTarget = failover.Fallback, "sorry.example.net"
			},
			snap: func(s *failover.Snapshot) { s.Clusters[1].Global = failover.Stale },
			want: want{
				euA: []string{"192.0.2.1", "192.0.2.2"}, euAAAA: []string{"2001:db8::1"},
				foA: []string{"192.0.2.1", "192.0.2.2"}, foAAAA: []string{"2001:db8::1"},
				global: fover, failingOver: true, held: []failover.HoldReason{failover.HoldUnread},
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var mods []func(*failover.TopologyConfig)
			if tc.cfg != nil {
				mods = append(mods, tc.cfg)
			}
			tp := topo(t, mods...)
			s := twoRegions()
			if tc.snap != nil {
				tc.snap(&s)
			}
			dec, err := tp.Decide(time.Time{}, s)
			require.NoError(t, err)
			d := dec.Desired
			assert.Equal(t, tc.want.euA, addrsOf(t, d, "eu", regional, "A"), "eu A")
			assert.Equal(t, tc.want.euAAAA, addrsOf(t, d, "eu", regional, "AAAA"), "eu AAAA")
			assert.Equal(t, tc.want.foA, addrsOf(t, d, "", fover, "A"), "failover A")
			assert.Equal(t, tc.want.foAAAA, addrsOf(t, d, "", fover, "AAAA"), "failover AAAA")
			assert.Equal(t, tc.want.global, target(d, global), "global target")
			assert.Equal(t, tc.want.global, dec.GlobalTarget)
			assert.Equal(t, tc.want.failingOver, dec.FailingOver)
			assert.Equal(t, global, target(d, "httpbin.example.com"), "app name")
			var held []failover.HoldReason
			for _, h := range dec.Held {
				held = append(held, h.Reason)
			}
			assert.Equal(t, tc.want.held, held, "held")
			for _, w := range tc.want.withdrawn {
				assert.True(t, d.Withdrawn(w[0], w[1], w[2]), "withdrawn %v", w)
			}
			assertWellFormed(t, d)
		})
	}
}

func allDead(s *failover.Snapshot) {
	for i := range s.Clusters {
		s.Clusters[i].Local, s.Clusters[i].Global = failover.Stale, failover.Stale
	}
	s.Clusters[0].Gateways[0].Health = failover.Critical
	s.Clusters[0].Gateways[1].Health = failover.Critical
}

func TestTopologyDesiredIsCanonical(t *testing.T) {
	tp := topo(t)
	s := twoRegions()
	d1, err := tp.Desired(s)
	require.NoError(t, err)
	slices.Reverse(s.Regions)
	slices.Reverse(s.Clusters)
	slices.Reverse(s.Failover.Addrs)
	d2, err := tp.Desired(s)
	require.NoError(t, err)
	assert.Equal(t, d1.String(), d2.String())
	assert.Equal(t, d1, d2)
}

func TestTopologyWriters(t *testing.T) {
	d, err := topo(t).Desired(twoRegions())
	require.NoError(t, err)
	for _, s := range d.Sets {
		if s.View == "eu" {
			assert.Equal(t, failover.RegionWriters("eu"), s.Writers)
			assert.Equal(t, "local.example.com.", s.Zone)
		} else {
			assert.Equal(t, failover.Everyone, s.Writers, s.Name)
			assert.Equal(t, "example.com.", s.Zone)
		}
	}
	us := d.WrittenBy("us")
	for _, s := range us.Sets {
		assert.Equal(t, "", s.View)
	}
	assert.Len(t, d.WrittenBy("eu").Sets, len(d.Sets))
	s, ok := d.Lookup("eu", "EDGE.local.example.com", "A")
	require.True(t, ok)
	assert.Equal(t, "edge", s.Records[0].RR().Name)
}

func TestTopologySnapshotErrors(t *testing.T) {
	cases := []struct {
		name  string
		field string
		mod   func(*failover.Snapshot)
	}{
		{"no region", "regions", func(s *failover.Snapshot) { s.Regions, s.Clusters = nil, nil }},
		{"empty region name", "regions[0].name", func(s *failover.Snapshot) { s.Regions[0].Name = "" }},
		{"duplicate region", "regions[1].name", func(s *failover.Snapshot) { s.Regions[1].Name = "eu" }},
		{"zone outside", "regions[0].zone", func(s *failover.Snapshot) { s.Regions[0].Zone = "example.net" }},
		{"bad zone", "regions[0].zone", func(s *failover.Snapshot) { s.Regions[0].Zone = "exa mple" }},
		{"unknown region", "clusters[1].region", func(s *failover.Snapshot) { s.Clusters[1].Region = "ap" }},
		{"duplicate cluster", "clusters[1].name", func(s *failover.Snapshot) { s.Clusters[1].Name = "eu-1" }},
		{"invalid address", "clusters[0].gateways[0].addrs[0]", func(s *failover.Snapshot) { s.Clusters[0].Gateways[0].Addrs[0] = netip.Addr{} }},
		{"unspecified address", "clusters[0].gateways[0].addrs[0]", func(s *failover.Snapshot) { s.Clusters[0].Gateways[0].Addrs[0] = netip.IPv4Unspecified() }},
		{"address in two clusters", "clusters[1].gateways[0].addrs[0]", func(s *failover.Snapshot) {
			s.Clusters[1].Gateways[0].Addrs[0] = netip.MustParseAddr("::ffff:192.0.2.1")
		}},
		{"bad health", "clusters[0].gateways[0].health", func(s *failover.Snapshot) { s.Clusters[0].Gateways[0].Health = 9 }},
		{"bad freshness", "clusters[0].local/global", func(s *failover.Snapshot) { s.Clusters[0].Global = 7 }},
		{"negative rtt", "clusters[0].gateways[0].rtt", func(s *failover.Snapshot) { s.Clusters[0].Gateways[0].RTT = -time.Millisecond }},
		{"more reported healthy than total", "clusters[1].reported", func(s *failover.Snapshot) {
			s.Clusters[1].Reported = failover.GatewaySummary{Healthy: 3, Total: 2}
		}},
		{"healthy without total", "clusters[1].reported", func(s *failover.Snapshot) { s.Clusters[1].Reported.Healthy = 1 }},
		{"negative total", "clusters[1].reported", func(s *failover.Snapshot) { s.Clusters[1].Reported.Total = -1 }},
	}
	tp := topo(t)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := twoRegions()
			tc.mod(&s)
			_, err := tp.Decide(time.Time{}, s)
			require.ErrorIs(t, err, failover.ErrInvalidSnapshot)
			var fe *failover.FieldError
			require.True(t, errors.As(err, &fe))
			assert.Equal(t, tc.field, fe.Path)
			assert.Contains(t, err.Error(), tc.field)
		})
	}
}

func TestTopologyConfigValidate(t *testing.T) {
	cases := []struct {
		name  string
		field string // "" = valid
		mod   func(*failover.TopologyConfig)
	}{
		{"default with names", "", func(*failover.TopologyConfig) {}},
		{"missing service", "service", func(c *failover.TopologyConfig) { c.Service = "" }},
		{"service with dot", "service", func(c *failover.TopologyConfig) { c.Service = "a.b" }},
		{"missing domain", "domain", func(c *failover.TopologyConfig) { c.Domain = "" }},
		{"bad global label", "globalLabel", func(c *failover.TopologyConfig) { c.GlobalLabel = "-x" }},
		{"same labels", "localLabel", func(c *failover.TopologyConfig) { c.LocalLabel = "GLOBAL" }},
		{"bad prefix", "failoverPrefix", func(c *failover.TopologyConfig) { c.FailoverPrefix = "a.b" }},
		{"dotted prefix", "failoverPrefix", func(c *failover.TopologyConfig) { c.FailoverPrefix = "a." }},
		{"negative ttl", "ttl", func(c *failover.TopologyConfig) { c.TTL = -time.Second }},
		{"fractional ttl", "ttl", func(c *failover.TopologyConfig) { c.TTL = 1500 * time.Millisecond }},
		{"huge ttl", "ttl", func(c *failover.TopologyConfig) { c.TTL = 25 * time.Hour }},
		{"bad mode", "allUnhealthy", func(c *failover.TopologyConfig) { c.AllUnhealthy = 9 }},
		{"fallback without target", "fallbackTarget", func(c *failover.TopologyConfig) { c.AllUnhealthy = failover.Fallback }},
		{"target without fallback", "fallbackTarget", func(c *failover.TopologyConfig) { c.FallbackTarget = "x.example" }},
		{"global zone below the names", "globalZone", func(c *failover.TopologyConfig) { c.GlobalZone = "edge.global.example.com" }},
		{"global zone elsewhere", "globalZone", func(c *failover.TopologyConfig) { c.GlobalZone = "example.net" }},
		{"global zone ok", "", func(c *failover.TopologyConfig) { c.GlobalZone = "global.example.com" }},
		{"app at apex", "appNames[0].zone", func(c *failover.TopologyConfig) {
			c.AppNames = []failover.AppName{{Name: "example.com"}}
		}},
		{"app in other zone", "", func(c *failover.TopologyConfig) {
			c.AppNames = []failover.AppName{{Name: "www.example.org", Zone: "example.org"}}
		}},
		{"app outside zone", "appNames[0].zone", func(c *failover.TopologyConfig) {
			c.AppNames = []failover.AppName{{Name: "www.example.org"}}
		}},
		{"app is the global name", "appNames[0].name", func(c *failover.TopologyConfig) {
			c.AppNames = []failover.AppName{{Name: "edge.global.example.com"}}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := failover.DefaultTopologyConfig()
			cfg.Service, cfg.Domain = "edge", "example.com"
			tc.mod(&cfg)
			err := cfg.Validate()
			_, nerr := failover.NewTopology(cfg)
			if tc.field == "" {
				require.NoError(t, err)
				require.NoError(t, nerr)
				return
			}
			require.ErrorIs(t, err, failover.ErrInvalidConfig)
			require.ErrorIs(t, nerr, failover.ErrInvalidConfig)
			var fe *failover.FieldError
			require.True(t, errors.As(err, &fe))
			assert.Equal(t, tc.field, fe.Path)
			assert.NotEmpty(t, fe.Allowed)
		})
	}
}

func TestTopologyConfigJSON(t *testing.T) {
	in := `{"service":"edge","domain":"example.com","globalLabel":"global","localLabel":"local",
		"failoverPrefix":"global-","ttl":"15s","allUnhealthy":"fallback","fallbackTarget":"sorry.example.net",
		"appNames":[{"name":"www.example.com"}]}`
	var cfg failover.TopologyConfig
	require.NoError(t, json.Unmarshal([]byte(in), &cfg))
	require.NoError(t, cfg.Validate())
	assert.Equal(t, failover.Fallback, cfg.AllUnhealthy)
	assert.Equal(t, 15*time.Second, cfg.TTL)
	out, err := json.Marshal(cfg)
	require.NoError(t, err)
	var back failover.TopologyConfig
	require.NoError(t, json.Unmarshal(out, &back))
	assert.Equal(t, cfg, back)
	require.Error(t, json.Unmarshal([]byte(`{"allUnhealthy":"sometimes"}`), &cfg))
}

func TestNewTopologyDoesNotMutate(t *testing.T) {
	cfg := failover.DefaultTopologyConfig()
	cfg.Service, cfg.Domain = "edge", "Example.COM"
	cfg.AppNames = []failover.AppName{{Name: "WWW.example.com"}}
	cfg.AllUnhealthy, cfg.FallbackTarget = failover.Fallback, "sorry.example.net"
	keep := cfg
	keep.AppNames = slices.Clone(cfg.AppNames)
	tp, err := failover.NewTopology(cfg)
	require.NoError(t, err)
	assert.Equal(t, keep, cfg)
	assert.Equal(t, "edge.global.example.com.", tp.GlobalName())
	assert.Equal(t, "global-edge.global.example.com.", tp.FailoverName())
	assert.Equal(t, "edge.local.example.com.", tp.RegionalName())
	assert.Equal(t, "example.com.", tp.GlobalZone())
	assert.Equal(t, "sorry.example.net", tp.Config().FallbackTarget)
}

func TestDecisionRegions(t *testing.T) {
	s := twoRegions()
	s.Clusters[1].Global = failover.Stale
	s.Regions = append(s.Regions, failover.Region{Name: "ap", Zone: "local.example.com"})
	s.Clusters = append(s.Clusters, failover.Cluster{Name: "ap-1", Region: "ap", Gateways: []failover.Gateway{gw("e", failover.HealthUnknown, "203.0.113.1")}})
	dec, err := topo(t).Decide(time.Time{}, s)
	require.NoError(t, err)
	require.Len(t, dec.Regions, 3)
	assert.Equal(t, failover.RegionOutcome{Name: "eu", State: failover.RegionAlive, Regional: ips("192.0.2.1", "192.0.2.2", "2001:db8::1")}, dec.Regions[0])
	assert.Equal(t, failover.RegionOutcome{Name: "us", State: failover.RegionDead}, dec.Regions[1])
	assert.Equal(t, failover.RegionOutcome{Name: "ap", State: failover.RegionUnknown}, dec.Regions[2])
	assert.Equal(t, ips("192.0.2.1", "192.0.2.2", "2001:db8::1"), dec.Failover, "us stale and ap unknown (unpublished) are out")
	assert.True(t, dec.FailingOver)
	assert.Equal(t, fover, dec.GlobalTarget)
}

func TestZeroConfigsTakeDefaults(t *testing.T) {
	tp, err := failover.NewTopology(failover.TopologyConfig{Service: "edge", Domain: "example.com"})
	require.NoError(t, err)
	want := failover.DefaultTopologyConfig()
	want.Service, want.Domain = "edge", "example.com"
	want.AppNames = []failover.AppName{}
	got := tp.Config()
	require.Equal(t, want.TTL, got.TTL)
	require.Equal(t, "global-edge.global.example.com.", tp.FailoverName())

	_, err = failover.NewTopology(failover.TopologyConfig{})
	var fe *failover.FieldError
	require.ErrorAs(t, err, &fe)
	require.ErrorIs(t, err, failover.ErrInvalidConfig)
	require.Contains(t, fe.Allowed, "DefaultTopologyConfig")

	rp, err := failover.NewRecordPolicy(failover.RecordConfig{})
	require.NoError(t, err)
	name, err := rp.PoolName(failover.Record{Name: "api.example.com", Zone: "example.com", TTL: time.Minute})
	require.NoError(t, err)
	require.Equal(t, "api.pool.example.com.", name)
}

func TestTopologyConfigTTLJSON(t *testing.T) {
	c := failover.DefaultTopologyConfig()
	c.Service, c.Domain = "edge", "example.com"
	b, err := json.Marshal(c)
	require.NoError(t, err)
	require.Contains(t, string(b), `"ttl":"30s"`)
	var back failover.TopologyConfig
	require.NoError(t, json.Unmarshal(b, &back))
	require.Equal(t, c, back)
}

// TestPanicThreshold: below the threshold a region's regional record
// holds the other regions' failover addresses; at or above it, its own.
func TestPanicThreshold(t *testing.T) {
	cfg := failover.DefaultTopologyConfig()
	cfg.Service, cfg.Domain, cfg.PanicThreshold = "edge", "example.com", 50
	tp, err := failover.NewTopology(cfg)
	require.NoError(t, err)
	a := func(s string) netip.Addr { return netip.MustParseAddr(s) }
	snap := func(up int) failover.Snapshot {
		var gws []failover.Gateway
		for i := range 4 {
			h := failover.Critical
			if i < up {
				h = failover.Passing
			}
			gws = append(gws, failover.Gateway{Name: fmt.Sprint("us", i), Addrs: []netip.Addr{a(fmt.Sprintf("192.0.2.%d", i+1))}, Health: h})
		}
		return failover.Snapshot{
			Regions: []failover.Region{{Name: "us", Zone: "local.example.com", Regional: failover.Published{Read: true}},
				{Name: "eu", Zone: "local.example.com"}},
			Clusters: []failover.Cluster{
				{Name: "us-1", Region: "us", Local: failover.Fresh, Global: failover.Fresh, Gateways: gws},
				{Name: "eu-1", Region: "eu", Global: failover.Fresh, Gateways: []failover.Gateway{{Name: "eu0", Addrs: []netip.Addr{a("198.51.100.1")}}}},
			},
			Failover: failover.Published{Read: true, Addrs: []netip.Addr{a("198.51.100.1")}},
		}
	}
	dec, err := tp.Decide(time.Time{}, snap(2))
	require.NoError(t, err)
	assert.False(t, dec.Regions[0].Panic, "2 of 4 is 50 %: not below")
	assert.Equal(t, []netip.Addr{a("192.0.2.1"), a("192.0.2.2")}, dec.Regions[0].Regional)
	dec, err = tp.Decide(time.Time{}, snap(1))
	require.NoError(t, err)
	assert.True(t, dec.Regions[0].Panic)
	assert.Equal(t, []netip.Addr{a("198.51.100.1")}, dec.Regions[0].Regional, "the region moves on")
	cfg.PanicThreshold = 101
	assert.ErrorIs(t, cfg.Validate(), failover.ErrInvalidConfig)
}

// TestTopologyReadsNoLatencyOrSummary: the CNAME topology decides on
// health and beats alone; measured RTTs and the beats' gateway summaries
// are there for users' Deciders and change nothing in its Decision.
func TestTopologyReadsNoLatencyOrSummary(t *testing.T) {
	tp := topo(t)
	s := twoRegions()
	want, err := tp.Decide(time.Time{}, s)
	require.NoError(t, err)
	for i := range s.Clusters {
		s.Clusters[i].Reported = failover.GatewaySummary{Healthy: 1, Total: 2}
		for j := range s.Clusters[i].Gateways {
			s.Clusters[i].Gateways[j].RTT = time.Duration(i+j+1) * 10 * time.Millisecond
		}
	}
	got, err := tp.Decide(time.Time{}, s)
	require.NoError(t, err)
	assert.Equal(t, want, got)
	assert.True(t, s.Clusters[0].Reported.Known())
	assert.False(t, failover.GatewaySummary{}.Known())
}
