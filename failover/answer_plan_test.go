package failover_test

import (
	"fmt"
	"math/rand/v2"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/libdns/libdns"
	"pgregory.net/rapid"

	"github.com/gslbkit/gslb/failover"
)

// TestAnswerPlansAgreeWithoutPlans: the weighted, geo, region-filter and
// chained (geo, then weighted) functions answer the same with a plan (one
// name asked query after query, as a per-name hook is) and without one (a
// new name every query, as a zone-wide hook may be asked, so no set of
// records misses twice and none is planned), over random records,
// weights, tags, prefix tables and changes of the records between queries.
func TestAnswerPlansAgreeWithoutPlans(t *testing.T) {
	pool := make([]netip.Addr, 8)
	for i := range pool {
		pool[i] = netip.AddrFrom4([4]byte{192, 0, 2, byte(i + 1)})
	}
	pool = append(pool, netip.MustParseAddr("2001:db8::1"), netip.MustParseAddr("2001:db8::2"))
	regions := []string{"us", "eu", "ap", "sa"}
	rapid.Check(t, func(t *rapid.T) {
		weights := map[netip.Addr]int{}
		tags := map[netip.Addr][]string{}
		for _, a := range pool {
			if w := rapid.IntRange(0, 4).Draw(t, "weight"); w > 0 {
				weights[a] = w
			}
			tags[a] = rapid.SliceOfNDistinct(rapid.SampledFrom(regions), 0, 2, rapid.ID).Draw(t, "tags")
		}
		g := failover.GeoMap{Prefixes: map[netip.Prefix]string{}, Preferences: map[string][]string{}}
		for range rapid.IntRange(0, 6).Draw(t, "prefixes") {
			bits := rapid.SampledFrom([]int{8, 16, 24}).Draw(t, "bits")
			p := netip.PrefixFrom(netip.AddrFrom4([4]byte{10, byte(rapid.IntRange(0, 2).Draw(t, "b")), 0, 0}), bits).Masked()
			g.Prefixes[p] = rapid.SampledFrom(regions).Draw(t, "region")
		}
		for _, r := range regions {
			g.Preferences[r] = rapid.SliceOfNDistinct(rapid.SampledFrom(regions), 0, 3, rapid.ID).Draw(t, "prefs")
		}
		g.Default = rapid.SampledFrom(append([]string{""}, regions...)).Draw(t, "default")
		loc, err := failover.NewLocator(g)
		if err != nil {
			t.Fatal(err)
		}
		seed := rapid.Uint64().Draw(t, "seed")
		type pair struct {
			name        string
			plan, plain failover.AnswerFunc
		}
		fs := []pair{
			{"weighted", failover.WeightedRandom(weights, rand.NewPCG(seed, 1)), failover.WeightedRandom(weights, rand.NewPCG(seed, 1))},
			{"geo", failover.Geo(loc, tags), failover.Geo(loc, tags)},
			{"regionFilter", failover.RegionFilter(loc, tags), failover.RegionFilter(loc, tags)},
			{"chain", failover.Chain(failover.Geo(loc, tags), failover.WeightedRandom(weights, rand.NewPCG(seed, 2))),
				failover.Chain(failover.Geo(loc, tags), failover.WeightedRandom(weights, rand.NewPCG(seed, 2)))},
		}
		var rrs []libdns.Record
		for q := range rapid.IntRange(1, 40).Draw(t, "queries") {
			if q == 0 || rapid.IntRange(0, 4).Draw(t, "change") == 0 {
				rrs = nil
				for _, i := range rapid.SliceOfN(rapid.IntRange(0, len(pool)), 0, 6).Draw(t, "records") {
					if i == len(pool) {
						rrs = append(rrs, libdns.RR{Name: "x", Type: "TXT", Data: "not an address"})
						continue
					}
					ttl := time.Duration(rapid.SampledFrom([]int{30, 60}).Draw(t, "ttl")) * time.Second
					rrs = append(rrs, libdns.Address{Name: "x", TTL: ttl, IP: pool[i]})
				}
			}
			client := netip.PrefixFrom(netip.AddrFrom4([4]byte{10, byte(rapid.IntRange(0, 3).Draw(t, "cb")), 7, 9}), 32)
			for _, f := range fs {
				got := rrsOf(f.plan(client, "x.example.", "A", rrs))
				want := rrsOf(f.plain(client, fmt.Sprintf("q%d.example.", q), "A", rrs))
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Fatalf("%s, query %d, client %v, records %v: with a plan %v, without %v", f.name, q, client, rrs, got, want)
				}
			}
		}
	})
}

// TestAnswerPlansConcurrent: goroutines asking one geo, one weighted and
// one chained function at once, with the records changing under them (as
// health changes while queries run) among more sets than a function keeps
// plans for, always get an answer drawn from the records they passed in.
// Run with -race.
func TestAnswerPlansConcurrent(t *testing.T) {
	weighted, geo, wrrs, grrs, clients := dynamicFixture(t)
	chain := failover.Chain(geo, weighted)
	// More sets of records than a function keeps plans for (every run of
	// two or more records), so plans are made, kept and replaced while
	// the goroutines ask.
	var sets, wsets [][]libdns.Record
	for i := range grrs {
		for j := i + 2; j <= len(grrs); j++ {
			sets = append(sets, grrs[i:j])
		}
	}
	for i := range wrrs {
		for j := i + 1; j <= len(wrrs); j++ {
			wsets = append(wsets, wrrs[i:j])
		}
	}
	in := func(rs []libdns.Record, r libdns.Record) bool {
		for _, x := range rs {
			if x.(libdns.Address).IP == r.(libdns.Address).IP {
				return true
			}
		}
		return false
	}
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for g := range 4 {
		wg.Go(func() {
			for i := range 2000 {
				rs, ws := sets[(i/50+g)%len(sets)], wsets[(i/70+g)%len(wsets)]
				for _, r := range rrsOf(geo(clients[(i+g)%len(clients)], "g.example.", "A", rs)) {
					if !in(rs, r) {
						errs <- fmt.Sprintf("geo answered %v, not among %v", r, rs)
						return
					}
				}
				if got := rrsOf(weighted(clients[0], "w.example.", "A", ws)); len(got) != 1 || !in(ws, got[0]) {
					errs <- fmt.Sprintf("weighted answered %v, not one of %v", got, ws)
					return
				}
				if got := rrsOf(chain(clients[(i/3+g)%len(clients)], "c.example.", "A", rs)); len(got) != 1 || !in(rs, got[0]) {
					errs <- fmt.Sprintf("geo then weighted answered %v, not one of %v", got, rs)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}
