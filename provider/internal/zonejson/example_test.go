package zonejson_test

import (
	"os"

	"github.com/gslbkit/gslb/provider/internal/zonedata"
	"github.com/gslbkit/gslb/provider/internal/zonejson"
	"github.com/miekg/dns"
)

func Example() {
	a, _ := dns.NewRR("www.example.com. 60 IN A 192.0.2.1")
	z := &zonedata.Zone{Name: "example.com.", SOA: zonedata.SOA{NS: "ns1.example.com.", Mbox: "hostmaster.example.com.", Serial: 7, TTL: 300},
		Nodes: map[string]*zonedata.Node{"www.example.com.": zonedata.NewNode(dns.TypeA, []zonedata.Rec{{
			Wire: a}})}}
	_ = zonejson.Write(os.Stdout, 2, 1, "", map[string]*zonedata.Zone{z.Name: z}, nil)
	// Output:
	// {"format":2,"version":1,"zones":[{"name":"example.com.","soa":{"ns":"ns1.example.com.","mbox":"hostmaster.example.com.","serial":7,"refresh":0,"retry":0,"expire":0,"minimum":0,"ttl":300},"records":[{"name":"www","type":"A","ttl":60,"data":"192.0.2.1"}]}]}
}
