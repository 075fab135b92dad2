package memory

import (
	"bytes"
	"context"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/libdns/libdns"
	"github.com/miekg/dns"
)

func fastFixture(t testing.TB) *Provider {
	p := new(Provider)
	if err := p.AddZone("example.test."); err != nil {
		t.Fatal(err)
	}
	add := func(r libdns.Record) libdns.Record { return r }
	_, err := p.AppendRecords(context.Background(), "example.test.", []libdns.Record{
		add(libdns.Address{Name: "www", TTL: 30 * time.Second, IP: netip.MustParseAddr("192.0.2.1")}),
		add(libdns.Address{Name: "www", TTL: 30 * time.Second, IP: netip.MustParseAddr("192.0.2.2")}),
		add(libdns.Address{Name: "www", TTL: 30 * time.Second, IP: netip.MustParseAddr("2001:db8::1")}),
		add(libdns.CNAME{Name: "app", TTL: 30 * time.Second, Target: "www.example.test."}),
		add(libdns.TXT{Name: "t", TTL: 30 * time.Second, Text: "hello"}),
		add(libdns.TXT{Name: "big", TTL: 30 * time.Second, Text: strings.Repeat("x", 600)}),
		add(libdns.Address{Name: "hooked", TTL: 30 * time.Second, IP: netip.MustParseAddr("192.0.2.3")}),
		add(libdns.Address{Name: "a.b", TTL: 30 * time.Second, IP: netip.MustParseAddr("192.0.2.4")}),
		add(libdns.Address{Name: "*.w", TTL: 30 * time.Second, IP: netip.MustParseAddr("192.0.2.5")}),
		add(libdns.CNAME{Name: "*.wc", TTL: 30 * time.Second, Target: "www.example.test."}),
		add(libdns.NS{Name: "sub", TTL: 30 * time.Second, Target: "ns.sub.example.test."}),
		add(libdns.Address{Name: "ns.sub", TTL: 30 * time.Second, IP: netip.MustParseAddr("192.0.2.6")}),
		add(libdns.MX{Name: "mx", TTL: 30 * time.Second, Preference: 10, Target: "www.example.test."}),
	})
	if err != nil {
		t.Fatal(err)
	}
	p.SetAnswerFunc("hooked.example.test.", func(netip.Prefix, string, string, []libdns.Record) []libdns.Record { return nil })
	return p
}

// buildQuery assembles a query by hand so names can hold any bytes.
func buildQuery(id uint16, flags2, flags3 byte, labels []string, qtype, qclass uint16, edns byte, size uint16) []byte {
	q := []byte{byte(id >> 8), byte(id), flags2, flags3, 0, 1, 0, 0, 0, 0, 0, 0}
	for _, l := range labels {
		if len(l) == 0 || len(l) > 63 {
			continue
		}
		q = append(q, byte(len(l)))
		q = append(q, l...)
	}
	q = append(q, 0, byte(qtype>>8), byte(qtype), byte(qclass>>8), byte(qclass))
	if edns&1 != 0 {
		q[11] = 1
		q = append(q, 0, 0, 41, byte(size>>8), byte(size), 0, 0, edns&0x80, 0, 0, 0)
	}
	return q
}

