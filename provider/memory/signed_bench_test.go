package memory

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/gslbkit/gslb/failover"
	"github.com/gslbkit/gslb/internal/testrecords"
	"github.com/gslbkit/gslb/provider/dnssec"
	"github.com/libdns/libdns"
	"github.com/miekg/dns"
	"github.com/stretchr/testify/require"
)

// The cost of signed answers on the fast path: each benchmark below has an
// unsigned twin answering the same queries (DO set) from the same zone
// without a signer. Compare instruction counts with callgrind as for
// BenchmarkFastPathMix.

// withSigner gives p's zone example.test. a signer, as AddZoneWith with
// ZoneConfig.Signer would have (the fixtures are built unsigned; nothing
// has been answered yet, so no cache holds the unsigned state).
func withSigner(tb testing.TB, p *Provider) {
	k, err := dnssec.GenerateKey("example.test.", dnssec.ECDSAP256SHA256, dnssec.FlagsKSK, 300)
	if err != nil {
		tb.Fatal(err)
	}
	s, err := dnssec.NewSigner("example.test.", dnssec.Config{Keys: []dnssec.ZoneKey{{Key: k}}, SignaturesPerSecond: 10_000_000})
	if err != nil {
		tb.Fatal(err)
	}
	p.load().Zones["example.test."].Signer = s
}

// fastMixDO is testrecords.FastPathMix with EDNS and the DO bit on every query.
func fastMixDO(tb testing.TB) [][]byte {
	var qs [][]byte
	for _, q := range testrecords.FastPathMix(tb) {
		m := new(dns.Msg)
		if err := m.Unpack(q); err != nil {
			tb.Fatal(err)
		}
		if m.IsEdns0() == nil {
			m.SetEdns0(1232, true)
		}
		m.IsEdns0().SetDo()
		b, err := m.Pack()
		if err != nil {
			tb.Fatal(err)
		}
		qs = append(qs, b)
	}
	return qs
}

func benchMixOn(b *testing.B, p *Provider, qs [][]byte) {
	buf := make([]byte, 4096)
	src := netip.MustParseAddr("192.0.2.99")
	for _, q := range qs {
		_ = p.RespondUDP(q, buf, src)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		_ = p.RespondUDP(qs[i%len(qs)], buf, src)
		i++
	}
}

// BenchmarkFastPathMixDO is testrecords.FastPathMix with DO set, on the unsigned zone.
func BenchmarkFastPathMixDO(b *testing.B) { benchMixOn(b, fastFixture(b), fastMixDO(b)) }

// BenchmarkFastPathMixSigned is BenchmarkFastPathMixDO on the same zone
// signed (warm caches: every reply carries its RRSIGs or NSEC).
func BenchmarkFastPathMixSigned(b *testing.B) {
	p := fastFixture(b)
	withSigner(b, p)
	benchMixOn(b, p, fastMixDO(b))
}

// benchHooked is BenchmarkFastPathHooked with DO set, signed or not.
func benchHooked(b *testing.B, signed bool) {
	p := dynamicZone(b, func(f failover.AnswerFunc) AnswerFunc { return AnswerFunc(f) })
	if signed {
		withSigner(b, p)
	}
	buf := make([]byte, 4096)
	src := netip.MustParseAddr("10.0.7.9")
	for _, name := range []string{"s", "w", "g"} {
		q := withECS(buildQuery(1, 1, 0, []string{name, "example", "test"}, dns.TypeA, dns.ClassINET, 0x81, 1232), 1, 24, []byte{10, 1, 2}, false) // EDNS with DO
		b.Run(name, func(b *testing.B) {
			for range 64 { // warm: the weighted hook's four subsets
				_ = p.RespondUDP(q, buf, src)
			}
			b.ReportAllocs()
			for b.Loop() {
				_ = p.RespondUDP(q, buf, src)
			}
		})
	}
}

// BenchmarkFastPathHookedDO is BenchmarkFastPathHooked with DO set,
// unsigned.
func BenchmarkFastPathHookedDO(b *testing.B) { benchHooked(b, false) }

// BenchmarkFastPathHookedSigned is BenchmarkFastPathHookedDO on the zone
// signed.
func BenchmarkFastPathHookedSigned(b *testing.B) { benchHooked(b, true) }

