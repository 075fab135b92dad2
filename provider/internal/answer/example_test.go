package answer_test

import (
	"fmt"
	"net/netip"

	"github.com/gslbkit/gslb/provider/internal/answer"
	"github.com/gslbkit/gslb/provider/internal/zonedata"
	"github.com/miekg/dns"
)

func Example() {
	a, _ := dns.NewRR("www.example.com. 60 IN A 192.0.2.1")
	z := &zonedata.Zone{Name: "example.com.", SOA: zonedata.SOA{NS: "ns1.example.com.", Mbox: "hostmaster.example.com.", Serial: 1, TTL: 300, Minimum: 60},
		Nodes: map[string]*zonedata.Node{"www.example.com.": zonedata.NewNode(dns.TypeA, []zonedata.Rec{{Wire: a}})}}
	z.RebuildENTs()
	var e answer.Engine
	e.Publish(&zonedata.Set{Zones: map[string]*zonedata.Zone{z.Name: z}})
	q := new(dns.Msg).SetQuestion("WWW.example.com.", dns.TypeA)
	wire, _ := q.Pack()
	src := netip.MustParseAddr("198.51.100.7")
	fast := e.RespondUDP(wire, make([]byte, 512), src)
	r := new(dns.Msg)
	_ = r.Unpack(fast)
	fmt.Println(r.Question[0].Name, r.Authoritative, r.Answer[0])
	fmt.Println(string(fast) == string(e.RespondWire(wire, src, false)))
	// Output:
	// WWW.example.com. true WWW.example.com.	60	IN	A	192.0.2.1
	// true
}
