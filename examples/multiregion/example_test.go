package main

import (
	"context"
	"fmt"
	"net/netip"
	"time"

	"github.com/libdns/libdns"
)

// Split horizon in memory: the global zone is shared, each region has its
// own copy of the local zone, so the same chain ends in different
// addresses depending on where it is resolved from.
func Example_splitHorizon() {
	ctx := context.Background()
	n := newNames("example.test")
	views, err := buildViews(options{provider: "memory"}, n, []string{"eu-west", "us-east"})
	if err != nil {
		fmt.Println(err)
		return
	}
	ttl := 30 * time.Second
	// Global names: written through any region's view, seen by all.
	_, err = views["eu-west"].SetRecords(ctx, n.global, []libdns.Record{
		libdns.CNAME{Name: "httpbin", TTL: ttl, Target: "edge.global.example.test."},
		libdns.CNAME{Name: "edge.global", TTL: ttl, Target: "edge.local.example.test."},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	// The regional name: each region writes its own copy.
	for region, ip := range map[string]string{"eu-west": "10.1.1.1", "us-east": "10.2.1.1"} {
		_, err := views[region].SetRecords(ctx, n.local, []libdns.Record{
			libdns.Address{Name: "edge", TTL: ttl, IP: netip.MustParseAddr(ip)},
		})
		if err != nil {
			fmt.Println(err)
			return
		}
	}
	for _, region := range []string{"eu-west", "us-east"} {
		r := views[region].resolve(ctx, n.app)
		fmt.Println(region, r.chain, joinAddrs(r.addrs))
	}
	// Output:
	// eu-west [edge.global.example.test. edge.local.example.test.] 10.1.1.1
	// us-east [edge.global.example.test. edge.local.example.test.] 10.2.1.1
}
