package memory_test

import (
	"context"
	"fmt"
	"net/netip"
	"strings"
	"time"

	"github.com/gslbkit/gslb/provider/memory"
	"github.com/libdns/libdns"
	"github.com/miekg/dns"
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

// The zone answers DNS queries in process (Respond, RespondWire) or on a
// socket (dnsserver.Server); the reply echoes the question as asked. Here a name switches from an address set to a CNAME in one
// SetRecords call, and an answer hook picks one address per client.
func ExampleProvider_RespondWire() {
	ctx := context.Background()
	p := new(memory.Provider)
	_ = p.AddZone("example.test.")
	_, _ = p.SetRecords(ctx, "example.test.", []libdns.Record{
		libdns.Address{Name: "app", TTL: 30 * time.Second, IP: netip.MustParseAddr("192.0.2.1")},
		libdns.Address{Name: "app", TTL: 30 * time.Second, IP: netip.MustParseAddr("192.0.2.2")},
		libdns.Address{Name: "backup", TTL: 30 * time.Second, IP: netip.MustParseAddr("198.51.100.1")},
	})
	ask := func(name string) {
		q := new(dns.Msg)
		q.SetQuestion(name, dns.TypeA)
		wire, _ := q.Pack()
		m := new(dns.Msg)
		_ = m.Unpack(p.RespondWire(wire, netip.MustParseAddr("203.0.113.7"), false))
		fmt.Println(dns.RcodeToString[m.Rcode], len(m.Answer), "records")
		for _, rr := range m.Answer {
			fmt.Println(" ", strings.ReplaceAll(rr.String(), "\t", " "))
		}
	}
	ask("APP.example.test.")

	// First address only, for every client: a stand-in for a geo strategy.
	p.SetAnswerFunc("app.example.test.", func(client netip.Prefix, name, qtype string, rrs []libdns.Record) ([]libdns.Record, int) {
		return rrs[:1], client.Bits()
	})
	ask("app.example.test.")

	// Fail over: the address set becomes a CNAME, atomically.
	_, _ = p.SetRecords(ctx, "example.test.", []libdns.Record{
		libdns.CNAME{Name: "app", TTL: 30 * time.Second, Target: "backup.example.test."},
	})
	ask("app.example.test.")
	ask("gone.example.test.")
	// Output:
	// NOERROR 2 records
	//   APP.example.test. 30 IN A 192.0.2.1
	//   APP.example.test. 30 IN A 192.0.2.2
	// NOERROR 1 records
	//   app.example.test. 30 IN A 192.0.2.1
	// NOERROR 2 records
	//   app.example.test. 30 IN CNAME backup.example.test.
	//   backup.example.test. 30 IN A 198.51.100.1
	// NXDOMAIN 0 records
}
