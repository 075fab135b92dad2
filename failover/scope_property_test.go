package failover_test

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"testing"

	"github.com/libdns/libdns"
	"pgregory.net/rapid"

	"github.com/gslbkit/gslb/failover"
)

// genAddr4 draws IPv4 addresses near a few seeds, so map prefixes nest
// and clients fall inside, beside and outside them.
func genAddr4(t *rapid.T, label string) netip.Addr {
	seeds := []uint32{0x0A000000, 0x0A010000, 0x0A010200, 0x0A800000, 0x0A010280, 0xC0000200, 0, 0xFFFFFFFF}
	v := rapid.SampledFrom(seeds).Draw(t, label+"Seed") ^ rapid.Uint32().Draw(t, label+"Noise")>>rapid.IntRange(0, 32).Draw(t, label+"Shift")
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], v)
	return netip.AddrFrom4(b)
}

// genAddr6 is genAddr4 for IPv6.
func genAddr6(t *rapid.T, label string) netip.Addr {
	seeds := []uint64{0x20010db800000000, 0x20010db800010000, 0x20010db8000e0000, 0x20010db880000000, 0}
	hi := rapid.SampledFrom(seeds).Draw(t, label+"Seed") ^ rapid.Uint64().Draw(t, label+"Noise")>>rapid.IntRange(16, 64).Draw(t, label+"Shift")
	lo := rapid.SampledFrom([]uint64{0, 1, 1 << 63}).Draw(t, label+"Lo")
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], hi)
	binary.BigEndian.PutUint64(b[8:], lo)
	return netip.AddrFrom16(b)
}

func genPrefix(t *rapid.T, label string, v6 bool) netip.Prefix {
	if v6 {
		return netip.PrefixFrom(genAddr6(t, label), rapid.IntRange(0, 128).Draw(t, label+"Bits")).Masked()
	}
	return netip.PrefixFrom(genAddr4(t, label), rapid.IntRange(0, 32).Draw(t, label+"Bits")).Masked()
}

func genGeoMap(t *rapid.T) failover.GeoMap {
	g := failover.GeoMap{Prefixes: map[netip.Prefix]string{}}
	regions := []string{"us", "eu", "ap"}
	for i := range rapid.IntRange(0, 12).Draw(t, "prefixes") {
		p := genPrefix(t, fmt.Sprint("p", i), rapid.Bool().Draw(t, fmt.Sprint("v6", i)))
		g.Prefixes[p] = rapid.SampledFrom(regions).Draw(t, fmt.Sprint("region", i))
	}
	if rapid.Bool().Draw(t, "hasDefault") {
		g.Default = rapid.SampledFrom(regions).Draw(t, "default")
	}
	return g
}

// refScope is the scope's definition, worked out by brute force: the
// shortest length d ≤ client.Bits() at which the client's network holds no
// map prefix strictly inside it (so every client prefix there is matched
// by the same map prefixes), else client.Bits().
func refScope(g failover.GeoMap, client netip.Prefix) int {
	for d := range client.Bits() + 1 {
		net, _ := client.Addr().Prefix(d)
		clear := true
		for q := range g.Prefixes {
			if q.Addr().Is4() == client.Addr().Is4() && q.Bits() > d && net.Contains(q.Addr()) {
				clear = false
				break
			}
		}
		if clear {
			return d
		}
	}
	return client.Bits()
}

