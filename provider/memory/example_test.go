package memory_test

import (
	"context"
	"fmt"
	"net/netip"
	"time"

	"github.com/gslbkit/gslb/provider/memory"
	"github.com/libdns/libdns"
)

func Example() {
	ctx := context.Background()
	p := new(memory.Provider)
	if err := p.AddZone("example.test."); err != nil {
		panic(err)
	}
	_, err := p.SetRecords(ctx, "example.test.", []libdns.Record{
		libdns.Address{Name: "app", TTL: 30 * time.Second, IP: netip.MustParseAddr("192.0.2.1")},
		libdns.Address{Name: "app", TTL: 30 * time.Second, IP: netip.MustParseAddr("192.0.2.2")},
		libdns.TXT{Name: "_gslb-owner.app", TTL: 30 * time.Second, Text: "owner=demo"},
	})
	if err != nil {
		panic(err)
	}
	recs, _ := p.GetRecords(ctx, "example.test.")
	for _, r := range recs {
		rr := r.RR()
		fmt.Printf("%-16s %-3s %s\n", rr.Name, rr.Type, rr.Data)
	}
	soa, _ := p.SOA("example.test.")
	fmt.Println("serial", soa.Serial, "version", p.Version())
	// Output:
	// @                NS  ns1.example.test.
	// app              A   192.0.2.1
	// app              A   192.0.2.2
	// _gslb-owner.app  TXT owner=demo
	// serial 2 version 2
}
