package memory

import (
	"bytes"
	"context"
	"fmt"
	"net/netip"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gslbkit/gslb/provider/internal/answer"
	"github.com/libdns/libdns"
	"github.com/miekg/dns"
)

// staticFixture is fastFixture with the shapes staticReply must tell
// apart: CNAMEs into and out of the zone, to the apex, to a CNAME, to a
// missing name, to a delegated name and to a wildcard; wildcards holding
// addresses and CNAMEs; TXT records with escapes, several strings and the
// longest string; a child zone; long names; a per-name hook on a CNAME's
// target.
func staticFixture(t testing.TB) *Provider {
	p := fastFixture(t)
	ttl := 30 * time.Second
	rs := []libdns.Record{
		libdns.Address{Name: "@", TTL: ttl, IP: netip.MustParseAddr("192.0.2.50")},
		libdns.Address{Name: "@", TTL: ttl, IP: netip.MustParseAddr("2001:db8::50")},
		libdns.CNAME{Name: "out", TTL: ttl, Target: "www.example.net."},
		libdns.CNAME{Name: "apex", TTL: 60 * time.Second, Target: "example.test."},
		libdns.CNAME{Name: "chain", TTL: ttl, Target: "app.example.test."},
		libdns.CNAME{Name: "dangling", TTL: ttl, Target: "missing.example.test."},
		libdns.CNAME{Name: "deleg", TTL: ttl, Target: "x.sub.example.test."},
		libdns.CNAME{Name: "towild", TTL: ttl, Target: "q.w.example.test."},
		libdns.CNAME{Name: "deep.er.x", TTL: ttl, Target: "t.example.test."},
		libdns.CNAME{Name: "tohook", TTL: ttl, Target: "hooked.example.test."},
		libdns.CNAME{Name: "self", TTL: ttl, Target: "self.example.test."},
		libdns.CNAME{Name: "*.wcx", TTL: ttl, Target: "long-target-name.under.a.deep.chain.example.test."},
		libdns.Address{Name: "long-target-name.under.a.deep.chain", TTL: ttl, IP: netip.MustParseAddr("192.0.2.60")},
		libdns.RR{Name: "esc", TTL: ttl, Type: "TXT", Data: `"a\"b" "c\\d"`},
		libdns.RR{Name: "multi", TTL: ttl, Type: "TXT", Data: `"one" "two" ""`},
		libdns.TXT{Name: "longest", TTL: ttl, Text: strings.Repeat("y", 255)},
		libdns.Address{Name: "under_score-1", TTL: ttl, IP: netip.MustParseAddr("192.0.2.61")},
		libdns.Address{Name: strings.Repeat("a", 63) + "." + strings.Repeat("b", 63) + "." + strings.Repeat("c", 60), TTL: ttl, IP: netip.MustParseAddr("192.0.2.62")},
	}
	for i := range 30 {
		rs = append(rs, libdns.Address{Name: "many", TTL: ttl, IP: netip.AddrFrom4([4]byte{198, 18, 0, byte(i)})})
	}
	// Delegations: two in-zone servers with A and AAAA glue, one of them
	// a name of the zone above the cut; a server out of the zone (no
	// glue); three servers (more names than staticReferral compresses);
	// glue too large for 512 bytes; a cut below a cut.
	rs = append(rs,
		libdns.NS{Name: "two", TTL: ttl, Target: "a.ns.two.example.test."},
		libdns.NS{Name: "two", TTL: ttl, Target: "glue-host.example.test."},
		libdns.Address{Name: "a.ns.two", TTL: ttl, IP: netip.MustParseAddr("192.0.2.80")},
		libdns.Address{Name: "a.ns.two", TTL: ttl, IP: netip.MustParseAddr("2001:db8::80")},
		libdns.Address{Name: "glue-host", TTL: ttl, IP: netip.MustParseAddr("192.0.2.81")},
		libdns.NS{Name: "away", TTL: ttl, Target: "ns.example.net."},
		libdns.NS{Name: "three", TTL: ttl, Target: "a.three.example.test."},
		libdns.NS{Name: "three", TTL: ttl, Target: "b.three.example.test."},
		libdns.NS{Name: "three", TTL: ttl, Target: "c.three.example.test."},
		libdns.Address{Name: "a.three", TTL: ttl, IP: netip.MustParseAddr("192.0.2.82")},
		libdns.NS{Name: "fat", TTL: ttl, Target: "ns.fat.example.test."},
		libdns.NS{Name: "inner.two", TTL: ttl, Target: "ns.inner.two.example.test."},
	)
	for i := range 40 {
		rs = append(rs, libdns.Address{Name: "ns.fat", TTL: ttl, IP: netip.AddrFrom4([4]byte{198, 19, 0, byte(i)})})
	}
	if _, err := p.AppendRecords(context.Background(), "example.test.", rs); err != nil {
		t.Fatal(err)
	}
	if err := p.AddZone("child.example.test."); err != nil {
		t.Fatal(err)
	}
	// Zones whose SOA names share suffixes with the questions in other
	// ways: out of the zone, below a name of the zone, the apex itself.
	for _, z := range []struct{ name, ns, mbox string }{
		{"soa.test.", "ns.elsewhere.test.", "admin.soa.test."},
		{"deep.soa2.test.", "a.ns.in.deep.soa2.test.", "b.ns.in.deep.soa2.test."},
		{"apex.soa3.test.", "apex.soa3.test.", "x.soa3.test."},
	} {
		cfg := DefaultZoneConfig()
		cfg.NS, cfg.Mbox = []string{z.ns}, z.mbox
		if err := p.AddZoneWith(z.name, cfg); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := p.AppendRecords(context.Background(), "child.example.test.", []libdns.Record{
		libdns.Address{Name: "in", TTL: ttl, IP: netip.MustParseAddr("192.0.2.70")},
		libdns.CNAME{Name: "up", TTL: ttl, Target: "www.example.test."},
	}); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestStaticReplySameBytes asks staticReply directly, for every name of
// staticFixture, in several cases, types and EDNS shapes, and requires the
// general path's bytes whenever it answers; it must answer the plain shapes.
func TestStaticReplySameBytes(t *testing.T) {
	t.Run("maps", func(t *testing.T) { staticSameBytes(t, staticFixture(t), true) })
	t.Run("index", func(t *testing.T) { staticSameBytes(t, withIndexes(staticFixture(t)), true) })
}

// withIndexes gives every zone of p its name index (zonedata.Index),
// which only large zones get otherwise, and returns p: staticReply then
// looks names up there.
func withIndexes(p *Provider) *Provider {
	for _, z := range p.load().Zones {
		z.IndexAnySize()
	}
	return p
}

// TestStaticReplyIndexCarried: writes to a zone with a name index (names
// changed, added, removed, a delegation made and undone, the serial
// advanced) publish versions that carry it, updated, and staticReply
// answers from them as the general path does.
func TestStaticReplyIndexCarried(t *testing.T) {
	p := withIndexes(staticFixture(t))
	ctx := context.Background()
	ttl := 300 * time.Second
	steps := []func() error{
		func() error {
			_, err := p.SetRecords(ctx, "example.test.", []libdns.Record{libdns.Address{Name: "www", TTL: ttl, IP: netip.MustParseAddr("192.0.2.200")}})
			return err
		},
		func() error {
			_, err := p.AppendRecords(ctx, "example.test.", []libdns.Record{libdns.Address{Name: "new.deep.er", TTL: ttl, IP: netip.MustParseAddr("192.0.2.201")}, libdns.NS{Name: "nope", TTL: ttl, Target: "ns.example.net."}})
			return err
		},
		func() error { // app's records and sub's delegation go
			all, err := p.GetRecords(ctx, "example.test.")
			if err != nil {
				return err
			}
			var gone []libdns.Record
			for _, r := range all {
				if rr := r.RR(); rr.Name == "app" || rr.Name == "sub" && rr.Type == "NS" {
					gone = append(gone, r)
				}
			}
			if len(gone) < 2 {
				return fmt.Errorf("%d records of app and sub's NS: the fixture changed", len(gone))
			}
			_, err = p.DeleteRecords(ctx, "example.test.", gone)
			return err
		},
		func() error {
			_, _, err := p.AdvanceSerial("example.test.", 1<<20)
			return err
		},
	}
	for i, step := range steps {
		if err := step(); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if p.load().Zones["example.test."].FastIndex() == nil {
			t.Fatalf("step %d: the index was not carried", i)
		}
		staticSameBytes(t, p, i < 2)
	}
}

// staticSameBytes asks p (staticFixture, changed or not) as
// TestStaticReplySameBytes says; with fixture false, p's names changed,
// and which questions staticReply must answer is not checked.
func staticSameBytes(t *testing.T, p *Provider, fixture bool) {
	names := []string{
		"www", "WwW", "app", "t", "big", "hooked", "a.b", "b", "x.w", "y.x.w", "q.wc", "sub", "ns.sub", "x.sub", "mx",
		"out", "apex", "chain", "dangling", "deleg", "towild", "deep.er.x", "er.x", "tohook", "self", "zz.wcx",
		"esc", "multi", "longest", "under_score-1", "many", "nope", "*.w", "in.child", "up.child", "child",
		strings.Repeat("a", 63) + "." + strings.Repeat("B", 63) + "." + strings.Repeat("c", 60),
		"", "dyn.hooks.test.", "cn.hooks.test.", "x.wild.hooks.test.", "example.net.",
		"ns1", "x.ns1", "hostmaster", "y.hostmaster", "z.y.hostmaster", "ns1.child", "q.ns1.child", "hostmaster.child",
		"soa.test.", "x.soa.test.", "admin.soa.test.", "x.admin.soa.test.", "elsewhere.soa.test.", "ns.elsewhere.soa.test.",
		"deep.soa2.test.", "in.deep.soa2.test.", "ns.in.deep.soa2.test.", "a.ns.in.deep.soa2.test.", "x.b.ns.in.deep.soa2.test.",
		"apex.soa3.test.", "q.apex.soa3.test.", "x.soa3.test.",
		"two", "x.two", "a.ns.two", "x.inner.two", "away", "q.away", "three", "x.three", "fat", "x.fat",
	}
	mustStatic := map[string]bool{"www A": true, "WwW A": true, "app A": true, "t TXT": true, "x.w A": true,
		"q.wc A": true, "apex A": true, "apex AAAA": true, "deep.er.x TXT": true, "zz.wcx A": true,
		"multi TXT": true, "longest TXT": true, "under_score-1 A": true, "many A": true, " A": true, "in.child A": true,
		"nope A": true, "nope TXT": true, "t A": true, "b A": true, "er.x AAAA": true, "y.x.w AAAA": true, "child TXT": true,
		"x.ns1 A": true, "y.hostmaster A": true, "q.ns1.child TXT": true, "x.admin.soa.test. A": true,
		"ns.elsewhere.soa.test. A": true, "a.ns.in.deep.soa2.test. A": true, "x.b.ns.in.deep.soa2.test. A": true,
		"q.apex.soa3.test. AAAA": true, "apex.soa3.test. A": true,
		"sub A": true, "x.sub A": true, "sub TXT": true, "two A": true, "x.two AAAA": true, "a.ns.two A": true,
		"x.inner.two A": true, "away A": true, "q.away TXT": true, "x.fat A": true}
	src := netip.MustParseAddr("192.0.2.99")
	buf := make([]byte, 4096)
	answered := map[string]bool{}
	for _, name := range names {
		fq := name
		if !strings.HasSuffix(fq, ".") {
			fq = strings.TrimPrefix(fq+".example.test.", ".")
		}
		for _, qt := range []uint16{dns.TypeA, dns.TypeAAAA, dns.TypeTXT, dns.TypeCNAME, dns.TypeMX} {
			for _, shape := range []struct {
				edns byte
				size uint16
				ecs  bool
			}{{0, 0, false}, {1, 1232, false}, {0x81, 1232, false}, {1, 512, false}, {1, 4096, true}, {1, 600, true}} {
				q := buildQuery(0xbeef, 1, 0x10, strings.Split(strings.TrimSuffix(fq, "."), "."), qt, dns.ClassINET, shape.edns, shape.size)
				if shape.ecs {
					q = withECS(q, 1, 24, []byte{198, 51, 100}, false)
				}
				for _, tcp := range []bool{false, true} {
					if !answer.ParseFast(q, DefaultMaxUDPSize, tcp) {
						t.Fatalf("%s: parseFast refused %x", fq, q)
					}
					got := p.eng.StaticReply(q, buf, tcp)
					if got == nil {
						continue
					}
					answered[name+" "+dns.TypeToString[qt]] = true
					want := p.RespondWire(q, src, tcp)
					if !bytes.Equal(got, want) {
						t.Fatalf("%s %s edns %x ecs %v tcp %v: static reply differs\nstatic  %x\ngeneral %x",
							fq, dns.TypeToString[qt], shape.edns, shape.ecs, tcp, got, want)
					}
				}
			}
		}
	}
	if !fixture {
		return
	}
	for k := range mustStatic {
		if !answered[k] {
			t.Errorf("%s: not answered by staticReply", k)
		}
	}
	for _, k := range []string{"hooked A", "tohook A", "dangling A", "deleg A", "x.three A", "esc TXT", "www MX", "dyn.hooks.test. A", "x.wild.hooks.test. A", "self A", "towild A", "up.child A"} {
		if answered[k] {
			t.Errorf("%s: answered by staticReply, want the general path", k)
		}
	}
}

// TestStaticReplyNoAlloc: a static answer past the cache allocates nothing.
func TestStaticReplyNoAlloc(t *testing.T) {
	p := staticFixture(t)
	buf := make([]byte, 4096)
	for _, name := range []string{"www", "chain", "x.w", "nope"} {
		q := buildQuery(1, 1, 0, []string{name, "example", "test"}, dns.TypeA, dns.ClassINET, 1, 1232)
		if a := testing.AllocsPerRun(100, func() { _ = p.eng.StaticReply(q, buf, false) }); a != 0 {
			t.Errorf("%s: %v allocations", name, a)
		}
	}
}

// TestFastCacheBudget: a zone asked more questions the cache keeps than
// its budget holds is answered right past it, from staticReply and the
// general path, and the cache stays within its budget.
func TestFastCacheBudget(t *testing.T) {
	if testing.Short() {
		t.Skip("fills a 1 MiB cache")
	}
	defer answer.SetCacheBudget(answer.SetCacheBudget(1 << 20))
	p := new(Provider)
	if err := p.AddZone("big.test."); err != nil {
		t.Fatal(err)
	}
	const names = 20000
	var rs []libdns.Record
	for i := range names {
		rs = append(rs, libdns.TXT{Name: fmt.Sprintf("n%d", i), TTL: time.Minute, Text: strings.Repeat("z", 400)})
	}
	if _, err := p.AppendRecords(context.Background(), "big.test.", rs); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4096)
	src := netip.MustParseAddr("192.0.2.1")
	for i := range names {
		for range 2 { // a question enters the cache on its second sighting
			for _, qt := range []uint16{dns.TypeTXT, dns.TypeMX} { // TXT static, MX NODATA (general path, cached)
				q := buildQuery(uint16(i), 0, 0, []string{fmt.Sprintf("n%d", i), "big", "test"}, qt, dns.ClassINET, 1, 1232)
				if got, want := p.RespondUDP(q, buf, src), p.RespondWire(q, src, false); !bytes.Equal(got, want) {
					t.Fatalf("n%d %d: fast path differs", i, qt)
				}
			}
		}
	}
	n, _, b := p.eng.CacheStats()
	if b > p.eng.CacheLimit() || n >= names || n < 1000 {
		t.Fatalf("cache: %d bytes in %d entries (budget %d, %d questions the cache keeps)", b, n, p.eng.CacheLimit(), names)
	}
}

// BenchmarkStaticReply is what a static answer costs once the cache is
// full: parseFast and staticReply, for an address set, a CNAME into it, a
// wildcard and a name that does not exist (compare BenchmarkRespond's
// general path).
func BenchmarkStaticReply(b *testing.B) {
	p := staticFixture(b)
	buf := make([]byte, 4096)
	for _, name := range []string{"www", "app", "x.w", "nope"} {
		q := buildQuery(1, 1, 0, strings.Split(name+".example.test", "."), dns.TypeA, dns.ClassINET, 1, 1232)
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if p.eng.StaticReply(q, buf, false) == nil {
					b.Fatalf("%x: not a static answer", q)
				}
			}
		})
	}
}