// TestPropertyLocateScope: for random GeoMaps and clients, the scope is at
// most the client's prefix length, equals the brute-force definition, and
// keeps its promise: every client prefix of the same length inside the
// scope's network is placed in the same region (tried at random addresses
// and inside every map prefix that overlaps the network). An IPv4 client
// written as IPv4-mapped IPv6 gets the same region and its scope + 96.
func TestPropertyLocateScope(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		g := genGeoMap(t)
		loc, err := failover.NewLocator(g)
		if err != nil {
			t.Fatal(err)
		}
		client := genPrefix(t, "client", rapid.Bool().Draw(t, "clientV6"))
		region, scope, ok := loc.LocateScope(client)
		if r2, ok2 := loc.Locate(client); r2 != region || ok2 != ok {
			t.Fatalf("LocateScope %q %v, Locate %q %v", region, ok, r2, ok2)
		}
		if scope < 0 || scope > client.Bits() {
			t.Fatalf("scope %d for %s: want 0 to %d", scope, client, client.Bits())
		}
		if want := refScope(g, client); scope != want {
			t.Fatalf("scope %d for %s, by the definition %d (map %v)", scope, client, want, g.Prefixes)
		}
		net, _ := client.Addr().Prefix(scope)
		check := func(a netip.Addr, how string) {
			if !net.Contains(a) {
				return
			}
			c, _ := a.Prefix(client.Bits())
			if r, ok2 := loc.Locate(c); r != region || ok2 != ok {
				t.Fatalf("%s (%s) is in %s's scope %s but placed %q %v, not %q %v (map %v)", c, how, client, net, r, ok2, region, ok, g.Prefixes)
			}
		}
		for i := range 16 {
			var a netip.Addr
			if client.Addr().Is4() {
				a = genAddr4(t, fmt.Sprint("sample", i))
			} else {
				a = genAddr6(t, fmt.Sprint("sample", i))
			}
			// Keep the network's bits, draw the rest.
			b, nb := a.AsSlice(), net.Addr().AsSlice()
			for k := range b {
				for bit := range 8 {
					if k*8+bit < scope {
						m := byte(0x80) >> bit
						b[k] = b[k]&^m | nb[k]&m
					}
				}
			}
			a, _ = netip.AddrFromSlice(b)
			check(a, "random")
		}
		for q := range g.Prefixes {
			check(q.Addr(), "map prefix")
			if q.Bits() < q.Addr().BitLen() {
				b := q.Addr().AsSlice()
				b[len(b)-1] |= 1
				a, _ := netip.AddrFromSlice(b)
				check(a, "map prefix, last bit set")
			}
		}
		if client.Addr().Is4() {
			mapped := netip.PrefixFrom(netip.AddrFrom16(client.Addr().As16()), client.Bits()+96)
			r, s, ok2 := loc.LocateScope(mapped)
			if r != region || ok2 != ok || s != scope+96 {
				t.Fatalf("%s: %q %d %v, as IPv4 %q %d %v", mapped, r, s, ok2, region, scope, ok)
			}
		}
	})
}

// TestPropertyAnswerScope: Geo and RegionFilter report the locator's scope
// whether or not they have an opinion, RoundRobin and WeightedRandom 0,
// and Chain the longest of its steps'; every scope is at most the
// client's prefix length.
func TestPropertyAnswerScope(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		g := genGeoMap(t)
		loc, err := failover.NewLocator(g)
		if err != nil {
			t.Fatal(err)
		}
		tags := map[netip.Addr][]string{}
		var rrs []libdns.Record
		for i, reg := range []string{"us", "eu", "ap"} {
			if rapid.Bool().Draw(t, "has"+reg) {
				a := netip.AddrFrom4([4]byte{198, 51, 100, byte(i + 1)})
				tags[a] = []string{reg}
				rrs = append(rrs, libdns.Address{Name: "www", IP: a})
			}
		}
		client := genPrefix(t, "client", rapid.Bool().Draw(t, "clientV6"))
		_, want, _ := loc.LocateScope(client)
		geo, filter := failover.Geo(loc, tags), failover.RegionFilter(loc, tags)
		for name, f := range map[string]failover.AnswerFunc{
			"geo": geo, "regionFilter": filter,
			"chain(geo, roundRobin)":             failover.Chain(geo, failover.RoundRobin()),
			"chain(weightedRandom, nil, filter)": failover.Chain(failover.WeightedRandom(nil, nil), nil, filter),
		} {
			if _, s := f(client, "www.example.", "A", rrs); s != want {
				t.Fatalf("%s: scope %d for %s, want the locator's %d", name, s, client, want)
			}
		}
		for name, f := range map[string]failover.AnswerFunc{"roundRobin": failover.RoundRobin(), "weightedRandom": failover.WeightedRandom(nil, nil), "chain()": failover.Chain()} {
			if _, s := f(client, "www.example.", "A", rrs); s != 0 {
				t.Fatalf("%s: scope %d, want 0 (it does not look at the client)", name, s)
			}
		}
	})
}
