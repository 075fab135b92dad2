package memory

import (
	"net/netip"
	"strings"
	"testing"

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