// BenchmarkFastPathSpread answers A queries spread over the 20,000 names of
// a zone through RespondUDP: "cached" with every reply in the cache (a
// small zone), "past-cache" with a cache that holds nothing (a zone larger
// than the cache, queried across its names: staticReply), "nx-past-cache"
// the same for 20,000 names that do not exist (NXDOMAIN).
func BenchmarkFastPathSpread(b *testing.B) {
	p := new(Provider)
	if err := p.AddZone("example.test."); err != nil {
		b.Fatal(err)
	}
	const names = 20000
	var rs []libdns.Record
	var qs, nx [][]byte
	for i := range names {
		nx = append(nx, buildQuery(uint16(i), 1, 0, []string{fmt.Sprintf("nx%07d", i), "example", "test"}, dns.TypeA, dns.ClassINET, 1, 1232))
		n := fmt.Sprintf("h%07d", i)
		rs = append(rs, libdns.Address{Name: n, TTL: time.Minute, IP: netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)})})
		qs = append(qs, buildQuery(uint16(i), 1, 0, []string{n, "example", "test"}, dns.TypeA, dns.ClassINET, 1, 1232))
	}
	if _, err := p.AppendRecords(context.Background(), "example.test.", rs); err != nil {
		b.Fatal(err)
	}
	buf := make([]byte, 4096)
	src := netip.MustParseAddr("192.0.2.1")
	for _, c := range []struct {
		name   string
		budget int
		qs     [][]byte
	}{{"cached", answer.CacheBudget(), qs}, {"past-cache", 0, qs}, {"nx-past-cache", 0, nx}} {
		b.Run(c.name, func(b *testing.B) {
			defer answer.SetCacheBudget(answer.SetCacheBudget(c.budget))
			p.eng.DropCache()
			for _, q := range c.qs {
				_ = p.RespondUDP(q, buf, src)
			}
			runtime.GC() // the zone's building done: no collection in the loop
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				_ = p.RespondUDP(c.qs[i%names], buf, src)
				i++
			}
		})
	}
}

