package replication_test

import (
	"context"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/gslbkit/gslb/provider/memory"
	"github.com/libdns/libdns"
	"github.com/miekg/dns"
	"github.com/stretchr/testify/require"
)

// fixture is a zone with addresses, a CNAME chain, a loop, a TXT, an empty
// non-terminal (b.example.test holds nothing, a.b.example.test does) and a
// chain leaving the zone.
func fixture(t testing.TB) *memory.Provider {
	p := new(memory.Provider)
	require.NoError(t, p.AddZone(zone))
	require.NoError(t, p.AddZone("other.test."))
	_, err := p.AppendRecords(context.Background(), zone, []libdns.Record{
		a("ns1", "192.0.2.53"),
		a("www", "192.0.2.1"), a("www", "192.0.2.2"), a("www", "2001:db8::1"),
		cname("app", "alias.example.test."), cname("alias", "www.example.test."),
		cname("loop1", "loop2.example.test."), cname("loop2", "loop1.example.test."),
		cname("out", "www.example.net."),
		txt("t", "hello world"),
		a("a.b", "192.0.2.9"),
		txt("big", strings.Repeat("x", 250)), txt("big", strings.Repeat("y", 250)), txt("big", strings.Repeat("z", 250)),
	})
	require.NoError(t, err)
	return p
}

func query(name string, qtype uint16) *dns.Msg {
	m := new(dns.Msg)
	m.SetQuestion(name, qtype)
	return m
}

const zone = "example.test."

func cname(name, target string) libdns.Record {
	return libdns.CNAME{Name: name, TTL: 30 * time.Second, Target: target}
}

func a(name, ip string) libdns.Record {
	return libdns.Address{Name: name, TTL: 30 * time.Second, IP: netip.MustParseAddr(ip)}
}

func txt(name, text string) libdns.Record {
	return libdns.TXT{Name: name, TTL: 30 * time.Second, Text: text}
}
