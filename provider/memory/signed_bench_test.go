package memory

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/gslbkit/gslb/failover"
	"github.com/gslbkit/gslb/provider/dnssec"
	"github.com/miekg/dns"
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

// fastMixDO is fastMix with EDNS and the DO bit on every query.
func fastMixDO(tb testing.TB) [][]byte {
	var qs [][]byte
	for _, q := range fastMix(tb) {
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

// BenchmarkFastPathMixDO is fastMix with DO set, on the unsigned zone.
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
	for _, name := range []string{"www.example.test", "nope.example.test", "x.y.w.example.test", "app.example.test", "hooked.example.test", "host.sub.example.test", "example.test"} {
		f.Add(name, uint16(1), byte(0xC1), uint16(1232))
		f.Add(name, uint16(28), byte(0x81), uint16(512))
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