// BenchmarkFastPathSmallSpread answers A and AAAA queries spread over the
// 2,000 names of a zone (4,000 questions, more than the hot table's
// slots) through RespondUDP, each asked twice before: a view this small
// keeps its static answers in the cache, so every answer is a hit.
func BenchmarkFastPathSmallSpread(b *testing.B) {
	p := new(Provider)
	if err := p.AddZone("example.test."); err != nil {
		b.Fatal(err)
	}
	const names = 2000
	var rs []libdns.Record
	var qs [][]byte
	for i := range names {
		n := fmt.Sprintf("h%07d", i)
		rs = append(rs, libdns.Address{Name: n, TTL: time.Minute, IP: netip.AddrFrom4([4]byte{10, 0, byte(i >> 8), byte(i)})},
			libdns.Address{Name: n, TTL: time.Minute, IP: netip.AddrFrom16([16]byte{0x20, 0x01, 0x0d, 0xb8, 14: byte(i >> 8), 15: byte(i)})})
		for _, t := range []uint16{dns.TypeA, dns.TypeAAAA} {
			qs = append(qs, buildQuery(uint16(i), 1, 0, []string{n, "example", "test"}, t, dns.ClassINET, 1, 1232))
		}
	}
	if _, err := p.AppendRecords(context.Background(), "example.test.", rs); err != nil {
		b.Fatal(err)
	}
	buf := make([]byte, 4096)
	for _, q := range qs { // the first sighting; benchMixOn's warm-up is the second
		_ = p.RespondUDP(q, buf, netip.MustParseAddr("192.0.2.99"))
	}
	benchMixOn(b, p, qs)
}