// FuzzSignedFastPath is FuzzFastPath on the zone signed, with the DO and
// CO bits drawn: the fast path's replies (cached, or hooked and assembled
// with cached signatures) are the general path's bytes.
func FuzzSignedFastPath(f *testing.F) {
	p := fastFixture(f)
	withSigner(f, p)
	// A hooked wildcard whose choice depends on the name only, so both
	// paths choose alike.
	var rs []libdns.Record
	for i := range 3 {
		rs = append(rs, libdns.Address{Name: "*.hw", TTL: time.Minute, IP: netip.AddrFrom4([4]byte{192, 0, 2, byte(201 + i)})})
	}
	if _, err := p.AppendRecords(context.Background(), "example.test.", rs); err != nil {
		f.Fatal(err)
	}
	p.SetAnswerFunc("*.hw.example.test.", func(_ netip.Prefix, name, _ string, rrs []libdns.Record) ([]libdns.Record, int) {
		i := len(name) % len(rrs)
		return rrs[i : i+1], 0
	})
	for _, name := range []string{"www.example.test", "nope.example.test", "x.y.w.example.test", "app.example.test", "hooked.example.test", "host.sub.example.test", "example.test", "a.hw.example.test", "b.c.hw.example.test"} {
		f.Add(name, uint16(1), byte(0xC1), uint16(1232))
		f.Add(name, uint16(28), byte(0x81), uint16(512))
		f.Add(name, uint16(46), byte(0x81), uint16(1232))  // RRSIG
		f.Add(name, uint16(255), byte(0x81), uint16(1232)) // ANY
	}
	f.Add("example.test", uint16(48), byte(0x81), uint16(1232))
	f.Add("example.test", uint16(128), byte(0x81), uint16(1232))
	f.Fuzz(func(t *testing.T, name string, qtype uint16, edns byte, size uint16) {
		q := buildQuery(1, 1, 0, strings.Split(name, "."), qtype, dns.ClassINET, edns, size)
		if edns&1 != 0 && edns&0x40 != 0 {
			q[len(q)-4] |= 0x40 // CO, beside DO in the OPT's flags
		}
		sameBothPaths(t, p, q, netip.MustParseAddr("192.0.2.7"))
	})
}

// TestSignedHookedECS: signed hooked answers with EDNS Client Subnet (the
// geo hook, many client subnets; the weighted hook draws at random, so its
// two paths differ by design) are the general path's bytes on the fast
// path.
func TestSignedHookedECS(t *testing.T) {
	p := dynamicZone(t, func(f failover.AnswerFunc) AnswerFunc { return AnswerFunc(f) })
	withSigner(t, p)
	for _, name := range []string{"s", "g"} {
		for i := range 64 {
			q := withECS(buildQuery(uint16(i), 1, 0, []string{name, "example", "test"}, dns.TypeA, dns.ClassINET, 0x81, 1232), 1, 24, []byte{10, byte(i >> 2), byte(i)}, false)
			sameBothPaths(t, p, q, netip.MustParseAddr("10.0.7.9"))
		}
	}
}

// wildHooked adds *.wc.example.test. to p, the four addresses of w chosen
// by weight (failover.WeightedRandom) for every name under it.
func wildHooked(tb testing.TB, p *Provider) {
	tb.Helper()
	var rs []libdns.Record
	weights := map[netip.Addr]int{}
	for i := range 4 {
		a := netip.AddrFrom4([4]byte{192, 0, 2, byte(101 + i)})
		weights[a] = i + 1
		rs = append(rs, libdns.Address{Name: "*.wc", TTL: 30 * time.Second, IP: a})
	}
	if _, err := p.AppendRecords(context.Background(), "example.test.", rs); err != nil {
		tb.Fatal(err)
	}
	p.SetAnswerFunc("*.wc.example.test.", AnswerFunc(failover.WeightedRandom(weights, rand.NewPCG(3, 4))))
}

// wildQueries are DO queries for 8 names under *.wc.example.test.
func wildQueries() [][]byte {
	var qs [][]byte
	for i := range 8 {
		qs = append(qs, buildQuery(1, 1, 0, []string{fmt.Sprintf("h%d", i), "wc", "example", "test"}, dns.TypeA, dns.ClassINET, 0x81, 1232))
	}
	return qs
}

