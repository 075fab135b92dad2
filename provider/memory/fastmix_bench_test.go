package memory

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"testing"
	"time"

	"github.com/gslbkit/gslb/internal/testrecords"
	"github.com/libdns/libdns"
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

// BenchmarkFastPathRunZone answers the shape of bench/dns-vs-peers/run.sh
// (embedded -gen): 100 names of 2 to 4 A records, one in five a CNAME to
// one of them, and 10,000 A queries without EDNS, one in ten for one of
// some 1,000 names that do not exist, replayed in turn as dnsperf does
// (after one pass: from the second on every question has been seen).
func BenchmarkFastPathRunZone(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	var rs []libdns.Record
	var names []string
	for i := range 100 {
		name := fmt.Sprintf("svc%03d", i)
		names = append(names, name)
		if i%5 == 4 {
			rs = append(rs, libdns.CNAME{Name: name, TTL: 30 * time.Second, Target: fmt.Sprintf("svc%03d.example.test.", i-1-r.IntN(3))})
			continue
		}
		for j := range 2 + r.IntN(3) {
			rs = append(rs, libdns.Address{Name: name, TTL: 30 * time.Second, IP: netip.AddrFrom4([4]byte{10, byte(i / 250), byte(i % 250), byte(j + 1)})})
		}
	}
	p := new(Provider)
	if err := p.AddZone("example.test."); err != nil {
		b.Fatal(err)
	}
	if _, err := p.AppendRecords(context.Background(), "example.test.", rs); err != nil {
		b.Fatal(err)
	}
	var qs [][]byte
	for i := range 10000 {
		var name string
		if r.IntN(10) == 0 { // as embedded -gen draws them: the same queries
			name = fmt.Sprintf("nx%06d", r.IntN(1000000))
		} else {
			name = names[r.IntN(len(names))]
		}
		qs = append(qs, buildQuery(uint16(i), 1, 0, []string{name, "example", "test"}, dns.TypeA, dns.ClassINET, 0, 0))
	}
	buf := make([]byte, 4096)
	for _, q := range qs { // the first pass; benchMixOn's warm-up is the second
		_ = p.RespondUDP(q, buf, netip.MustParseAddr("192.0.2.99"))
	}
	benchMixOn(b, p, qs)
}
