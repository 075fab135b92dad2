package failover_test

import (
	"context"
	"net/netip"
	"slices"
	"testing"

	"github.com/libdns/libdns"
	"github.com/miekg/dns"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gslbkit/gslb/failover"
	"github.com/gslbkit/gslb/provider/memory"
)

// Compile-time check: the answer functions convert to the memory zone's
// hook type and back.
var (
	_ memory.AnswerFunc   = memory.AnswerFunc(failover.RoundRobin())
	_ failover.AnswerFunc = failover.AnswerFunc(memory.AnswerFunc(nil))
)

// splitHorizon is one embedded DNS server per region, each holding its own
// copy of example.com: the global names (written by everyone) plus the
// region's own regional record.
type splitHorizon map[string]*memory.Provider

func newSplitHorizon(t *testing.T, regions ...string) splitHorizon {
	sh := splitHorizon{}
	for _, r := range regions {
		p, err := memory.New(memory.DefaultConfig())
		require.NoError(t, err)
		require.NoError(t, p.AddZone("example.com."))
		sh[r] = p
	}
	return sh
}

// publish writes what region writer writes of d: the shared sets to every
// server, the regional sets to their region's server.
func (sh splitHorizon) publish(t *testing.T, d failover.DesiredState, writer string) {
	ctx := context.Background()
	for _, s := range d.WrittenBy(writer).Sets {
		for region, p := range sh {
			if s.View == "" || s.View == region {
				_, err := p.SetRecords(ctx, s.Zone, s.Records)
				require.NoError(t, err)
			}
		}
	}
	for _, w := range d.WrittenBy(writer).Withdraws {
		for region, p := range sh {
			if w.View != "" && w.View != region {
				continue
			}
			recs, err := p.GetRecords(ctx, w.Zone)
			require.NoError(t, err)
			var del []libdns.Record
			for _, r := range recs {
				if rr := r.RR(); rr.Name == w.RelativeName() && (w.Type == "" || rr.Type == w.Type) {
					del = append(del, r)
				}
			}
			_, err = p.DeleteRecords(ctx, w.Zone, del)
			require.NoError(t, err)
		}
	}
}

// resolve asks region's server for name's A records from src, following the
// CNAME chain inside the zone, and returns the addresses.
func (sh splitHorizon) resolve(t *testing.T, region, name string, src netip.Addr) []string {
	m := new(dns.Msg)
	m.SetQuestion(name, dns.TypeA)
	resp := sh[region].Respond(m, src, false)
	require.NotNil(t, resp)
	require.Equal(t, dns.RcodeSuccess, resp.Rcode, "rcode for %s in %s", name, region)
	var out []string
	for _, rr := range resp.Answer {
		if a, ok := rr.(*dns.A); ok {
			out = append(out, a.A.String())
		}
	}
	slices.Sort(out)
	return out
}

