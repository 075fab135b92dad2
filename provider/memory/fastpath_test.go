package memory

import (
	"bytes"
	"context"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/gslbkit/gslb/internal/testrecords"
	"github.com/gslbkit/gslb/provider/internal/answer"
	"github.com/libdns/libdns"
	"github.com/miekg/dns"
)

func fastFixture(t testing.TB) *Provider {
	p := new(Provider)
	testrecords.Load(t, p, "example.test.", testrecords.FastPath())
	p.SetAnswerFunc("hooked.example.test.", func(netip.Prefix, string, string, []libdns.Record) ([]libdns.Record, int) { return nil, 0 })
	addHookZone(t, p)
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

// withECS returns q (whose last record is an OPT) with an EDNS Client
// Subnet option appended: family, source prefix length src, and the address
// bytes the prefix needs taken from addr (masked to the prefix unless raw).
func withECS(q []byte, family byte, src int, addr []byte, raw bool) []byte {
	need := (src + 7) / 8
	a := make([]byte, need)
	copy(a, addr)
	if r := src % 8; r != 0 && !raw {
		a[need-1] &= 0xFF << (8 - r)
	}
	out := append([]byte(nil), q...)
	out = append(out, 0, 8, 0, byte(4+need), 0, family, byte(src), 0)
	out = append(out, a...)
	rd := int(out[len(q)-2])<<8 | int(out[len(q)-1]) + 8 + need
	out[len(q)-2], out[len(q)-1] = byte(rd>>8), byte(rd)
	return out
}

// sameBothPaths requires the fast path (twice: filling the cache, then from
// it) to answer q as the general path does, over UDP and over TCP.
func sameBothPaths(t *testing.T, p *Provider, q []byte, src netip.Addr) {
	t.Helper()
	buf := make([]byte, 4096)
	for _, tcp := range []bool{false, true} {
		want := p.RespondWire(q, src, tcp)
		for i := range 2 {
			var got []byte
			if tcp {
				got = p.RespondTCP(q, buf, src)
			} else {
				got = p.RespondUDP(q, buf, src)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("tcp %v pass %d: fast path differs\nquery %x\nfast    %x\ngeneral %x", tcp, i, q, got, want)
			}
		}
	}
}

// FuzzFastPath sends the same queries through the fast path (twice: once
// filling the cache, once from it) and through the general path, and
// requires the same bytes; a second query differing only in ID, RD, CD and
// the case of its name must get the general path's bytes too.
func FuzzFastPath(f *testing.F) {
	p, pi := fastFixture(f), withIndexes(fastFixture(f))
	f.Add("www.example.test", uint16(1), uint16(1), byte(0), uint16(0), false, uint64(0x5), []byte(nil))
	f.Add("APP.example.TEST", uint16(1), uint16(1), byte(1), uint16(1232), true, uint64(0xff), []byte(nil))
	f.Add("big.example.test", uint16(16), uint16(1), byte(0x81), uint16(4096), false, uint64(0), []byte(nil))
	f.Add("big.example.test", uint16(16), uint16(1), byte(0), uint16(0), false, uint64(0), []byte(nil))
	f.Add("nope.example.test", uint16(28), uint16(1), byte(1), uint16(100), true, uint64(3), []byte(nil))
	f.Add("b.example.test", uint16(1), uint16(1), byte(1), uint16(1232), true, uint64(3), []byte(nil))
	f.Add("hooked.example.test", uint16(1), uint16(1), byte(1), uint16(1232), true, uint64(3), []byte(nil))
	f.Add("dyn.hooks.test", uint16(1), uint16(1), byte(3), uint16(1232), true, uint64(0x18000000006433c6), []byte(nil))
	f.Add("DTXT.hooks.test", uint16(16), uint16(1), byte(0x87), uint16(512), false, uint64(0x38000000b80d0120), []byte(nil))
	f.Add("x.wild.hooks.test", uint16(1), uint16(1), byte(1), uint16(512), false, uint64(5), []byte(nil))
	f.Add("many.hooks.test", uint16(1), uint16(1), byte(0), uint16(0), false, uint64(0), []byte(nil))
	f.Add("dyn.hooks.test", uint16(28), uint16(1), byte(3), uint16(1232), false, uint64(0x20000000006433c6), []byte(nil))
	f.Add("example.net", uint16(1), uint16(1), byte(0), uint16(0), true, uint64(3), []byte(nil))
	f.Add("x.y.W.example.test", uint16(1), uint16(1), byte(1), uint16(1232), true, uint64(3), []byte(nil))
	f.Add("q.wc.example.test", uint16(1), uint16(1), byte(0), uint16(0), false, uint64(1), []byte(nil))
	f.Add("host.sub.example.test", uint16(28), uint16(1), byte(1), uint16(512), true, uint64(7), []byte(nil))
	f.Add("sub.example.test", uint16(43), uint16(1), byte(1), uint16(1232), false, uint64(0), []byte(nil))
	f.Add("mx.example.test", uint16(15), uint16(1), byte(0x81), uint16(1232), true, uint64(9), []byte(nil))
	f.Add("example.test", uint16(255), uint16(3), byte(0), uint16(0), true, uint64(3), []byte(nil))
	f.Add("www.example.test", uint16(1), uint16(1), byte(3), uint16(1232), true, uint64(0x18000000006433c6), []byte(nil))
	f.Add("www.example.test", uint16(28), uint16(1), byte(0x87), uint16(1232), false, uint64(0x38000000b80d0120), []byte(nil))
	f.Add("APP.example.test", uint16(1), uint16(1), byte(0x0b), uint16(1232), false, uint64(0x15000000006433c6), []byte(nil))
	f.Add("big.example.test", uint16(16), uint16(1), byte(3), uint16(600), false, uint64(0x20000000006433c6), []byte(nil))
	f.Add("hooked.example.test", uint16(1), uint16(1), byte(3), uint16(1232), false, uint64(0x18000000006433c6), []byte(nil))
	f.Add("example.test", uint16(255), uint16(1), byte(3), uint16(4096), false, uint64(0), []byte(nil))
	f.Add("nope.example.test", uint16(1), uint16(1), byte(3), uint16(512), false, uint64(0x80000000006433c6), []byte(nil))
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
		if len(raw) == 0 && edns&3 == 3 {
			// EDNS Client Subnet: family from bit 2, prefix length and
			// address from caseMask; bit 3 leaves bits beyond the prefix set.
			fam, bits := byte(1), 33
			if edns&4 != 0 {
				fam, bits = 2, 129
			}
			var a [16]byte
			for i := range a {
				a[i] = byte(caseMask >> (8 * (i % 8)))
			}
			q = withECS(q, fam, int(caseMask>>56)%bits, a[:], edns&8 != 0)
		}
		for _, p := range []*Provider{p, pi} {
			sameKeys(t, p, q, caseMask)
		}
	})
}

