package dnsserver_test

import (
	"net/netip"
	"time"

	"github.com/libdns/libdns"
)

const zone = "example.test."

func a(name, ip string) libdns.Record {
	return libdns.Address{Name: name, TTL: 30 * time.Second, IP: netip.MustParseAddr(ip)}
}

func cname(name, target string) libdns.Record {
	return libdns.CNAME{Name: name, TTL: 30 * time.Second, Target: target}
}