// benchWildHooked answers wildQueries round robin (each name's entry and
// the weighted hook's four subsets warm), signed or not.
func benchWildHooked(b *testing.B, signed bool) {
	p := dynamicZone(b, func(f failover.AnswerFunc) AnswerFunc { return AnswerFunc(f) })
	wildHooked(b, p)
	if signed {
		withSigner(b, p)
	}
	qs := wildQueries()
	buf := make([]byte, 4096)
	src := netip.MustParseAddr("10.0.7.9")
	for range 64 {
		for _, q := range qs {
			_ = p.RespondUDP(q, buf, src)
		}
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		_ = p.RespondUDP(qs[i%len(qs)], buf, src)
		i++
	}
}

// BenchmarkFastPathHookedWildcardDO: names a hooked wildcard synthesises,
// DO set, unsigned.
func BenchmarkFastPathHookedWildcardDO(b *testing.B) { benchWildHooked(b, false) }

// BenchmarkFastPathHookedWildcardSigned is BenchmarkFastPathHookedWildcardDO
// on the zone signed: the answer's RRSIGs (the wildcard's) and the NSEC
// that proves the name asked does not exist.
func BenchmarkFastPathHookedWildcardSigned(b *testing.B) { benchWildHooked(b, true) }

// TestSignedHookedWildcardSameBytes: signed answers of a hooked wildcard
// (the geo hook, so both paths choose alike) are the general path's bytes
// on the fast path, for many names and client subnets, with and without
// DO and CO.
func TestSignedHookedWildcardSameBytes(t *testing.T) {
	p := dynamicZone(t, func(f failover.AnswerFunc) AnswerFunc { return AnswerFunc(f) })
	withSigner(t, p)
	loc, err := failover.NewLocator(failover.GeoMap{Prefixes: map[netip.Prefix]string{
		netip.MustParsePrefix("10.0.0.0/16"): "eu", netip.MustParsePrefix("10.1.0.0/16"): "ap"}, Default: "us"})
	require.NoError(t, err)
	var rs []libdns.Record
	tags := map[netip.Addr][]string{}
	for r, reg := range []string{"us", "eu", "ap"} {
		a := netip.AddrFrom4([4]byte{198, 51, 100, byte(100 + r)})
		tags[a] = []string{reg}
		rs = append(rs, libdns.Address{Name: "*.gw", TTL: 30 * time.Second, IP: a})
	}
	_, err = p.AppendRecords(context.Background(), "example.test.", rs)
	require.NoError(t, err)
	p.SetAnswerFunc("*.gw.example.test.", AnswerFunc(failover.Geo(loc, tags)))
	for i := range 48 {
		for _, edns := range []byte{0x00, 0x01, 0x81, 0xC1} {
			labels := []string{fmt.Sprintf("n%d", i%12), "gw", "example", "test"}
			if i%5 == 0 {
				labels = append([]string{"deep"}, labels...)
			}
			q := buildQuery(uint16(i), 1, 0, labels, dns.TypeA, dns.ClassINET, edns, 1232)
			if edns&0x40 != 0 {
				q[len(q)-4] |= 0x40 // CO
			}
			if edns != 0 && i%2 == 0 {
				q = withECS(q, 1, 24, []byte{10, byte(i % 3), byte(i)}, false)
			}
			sameBothPaths(t, p, q, netip.MustParseAddr("10.1.7.9"))
		}
	}
}

