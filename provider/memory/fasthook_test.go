package memory

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gslbkit/gslb/failover"
	"github.com/libdns/libdns"
	"github.com/miekg/dns"
)

// addHookZone adds the zone hooks.test. to p, every name in it answered by
// testHook (per name for dyn, zone-wide for the rest): address and TXT
// sets, a wildcard, a CNAME into a hooked name and a large set.
func addHookZone(t testing.TB, p *Provider) {
	t.Helper()
	if err := p.AddZone("hooks.test."); err != nil {
		t.Fatal(err)
	}
	ttl := 30 * time.Second
	rs := []libdns.Record{
		libdns.TXT{Name: "dtxt", TTL: ttl, Text: "one"},
		libdns.TXT{Name: "dtxt", TTL: ttl, Text: "two"},
		libdns.RR{Name: "dtxt", TTL: ttl, Type: "TXT", Data: `"three" "four"`},
		libdns.Address{Name: "*.wild", TTL: ttl, IP: netip.MustParseAddr("192.0.2.31")},
		libdns.Address{Name: "*.wild", TTL: ttl, IP: netip.MustParseAddr("192.0.2.32")},
		libdns.CNAME{Name: "cn", TTL: ttl, Target: "dyn.hooks.test."},
		libdns.Address{Name: "dyn", TTL: time.Minute, IP: netip.MustParseAddr("2001:db8::21")},
		libdns.Address{Name: "dyn", TTL: time.Minute, IP: netip.MustParseAddr("::ffff:192.0.2.29")},
	}
	for i := range 4 {
		rs = append(rs, libdns.Address{Name: "dyn", TTL: ttl, IP: netip.AddrFrom4([4]byte{192, 0, 2, byte(21 + i)})})
	}
	for i := range 40 {
		rs = append(rs, libdns.Address{Name: "many", TTL: ttl, IP: netip.AddrFrom4([4]byte{198, 51, 100, byte(1 + i)})})
	}
	if _, err := p.AppendRecords(context.Background(), "hooks.test.", rs); err != nil {
		t.Fatal(err)
	}
	p.SetAnswerFunc("dyn.hooks.test.", testHook)
	p.SetZoneAnswerFunc("hooks.test.", testHook)
}

// testHook is deterministic (the bytes of both paths can be compared) and
// answers in every way a hook may, with every kind of scope, chosen by the
// client prefix.
func testHook(c netip.Prefix, _, qtype string, rrs []libdns.Record) ([]libdns.Record, int) {
	sel := c.Bits()
	for _, b := range c.Addr().AsSlice() {
		sel += int(b)
	}
	if !c.IsValid() {
		sel = 3
	}
	// The scope reported, in every form: the whole prefix, none, part of
	// it, more than it (capped), negative (counted as 0).
	scope := []int{c.Bits(), 0, c.Bits() / 2, c.Bits() + 9, -1}[sel/12%5]
	switch sel % 12 {
	case 0:
		return nil, scope
	case 1:
		if len(rrs) >= 2 {
			return rrs[1:2:2], scope // a subslice
		}
		return rrs, scope
	case 2:
		return rrs[:len(rrs):len(rrs)], scope
	case 3: // reversed copy
		out := make([]libdns.Record, 0, len(rrs))
		for i := len(rrs) - 1; i >= 0; i-- {
			out = append(out, rrs[i])
		}
		return out, scope
	case 4: // a record the zone does not hold
		if qtype == "TXT" {
			return []libdns.Record{libdns.TXT{Name: "x", TTL: time.Second, Text: "foreign"}}, scope
		}
		return []libdns.Record{libdns.Address{Name: "x", TTL: 7 * time.Second, IP: netip.MustParseAddr("203.0.113.77")}}, scope
	case 5: // another type only: dropped, so no opinion
		return []libdns.Record{libdns.Address{Name: "x", IP: netip.MustParseAddr("2001:db8::99")}, libdns.TXT{Name: "x", Text: "t"}}, scope
	case 6: // duplicates
		return []libdns.Record{rrs[len(rrs)-1], rrs[len(rrs)-1]}, scope
	case 7: // nil entries among held ones
		return []libdns.Record{nil, rrs[0], nil}, scope
	case 8:
		return []libdns.Record{}, scope
	case 9: // a held record in another Go form
		return []libdns.Record{rrs[0].RR()}, scope
	case 10: // far more than fits over UDP
		var out []libdns.Record
		for range 30 {
			out = append(out, rrs...)
		}
		return out, scope
	default: // a held record with another TTL (the zone's TTL wins)
		a, ok := rrs[0].(libdns.Address)
		if !ok {
			return rrs[:1], scope
		}
		a.TTL = time.Hour
		return []libdns.Record{a}, scope
	}
}

