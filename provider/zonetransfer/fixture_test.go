package zonetransfer

import (
	"net/netip"
	"testing"

	"github.com/gslbkit/gslb/internal/testrecords"
	"github.com/gslbkit/gslb/provider/memory"
	"github.com/libdns/libdns"
	"github.com/miekg/dns"
)

// fastFixture is example.test. with the records of memory's fast-path
// tests (an address set, a CNAME, TXTs, a wildcard, a delegation, an MX)
// and one answer hook.
func fastFixture(t testing.TB) *memory.Provider {
	p := new(memory.Provider)
	testrecords.Load(t, p, "example.test.", testrecords.FastPath())
	p.SetAnswerFunc("hooked.example.test.", func(netip.Prefix, string, string, []libdns.Record) ([]libdns.Record, int) { return nil, 0 })
	return p
}

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
