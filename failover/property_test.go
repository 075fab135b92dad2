package failover_test

import (
	"fmt"
	"math/rand/v2"
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/libdns/libdns"
	"pgregory.net/rapid"

	"github.com/gslbkit/gslb/failover"
)

var (
	genHealth    = rapid.SampledFrom([]failover.Health{failover.HealthUnknown, failover.Passing, failover.Warning, failover.Critical, failover.Recovery})
	genFreshness = rapid.SampledFrom([]failover.Freshness{failover.FreshnessUnknown, failover.Fresh, failover.Stale})
	genMode      = rapid.SampledFrom([]failover.AllUnhealthy{failover.KeepLast, failover.FailOpen, failover.FailClosed, failover.Fallback})
)

// addrPool hands out distinct IPv4 and IPv6 addresses.
type addrPool struct{ n int }

func (p *addrPool) next(t *rapid.T) netip.Addr {
	p.n++
	if rapid.Bool().Draw(t, "v6") {
		return netip.AddrFrom16([16]byte{0x20, 0x01, 0x0d, 0xb8, 14: byte(p.n >> 8), 15: byte(p.n)})
	}
	return netip.AddrFrom4([4]byte{10, 0, byte(p.n >> 8), byte(p.n)})
}

func subset(t *rapid.T, label string, from []netip.Addr) []netip.Addr {
	var out []netip.Addr
	for _, a := range from {
		if rapid.Bool().Draw(t, label) {
			out = append(out, a)
		}
	}
	return out
}

func genSnapshot(t *rapid.T) failover.Snapshot {
	var s failover.Snapshot
	var pool addrPool
	var all []netip.Addr
	nr := rapid.IntRange(1, 4).Draw(t, "regions")
	for r := 0; r < nr; r++ {
		region := fmt.Sprintf("r%d", r)
		s.Regions = append(s.Regions, failover.Region{Name: region, Zone: "local.example.com"})
		var mine []netip.Addr
		for c := rapid.IntRange(0, 3).Draw(t, "clusters"); c > 0; c-- {
			cl := failover.Cluster{Name: fmt.Sprintf("%s-%d", region, c), Region: region,
				Local: genFreshness.Draw(t, "local"), Global: genFreshness.Draw(t, "global")}
			for g := rapid.IntRange(0, 3).Draw(t, "gateways"); g > 0; g-- {
				gw := failover.Gateway{Health: genHealth.Draw(t, "health")}
				for a := rapid.IntRange(1, 2).Draw(t, "addrs"); a > 0; a-- {
					gw.Addrs = append(gw.Addrs, pool.next(t))
				}
				mine = append(mine, gw.Addrs...)
				cl.Gateways = append(cl.Gateways, gw)
			}
			s.Clusters = append(s.Clusters, cl)
		}
		all = append(all, mine...)
		if rapid.Bool().Draw(t, "regional read") {
			s.Regions[r].Regional = failover.Published{Read: true, Addrs: append(subset(t, "regional", mine), pool.next(t))}
		}
	}
	if rapid.Bool().Draw(t, "failover read") {
		s.Failover = failover.Published{Read: true, Addrs: subset(t, "failover", all)}
	}
	return s
}

// facts indexes a snapshot by address.
type facts struct {
	health map[netip.Addr]failover.Health
	local  map[netip.Addr]failover.Freshness
	global map[netip.Addr]failover.Freshness
	region map[netip.Addr]string
}

func factsOf(s failover.Snapshot) facts {
	f := facts{map[netip.Addr]failover.Health{}, map[netip.Addr]failover.Freshness{}, map[netip.Addr]failover.Freshness{}, map[netip.Addr]string{}}
	for _, c := range s.Clusters {
		for _, g := range c.Gateways {
			for _, a := range g.Addrs {
				f.health[a], f.local[a], f.global[a], f.region[a] = g.Health, c.Local, c.Global, c.Region
			}
		}
	}
	return f
}

