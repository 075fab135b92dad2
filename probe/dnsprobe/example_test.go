package dnsprobe_test

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/gslbkit/gslb/probe/dnsprobe"
	"github.com/miekg/dns"
)

// A DNS server on loopback answers www.example. with 192.0.2.1: the
// prober passes when that answer is expected and fails at once when
// another is.
func ExampleNew() {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		fmt.Println(err)
		return
	}
	srv := &dns.Server{PacketConn: pc, Handler: dns.HandlerFunc(func(w dns.ResponseWriter, r *dns.Msg) {
		m := new(dns.Msg)
		m.SetReply(r)
		rr, _ := dns.NewRR("www.example. 60 IN A 192.0.2.1")
		m.Answer = append(m.Answer, rr)
		_ = w.WriteMsg(m)
	})}
	go func() { _ = srv.ActivateAndServe() }()
	defer func() { _ = srv.Shutdown() }()

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, want := range []string{"192.0.2.1", "192.0.2.9"} {
		cfg := dnsprobe.DefaultConfig("www.example")
		cfg.Answers = []string{want}
		p, err := dnsprobe.New(pc.LocalAddr().String(), cfg)
		if err != nil {
			fmt.Println(err)
			return
		}
		r := p.Probe(ctx)
		fmt.Println(r.Status, r.Detail)
	}

	_, err = dnsprobe.New("127.0.0.1", dnsprobe.Config{Name: "www.example", Type: "AAAAA"})
	fmt.Println(err)
	// Output:
	// pass NOERROR
	// fail-now answer 192.0.2.9 missing
	// dnsprobe: invalid config: type = "AAAAA": allowed a query type (A, AAAA, CNAME, MX, TXT, SOA, …)
}