// FuzzFastPath sends the same queries through the fast path (twice: once
// filling the cache, once from it) and through the general path, and
// requires the same bytes; a second query differing only in ID, RD, CD and
// the case of its name must get the general path's bytes too.
func FuzzFastPath(f *testing.F) {
	p := fastFixture(f)
	f.Add("www.example.test", uint16(1), uint16(1), byte(0), uint16(0), false, uint64(0x5), []byte(nil))
	f.Add("APP.example.TEST", uint16(1), uint16(1), byte(1), uint16(1232), true, uint64(0xff), []byte(nil))
	f.Add("big.example.test", uint16(16), uint16(1), byte(0x81), uint16(4096), false, uint64(0), []byte(nil))
	f.Add("big.example.test", uint16(16), uint16(1), byte(0), uint16(0), false, uint64(0), []byte(nil))
	f.Add("nope.example.test", uint16(28), uint16(1), byte(1), uint16(100), true, uint64(3), []byte(nil))
	f.Add("b.example.test", uint16(1), uint16(1), byte(1), uint16(1232), true, uint64(3), []byte(nil))
	f.Add("hooked.example.test", uint16(1), uint16(1), byte(1), uint16(1232), true, uint64(3), []byte(nil))
	f.Add("example.net", uint16(1), uint16(1), byte(0), uint16(0), true, uint64(3), []byte(nil))
	f.Add("x.y.W.example.test", uint16(1), uint16(1), byte(1), uint16(1232), true, uint64(3), []byte(nil))
	f.Add("q.wc.example.test", uint16(1), uint16(1), byte(0), uint16(0), false, uint64(1), []byte(nil))
	f.Add("host.sub.example.test", uint16(28), uint16(1), byte(1), uint16(512), true, uint64(7), []byte(nil))
	f.Add("sub.example.test", uint16(43), uint16(1), byte(1), uint16(1232), false, uint64(0), []byte(nil))
	f.Add("mx.example.test", uint16(15), uint16(1), byte(0x81), uint16(1232), true, uint64(9), []byte(nil))
	f.Add("example.test", uint16(255), uint16(3), byte(0), uint16(0), true, uint64(3), []byte(nil))
	f.Add("", uint16(0), uint16(0), byte(0), uint16(0), false, uint64(0), []byte{0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1, 0, 0, 1, 0, 1, 0, 0, 41, 2, 0, 0, 0, 0, 0, 0, 4, 0, 8, 0, 0})
	f.Add("www.example.test", uint16(1), uint16(1), byte(0), uint16(0), false, uint64(0), []byte{0, 1, 1, 0, 0, 1, 0, 0, 0, 0, 0, 1, 3, 'w', 'w', 'w', 7, 'e', 'x', 'a', 'm', 'p', 'l', 'e', 4, 't', 'e', 's', 't', 0, 0, 1, 0, 1, 0, 0, 41, 4, 208, 0, 0, 0, 0, 0, 12, 0, 10, 0, 8, 1, 2, 3, 4, 5, 6, 7, 8})
	f.Fuzz(func(t *testing.T, name string, qtype, qclass uint16, edns byte, size uint16, rd bool, caseMask uint64, raw []byte) {
		var q []byte
		if len(raw) > 0 {
			q = raw
		} else {
			var f2 byte
			if rd {
				f2 = 1
			}
			q = buildQuery(0x1234, f2, 0, strings.Split(name, "."), qtype, qclass, edns, size)
		}
		src := netip.MustParseAddr("192.0.2.99")
		want := p.RespondWire(q, src, false)
		buf := make([]byte, 4096)
		for i := range 2 {
			got := p.RespondUDP(q, buf, src)
			if !bytes.Equal(got, want) {
				t.Fatalf("pass %d: fast path differs\nquery %x\nfast    %x\ngeneral %x", i, q, got, want)
			}
		}
		// The same key, another ID, flags and case.
		if len(q) < 13 {
			return
		}
		q2 := append([]byte(nil), q...)
		q2[0], q2[1] = ^q2[0], ^q2[1]
		q2[2] ^= 0x01
		q2[3] ^= 0x10
		for i := 12; i < len(q2) && i < 12+64; i++ {
			c := q2[i]
			if caseMask&(1<<(i%64)) != 0 && ('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
				q2[i] = c ^ 0x20
			}
		}
		if _, _, ok := parseFast(q2, new([300]byte), DefaultMaxUDPSize); !ok {
			return // flipping bits may have changed its shape; only same-shape queries matter here
		}
		want2 := p.RespondWire(q2, src, false)
		got2 := p.RespondUDP(q2, buf, src)
		if !bytes.Equal(got2, want2) {
			t.Fatalf("second query: fast path differs\nquery %x\nfast    %x\ngeneral %x", q2, got2, want2)
		}
	})
}

func TestFastPathInvalidatedByChanges(t *testing.T) {
	p := fastFixture(t)
	m := new(dns.Msg)
	m.SetQuestion("www.example.test.", dns.TypeA)
	q, _ := m.Pack()
	buf := make([]byte, 4096)
	first := append([]byte(nil), p.RespondUDP(q, buf, netip.Addr{})...)
	if !bytes.Equal(first, p.RespondUDP(q, buf, netip.Addr{})) {
		t.Fatal("cache hit differs")
	}
	if _, err := p.SetRecords(context.Background(), "example.test.", []libdns.Record{libdns.Address{Name: "www", TTL: time.Minute, IP: netip.MustParseAddr("192.0.2.9")}}); err != nil {
		t.Fatal(err)
	}
	after := p.RespondUDP(q, buf, netip.Addr{})
	if bytes.Equal(first, after) {
		t.Fatal("stale reply after a change")
	}
	r := new(dns.Msg)
	if err := r.Unpack(after); err != nil || len(r.Answer) != 1 {
		t.Fatalf("want one answer, got %v (%v)", r.Answer, err)
	}
	// Registering a hook is a change too.
	p.SetAnswerFunc("www.example.test.", func(netip.Prefix, string, string, []libdns.Record) []libdns.Record {
		return []libdns.Record{libdns.Address{Name: "www", TTL: time.Second, IP: netip.MustParseAddr("192.0.2.10")}}
	})
	if err := r.Unpack(p.RespondUDP(q, buf, netip.Addr{})); err != nil || r.Answer[0].(*dns.A).A.String() != "192.0.2.10" {
		t.Fatalf("hook ignored: %v", r.Answer)
	}
}

func BenchmarkRespond(b *testing.B) {
	p := fastFixture(b)
	m := new(dns.Msg)
	m.SetQuestion("WWW.example.test.", dns.TypeA)
	q, _ := m.Pack()
	src := netip.MustParseAddr("192.0.2.99")
	b.Run("general", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = p.RespondWire(q, src, false)
		}
	})
	b.Run("fast", func(b *testing.B) {
		buf := make([]byte, 4096)
		b.ReportAllocs()
		for b.Loop() {
			_ = p.RespondUDP(q, buf, src)
		}
	})
}