// TestTopologyProperties: for any snapshot and mode, no set is empty; no
// set holds an address of a gateway known unhealthy or of a cluster read
// stale, except under fail open when nothing else is left; sets hold only
// their scope's inventory; the global name is at the failover name exactly
// when a region is dead; equal inputs in any order give equal outputs.
func TestTopologyProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		mode := genMode.Draw(t, "mode")
		tp := topo(t, func(c *failover.TopologyConfig) {
			c.AllUnhealthy = mode
			if mode == failover.Fallback {
				c.FallbackTarget = "sorry.example.net"
			}
		})
		s := genSnapshot(t)
		dec, err := tp.Decide(time.Time{}, s)
		if err != nil {
			t.Fatalf("decide: %v", err)
		}
		d := dec.Desired
		assertWellFormed(t, d)
		f := factsOf(s)
		sets := map[string][]netip.Addr{} // view|name -> addresses of both families
		for _, set := range d.Sets {
			if set.View != "" && set.Writers != failover.RegionWriters(set.View) || set.View == "" && set.Writers != failover.Everyone {
				t.Fatalf("%s in view %q written by %s", set.Name, set.View, set.Writers)
			}
			if set.Type != "CNAME" {
				sets[set.View+"|"+set.Name] = append(sets[set.View+"|"+set.Name], set.Addrs()...)
			}
		}
		for k, addrs := range sets {
			view := k[:slices.Index([]byte(k), '|')]
			var unhealthy int
			for _, a := range addrs {
				fr := f.global[a]
				if view != "" {
					fr = f.local[a]
					if f.region[a] != view {
						t.Fatalf("%s in %s's regional record belongs to %q", a, view, f.region[a])
					}
				}
				if _, ok := f.health[a]; !ok {
					t.Fatalf("%s in %s is not in the inventory", a, k)
				}
				if fr == failover.Stale || f.health[a].Known() && !f.health[a].Served() {
					unhealthy++
				}
			}
			if unhealthy > 0 {
				if mode != failover.FailOpen {
					t.Fatalf("%s holds %d unhealthy addresses: %v", k, unhealthy, addrs)
				}
				// Fail open publishes the whole inventory of the set's
				// scope, and only when nothing in it was servable.
				want := 0
				for _, r := range f.region {
					if view == "" || r == view {
						want++
					}
				}
				if len(addrs) != want {
					t.Fatalf("fail open published %d of %d addresses in %s", len(addrs), want, k)
				}
			}
		}
		for _, h := range dec.Held {
			for _, typ := range []string{"A", "AAAA", "CNAME"} {
				if _, ok := d.Lookup(h.View, h.Name, typ); ok {
					t.Fatalf("%s held and published", h.Name)
				}
			}
		}
		dead, allDead := false, true
		for _, r := range dec.Regions {
			dead = dead || r.State == failover.RegionDead
			allDead = allDead && r.State == failover.RegionDead
		}
		if (mode == failover.Fallback && allDead) != (dec.GlobalTarget == "sorry.example.net.") {
			t.Fatalf("fallback target %q with every region dead %v", dec.GlobalTarget, allDead)
		}
		if dead != dec.FailingOver {
			t.Fatalf("failing over %v with a dead region %v", dec.FailingOver, dead)
		}
		switch dec.GlobalTarget {
		case tp.FailoverName():
			if !dead || mode == failover.Fallback && allDead {
				t.Fatalf("global at the failover name with no dead region")
			}
		case tp.RegionalName():
			if dead {
				t.Fatalf("global at the regional name with a dead region")
			}
		case "sorry.example.net.":
			if !allDead || len(dec.Failover) > 0 {
				t.Fatalf("fallback target without cause")
			}
		case "":
		default:
			t.Fatalf("global target %q", dec.GlobalTarget)
		}

		// Order of the inventory does not matter.
		p := s
		p.Regions = slices.Clone(s.Regions)
		p.Clusters = slices.Clone(s.Clusters)
		slices.Reverse(p.Regions)
		slices.Reverse(p.Clusters)
		d2, err := tp.Desired(p)
		if err != nil || d2.String() != d.String() {
			t.Fatalf("order changed the output:\n%s\nvs\n%s", d, d2)
		}
	})
}

func genRecord(t *rapid.T) failover.Record {
	var pool addrPool
	r := failover.Record{Name: "api.gslb.example.com", Zone: "gslb.example.com", TTL: 30e9,
		Disabled: rapid.Float64Range(0, 1).Draw(t, "disabled") < 0.15}
	if rapid.Bool().Draw(t, "has failover") {
		r.FailoverFQDN = "api.backup.example.net"
	}
	for n := rapid.IntRange(0, 6).Draw(t, "endpoints"); n > 0; n-- {
		r.Endpoints = append(r.Endpoints, failover.Endpoint{
			IP:      pool.next(t),
			Health:  genHealth.Draw(t, "health"),
			Weight:  rapid.IntRange(0, 3).Draw(t, "weight"),
			Regions: rapid.SliceOfNDistinct(rapid.SampledFrom([]string{"eu", "us", "ap"}), 0, 2, rapid.ID[string]).Draw(t, "regions"),
		})
	}
	return r
}

