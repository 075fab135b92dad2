package failover_test

import (
	"encoding/json"
	"net/netip"
	"testing"

	"github.com/libdns/libdns"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gslbkit/gslb/failover"
)

func geoMap() failover.GeoMap {
	p := netip.MustParsePrefix
	return failover.GeoMap{
		Prefixes: map[netip.Prefix]string{
			p("10.0.0.0/8"):      "us",
			p("10.1.0.0/16"):     "eu",
			p("10.1.2.0/24"):     "ap",
			p("2001:db8::/32"):   "us",
			p("2001:db8:e::/48"): "eu",
		},
		Preferences: map[string][]string{"eu": {"us", "ap"}, "ap": {"eu"}, "us": {"us", "eu"}},
	}
}

func TestLocate(t *testing.T) {
	loc, err := failover.NewLocator(geoMap())
	require.NoError(t, err)
	cases := []struct {
		client string
		want   string
		ok     bool
	}{
		{"10.9.9.9/32", "us", true},
		{"10.1.9.9/32", "eu", true},
		{"10.1.2.3/32", "ap", true},
		{"10.1.2.0/24", "ap", true},
		{"10.1.0.0/16", "eu", true},
		{"10.1.0.0/15", "us", true},
		{"10.0.0.0/7", "", false},
		{"::ffff:10.1.2.3/128", "ap", true},
		{"::ffff:10.1.0.0/112", "eu", true},
		{"2001:db8:e:1::1/128", "eu", true},
		{"2001:db8:e::/56", "eu", true},
		{"2001:db8:f::/56", "us", true},
		{"192.0.2.1/32", "", false},
	}
	for _, tc := range cases {
		t.Run(tc.client, func(t *testing.T) {
			got, ok := loc.Locate(netip.MustParsePrefix(tc.client))
			assert.Equal(t, tc.ok, ok)
			assert.Equal(t, tc.want, got)
		})
	}
	_, ok := loc.Locate(netip.Prefix{})
	assert.False(t, ok)
	var nilLoc *failover.Locator
	_, ok = nilLoc.Locate(netip.MustParsePrefix("10.0.0.1/32"))
	assert.False(t, ok)

	g := geoMap()
	g.Default = "eu"
	loc, err = failover.NewLocator(g)
	require.NoError(t, err)
	got, ok := loc.Locate(netip.MustParsePrefix("192.0.2.1/32"))
	assert.True(t, ok)
	assert.Equal(t, "eu", got)
	assert.Equal(t, []string{"us", "eu"}, loc.Preferences("us"), "a region is not listed twice")
	assert.Equal(t, []string{"eu", "us", "ap"}, loc.Preferences("eu"))
	assert.Equal(t, []string{"zz"}, loc.Preferences("zz"))
}

func TestGeoAndRegionFilter(t *testing.T) {
	loc, err := failover.NewLocator(geoMap())
	require.NoError(t, err)
	tags := map[netip.Addr][]string{
		netip.MustParseAddr("192.0.2.1"):   {"us"},
		netip.MustParseAddr("192.0.2.2"):   {"eu"},
		netip.MustParseAddr("2001:db8::2"): {"eu", "ap"},
		netip.MustParseAddr("192.0.2.3"):   {"ap"},
	}
	geo, filter := failover.Geo(loc, tags), failover.RegionFilter(loc, tags)
	cases := []struct {
		name, client string
		rrs          []string
		geo, filter  []string
	}{
		{"eu client gets eu", "10.1.0.1/32", []string{"192.0.2.1", "192.0.2.2", "192.0.2.3"}, []string{"192.0.2.2"}, []string{"192.0.2.2"}},
		{"eu gone: next preference us", "10.1.0.1/32", []string{"192.0.2.1", "192.0.2.3"}, []string{"192.0.2.1"}, nil},
		{"ap client, ap and eu tags", "10.1.2.0/24", []string{"2001:db8::2", "192.0.2.2"}, []string{"2001:db8::2"}, []string{"2001:db8::2"}},
		{"ap gone: eu", "10.1.2.0/24", []string{"192.0.2.1", "192.0.2.2"}, []string{"192.0.2.2"}, nil},
		{"no preferred region left: no opinion", "10.1.2.0/24", []string{"192.0.2.1"}, nil, nil},
		{"unplaced client: no opinion", "192.0.2.200/32", []string{"192.0.2.1", "192.0.2.2"}, nil, nil},
		{"untagged address never matches", "10.9.0.1/32", []string{"198.51.100.1"}, nil, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			client := netip.MustParsePrefix(tc.client)
			rrs := addrRecs(tc.rrs...)
			assert.Equal(t, tc.geo, datas(rrsOf(geo(client, "www.example.com.", "A", rrs))), "geo")
			assert.Equal(t, tc.filter, datas(rrsOf(filter(client, "www.example.com.", "A", rrs))), "region filter")
			assert.Equal(t, tc.rrs, datas(rrs), "rrs not modified")
		})
	}
}