// sameKeys requires the fast path to answer q as the general path does
// (sameBothPaths), and a second query differing only in ID, RD, CD and
// the case of its name (its letters flipped where caseMask's bits are set)
// too.
func sameKeys(t *testing.T, p *Provider, q []byte, caseMask uint64) {
	src := netip.MustParseAddr("192.0.2.99")
	sameBothPaths(t, p, q, src)
	buf := make([]byte, 4096)
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
	if !answer.ParseFast(q2, DefaultMaxUDPSize, false) {
		return // flipping bits may have changed its shape; only same-shape queries matter here
	}
	want2 := p.RespondWire(q2, src, false)
	got2 := p.RespondUDP(q2, buf, src)
	if !bytes.Equal(got2, want2) {
		t.Fatalf("second query: fast path differs\nquery %x\nfast    %x\ngeneral %x", q2, got2, want2)
	}
	want2 = p.RespondWire(q2, src, true)
	got2 = p.RespondTCP(q2, buf, src)
	if !bytes.Equal(got2, want2) {
		t.Fatalf("second query over TCP: fast path differs\nquery %x\nfast    %x\ngeneral %x", q2, got2, want2)
	}
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
	p.SetAnswerFunc("www.example.test.", func(netip.Prefix, string, string, []libdns.Record) ([]libdns.Record, int) {
		return []libdns.Record{libdns.Address{Name: "www", TTL: time.Second, IP: netip.MustParseAddr("192.0.2.10")}}, 0
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

// TestFastPathECSAndTCP checks that queries with EDNS Client Subnet to a
// name without answer hooks, and TCP queries, are answered from the cache
// (no allocation) with the general path's bytes, and that a hooked name
// still takes the general path and gets the client's subnet.
func TestFastPathECSAndTCP(t *testing.T) {
	p := fastFixture(t)
	var gotClient netip.Prefix
	p.SetAnswerFunc("hooked.example.test.", func(c netip.Prefix, _, _ string, _ []libdns.Record) ([]libdns.Record, int) {
		gotClient = c
		return nil, c.Bits()
	})
	src := netip.MustParseAddr("192.0.2.99")
	plain := buildQuery(7, 1, 0, []string{"www", "example", "test"}, dns.TypeA, dns.ClassINET, 1, 1232)
	ecs4 := withECS(plain, 1, 24, []byte{198, 51, 100}, false)
	ecs6 := withECS(plain, 2, 56, []byte{0x20, 0x01, 0x0d, 0xb8, 1, 2, 3}, false)
	any := buildQuery(7, 1, 0, []string{"www", "example", "test"}, dns.TypeANY, dns.ClassINET, 0, 0)
	buf := make([]byte, 4096)
	for name, q := range map[string][]byte{"ecs4": ecs4, "ecs6": ecs6, "plain": plain, "any": any} {
		sameBothPaths(t, p, q, src)
		for _, tcp := range []bool{false, true} {
			allocs := testing.AllocsPerRun(100, func() {
				if tcp {
					_ = p.RespondTCP(q, buf, src)
				} else {
					_ = p.RespondUDP(q, buf, src)
				}
			})
			if allocs != 0 {
				t.Errorf("%s tcp %v: %v allocations per query, want 0 (not the fast path)", name, tcp, allocs)
			}
		}
	}
	// The echo: scope 0, the query's family, prefix and address.
	r := new(dns.Msg)
	if err := r.Unpack(p.RespondUDP(ecs4, buf, src)); err != nil {
		t.Fatal(err)
	}
	e, ok := r.IsEdns0().Option[0].(*dns.EDNS0_SUBNET)
	if !ok || e.Family != 1 || e.SourceNetmask != 24 || e.SourceScope != 0 || e.Address.String() != "198.51.100.0" || len(r.Answer) != 2 {
		t.Fatalf("echo %v, answer %v", r.IsEdns0(), r.Answer)
	}
	// ANY over TCP carries every RRset at the name, over UDP one.
	ru, rt := new(dns.Msg), new(dns.Msg)
	if ru.Unpack(p.RespondUDP(any, buf, src)) != nil || rt.Unpack(p.RespondTCP(any, buf, src)) != nil || len(rt.Answer) != 3 || len(ru.Answer) >= 3 {
		t.Fatalf("ANY: udp %d records, tcp %d, want fewer than 3 and 3", len(ru.Answer), len(rt.Answer))
	}
	// A hooked name: the hook gets the subnet, the reply scope /24.
	hq := withECS(buildQuery(7, 1, 0, []string{"hooked", "example", "test"}, dns.TypeA, dns.ClassINET, 1, 1232), 1, 24, []byte{203, 0, 113}, false)
	for _, tcp := range []bool{false, true} {
		gotClient = netip.Prefix{}
		var out []byte
		if tcp {
			out = p.RespondTCP(hq, buf, src)
		} else {
			out = p.RespondUDP(hq, buf, src)
		}
		if err := r.Unpack(out); err != nil {
			t.Fatal(err)
		}
		if gotClient.String() != "203.0.113.0/24" {
			t.Errorf("tcp %v: hook got client %v, want 203.0.113.0/24", tcp, gotClient)
		}
	}
}