// TestFastPathHooked sends queries for hooked names from many clients
// (EDNS Client Subnet v4 and v6 at several prefix lengths, source
// addresses, no EDNS, small and large UDP sizes, TCP) through the fast path
// and the general path: the bytes must be the same every time.
func TestFastPathHooked(t *testing.T) {
	p := fastFixture(t)
	names := [][]string{{"dyn", "hooks", "test"}, {"DYN", "Hooks", "test"}, {"dtxt", "hooks", "test"}, {"x", "wild", "hooks", "test"},
		{"cn", "hooks", "test"}, {"many", "hooks", "test"}, {"nope", "hooks", "test"}, {"hooks", "test"}}
	types := []uint16{dns.TypeA, dns.TypeAAAA, dns.TypeTXT}
	n := 0
	for _, name := range names {
		for _, qt := range types {
			for _, shape := range []struct {
				edns byte
				size uint16
			}{{0, 0}, {1, 512}, {0x81, 1232}, {1, 4096}} {
				q := buildQuery(0x4242, 1, 0x10, name, qt, dns.ClassINET, shape.edns, shape.size)
				for i := range 24 {
					src := netip.AddrFrom4([4]byte{10, 0, byte(i), byte(i * 7)})
					if i%5 == 4 {
						src = netip.AddrFrom16([16]byte{0x20, 0x01, 0x0d, 0xb8, 15: byte(i)})
					}
					sameBothPaths(t, p, q, src)
					n++
					if shape.edns == 0 {
						continue
					}
					bits := []int{0, 8, 20, 24, 32}[i%5]
					sameBothPaths(t, p, withECS(q, 1, bits, []byte{byte(100 + i), byte(i * 3), byte(i), 9}, false), src)
					sameBothPaths(t, p, withECS(q, 2, []int{0, 32, 48, 56, 128}[i%5], []byte{0x20, 0x01, 0x0d, 0xb8, byte(i), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, byte(i)}, false), src)
					n += 2
				}
			}
		}
	}
	_, hooked, _ := p.eng.CacheStats()
	if hooked < 10 {
		t.Fatalf("%d hooked entries in the fast cache: the fast path for hooks was not exercised", hooked)
	}
	t.Logf("%d queries, both paths the same; %d hooked entries", n, hooked)
}

