package main

import (
	"context"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/libdns/libdns"
	"github.com/miekg/dns"

	"github.com/gslbkit/gslb/provider/dnsserver"
	"github.com/gslbkit/gslb/provider/memory"
)

// startZoneServer serves a zone holding app.example.test A 192.0.2.1 on a
// free loopback port until the test ends.
func startZoneServer(tb testing.TB) (*dnsserver.Server, *metrics) {
	tb.Helper()
	z, err := memory.New(memory.DefaultConfig())
	if err != nil {
		tb.Fatal(err)
	}
	if err := z.AddZone("example.test."); err != nil {
		tb.Fatal(err)
	}
	if _, err := z.SetRecords(context.Background(), "example.test.", []libdns.Record{
		libdns.RR{Name: "app", Type: "A", TTL: 30 * time.Second, Data: "192.0.2.1"},
	}); err != nil {
		tb.Fatal(err)
	}
	met := newMetrics()
	s, err := newDNSServer(Config{DNS: DNSConfig{Addr: "127.0.0.1:0", TCPIdleTimeout: Duration(time.Second)}}, z, slog.New(slog.DiscardHandler))
	if err != nil {
		tb.Fatal(err)
	}
	met.dns.serve(s)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { _ = s.Run(ctx) })
	tb.Cleanup(func() { cancel(); wg.Wait() })
	return s, met
}

func TestDNSServerUDPAndTCP(t *testing.T) {
	s, met := startZoneServer(t)
	for _, tc := range []struct {
		net, name string
		rcode     int
	}{
		{"udp", "app.example.test.", dns.RcodeSuccess},
		{"tcp", "app.example.test.", dns.RcodeSuccess},
		{"udp", "nope.example.test.", dns.RcodeNameError},
		{"tcp", "other.test.", dns.RcodeRefused},
	} {
		t.Run(tc.net+" "+tc.name, func(t *testing.T) {
			c := &dns.Client{Net: tc.net, Timeout: 5 * time.Second}
			m := new(dns.Msg)
			m.SetQuestion(tc.name, dns.TypeA)
			r, _, err := c.Exchange(m, s.Addr())
			if err != nil {
				t.Fatal(err)
			}
			if r.Rcode != tc.rcode {
				t.Fatalf("rcode %s, want %s", dns.RcodeToString[r.Rcode], dns.RcodeToString[tc.rcode])
			}
		})
	}
	var b []byte
	if mf, err := met.reg.Gather(); err == nil {
		for _, f := range mf {
			if f.GetName() == "gslbkit_dns_queries_total" {
				b = append(b, f.String()...)
			}
		}
	}
	for _, rc := range []string{"NOERROR", "NXDOMAIN", "REFUSED"} {
		if !strings.Contains(string(b), rc) {
			t.Errorf("gslbkit_dns_queries_total lacks rcode %s: %s", rc, b)
		}
	}
	// The TCP listener and the UDP socket share the port.
	conn, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatalf("tcp on %s: %v", s.Addr(), err)
	}
	conn.Close()
}

// BenchmarkDNSQueryUDP measures one A query answered over loopback UDP by
// gslbd's DNS server (client included).
func BenchmarkDNSQueryUDP(b *testing.B) {
	s, _ := startZoneServer(b)
	conn, err := net.Dial("udp", s.Addr())
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	m := new(dns.Msg)
	m.SetQuestion("app.example.test.", dns.TypeA)
	q, _ := m.Pack()
	buf := make([]byte, 512)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := conn.Write(q); err != nil {
			b.Fatal(err)
		}
		_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		if _, err := conn.Read(buf); err != nil {
			b.Fatal(err)
		}
	}
}
