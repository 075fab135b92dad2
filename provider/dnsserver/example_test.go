package dnsserver_test

import (
	"context"
	"fmt"
	"net/netip"
	"time"

	"github.com/gslbkit/gslb/provider/dnsserver"
	"github.com/gslbkit/gslb/provider/memory"
	"github.com/libdns/libdns"
	"github.com/miekg/dns"
)

// Example serves a memory zone on a free port of 127.0.0.1 and asks it
// over UDP and TCP, then closes the server.
func Example() {
	p := new(memory.Provider)
	_ = p.AddZone("example.test.")
	_, _ = p.SetRecords(context.Background(), "example.test.", []libdns.Record{
		libdns.Address{Name: "www", TTL: time.Minute, IP: netip.MustParseAddr("192.0.2.1")},
	})
	cfg := dnsserver.DefaultServerConfig()
	cfg.Addr = "127.0.0.1:0"
	srv, err := dnsserver.NewServer(p, cfg, nil)
	if err != nil {
		panic(err)
	}
	if err := srv.Listen(); err != nil {
		panic(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Run(context.Background()) }()

	for _, network := range []string{"udp", "tcp"} {
		m := new(dns.Msg)
		m.SetQuestion("www.example.test.", dns.TypeA)
		r, _, err := (&dns.Client{Net: network, Timeout: 10 * time.Second}).Exchange(m, srv.Addr())
		if err != nil {
			panic(err)
		}
		fmt.Println(network, r.Answer[0])
	}
	_ = srv.Close() // ends Run and waits for it
	fmt.Println("run:", <-done)
	// Output:
	// udp www.example.test.	60	IN	A	192.0.2.1
	// tcp www.example.test.	60	IN	A	192.0.2.1
	// run: <nil>
}
