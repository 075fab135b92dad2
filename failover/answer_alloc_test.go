package failover_test

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"net/netip"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/libdns/libdns"

	"github.com/gslbkit/gslb/failover"
)

// dynamicFixture is the shape of the dynamic benchmark: a weighted name
// with 4 addresses of weights 1/2/3/4, and a geo table of 1,024 prefixes
// mapped to 3 regions of 2 addresses each, the addresses interleaved in the
// zone's order (so an answer is not a contiguous run of the records).
func dynamicFixture(t testing.TB) (weighted, geo failover.AnswerFunc, wrrs, grrs []libdns.Record, clients []netip.Prefix) {
	weights := map[netip.Addr]int{}
	for i := range 4 {
		a := netip.AddrFrom4([4]byte{192, 0, 2, byte(1 + i)})
		weights[a] = i + 1
		wrrs = append(wrrs, libdns.Address{Name: "w", TTL: 30 * time.Second, IP: a})
	}
	weighted = failover.WeightedRandom(weights, rand.NewPCG(1, 2))
	regions := []string{"us", "eu", "ap"}
	g := failover.GeoMap{Prefixes: map[netip.Prefix]string{}, Preferences: map[string][]string{"us": {"eu"}, "eu": {"us"}, "ap": {"eu"}}}
	for i := range 1024 {
		p := netip.PrefixFrom(netip.AddrFrom4([4]byte{10, byte(i >> 8), byte(i), 0}), 24)
		g.Prefixes[p] = regions[i%3]
		clients = append(clients, p)
	}
	loc, err := failover.NewLocator(g)
	if err != nil {
		t.Fatal(err)
	}
	tags := map[netip.Addr][]string{}
	for k := range 2 {
		for r, reg := range regions {
			a := netip.AddrFrom4([4]byte{198, 51, 100, byte(10*r + k + 1)})
			tags[a] = []string{reg}
			grrs = append(grrs, libdns.Address{Name: "g", TTL: 30 * time.Second, IP: a})
		}
	}
	return weighted, failover.Geo(loc, tags), wrrs, grrs, clients
}

// TestAnswerFuncsAllocs: the built-in weighted and geo policies answer a
// query without allocating (the tables are built with the function, and a
// geo answer is rebuilt only when the records change).
func TestAnswerFuncsAllocs(t *testing.T) {
	weighted, geo, wrrs, grrs, clients := dynamicFixture(t)
	chain := failover.Chain(geo, weighted)
	i := 0
	cases := map[string]func(){
		"weighted": func() { _ = rrsOf(weighted(clients[0], "w.example.", "A", wrrs)) },
		"geo":      func() { i++; _ = rrsOf(geo(clients[i%len(clients)], "g.example.", "A", grrs)) },
		"chain":    func() { i++; _ = rrsOf(chain(clients[i%len(clients)], "g.example.", "A", grrs)) },
	}
	maps.Copy(cases, steerAllocCases(t)) // latency, proximity, loadShed, sticky, firstN, netFence
	for name, f := range cases {
		for range 130 { // the first answers build plans (loadShed: one per set of kept records)
			f()
		}
		if n := testing.AllocsPerRun(200, f); n != 0 {
			t.Errorf("%s: %v allocations per query, want 0", name, n)
		}
	}
	// The answers are still right: the client's region, and after a
	// health change (one address gone) the remaining one.
	want := func(rrs []libdns.Record, ips ...string) {
		t.Helper()
		var got []string
		for _, r := range rrs {
			got = append(got, r.(libdns.Address).IP.String())
		}
		if !slices.Equal(got, ips) {
			t.Fatalf("answer %v, want %v", got, ips)
		}
	}
	want(rrsOf(geo(clients[1], "g.example.", "A", grrs)), "198.51.100.11", "198.51.100.12") // eu
	want(rrsOf(geo(clients[1], "g.example.", "A", grrs[1:])), "198.51.100.11", "198.51.100.12")
	down := slices.Delete(slices.Clone(grrs), 4, 5) // 198.51.100.12
	want(rrsOf(geo(clients[1], "g.example.", "A", down)), "198.51.100.11")
	noEU := slices.DeleteFunc(slices.Clone(grrs), func(r libdns.Record) bool {
		return r.(libdns.Address).IP.As4()[3]/10 == 1
	})
	want(rrsOf(geo(clients[1], "g.example.", "A", noEU)), "198.51.100.1", "198.51.100.2") // eu's preference: us
	want(rrsOf(geo(clients[1], "g.example.", "A", grrs)), "198.51.100.11", "198.51.100.12")
	counts := map[string]int{}
	for range 10000 {
		counts[fmt.Sprint(rrsOf(weighted(clients[0], "w.example.", "A", wrrs))[0].(libdns.Address).IP)]++
	}
	for k := range 4 {
		n := counts[fmt.Sprintf("192.0.2.%d", k+1)]
		if lo, hi := 1000*(k+1)-300, 1000*(k+1)+300; n < lo || n > hi {
			t.Errorf("weight %d chosen %d times in 10000, want %d..%d", k+1, n, lo, hi)
		}
	}
}

