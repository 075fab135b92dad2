package memory

import (
	"net/netip"
	"testing"

	"github.com/miekg/dns"
)

// fastMix is the query mix BenchmarkFastPathMix sends: hits of the common
// shapes (an address set, a CNAME into it, a TXT, NXDOMAIN, NODATA, with and
// without EDNS).
func fastMix(tb testing.TB) [][]byte {
	var qs [][]byte
	for _, c := range []struct {
		name string
		t    uint16
		edns bool
	}{
		{"WWW.example.test.", dns.TypeA, false},
		{"www.example.test.", dns.TypeA, true},
		{"app.example.test.", dns.TypeA, true},
		{"t.example.test.", dns.TypeTXT, true},
		{"nope.example.test.", dns.TypeA, true},
		{"www.example.test.", dns.TypeMX, true},
		{"a.b.example.test.", dns.TypeA, false},
		{"www.example.test.", dns.TypeAAAA, true},
	} {
		m := new(dns.Msg)
		m.SetQuestion(c.name, c.t)
		if c.edns {
			m.SetEdns0(1232, false)
		}
		q, err := m.Pack()
		if err != nil {
			tb.Fatal(err)
		}
		qs = append(qs, q)
	}
	return qs
}

// BenchmarkFastPathMix answers fastMix round robin through RespondUDP (the
// fast path once warm). Count instructions per query with callgrind at two
// iteration counts and take the difference (see the package's bench notes).
func BenchmarkFastPathMix(b *testing.B) {
	p := fastFixture(b)
	qs := fastMix(b)
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