// TestEmbeddedZoneScenarios publishes the topology into per-region
// embedded zones and resolves the app name the way clients in each region
// would: scenario 1 (each region gets its own gateways), scenario 3 (a
// region gone: its clients get the other region's), recovery, and a geo
// hook on the failover name choosing by client address.
func TestEmbeddedZoneScenarios(t *testing.T) {
	tp := topo(t)
	sh := newSplitHorizon(t, "eu", "us")
	app := "httpbin.example.com."
	euClient, usClient := netip.MustParseAddr("10.1.0.5"), netip.MustParseAddr("10.9.0.5")

	snap := func(euBeat failover.Freshness) failover.Snapshot {
		s := failover.Snapshot{
			Regions: []failover.Region{
				{Name: "eu", Zone: "example.com", Regional: failover.Published{Read: true}},
				{Name: "us", Zone: "example.com", Regional: failover.Published{Read: true}},
			},
			Clusters: []failover.Cluster{
				{Name: "eu-1", Region: "eu", Local: euBeat, Global: euBeat, Gateways: []failover.Gateway{
					gw("eu-a", failover.Passing, "192.0.2.1"), gw("eu-b", failover.Passing, "192.0.2.2"),
				}},
				{Name: "us-1", Region: "us", Local: failover.Fresh, Global: failover.Fresh, Gateways: []failover.Gateway{
					gw("us-a", failover.Passing, "198.51.100.1"),
				}},
			},
			Failover: failover.Published{Read: true},
		}
		if euBeat == failover.Stale { // eu's controllers are gone: nobody observes its gateways
			for i := range s.Clusters[0].Gateways {
				s.Clusters[0].Gateways[i].Health = failover.HealthUnknown
			}
		}
		return s
	}

	// Scenario 1: all healthy.
	d, err := tp.Desired(snap(failover.Fresh))
	require.NoError(t, err)
	sh.publish(t, d, "eu")
	sh.publish(t, d, "us")
	assert.Equal(t, []string{"192.0.2.1", "192.0.2.2"}, sh.resolve(t, "eu", app, euClient))
	assert.Equal(t, []string{"198.51.100.1"}, sh.resolve(t, "us", app, usClient))
	assert.Equal(t, []string{"192.0.2.1", "192.0.2.2", "198.51.100.1"}, sh.resolve(t, "eu", fover, euClient))

	// A geo hook on the failover name: the nearest region's gateways.
	loc, err := failover.NewLocator(failover.GeoMap{
		Prefixes:    map[netip.Prefix]string{netip.MustParsePrefix("10.1.0.0/16"): "eu", netip.MustParsePrefix("10.9.0.0/16"): "us"},
		Preferences: map[string][]string{"eu": {"us"}, "us": {"eu"}},
	})
	require.NoError(t, err)
	tags := map[netip.Addr][]string{}
	for _, c := range snap(failover.Fresh).Clusters {
		for _, g := range c.Gateways {
			for _, a := range g.Addrs {
				tags[a] = []string{c.Region}
			}
		}
	}
	for _, p := range sh {
		p.SetAnswerFunc(fover, memory.AnswerFunc(failover.Geo(loc, tags)))
	}
	assert.Equal(t, []string{"192.0.2.1", "192.0.2.2"}, sh.resolve(t, "us", fover, euClient))
	assert.Equal(t, []string{"198.51.100.1"}, sh.resolve(t, "eu", fover, usClient))

	// Scenario 3: eu is gone, controllers included. us's controllers see its
	// beats stale and flip the global name; eu's clients, still asking eu's
	// server (whose regional record nobody can update), reach us.
	d, err = tp.Desired(snap(failover.Stale))
	require.NoError(t, err)
	sh.publish(t, d, "us")
	assert.Equal(t, []string{"198.51.100.1"}, sh.resolve(t, "eu", app, euClient))
	assert.Equal(t, []string{"198.51.100.1"}, sh.resolve(t, "us", app, usClient))
	assert.Equal(t, []string{"192.0.2.1", "192.0.2.2"}, sh.resolve(t, "eu", regional, euClient), "eu's regional record held, not emptied")

	// Recovery: eu's controllers are back and the global name points home.
	d, err = tp.Desired(snap(failover.Fresh))
	require.NoError(t, err)
	sh.publish(t, d, "eu")
	assert.Equal(t, []string{"192.0.2.1", "192.0.2.2"}, sh.resolve(t, "eu", app, euClient))
	assert.Equal(t, []string{"198.51.100.1"}, sh.resolve(t, "us", app, usClient))
}

// TestEmbeddedRecordTypeSwitch: the embedded output of a record switches
// between A and a CNAME to the failover FQDN and back, each in one
// SetRecords call, which the embedded zone applies atomically.
func TestEmbeddedRecordTypeSwitch(t *testing.T) {
	sh := newSplitHorizon(t, "any")
	pol := recPolicy(t)
	r := failover.Record{Name: "api.example.com", Zone: "example.com", TTL: 30e9, FailoverFQDN: "backup.example.com",
		Endpoints: []failover.Endpoint{ep("192.0.2.7", failover.Passing)}}
	backup := failover.DesiredState{Sets: []failover.DesiredSet{{Zone: "example.com.", Name: "backup.example.com.", Type: "A", TTL: 30e9,
		Records: []libdns.Record{libdns.Address{Name: "backup", TTL: 30e9, IP: netip.MustParseAddr("203.0.113.9")}}}}}
	sh.publish(t, backup, "")
	src := netip.MustParseAddr("10.0.0.1")

	d, err := pol.Embedded(r)
	require.NoError(t, err)
	sh.publish(t, d, "")
	assert.Equal(t, []string{"192.0.2.7"}, sh.resolve(t, "any", "api.example.com.", src))

	r.Endpoints[0].Health = failover.Critical
	d, err = pol.Embedded(r)
	require.NoError(t, err)
	// The switch: the embedded zone replaces the A set by the CNAME in one
	// SetRecords call.
	sh.publish(t, d, "")
	assert.Equal(t, []string{"203.0.113.9"}, sh.resolve(t, "any", "api.example.com.", src))

	r.Endpoints[0].Health = failover.Warning
	d, err = pol.Embedded(r)
	require.NoError(t, err)
	sh.publish(t, d, "")
	assert.Equal(t, []string{"192.0.2.7"}, sh.resolve(t, "any", "api.example.com.", src))
}