// TestAnswerPlansUnderRealTraffic: queries come in runs (a resolver asks
// a name many times; clients of one region follow each other), names share
// a zone-wide hook, and health changes a name's records many times. None of
// that makes a query allocate: a function chained after Geo keeps a plan
// per region, a zone-wide hook one per name, a name's current records find
// their plan among stale ones, and more sets of records than a function
// keeps plans for answer without rebuilding a plan per miss.
func TestAnswerPlansUnderRealTraffic(t *testing.T) {
	weighted, geo, wrrs, grrs, clients := dynamicFixture(t)
	chain := failover.Chain(geo, weighted)
	names := make([]string, 12)
	for i := range names {
		names[i] = fmt.Sprintf("n%d.example.", i)
	}
	var changes [][]libdns.Record
	for i := range 20 {
		rs := slices.Clone(wrrs)
		rs[0] = libdns.Address{Name: "w", TTL: time.Duration(31+i) * time.Second, IP: netip.AddrFrom4([4]byte{192, 0, 2, 1})}
		changes = append(changes, rs)
	}
	i := 0
	for _, c := range []struct {
		name  string
		query func()
	}{
		// Clients of one region in runs of 2 and of 5.
		{"chain, runs of 2", func() { i++; _ = rrsOf(chain(clients[i/2%len(clients)], "g.example.", "A", grrs)) }},
		{"chain, runs of 5", func() { i++; _ = rrsOf(chain(clients[i/5%len(clients)], "g.example.", "A", grrs)) }},
		// Four names of a zone-wide hook in runs of 2.
		{"zone hook, 4 names", func() { i++; _ = rrsOf(weighted(clients[0], names[i/2%4], "A", wrrs)) }},
		// Twelve names, more than a function keeps plans for, in runs of 2.
		{"zone hook, 12 names", func() { i++; _ = rrsOf(weighted(clients[0], names[i/2%12], "A", wrrs)) }},
		// The records of w changed 20 times; the last set is asked now.
		{"after 20 changes", func() { _ = rrsOf(weighted(clients[0], "w.example.", "A", changes[len(changes)-1])) }},
	} {
		if c.name == "after 20 changes" {
			for _, rs := range changes {
				for range 100 {
					_ = rrsOf(weighted(clients[0], "w.example.", "A", rs))
				}
			}
		}
		for range 200 {
			c.query()
		}
		// Twelve names: a plan replaces another at most once per 64
		// misses; the rest answer without one.
		limit := 0.0
		if c.name == "zone hook, 12 names" {
			limit = 0.1
		}
		if n := allocsPerQuery(2000, c.query); n > limit {
			t.Errorf("%s: %.3f allocations per query, want at most %v", c.name, n, limit)
		}
	}
}

// allocsPerQuery is testing.AllocsPerRun without its rounding down: the
// average number of allocations of one call of f over runs calls.
func allocsPerQuery(runs int, f func()) float64 {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range runs {
		f()
	}
	runtime.ReadMemStats(&after)
	return float64(after.Mallocs-before.Mallocs) / float64(runs)
}

// BenchmarkAnswerFuncs measures the weighted and geo policies, and the two
// chained, per query.
func BenchmarkAnswerFuncs(b *testing.B) {
	weighted, geo, wrrs, grrs, clients := dynamicFixture(b)
	b.Run("weighted", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = rrsOf(weighted(clients[0], "w.example.", "A", wrrs))
		}
	})
	b.Run("geo", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			i++
			_ = rrsOf(geo(clients[i%len(clients)], "g.example.", "A", grrs))
		}
	})
	// Geo, then one address by weight within the region; clients of a
	// region in runs of 3.
	chain := failover.Chain(geo, weighted)
	b.Run("geo-then-weighted", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			i++
			_ = rrsOf(chain(clients[i/3%len(clients)], "g.example.", "A", grrs))
		}
	})
}