// TestFastPathHookedNoAllocations: failover.WeightedRandom and failover.Geo
// on the embedded zone answer with no allocation per query, over UDP and
// TCP, with and without EDNS Client Subnet, and each query asks its hook
// exactly once, also when the reply must take the general path.
func TestFastPathHookedNoAllocations(t *testing.T) {
	var calls atomic.Int64
	count := func(f failover.AnswerFunc) AnswerFunc {
		return func(c netip.Prefix, name, qtype string, rrs []libdns.Record) ([]libdns.Record, int) {
			calls.Add(1)
			return f(c, name, qtype, rrs)
		}
	}
	p := dynamicZone(t, count)
	buf := make([]byte, 4096)
	src := netip.MustParseAddr("10.0.7.9")
	for _, name := range []string{"w", "g"} {
		plain := buildQuery(1, 1, 0, []string{name, "example", "test"}, dns.TypeA, dns.ClassINET, 0, 0)
		edns := buildQuery(1, 1, 0, []string{name, "example", "test"}, dns.TypeA, dns.ClassINET, 1, 1232)
		for qn, q := range map[string][]byte{"plain": plain, "edns": edns, "ecs": withECS(edns, 1, 24, []byte{10, 1, 2}, false)} {
			for _, tcp := range []bool{false, true} {
				respond := func() []byte {
					if tcp {
						return p.RespondTCP(q, buf, src)
					}
					return p.RespondUDP(q, buf, src)
				}
				respond() // builds the entry
				before := calls.Load()
				allocs := testing.AllocsPerRun(200, func() { respond() })
				if allocs != 0 {
					t.Errorf("%s %s tcp %v: %v allocations per query, want 0", name, qn, tcp, allocs)
				}
				if got := calls.Load() - before; got != 201 { // AllocsPerRun runs once more to warm up
					t.Errorf("%s %s tcp %v: hook asked %d times for 201 queries", name, qn, tcp, got)
				}
				r := new(dns.Msg)
				if err := r.Unpack(respond()); err != nil || len(r.Answer) == 0 {
					t.Fatalf("%s %s: %v %v", name, qn, r, err)
				}
				if name == "w" && len(r.Answer) != 1 || name == "g" && len(r.Answer) != 2 {
					t.Errorf("%s %s: answer %v", name, qn, r.Answer)
				}
				if qn == "ecs" {
					// Geo: 10.1.2.0/24 is a map prefix with none inside it;
					// WeightedRandom does not look at the client.
					want := map[string]uint8{"w": 0, "g": 24}[name]
					if e := r.IsEdns0().Option[0].(*dns.EDNS0_SUBNET); e.SourceScope != want {
						t.Errorf("%s: scope %d, want %d (the hook's)", name, e.SourceScope, want)
					}
				}
			}
		}
	}
	// The region is the client's: 10.0.1.0/24 is eu (1 % 3 == 1 → "eu").
	r := new(dns.Msg)
	q := withECS(buildQuery(1, 1, 0, []string{"g", "example", "test"}, dns.TypeA, dns.ClassINET, 1, 1232), 1, 24, []byte{10, 0, 1}, false)
	if err := r.Unpack(p.RespondUDP(q, buf, src)); err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprint(r.Answer)
	if !strings.Contains(got, "198.51.100.11") || !strings.Contains(got, "198.51.100.12") {
		t.Errorf("10.0.1.0/24 answered %v, want eu's 198.51.100.11 and .12", r.Answer)
	}
	// A hook that answers a record the zone does not hold takes the
	// general path, still asked once.
	p.SetAnswerFunc("w.example.test.", count(func(netip.Prefix, string, string, []libdns.Record) ([]libdns.Record, int) {
		return []libdns.Record{libdns.Address{Name: "w", TTL: time.Second, IP: netip.MustParseAddr("203.0.113.1")}}, 0
	}))
	q = buildQuery(1, 1, 0, []string{"w", "example", "test"}, dns.TypeA, dns.ClassINET, 0, 0)
	p.RespondUDP(q, buf, src)
	before := calls.Load()
	for range 10 {
		if err := r.Unpack(p.RespondUDP(q, buf, src)); err != nil || len(r.Answer) != 1 || r.Answer[0].(*dns.A).A.String() != "203.0.113.1" {
			t.Fatalf("foreign record: %v %v", r.Answer, err)
		}
	}
	if got := calls.Load() - before; got != 10 {
		t.Errorf("foreign record: hook asked %d times for 10 queries", got)
	}
}

// BenchmarkFastPathHooked compares a static name with the weighted and geo
// hooks of failover, over UDP with EDNS Client Subnet, on the fast path.
func BenchmarkFastPathHooked(b *testing.B) {
	p := dynamicZone(b, func(f failover.AnswerFunc) AnswerFunc { return AnswerFunc(f) })
	buf := make([]byte, 4096)
	src := netip.MustParseAddr("10.0.7.9")
	for _, name := range []string{"s", "w", "g"} {
		q := withECS(buildQuery(1, 1, 0, []string{name, "example", "test"}, dns.TypeA, dns.ClassINET, 1, 1232), 1, 24, []byte{10, 1, 2}, false)
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = p.RespondUDP(q, buf, src)
			}
		})
	}
}

