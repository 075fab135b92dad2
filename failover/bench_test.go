package failover_test

import (
	"math/rand/v2"
	"net/netip"
	"testing"
	"time"

	"github.com/libdns/libdns"

	"github.com/gslbkit/gslb/failover"
)

// BenchmarkTopologyDecide: 10 regions × 10 clusters × 10 gateways, each
// with an IPv4 and an IPv6 address (2,000 addresses), seen by one
// cluster's controller that observes its own 10 gateways and copies the
// rest from the published sets.
func BenchmarkTopologyDecide(b *testing.B) {
	w := newWorld(b, 10, 10, 10)
	w.round(b, nil)
	s := w.snapshot(w.clusters[0])
	b.ReportAllocs()
	for b.Loop() {
		if _, err := w.topo.Decide(time.Time{}, s); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkTopologyDecideCentral: the same deployment seen by a controller
// that observes every gateway (no published state needed).
func BenchmarkTopologyDecideCentral(b *testing.B) {
	w := newWorld(b, 10, 10, 10)
	s := w.snapshot(w.clusters[0])
	for i := range s.Clusters {
		for j := range s.Clusters[i].Gateways {
			s.Clusters[i].Gateways[j].Health = failover.Passing
		}
		s.Clusters[i].Local = failover.Fresh
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := w.topo.Decide(time.Time{}, s); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRecordProvider(b *testing.B) {
	p, err := failover.NewRecordPolicy(failover.DefaultRecordConfig())
	if err != nil {
		b.Fatal(err)
	}
	r := failover.Record{Name: "api.gslb.example.com", Zone: "gslb.example.com", TTL: time.Minute}
	for i := 0; i < 100; i++ {
		h := failover.Passing
		if i%7 == 0 {
			h = failover.Critical
		}
		r.Endpoints = append(r.Endpoints, failover.Endpoint{IP: netip.AddrFrom4([4]byte{192, 0, 2, byte(i)}), Health: h, Regions: []string{"eu"}})
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.Provider(r); err != nil {
			b.Fatal(err)
		}
	}
}

func benchRRs() ([]libdns.Record, map[netip.Addr][]string, map[netip.Addr]int) {
	var rrs []libdns.Record
	tags, weights := map[netip.Addr][]string{}, map[netip.Addr]int{}
	regions := []string{"us", "eu", "ap"}
	for i := 0; i < 12; i++ {
		a := netip.AddrFrom4([4]byte{192, 0, 2, byte(i + 1)})
		rrs = append(rrs, libdns.Address{Name: "www", TTL: time.Minute, IP: a})
		tags[a] = []string{regions[i%3]}
		weights[a] = i % 4
	}
	return rrs, tags, weights
}

// BenchmarkAnswer measures one per-query decision of each answer function
// over 12 address records.
func BenchmarkAnswer(b *testing.B) {
	loc, err := failover.NewLocator(geoMap())
	if err != nil {
		b.Fatal(err)
	}
	rrs, tags, weights := benchRRs()
	client := netip.MustParsePrefix("10.1.2.0/24")
	for _, bc := range []struct {
		name string
		f    failover.AnswerFunc
	}{
		{"roundRobin", failover.RoundRobin()},
		{"weightedRandom", failover.WeightedRandom(weights, rand.NewPCG(1, 2))},
		{"geo", failover.Geo(loc, tags)},
		{"regionFilter", failover.RegionFilter(loc, tags)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if len(rrsOf(bc.f(client, "www.example.com.", "A", rrs))) == 0 {
					b.Fatal("no answer")
				}
			}
		})
	}
}

func BenchmarkLocate(b *testing.B) {
	loc, err := failover.NewLocator(geoMap())
	if err != nil {
		b.Fatal(err)
	}
	client := netip.MustParsePrefix("2001:db8:e:1::/64")
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := loc.Locate(client); !ok {
			b.Fatal("not placed")
		}
	}
}

// BenchmarkLocateScope places clients by 1,024 /24s (every other one of
// 10.0.0.0/13) and 10.5.0.0/16 around 128 of them, with a default region: a
// client of a /24 (the common case: the longest match has nothing inside
// it), one of 10.5.0.0/16 between two /24s (the scope has to leave them
// out), and two no prefix matches, far from the map and near it (the
// widest network holding none).
func BenchmarkLocateScope(b *testing.B) {
	g := failover.GeoMap{Prefixes: map[netip.Prefix]string{netip.MustParsePrefix("10.5.0.0/16"): "eu"}, Default: "us"}
	for i := 0; i < 2048; i += 2 {
		g.Prefixes[netip.PrefixFrom(netip.AddrFrom4([4]byte{10, byte(i >> 8), byte(i), 0}), 24)] = []string{"us", "eu", "ap"}[i%3]
	}
	loc, err := failover.NewLocator(g)
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct{ name, client string }{{"mapped", "10.1.2.0/24"}, {"inner", "10.5.3.0/24"}, {"unmapped", "192.0.2.0/24"}, {"unmapped-near", "10.20.0.0/24"}} {
		client := netip.MustParsePrefix(c.client)
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				_, _, _ = loc.LocateScope(client)
			}
		})
	}
}