// staticFuzzZones are the zones FuzzStaticReply puts its names in.
var staticFuzzZones = []string{"example.test.", "child.example.test.", "soa.test.", "deep.soa2.test.", "apex.soa3.test.", "hooks.test.", "test.", ""}

// FuzzStaticReply asks staticReply directly for names of staticFixture
// (a fuzzed name, in one of its zones or none) and requires the general
// path's bytes whenever it answers, over UDP and TCP.
func FuzzStaticReply(f *testing.F) {
	p, pi := staticFixture(f), withIndexes(staticFixture(f))
	for _, s := range []string{"www", "WwW", "app", "x.w", "y.x.w", "nope", "ns1", "x.ns1", "y.hostmaster", "zz.wcx", "many", "in.child", "a.ns.in.deep", "x.b.ns.in.deep", "q.apex", "x.admin", "a.b", "deep.er.x", "sub", "x.sub", "", "*.w", "a.b.c.d.e", "two", "x.inner.two", "away", "x.three", "x.fat"} {
		for z := range staticFuzzZones {
			f.Add(s, uint8(z), uint16(dns.TypeA), byte(1), uint16(1232))
		}
	}
	f.Add("t", uint8(0), uint16(dns.TypeTXT), byte(0), uint16(0))
	f.Add("www", uint8(0), uint16(dns.TypeAAAA), byte(1), uint16(512))
	f.Add("longest", uint8(0), uint16(dns.TypeTXT), byte(1), uint16(600))
	f.Add("many", uint8(0), uint16(dns.TypeA), byte(0), uint16(0))
	src := netip.MustParseAddr("192.0.2.99")
	buf := make([]byte, 4096)
	f.Fuzz(func(t *testing.T, name string, zone uint8, qtype uint16, edns byte, size uint16) {
		labels := strings.Split(name, ".")
		labels = append(labels, strings.Split(staticFuzzZones[int(zone)%len(staticFuzzZones)], ".")...)
		q := buildQuery(0x4321, 1, 0x10, labels, qtype, dns.ClassINET, edns&0x81, size)
		if edns&3 == 3 {
			q = withECS(q, 1, int(edns>>2)%33, []byte{198, 51, 100, 7}, false)
		}
		for _, tcp := range []bool{false, true} {
			if !answer.ParseFast(q, DefaultMaxUDPSize, tcp) {
				return
			}
			for _, p := range []*Provider{p, pi} {
				got := p.eng.StaticReply(q, buf, tcp)
				if got == nil {
					continue
				}
				if want := p.RespondWire(q, src, tcp); !bytes.Equal(got, want) {
					t.Fatalf("tcp %v: static reply differs\nquery   %x\nstatic  %x\ngeneral %x", tcp, q, got, want)
				}
			}
		}
	})
}

