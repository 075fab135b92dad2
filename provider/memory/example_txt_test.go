package memory_test

import (
	"context"
	"fmt"
	"net/netip"

	"github.com/gslbkit/gslb/provider/memory"
	"github.com/libdns/libdns"
	"github.com/miekg/dns"
)

// A TXT record with several character-strings is written as a libdns.RR in
// zone-file presentation form and read back in the same form; a
// libdns.TXT is one text.
func ExampleProvider_AppendRecords_txtStrings() {
	ctx := context.Background()
	p := new(memory.Provider)
	_ = p.AddZone("example.test.")
	_, err := p.AppendRecords(ctx, "example.test.", []libdns.Record{
		libdns.RR{Name: "multi", Type: "TXT", Data: `"first" "second"`},
		libdns.TXT{Name: "plain", Text: `one text, "quotes" and all`},
	})
	if err != nil {
		panic(err)
	}
	recs, _ := p.GetRecords(ctx, "example.test.")
	for _, r := range recs {
		switch r := r.(type) {
		case libdns.RR:
			if r.Type == "TXT" {
				fmt.Printf("RR  %s %s\n", r.Name, r.Data)
			}
		case libdns.TXT:
			fmt.Printf("TXT %s %s\n", r.Name, r.Text)
		}
	}

	q := new(dns.Msg)
	q.SetQuestion("multi.example.test.", dns.TypeTXT)
	wire, _ := q.Pack()
	a := new(dns.Msg)
	_ = a.Unpack(p.RespondWire(wire, netip.Addr{}, false))
	fmt.Println("on the wire:", a.Answer[0].(*dns.TXT).Txt)
	// Output:
	// RR  multi "first" "second"
	// TXT plain one text, "quotes" and all
	// on the wire: [first second]
}
