package zonedata_test

import (
	"fmt"

	"github.com/gslbkit/gslb/provider/internal/zonedata"
	"github.com/miekg/dns"
)

func Example() {
	rr := func(s string) zonedata.Rec {
		w, _ := dns.NewRR(s)
		return zonedata.Rec{Wire: w}
	}
	z := &zonedata.Zone{Name: "example.com.", Nodes: map[string]*zonedata.Node{
		"example.com.":       zonedata.NewNode(dns.TypeNS, []zonedata.Rec{rr("example.com. 300 IN NS ns1.example.com.")}),
		"*.a.example.com.":   zonedata.NewNode(dns.TypeA, []zonedata.Rec{rr("*.a.example.com. 60 IN A 192.0.2.1")}),
		"sub.b.example.com.": zonedata.NewNode(dns.TypeNS, []zonedata.Rec{rr("sub.b.example.com. 300 IN NS ns.elsewhere.")}),
	}}
	z.RebuildENTs()
	set := &zonedata.Set{Zones: map[string]*zonedata.Zone{z.Name: z}}
	fmt.Println(set.Closest("www.example.com.").Name, set.Closest("example.org.") == nil)
	fmt.Println(z.WildcardFor("x.a.example.com."), z.CutFor("www.sub.b.example.com."), z.ENTs["b.example.com."])
	// Output:
	// example.com. true
	// *.a.example.com. sub.b.example.com. true
}
