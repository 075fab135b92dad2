package testrecords

import (
	"context"
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/libdns/libdns"
	"github.com/miekg/dns"
)

// FixtureTTL is the TTL of the records FastPath and Chains return.
const FixtureTTL = 30 * time.Second

// Store is what Load writes to: a store of zones (a *memory.Provider).
type Store interface {
	AddZone(zone string) error
	libdns.RecordAppender
}

// Load adds zone to s and appends recs to it; an error fails t.
func Load(t testing.TB, s Store, zone string, recs []libdns.Record) {
	t.Helper()
	if err := s.AddZone(zone); err != nil {
		t.Fatalf("AddZone(%s): %v", zone, err)
		return
	}
	if _, err := s.AppendRecords(context.Background(), zone, recs); err != nil {
		t.Fatalf("AppendRecords(%s): %v", zone, err)
	}
}

// FastPath returns the records of example.test. that the fast-path tests
// of provider/memory, provider/dnsserver and provider/zonetransfer answer
// from: an address set (www), a CNAME to it (app), TXTs (t, and big of 600
// bytes), hooked (where those tests hang an answer hook), a name under an
// empty non-terminal (a.b), wildcards (*.w, *.wc), a delegation with glue
// (sub, ns.sub) and an MX.
func FastPath() []libdns.Record {
	return []libdns.Record{
		addr("www", "192.0.2.1"), addr("www", "192.0.2.2"), addr("www", "2001:db8::1"),
		libdns.CNAME{Name: "app", TTL: FixtureTTL, Target: "www.example.test."},
		libdns.TXT{Name: "t", TTL: FixtureTTL, Text: "hello"},
		libdns.TXT{Name: "big", TTL: FixtureTTL, Text: strings.Repeat("x", 600)},
		addr("hooked", "192.0.2.3"),
		addr("a.b", "192.0.2.4"),
		addr("*.w", "192.0.2.5"),
		libdns.CNAME{Name: "*.wc", TTL: FixtureTTL, Target: "www.example.test."},
		libdns.NS{Name: "sub", TTL: FixtureTTL, Target: "ns.sub.example.test."},
		addr("ns.sub", "192.0.2.6"),
		libdns.MX{Name: "mx", TTL: FixtureTTL, Preference: 10, Target: "www.example.test."},
	}
}

// Chains returns the records of example.test. that the answer tests of
// provider/memory, provider/dnsserver and provider/replication answer
// from: addresses, a CNAME chain (app, alias), a loop (loop1, loop2), a
// chain leaving the zone (out), TXTs (t, and three of 250 bytes at big) and
// an empty non-terminal (b holds nothing, a.b does).
func Chains() []libdns.Record {
	return []libdns.Record{
		addr("ns1", "192.0.2.53"),
		addr("www", "192.0.2.1"), addr("www", "192.0.2.2"), addr("www", "2001:db8::1"),
		cname("app", "alias.example.test."), cname("alias", "www.example.test."),
		cname("loop1", "loop2.example.test."), cname("loop2", "loop1.example.test."),
		cname("out", "www.example.net."),
		txt("t", "hello world"),
		addr("a.b", "192.0.2.9"),
		txt("big", strings.Repeat("x", 250)), txt("big", strings.Repeat("y", 250)), txt("big", strings.Repeat("z", 250)),
	}
}

// FastPathMix is the query mix the fast-path benchmarks of provider/memory
// and provider/zonetransfer send to FastPath: hits of the common
// shapes (an address set, a CNAME into it, a TXT, NXDOMAIN, NODATA, with and
// without EDNS).
func FastPathMix(tb testing.TB) [][]byte {
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

// Lines renders a message section as "name type data" lines, in order,
// leaving out the OPT pseudo-record: what the answer tests compare.
func Lines(rrs []dns.RR) []string {
	var out []string
	for _, rr := range rrs {
		if rr.Header().Rrtype == dns.TypeOPT {
			continue
		}
		h := rr.Header()
		data := strings.TrimPrefix(rr.String(), h.String())
		out = append(out, fmt.Sprintf("%s %s %s", h.Name, dns.TypeToString[h.Rrtype], data))
	}
	return out
}

func addr(name, ip string) libdns.Record {
	return libdns.Address{Name: name, TTL: FixtureTTL, IP: netip.MustParseAddr(ip)}
}

func cname(name, target string) libdns.Record {
	return libdns.CNAME{Name: name, TTL: FixtureTTL, Target: target}
}

func txt(name, text string) libdns.Record {
	return libdns.TXT{Name: name, TTL: FixtureTTL, Text: text}
}