// dynamicZone holds example.test. with s (4 static addresses), w (the same
// 4, failover.WeightedRandom with weights 1/2/3/4) and g (3 regions of 2
// addresses, failover.Geo over 1,024 /24 prefixes 10.x.y.0/24, region
// i mod 3 of us, eu, ap); wrap wraps each hook.
func dynamicZone(tb testing.TB, wrap func(failover.AnswerFunc) AnswerFunc) *Provider {
	tb.Helper()
	p := new(Provider)
	if err := p.AddZone("example.test."); err != nil {
		tb.Fatal(err)
	}
	var rs []libdns.Record
	weights := map[netip.Addr]int{}
	for i := range 4 {
		a := netip.AddrFrom4([4]byte{192, 0, 2, byte(1 + i)})
		weights[a] = i + 1
		rs = append(rs, libdns.Address{Name: "w", TTL: 30 * time.Second, IP: a},
			libdns.Address{Name: "s", TTL: 30 * time.Second, IP: a})
	}
	geo := failover.GeoMap{Prefixes: map[netip.Prefix]string{}, Preferences: map[string][]string{"us": {"eu", "ap"}}, Default: "us"}
	tags := map[netip.Addr][]string{}
	for r, reg := range []string{"us", "eu", "ap"} {
		for k := range 2 {
			a := netip.AddrFrom4([4]byte{198, 51, 100, byte(10*r + k + 1)})
			tags[a] = []string{reg}
			rs = append(rs, libdns.Address{Name: "g", TTL: 30 * time.Second, IP: a})
		}
	}
	for i := range 1024 {
		geo.Prefixes[netip.PrefixFrom(netip.AddrFrom4([4]byte{10, byte(i >> 8), byte(i), 0}), 24)] = []string{"us", "eu", "ap"}[i%3]
	}
	if _, err := p.AppendRecords(context.Background(), "example.test.", rs); err != nil {
		tb.Fatal(err)
	}
	loc, err := failover.NewLocator(geo)
	if err != nil {
		tb.Fatal(err)
	}
	p.SetAnswerFunc("w.example.test.", wrap(failover.WeightedRandom(weights, rand.NewPCG(1, 2))))
	p.SetAnswerFunc("g.example.test.", wrap(failover.Geo(loc, tags)))
	return p
}

// TestHookScope: the EDNS Client Subnet SCOPE PREFIX-LENGTH of a hooked
// reply is the scope the hook reported, never more than the source prefix
// length, a negative one counted as 0, with or without an opinion, on the
// general path (Respond) and the fast path (RespondUDP, RespondTCP) alike.
func TestHookScope(t *testing.T) {
	for _, tc := range []struct {
		scope   int
		opinion bool
		want    uint8
	}{{0, true, 0}, {13, true, 13}, {24, true, 24}, {40, true, 24}, {-3, true, 0}, {13, false, 13}, {0, false, 0}} {
		p := new(Provider)
		if err := p.AddZone("example.test."); err != nil {
			t.Fatal(err)
		}
		var rs []libdns.Record
		for i := range 2 {
			rs = append(rs, libdns.Address{Name: "h", TTL: time.Minute, IP: netip.AddrFrom4([4]byte{192, 0, 2, byte(i + 1)})})
		}
		if _, err := p.AppendRecords(context.Background(), "example.test.", rs); err != nil {
			t.Fatal(err)
		}
		p.SetAnswerFunc("h.example.test.", func(_ netip.Prefix, _, _ string, rrs []libdns.Record) ([]libdns.Record, int) {
			if tc.opinion {
				return rrs[:1], tc.scope
			}
			return nil, tc.scope
		})
		q := withECS(buildQuery(1, 1, 0, []string{"h", "example", "test"}, dns.TypeA, dns.ClassINET, 1, 1232), 1, 24, []byte{10, 1, 2}, false)
		src := netip.MustParseAddr("192.0.2.99")
		req := new(dns.Msg)
		if err := req.Unpack(q); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 4096)
		replies := map[string]*dns.Msg{"general": p.Respond(req, src, false)}
		for _, path := range []string{"udp", "tcp"} {
			for i := range 3 { // the first builds the fast path's entry
				out := p.RespondUDP(q, buf, src)
				if path == "tcp" {
					out = p.RespondTCP(q, buf, src)
				}
				m := new(dns.Msg)
				if err := m.Unpack(out); err != nil {
					t.Fatal(err)
				}
				replies[fmt.Sprint(path, i)] = m
			}
		}
		for path, m := range replies {
			e := m.IsEdns0().Option[0].(*dns.EDNS0_SUBNET)
			if e.SourceScope != tc.want || e.SourceNetmask != 24 {
				t.Errorf("hook scope %d (opinion %v), %s: source %d scope %d, want 24 and %d", tc.scope, tc.opinion, path, e.SourceNetmask, e.SourceScope, tc.want)
			}
			if n := map[bool]int{true: 1, false: 2}[tc.opinion]; len(m.Answer) != n {
				t.Errorf("hook scope %d (opinion %v), %s: %d answers, want %d", tc.scope, tc.opinion, path, len(m.Answer), n)
			}
		}
	}
}