func TestChain(t *testing.T) {
	loc, err := failover.NewLocator(geoMap())
	require.NoError(t, err)
	tags := map[netip.Addr][]string{
		netip.MustParseAddr("192.0.2.1"): {"eu"},
		netip.MustParseAddr("192.0.2.2"): {"eu"},
		netip.MustParseAddr("192.0.2.3"): {"us"},
	}
	f := failover.Chain(failover.Geo(loc, tags), nil, failover.RoundRobin())
	rrs := addrRecs("192.0.2.1", "192.0.2.2", "192.0.2.3")
	eu := netip.MustParsePrefix("10.1.0.1/32")
	assert.Equal(t, []string{"192.0.2.1", "192.0.2.2"}, datas(rrsOf(f(eu, "", "A", rrs))))
	assert.Equal(t, []string{"192.0.2.2", "192.0.2.1"}, datas(rrsOf(f(eu, "", "A", rrs))))
	// Geo has no opinion for an unplaced client: round robin over everything.
	out := rrsOf(f(netip.MustParsePrefix("192.0.2.99/32"), "", "A", rrs))
	assert.Len(t, out, 3)
	assert.Nil(t, rrsOf(failover.Chain()(eu, "", "A", rrs)))
	assert.Nil(t, rrsOf(failover.Chain(failover.RoundRobin())(eu, "", "CNAME", []libdns.Record{libdns.CNAME{Name: "x", Target: "y."}})))
}

func TestGeoMapValidate(t *testing.T) {
	p := netip.MustParsePrefix
	cases := []struct {
		name  string
		field string
		g     failover.GeoMap
	}{
		{"zero", "", failover.GeoMap{}},
		{"host bits set", "prefixes[10.1.2.3/16]", failover.GeoMap{Prefixes: map[netip.Prefix]string{p("10.1.2.3/16"): "eu"}}},
		{"mapped v4", "prefixes[::ffff:10.0.0.0/104]", failover.GeoMap{Prefixes: map[netip.Prefix]string{p("::ffff:10.0.0.0/104"): "eu"}}},
		{"empty region", "prefixes[10.0.0.0/8]", failover.GeoMap{Prefixes: map[netip.Prefix]string{p("10.0.0.0/8"): ""}}},
		{"empty preference key", "preferences", failover.GeoMap{Preferences: map[string][]string{"": {"eu"}}}},
		{"duplicate preference", "preferences[eu][1]", failover.GeoMap{Preferences: map[string][]string{"eu": {"us", "us"}}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.g.Validate()
			_, nerr := failover.NewLocator(tc.g)
			if tc.field == "" {
				require.NoError(t, err)
				require.NoError(t, nerr)
				return
			}
			var fe *failover.FieldError
			require.ErrorAs(t, err, &fe)
			assert.Equal(t, tc.field, fe.Path)
			require.ErrorIs(t, nerr, failover.ErrInvalidConfig)
		})
	}
	var g failover.GeoMap
	require.NoError(t, json.Unmarshal([]byte(`{"prefixes":{"10.0.0.0/8":"us","2001:db8::/32":"eu"},"preferences":{"us":["eu"]},"default":"us"}`), &g))
	require.NoError(t, g.Validate())
	assert.Equal(t, "eu", g.Prefixes[p("2001:db8::/32")])
}
