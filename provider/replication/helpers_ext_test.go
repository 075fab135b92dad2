package replication_test

import (
	"net/netip"
	"testing"
	"time"

	"github.com/gslbkit/gslb/internal/testrecords"
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
	testrecords.Load(t, p, zone, testrecords.Chains())
	require.NoError(t, p.AddZone("other.test."))
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
