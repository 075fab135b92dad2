package memory

import (
	"context"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/libdns/libdns"
	"github.com/miekg/dns"
)

// TestAnswerHookPanicIsNoOpinion: a hook that panics does not take the
// server down: the query is answered with every record the zone holds,
// over the fast path and the general path, and the panic is counted.
func TestAnswerHookPanicIsNoOpinion(t *testing.T) {
	p := fastFixture(t)
	p.SetAnswerFunc("www.example.test.", func(c netip.Prefix, _, _ string, rrs []libdns.Record) ([]libdns.Record, int) {
		if c.Addr().Is4() && c.Addr().As4()[3] == 13 {
			panic("bad luck")
		}
		return rrs[:1], c.Bits()
	})
	buf := make([]byte, 4096)
	q := buildQuery(1, 1, 0, []string{"www", "example", "test"}, dns.TypeA, dns.ClassINET, 1, 1232)
	for i, fn := range map[string]func(src netip.Addr) []byte{
		"udp":     func(src netip.Addr) []byte { return p.RespondUDP(q, buf, src) },
		"tcp":     func(src netip.Addr) []byte { return p.RespondTCP(q, buf, src) },
		"general": func(src netip.Addr) []byte { return p.RespondWire(q, src, false) },
	} {
		fn(netip.MustParseAddr("192.0.2.1")) // builds the fast entry
		before, _ := p.HookPanics()
		r := new(dns.Msg)
		if err := r.Unpack(fn(netip.MustParseAddr("192.0.2.13"))); err != nil || r.Rcode != dns.RcodeSuccess || len(r.Answer) != 2 {
			t.Fatalf("%s: a panicking hook: %v, %v; want the zone's 2 addresses", i, r, err)
		}
		n, last := p.HookPanics()
		if n != before+1 || !strings.Contains(last, "bad luck") || !strings.Contains(last, "www.example.test.") {
			t.Errorf("%s: HookPanics %d %q, want %d and the panic", i, n, last, before+1)
		}
		if err := r.Unpack(fn(netip.MustParseAddr("192.0.2.1"))); err != nil || len(r.Answer) != 1 {
			t.Fatalf("%s: the hook's answer after the panic: %v %v", i, r.Answer, err)
		}
	}
}

// TestServerSurvivesAPanic: a query whose answering panics (a bug, made
// here by corrupting a fast-cache entry) costs that query its UDP reply and
// that TCP connection, not the server: other queries are answered, and
// Stats counts the panics.
func TestServerSurvivesAPanic(t *testing.T) {
	p := fastFixture(t)
	cfg := DefaultServerConfig()
	cfg.Addr = "127.0.0.1:0"
	s, err := NewServer(p, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Listen(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })

	// Corrupt the entry for dyn.hooks.test A (EDNS, UDP and TCP): parts
	// shorter than the records the hook may choose.
	ask := func(net string) (*dns.Msg, error) {
		m := new(dns.Msg)
		m.SetQuestion("dyn.hooks.test.", dns.TypeA)
		m.SetEdns0(1232, false)
		// A client for which testHook answers with the zone's whole set
		// (a subslice: the fast path's parts are used).
		m.IsEdns0().Option = append(m.IsEdns0().Option, &dns.EDNS0_SUBNET{Code: dns.EDNS0SUBNET, Family: 1, SourceNetmask: 24, Address: netip.MustParseAddr("10.0.4.0").AsSlice()})
		c := &dns.Client{Net: net, Timeout: 500 * time.Millisecond}
		r, _, err := c.Exchange(m, s.Addr())
		return r, err
	}
	for _, net := range []string{"udp", "tcp"} {
		if _, err := ask(net); err != nil {
			t.Fatalf("%s: %v", net, err)
		}
	}
	c := p.fc.Load()
	c.mu.Lock()
	corrupted := 0
	for k, e := range c.m {
		if e.h != nil && e.h.name == "dyn.hooks.test." {
			h := *e.h
			h.parts = nil
			c.m[k] = fastEntry{h: &h}
			corrupted++
		}
	}
	c.mu.Unlock()
	if corrupted == 0 {
		t.Fatal("no fast entry for dyn.hooks.test. to corrupt")
	}
	for _, net := range []string{"udp", "tcp"} {
		if r, err := ask(net); err == nil && r != nil && len(r.Answer) > 0 {
			t.Errorf("%s: the corrupted entry answered %v", net, r.Answer)
		}
	}
	m := new(dns.Msg)
	m.SetQuestion("www.example.test.", dns.TypeA)
	for _, net := range []string{"udp", "tcp"} {
		r, _, err := (&dns.Client{Net: net, Timeout: 5 * time.Second}).Exchange(m, s.Addr())
		if err != nil || len(r.Answer) != 2 {
			t.Fatalf("%s after the panics: %v %v", net, r, err)
		}
	}
	if st := s.Stats(); st.Panics < 2 {
		t.Errorf("Stats.Panics = %d, want at least 2 (one UDP, one TCP)", st.Panics)
	}
}
