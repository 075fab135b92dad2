package dnsserver

import (
	"context"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/gslbkit/gslb/provider/memory"
	"github.com/libdns/libdns"
)

// fastFixture is example.test. with the records of memory's fast-path
// tests (an address set, a CNAME, TXTs, a wildcard, a delegation, an MX)
// and one answer hook.
func fastFixture(t testing.TB) *memory.Provider {
	p := new(memory.Provider)
	if err := p.AddZone("example.test."); err != nil {
		t.Fatal(err)
	}
	add := func(r libdns.Record) libdns.Record { return r }
	_, err := p.AppendRecords(context.Background(), "example.test.", []libdns.Record{
		add(libdns.Address{Name: "www", TTL: 30 * time.Second, IP: netip.MustParseAddr("192.0.2.1")}),
		add(libdns.Address{Name: "www", TTL: 30 * time.Second, IP: netip.MustParseAddr("192.0.2.2")}),
		add(libdns.Address{Name: "www", TTL: 30 * time.Second, IP: netip.MustParseAddr("2001:db8::1")}),
		add(libdns.CNAME{Name: "app", TTL: 30 * time.Second, Target: "www.example.test."}),
		add(libdns.TXT{Name: "t", TTL: 30 * time.Second, Text: "hello"}),
		add(libdns.TXT{Name: "big", TTL: 30 * time.Second, Text: strings.Repeat("x", 600)}),
		add(libdns.Address{Name: "hooked", TTL: 30 * time.Second, IP: netip.MustParseAddr("192.0.2.3")}),
		add(libdns.Address{Name: "a.b", TTL: 30 * time.Second, IP: netip.MustParseAddr("192.0.2.4")}),
		add(libdns.Address{Name: "*.w", TTL: 30 * time.Second, IP: netip.MustParseAddr("192.0.2.5")}),
		add(libdns.CNAME{Name: "*.wc", TTL: 30 * time.Second, Target: "www.example.test."}),
		add(libdns.NS{Name: "sub", TTL: 30 * time.Second, Target: "ns.sub.example.test."}),
		add(libdns.Address{Name: "ns.sub", TTL: 30 * time.Second, IP: netip.MustParseAddr("192.0.2.6")}),
		add(libdns.MX{Name: "mx", TTL: 30 * time.Second, Preference: 10, Target: "www.example.test."}),
	})
	if err != nil {
		t.Fatal(err)
	}
	p.SetAnswerFunc("hooked.example.test.", func(netip.Prefix, string, string, []libdns.Record) ([]libdns.Record, int) { return nil, 0 })
	return p
}
