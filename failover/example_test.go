package failover_test

import (
	"fmt"
	"math/rand/v2"
	"net/netip"
	"time"

	"github.com/libdns/libdns"

	"github.com/gslbkit/gslb/failover"
)

// Two regions, one cluster each. The controller in eu observes its own
// gateways; us's cluster has stopped beating (read stale from the global
// zone), so the global name points at the failover name, which holds eu's
// healthy gateway only.
func Example_topology() {
	cfg := failover.DefaultTopologyConfig()
	cfg.Service, cfg.Domain = "edge", "example.com"
	cfg.AppNames = []failover.AppName{{Name: "httpbin.example.com"}}
	topo, err := failover.NewTopology(cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	ip := netip.MustParseAddr
	snap := failover.Snapshot{
		Regions: []failover.Region{
			{Name: "eu", Zone: "local.example.com", Regional: failover.Published{Read: true}},
			{Name: "us", Zone: "local.example.com"},
		},
		Clusters: []failover.Cluster{
			{Name: "eu-1", Region: "eu", Local: failover.Fresh, Global: failover.Fresh, Gateways: []failover.Gateway{
				{Name: "gw-a", Addrs: []netip.Addr{ip("192.0.2.1"), ip("2001:db8::1")}, Health: failover.Passing},
				{Name: "gw-b", Addrs: []netip.Addr{ip("192.0.2.2")}, Health: failover.Critical},
			}},
			{Name: "us-1", Region: "us", Global: failover.Stale, Gateways: []failover.Gateway{
				{Name: "gw-c", Addrs: []netip.Addr{ip("198.51.100.1")}},
			}},
		},
		Failover: failover.Published{Read: true, Addrs: []netip.Addr{ip("192.0.2.1"), ip("198.51.100.1")}},
	}
	dec, err := topo.Decide(time.Time{}, snap)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(dec.Desired.WrittenBy("eu"))
	fmt.Println("failing over:", dec.FailingOver)
	for _, h := range dec.Held {
		fmt.Printf("held: [%s] %s: %s\n", h.View, h.Name, h.Reason)
	}
	// Output:
	// edge.global.example.com. CNAME 30s global-edge.global.example.com. (everyone)
	// global-edge.global.example.com. A 30s 192.0.2.1 (everyone)
	// global-edge.global.example.com. AAAA 30s 2001:db8::1 (everyone)
	// httpbin.example.com. CNAME 30s edge.global.example.com. (everyone)
	// [eu] edge.local.example.com. A 30s 192.0.2.1 (region eu)
	// [eu] edge.local.example.com. AAAA 30s 2001:db8::1 (region eu)
	// failing over: true
	// held: [us] edge.local.example.com.: published state not read
}

// A record-service record with a failover FQDN, published to an external
// provider (the name is always a CNAME) and to the embedded zone.
func Example_record() {
	pol, err := failover.NewRecordPolicy(failover.DefaultRecordConfig())
	if err != nil {
		fmt.Println(err)
		return
	}
	rec := failover.Record{
		Name: "api.gslb.example.com", Zone: "gslb.example.com", TTL: 60 * time.Second,
		FailoverFQDN: "api.backup.example.net",
		Endpoints: []failover.Endpoint{
			{IP: netip.MustParseAddr("192.0.2.10"), Regions: []string{"eu"}, Health: failover.Passing},
			{IP: netip.MustParseAddr("192.0.2.11"), Regions: []string{"us"}, Health: failover.Warning},
			{IP: netip.MustParseAddr("192.0.2.12"), Regions: []string{"us"}, Health: failover.Critical},
		},
	}
	d, _ := pol.Provider(rec)
	fmt.Print(d)
	d, _ = pol.Embedded(rec.ForRegions("us"))
	fmt.Print(d)
	rec.Disabled = true
	d, _ = pol.Embedded(rec)
	fmt.Print(d)
	// Output:
	// api.gslb.example.com. CNAME 1m0s api.pool.gslb.example.com. (everyone)
	// api.pool.gslb.example.com. A 1m0s 192.0.2.10 192.0.2.11 (everyone)
	// withdraw api.pool.gslb.example.com. AAAA (everyone)
	// api.gslb.example.com. A 1m0s 192.0.2.11 (everyone)
	// withdraw api.gslb.example.com. AAAA (everyone)
	// api.gslb.example.com. CNAME 1m0s api.backup.example.net. (everyone)
}

// Per-query answers for the embedded zone: clients in 10.1.0.0/16 are in
// eu, whose nearest other region is us; eu has no address left, so the
// answer is us's. Its scope, 16, tells a caching resolver that the answer
// suits all of 10.1.0.0/16 (RFC 7871 section 7.2.1). For 192.0.2.0/24,
// which the map does not place, Geo has no opinion and WeightedRandom draws
// among every address; the chain's scope is still Geo's, 1: the answer
// suits 128.0.0.0/1, which holds no map prefix, not every client.
func ExampleGeo() {
	loc, err := failover.NewLocator(failover.GeoMap{
		Prefixes:    map[netip.Prefix]string{netip.MustParsePrefix("10.1.0.0/16"): "eu"},
		Preferences: map[string][]string{"eu": {"us", "ap"}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	tags := map[netip.Addr][]string{
		netip.MustParseAddr("192.0.2.1"): {"ap"},
		netip.MustParseAddr("192.0.2.2"): {"us"},
	}
	answer := failover.Chain(failover.Geo(loc, tags), failover.WeightedRandom(nil, rand.NewPCG(1, 2)))
	rrs := []libdns.Record{
		libdns.Address{Name: "api", TTL: time.Minute, IP: netip.MustParseAddr("192.0.2.1")},
		libdns.Address{Name: "api", TTL: time.Minute, IP: netip.MustParseAddr("192.0.2.2")},
	}
	for _, client := range []string{"10.1.7.0/24", "192.0.2.0/24"} {
		out, scope := answer(netip.MustParsePrefix(client), "api.example.com.", "A", rrs)
		fmt.Println(client, len(out), "record(s), scope", scope)
		for _, r := range out {
			fmt.Println(" ", r.RR().Data)
		}
	}
	// Output:
	// 10.1.7.0/24 1 record(s), scope 16
	//   192.0.2.2
	// 192.0.2.0/24 1 record(s), scope 1
	//   192.0.2.1
}

// Priority publishes the first region, in order, that has a healthy
// endpoint; weighted keeps weight-0 endpoints as a last resort.
func ExampleStrategy_Select() {
	eps := []failover.Endpoint{
		{IP: netip.MustParseAddr("192.0.2.1"), Regions: []string{"eu"}, Health: failover.Critical},
		{IP: netip.MustParseAddr("192.0.2.2"), Regions: []string{"us"}, Health: failover.Passing, Weight: 0},
		{IP: netip.MustParseAddr("192.0.2.3"), Regions: []string{"ap"}, Health: failover.Passing, Weight: 5},
	}
	prio := failover.Strategy{Kind: failover.Priority, Order: []string{"eu", "us", "ap"}}
	for _, e := range prio.Select(eps) {
		fmt.Println("priority:", e.IP)
	}
	for _, e := range (failover.Strategy{Kind: failover.Weighted}).Select(eps) {
		fmt.Println("weighted:", e.IP)
	}
	// Output:
	// priority: 192.0.2.2
	// weighted: 192.0.2.3
}

// Round robin rotates the answer by one address per query.
func ExampleRoundRobin() {
	rr := failover.RoundRobin()
	rrs := []libdns.Record{
		libdns.Address{Name: "www", TTL: time.Minute, IP: netip.MustParseAddr("192.0.2.1")},
		libdns.Address{Name: "www", TTL: time.Minute, IP: netip.MustParseAddr("2001:db8::1")},
	}
	client := netip.MustParsePrefix("203.0.113.0/24")
	for i := 0; i < 3; i++ {
		out, _ := rr(client, "www.example.com.", "A", rrs) // scope 0: the same for every client
		fmt.Println(out[0].RR().Data)
	}
	// Output:
	// 192.0.2.1
	// 2001:db8::1
	// 192.0.2.1
}

// Sticky keeps each client /24 on one address while it stays: when
// 192.0.2.2 goes, only the networks it served move. Its scope, 24, lets a
// caching resolver share the answer within the /24.
func ExampleSticky() {
	sticky, err := failover.Sticky(24, 56)
	if err != nil {
		fmt.Println(err)
		return
	}
	var rrs []libdns.Record
	for i := 1; i <= 3; i++ {
		rrs = append(rrs, libdns.Address{Name: "www", TTL: time.Minute, IP: netip.AddrFrom4([4]byte{192, 0, 2, byte(i)})})
	}
	moved, stayed := 0, 0
	for i := range 256 {
		client := netip.PrefixFrom(netip.AddrFrom4([4]byte{10, 0, byte(i), 0}), 24)
		before, scope := sticky(client, "www.example.com.", "A", rrs)
		after, _ := sticky(client, "www.example.com.", "A", []libdns.Record{rrs[0], rrs[2]})
		switch {
		case before[0] == after[0]:
			stayed++
		case before[0] == rrs[1]:
			moved++
		default:
			fmt.Println("moved without cause:", client)
		}
		if scope != 24 {
			fmt.Println("scope", scope)
		}
	}
	fmt.Println("all moved networks were 192.0.2.2's:", moved+stayed == 256 && moved > 0)
	// Output:
	// all moved networks were 192.0.2.2's: true
}

// Example_latency answers the address this controller measures fastest,
// moving only when another is at least 20 % faster for 3 updates in a row.
func Example_latency() {
	tab, _ := failover.NewLatencyTable(failover.DefaultLatencyConfig())
	answer := failover.Latency(tab, nil)
	rrs := []libdns.Record{
		libdns.Address{Name: "www", IP: netip.MustParseAddr("192.0.2.1")},
		libdns.Address{Name: "www", IP: netip.MustParseAddr("192.0.2.2")},
	}
	for _, rtt := range [][2]time.Duration{
		{30 * time.Millisecond, 40 * time.Millisecond}, // first round: .1
		{30 * time.Millisecond, 27 * time.Millisecond}, // 10 % faster: noise
		{30 * time.Millisecond, 20 * time.Millisecond}, // 33 % faster: 1 of 3
		{30 * time.Millisecond, 21 * time.Millisecond}, // 2 of 3
		{30 * time.Millisecond, 22 * time.Millisecond}, // 3 of 3: switch
	} {
		tab.Update(map[string]time.Duration{"192.0.2.1": rtt[0], "192.0.2.2": rtt[1]})
		out, scope := answer(netip.Prefix{}, "www.example.", "A", rrs)
		fmt.Println(out[0].(libdns.Address).IP, scope)
	}
	// Output:
	// 192.0.2.1 0
	// 192.0.2.1 0
	// 192.0.2.1 0
	// 192.0.2.1 0
	// 192.0.2.2 0
}