// TestSignedHookedWildcardRenewed: the fast path's entry for a name a
// hooked wildcard synthesises keeps its proof (the NSEC and its RRSIG)
// for Signer.Reuse, then answers through the general path and is renewed:
// across the signatures' refresh, both paths give the same bytes.
func TestSignedHookedWildcardRenewed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		k, err := dnssec.GenerateKey("example.test.", dnssec.ECDSAP256SHA256, dnssec.FlagsKSK, 300)
		require.NoError(t, err)
		s, err := dnssec.NewSigner("example.test.", dnssec.Config{Keys: []dnssec.ZoneKey{{Key: k}}, Validity: time.Hour, Refresh: 4 * time.Minute})
		require.NoError(t, err)
		p := new(Provider)
		cfg := DefaultZoneConfig()
		cfg.Signer = s
		require.NoError(t, p.AddZoneWith("example.test.", cfg))
		_, err = p.AppendRecords(context.Background(), "example.test.", []libdns.Record{
			libdns.Address{Name: "*.wc", TTL: time.Minute, IP: netip.MustParseAddr("192.0.2.1")},
			libdns.Address{Name: "*.wc", TTL: time.Minute, IP: netip.MustParseAddr("192.0.2.2")},
		})
		require.NoError(t, err)
		p.SetAnswerFunc("*.wc.example.test.", func(_ netip.Prefix, _, _ string, rrs []libdns.Record) ([]libdns.Record, int) {
			return rrs[1:], 0
		})
		q := buildQuery(1, 1, 0, []string{"x", "wc", "example", "test"}, dns.TypeA, dns.ClassINET, 0x81, 1232)
		src := netip.MustParseAddr("192.0.2.9")
		var replies [][]byte
		for range 5 {
			sameBothPaths(t, p, q, src)
			replies = append(replies, p.RespondUDP(q, make([]byte, 4096), src))
			time.Sleep(20 * time.Minute)
		}
		require.Equal(t, replies[0], replies[1], "within the signatures' refresh: the same reply")
		require.NotEqual(t, replies[0], replies[4], "past it: new signatures")
		m := new(dns.Msg)
		require.NoError(t, m.Unpack(replies[4]))
		key := s.DNSKEYs()[0].(*dns.DNSKEY)
		var nsec []dns.RR
		var sig *dns.RRSIG
		for _, rr := range m.Ns {
			switch x := rr.(type) {
			case *dns.NSEC:
				nsec = append(nsec, x)
			case *dns.RRSIG:
				sig = x
			}
		}
		require.NotNil(t, sig, "%s", m)
		require.NoError(t, sig.Verify(key, nsec))
		require.True(t, sig.ValidityPeriod(time.Now()), "%s", sig)
	})
}

// TestSignedHookedWildcardFast: a signed answer a hook chooses among a
// wildcard's records is assembled by the fast path once the name's entry
// and the subset's RRSIGs are warm: no allocation, the hook asked once per
// query.
func TestSignedHookedWildcardFast(t *testing.T) {
	p := dynamicZone(t, func(f failover.AnswerFunc) AnswerFunc { return AnswerFunc(f) })
	withSigner(t, p)
	var calls int
	_, err := p.AppendRecords(context.Background(), "example.test.", []libdns.Record{
		libdns.Address{Name: "*.wc", TTL: time.Minute, IP: netip.MustParseAddr("192.0.2.1")},
		libdns.Address{Name: "*.wc", TTL: time.Minute, IP: netip.MustParseAddr("192.0.2.2")},
	})
	require.NoError(t, err)
	p.SetAnswerFunc("*.wc.example.test.", func(_ netip.Prefix, _, _ string, rrs []libdns.Record) ([]libdns.Record, int) {
		calls++
		return rrs[calls%2 : calls%2+1], 0
	})
	buf := make([]byte, 4096)
	src := netip.MustParseAddr("192.0.2.9")
	for _, co := range []bool{false, true} {
		q := buildQuery(1, 1, 0, []string{"some", "name", "wc", "example", "test"}, dns.TypeA, dns.ClassINET, 0x81, 1232)
		if co {
			q[len(q)-4] |= 0x40
		}
		for range 4 {
			_ = p.RespondUDP(q, buf, src)
		}
		before := calls
		if a := testing.AllocsPerRun(100, func() { _ = p.RespondUDP(q, buf, src) }); a != 0 {
			t.Errorf("CO %v: %v allocations per query, want 0", co, a)
		}
		require.Equal(t, 101, calls-before, "the hook asked once per query")
		m := new(dns.Msg)
		require.NoError(t, m.Unpack(p.RespondUDP(q, buf, src)))
		require.Len(t, m.Answer, 2, "%s", m)
		require.Len(t, m.Ns, 2, "the proof NSEC and its RRSIG: %s", m)
	}
}
