package regionview_test

import (
	"context"
	"fmt"
	"net/netip"
	"time"

	"github.com/libdns/libdns"
	"github.com/miekg/dns"

	"github.com/gslbkit/gslb/examples/internal/regionview"
	"github.com/gslbkit/gslb/provider"
	"github.com/gslbkit/gslb/provider/memory"
)

// A region's server answers a global name with the chain into the
// region's own copy of the local zone, in one answer.
func ExampleServer() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	global, region := new(memory.Provider), new(memory.Provider)
	_ = global.AddZone("example.test.")
	_ = region.AddZone("local.example.test.")
	_, _ = global.SetRecords(ctx, "example.test.", []libdns.Record{
		libdns.CNAME{Name: "app", TTL: time.Minute, Target: "edge.local.example.test."}})
	_, _ = region.SetRecords(ctx, "local.example.test.", []libdns.Record{
		libdns.Address{Name: "edge", TTL: time.Minute, IP: netip.MustParseAddr("192.0.2.1")}})
	view, _ := provider.NewMounts(map[string]provider.Mount{
		"example.test.": {Store: global}, "local.example.test.": {Store: region}})

	s, err := regionview.NewServer(view, "example.test.", "local.example.test.", "127.0.0.1:0")
	if err != nil {
		fmt.Println(err)
		return
	}
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx, time.Hour) }()
	_ = s.Sync(ctx) // Run copies the view too, on its own time
	m := new(dns.Msg)
	m.SetQuestion("app.example.test.", dns.TypeA)
	r, _, err := (&dns.Client{Timeout: 5 * time.Second}).Exchange(m, s.Addr())
	if err != nil {
		fmt.Println(err)
	} else {
		for _, rr := range r.Answer {
			fmt.Println(rr)
		}
	}
	cancel()
	fmt.Println(<-done)
	// Output:
	// app.example.test.	60	IN	CNAME	edge.local.example.test.
	// edge.local.example.test.	60	IN	A	192.0.2.1
	// <nil>
}