// BenchmarkFastPathUniform answers A queries through RespondUDP over a zone
// of GSLBKIT_SCALE_NAMES names (100,000 by default; one A record each, as
// bench/dns-vs-peers/scale.sh's zone mostly holds), with the cache's own
// budget: "cached" asks the first 20,000 names (all from the cache),
// "uniform" asks every name in turn, 1 in 20 a name that does not exist
// (as scale.sh's uniform.txt: past the cache, most answers come from
// staticReply), "uniform-no-cache" the same with a cache that holds
// nothing (what the cache saves a uniform load). Compare them in one run; one size at a time (1M names
// take some 1 GB):
//
//	GSLBKIT_SCALE_NAMES=1000000 go test -run '^$' -bench FastPathUniform -benchtime 3000000x ./provider/memory/
func BenchmarkFastPathUniform(b *testing.B) {
	names := 100000
	if s := os.Getenv("GSLBKIT_SCALE_NAMES"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v < 20000 {
			b.Fatalf("GSLBKIT_SCALE_NAMES=%q: want a number of names ≥ 20000", s)
		}
		names = v
	}
	sb := NewSnapshotBuilder(context.Background())
	if err := sb.Zone("example.test.", SOA{NS: "ns1.example.test.", Mbox: "hostmaster.example.test.", Serial: 1, Refresh: 3600, Retry: 600, Expire: 86400, Minimum: 300, TTL: 300}); err != nil {
		b.Fatal(err)
	}
	qs := make([][]byte, names)
	for i := range names {
		n := fmt.Sprintf("h%07d", i)
		if err := sb.Add(ZoneRecord{Name: n, Type: "A", TTL: 300, Data: fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255)}); err != nil {
			b.Fatal(err)
		}
		if i%20 == 19 {
			n = fmt.Sprintf("nx%07d", i)
		}
		qs[i] = buildQuery(uint16(i), 1, 0, []string{n, "example", "test"}, dns.TypeA, dns.ClassINET, 1, 1232)
	}
	p := new(Provider)
	cfg := DefaultZoneConfig()
	cfg.NS = []string{"ns1.example.test."}
	if err := p.AddZoneWith("example.test.", cfg); err != nil {
		b.Fatal(err)
	}
	if err := p.RestoreBuilt(sb); err != nil {
		b.Fatal(err)
	}
	buf := make([]byte, 4096)
	src := netip.MustParseAddr("192.0.2.1")
	for _, c := range []struct {
		name   string
		budget int
		qs     [][]byte
	}{{"cached", answer.CacheBudget(), qs[:20000]}, {"uniform", answer.CacheBudget(), qs}, {"uniform-no-cache", 0, qs}} {
		b.Run(c.name, func(b *testing.B) {
			defer answer.SetCacheBudget(answer.SetCacheBudget(c.budget))
			p.eng.DropCache()
			for _, q := range c.qs {
				_ = p.RespondUDP(q, buf, src)
			}
			runtime.GC()
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				_ = p.RespondUDP(c.qs[i%len(c.qs)], buf, src)
				i++
			}
		})
	}
}

