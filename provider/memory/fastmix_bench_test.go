package memory

import (
	"net/netip"
	"testing"

	"github.com/gslbkit/gslb/internal/testrecords"
	"github.com/miekg/dns"
)

// BenchmarkFastPathMix answers testrecords.FastPathMix round robin through RespondUDP (the
// fast path once warm). Count instructions per query with callgrind at two
// iteration counts and take the difference (see the package's bench notes).
func BenchmarkFastPathMix(b *testing.B) {
	p := fastFixture(b)
	qs := testrecords.FastPathMix(b)
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

// fastMixECS is testrecords.FastPathMix with EDNS on every query and an EDNS Client Subnet
// option (a /24 or a /56, 256 different subnets in turn), as a resolver
// forwarding its clients' subnets sends them.
func fastMixECS(tb testing.TB) [][]byte {
	var qs [][]byte
	for i, q := range testrecords.FastPathMix(tb) {
		m := new(dns.Msg)
		if err := m.Unpack(q); err != nil {
			tb.Fatal(err)
		}
		if m.IsEdns0() == nil {
			m.SetEdns0(1232, false)
		}
		q, err := m.Pack()
		if err != nil {
			tb.Fatal(err)
		}
		for j := range 32 {
			if (i+j)%2 == 0 {
				qs = append(qs, withECS(q, 1, 24, []byte{198, 51, byte(i*32 + j)}, false))
			} else {
				qs = append(qs, withECS(q, 2, 56, []byte{0x20, 0x01, 0x0d, 0xb8, 0, 0, byte(i*32 + j)}, false))
			}
		}
	}
	return qs
}

// BenchmarkFastPathMixECS is BenchmarkFastPathMix with fastMixECS: the
// same names, each query carrying a client subnet; on these static names
// it should cost what BenchmarkFastPathMix costs.
func BenchmarkFastPathMixECS(b *testing.B) {
	benchMix(b, fastMixECS(b), false)
}

// BenchmarkFastPathMixTCP answers testrecords.FastPathMix through RespondTCP (the TCP
// entries of the fast path once warm).
func BenchmarkFastPathMixTCP(b *testing.B) {
	benchMix(b, testrecords.FastPathMix(b), true)
}

func benchMix(b *testing.B, qs [][]byte, tcp bool) {
	p := fastFixture(b)
	buf := make([]byte, 4096)
	src := netip.MustParseAddr("192.0.2.99")
	respond := p.RespondUDP
	if tcp {
		respond = p.RespondTCP
	}
	for _, q := range qs {
		_ = respond(q, buf, src)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		_ = respond(qs[i%len(qs)], buf, src)
		i++
	}
}