// TestRecordProperties: no empty set; the provider name is always a CNAME
// or withdrawn; no published address is unhealthy while a healthy one
// exists (except fail open, which publishes all only when none is).
func TestRecordProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		cfg := failover.DefaultRecordConfig()
		cfg.AllUnhealthy = genMode.Draw(t, "mode")
		if cfg.AllUnhealthy == failover.Fallback {
			cfg.FallbackTarget = "sorry.example.net"
		}
		cfg.Strategy = failover.Strategy{
			Kind:  rapid.SampledFrom([]failover.StrategyKind{failover.AllHealthy, failover.Priority, failover.Weighted}).Draw(t, "kind"),
			Order: rapid.SliceOfNDistinct(rapid.SampledFrom([]string{"eu", "us", "ap"}), 0, 3, rapid.ID[string]).Draw(t, "order"),
		}
		p, err := failover.NewRecordPolicy(cfg)
		if err != nil {
			t.Fatal(err)
		}
		r := genRecord(t)
		if rapid.Bool().Draw(t, "view") {
			r = r.ForRegions(rapid.SampledFrom([]string{"eu", "us", "ap"}).Draw(t, "region"))
		}
		served := map[netip.Addr]bool{}
		for _, e := range r.Endpoints {
			served[e.IP] = e.Health.Served()
		}
		anyServed := slices.Contains(slices.Collect(mapValues(served)), true)
		for _, out := range []string{"provider", "embedded"} {
			var d failover.DesiredState
			if out == "provider" {
				d, err = p.Provider(r)
			} else {
				d, err = p.Embedded(r)
			}
			if err != nil {
				t.Fatal(err)
			}
			assertWellFormed(t, d)
			nameSets := 0
			for _, s := range d.Sets {
				if s.Name == "api.gslb.example.com." {
					nameSets++
					if out == "provider" && s.Type != "CNAME" {
						t.Fatalf("provider output switched the name to %s", s.Type)
					}
				}
				for _, a := range s.Addrs() {
					if r.Disabled {
						t.Fatalf("%s: disabled record publishes %s", out, a)
					}
					if !served[a] && (anyServed || cfg.AllUnhealthy != failover.FailOpen) {
						t.Fatalf("%s: unhealthy %s published (any served: %v)", out, a, anyServed)
					}
				}
			}
			if out == "provider" && nameSets == 0 && !d.Withdrawn("", "api.gslb.example.com.", "CNAME") {
				t.Fatalf("provider output has no answer for the name:\n%s", d)
			}
		}
	})
}

func mapValues[K comparable, V any](m map[K]V) func(func(V) bool) {
	return func(yield func(V) bool) {
		for _, v := range m {
			if !yield(v) {
				return
			}
		}
	}
}

// TestAnswerFuncProperties: every per-query answer is nil or a non-empty
// subset of the records it was given, which it leaves untouched.
func TestAnswerFuncProperties(t *testing.T) {
	loc, err := failover.NewLocator(geoMap())
	if err != nil {
		t.Fatal(err)
	}
	rapid.Check(t, func(t *rapid.T) {
		var pool addrPool
		var rrs []libdns.Record
		tags := map[netip.Addr][]string{}
		weights := map[netip.Addr]int{}
		for n := rapid.IntRange(0, 6).Draw(t, "n"); n > 0; n-- {
			a := pool.next(t)
			rrs = append(rrs, libdns.Address{Name: "www", TTL: 60e9, IP: a})
			tags[a] = rapid.SliceOfNDistinct(rapid.SampledFrom([]string{"eu", "us", "ap"}), 0, 2, rapid.ID[string]).Draw(t, "tags")
			weights[a] = rapid.IntRange(0, 3).Draw(t, "w")
		}
		before := datas(rrs)
		client := netip.PrefixFrom(netip.AddrFrom4([4]byte{10, byte(rapid.IntRange(0, 2).Draw(t, "b")), byte(rapid.IntRange(0, 3).Draw(t, "c")), 1}), 32)
		fs := map[string]failover.AnswerFunc{
			"roundRobin": failover.RoundRobin(),
			"weighted":   failover.WeightedRandom(weights, rand.NewPCG(1, 2)),
			"geo":        failover.Geo(loc, tags),
			"filter":     failover.RegionFilter(loc, tags),
			"chain":      failover.Chain(failover.Geo(loc, tags), failover.RoundRobin()),
		}
		for name, f := range fs {
			out := rrsOf(f(client, "www.example.com.", "A", rrs))
			if out != nil && len(out) == 0 {
				t.Fatalf("%s: empty non-nil answer", name)
			}
			for _, d := range datas(out) {
				if !slices.Contains(before, d) {
					t.Fatalf("%s: answered %s, not among %v", name, d, before)
				}
			}
			if !slices.Equal(before, datas(rrs)) {
				t.Fatalf("%s modified rrs", name)
			}
		}
	})
}