// TestStaticFirst: staticReply answers before the cache, which keeps what
// it cannot give; every answer stays the general path's, from the cache or
// not, three times over (a key enters on its second sighting: the third
// answer is from whatever the second stored), with a small cache.
func TestStaticFirst(t *testing.T) {
	defer answer.SetCacheBudget(answer.SetCacheBudget(2000))
	p := staticFixture(t)
	p.eng.DropCache()
	src := netip.MustParseAddr("192.0.2.99")
	buf := make([]byte, 4096)
	for _, name := range []string{"www", "app", "x.w", "nope", "hooked", "tohook", "sub", "x.sub", "mx", "many", "x.ns1", "in.child", "dyn.hooks.test.", "x.admin.soa.test."} {
		fq := name
		if !strings.HasSuffix(fq, ".") {
			fq += ".example.test."
		}
		for _, qt := range []uint16{dns.TypeA, dns.TypeAAAA, dns.TypeTXT, dns.TypeMX} {
			for _, edns := range []byte{0, 1, 0x81} {
				q := buildQuery(7, 1, 0, strings.Split(strings.TrimSuffix(fq, "."), "."), qt, dns.ClassINET, edns, 1232)
				for range 3 {
					for _, tcp := range []bool{false, true} {
						want := p.RespondWire(q, src, tcp)
						got := p.RespondUDP(q, buf, src)
						if tcp {
							got = p.RespondTCP(q, buf, src)
						}
						if !bytes.Equal(got, want) {
							t.Fatalf("%s %d edns %x tcp %v: differs\nfast    %x\ngeneral %x", fq, qt, edns, tcp, got, want)
						}
					}
				}
			}
		}
	}
	if n, _, _ := p.eng.CacheStats(); n == 0 {
		t.Errorf("the cache stored nothing: the general path's answers belong in it")
	}
}
