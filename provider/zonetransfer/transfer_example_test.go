package zonetransfer_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"net/netip"
	"time"

	"github.com/gslbkit/gslb/provider/memory"
	"github.com/gslbkit/gslb/provider/zonetransfer"
	"github.com/libdns/libdns"
	"github.com/miekg/dns"
)

// ExampleTransfer serves a zone to a secondary on 127.0.0.0/8: an AXFR
// (the SOA, the apex's records, every other name's in no particular
// order, the SOA), then, after a change, an IXFR carrying only that change. ServeTCP writes
// what a TCP loop would send; dnsserver.Server does this itself once given
// the Transfer (dnsserver.Server.SetTransfer).
func ExampleTransfer() {
	p, _ := memory.New(memory.DefaultConfig())
	_ = p.AddZone("example.test.")
	ctx := context.Background()
	_, _ = p.SetRecords(ctx, "example.test.", []libdns.Record{
		libdns.Address{Name: "www", TTL: time.Minute, IP: netip.MustParseAddr("192.0.2.1")},
	})
	cfg := zonetransfer.DefaultTransferConfig()
	cfg.Allow = []zonetransfer.TransferRule{{Prefix: netip.MustParsePrefix("127.0.0.0/8")}}
	x, _ := zonetransfer.NewTransfer(p, cfg, nil)
	secondary := netip.MustParseAddr("127.0.0.1")

	ask := func(m *dns.Msg) {
		q, _ := m.Pack()
		var out bytes.Buffer
		_, _ = x.ServeTCP(&out, q, secondary, nil)
		for b := out.Bytes(); len(b) > 2; {
			n := int(binary.BigEndian.Uint16(b))
			r := new(dns.Msg)
			_ = r.Unpack(b[2 : 2+n])
			for _, rr := range r.Answer {
				fmt.Println(rr)
			}
			b = b[2+n:]
		}
	}
	axfr := new(dns.Msg)
	axfr.SetAxfr("example.test.")
	ask(axfr)

	soa, _ := p.SOA("example.test.")
	_, _ = p.SetRecords(ctx, "example.test.", []libdns.Record{
		libdns.Address{Name: "www", TTL: time.Minute, IP: netip.MustParseAddr("192.0.2.9")},
	})
	fmt.Println("--")
	ixfr := new(dns.Msg)
	ixfr.SetIxfr("example.test.", soa.Serial, soa.NS, soa.Mbox)
	ask(ixfr)
	// Output:
	// example.test.	60	IN	SOA	ns1.example.test. hostmaster.example.test. 2 60 60 600 30
	// example.test.	60	IN	NS	ns1.example.test.
	// www.example.test.	60	IN	A	192.0.2.1
	// example.test.	60	IN	SOA	ns1.example.test. hostmaster.example.test. 2 60 60 600 30
	// --
	// example.test.	60	IN	SOA	ns1.example.test. hostmaster.example.test. 3 60 60 600 30
	// example.test.	60	IN	SOA	ns1.example.test. hostmaster.example.test. 2 60 60 600 30
	// www.example.test.	60	IN	A	192.0.2.1
	// example.test.	60	IN	SOA	ns1.example.test. hostmaster.example.test. 3 60 60 600 30
	// www.example.test.	60	IN	A	192.0.2.9
	// example.test.	60	IN	SOA	ns1.example.test. hostmaster.example.test. 3 60 60 600 30
}
