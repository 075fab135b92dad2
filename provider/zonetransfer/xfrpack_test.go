package zonetransfer

import (
	"bytes"
	"strings"
	"testing"

	"github.com/miekg/dns"
)

// packAll packs rrs as a transfer answering an AXFR for qname, in
// messages of up to limit bytes, and returns the messages.
func packAll(t testing.TB, qname, zone string, rrs []dns.RR, limit int) [][]byte {
	t.Helper()
	req := new(dns.Msg)
	req.SetAxfr(qname)
	p, err := newXFRPacker(req, zone)
	if err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	for _, rr := range rrs {
		ok, err := p.add(rr, limit)
		if err == nil && !ok {
			out = append(out, append([]byte(nil), p.frame()[2:]...))
			_, err = p.add(rr, limit)
		}
		if err != nil {
			t.Fatalf("%v: %v", rr, err)
		}
	}
	if p.count > 0 {
		out = append(out, append([]byte(nil), p.frame()[2:]...))
	}
	return out
}

// checkPacked unpacks msgs with miekg/dns and compares their records with rrs.
func checkPacked(t testing.TB, id uint16, msgs [][]byte, rrs []dns.RR) {
	t.Helper()
	var got []dns.RR
	for _, b := range msgs {
		m := new(dns.Msg)
		if err := m.Unpack(b); err != nil {
			t.Fatalf("message does not parse: %v\n%x", err, b)
		}
		if !m.Response || !m.Authoritative || m.Id != id || len(m.Question) != 1 || len(b) > dns.MaxMsgSize {
			t.Fatalf("header wrong: %v", m.MsgHdr)
		}
		got = append(got, m.Answer...)
	}
	if len(got) != len(rrs) {
		t.Fatalf("%d records, want %d", len(got), len(rrs))
	}
	for i := range rrs {
		if got[i].String() != rrs[i].String() {
			t.Fatalf("record %d: %v, want %v", i, got[i], rrs[i])
		}
	}
}

func mustRRs(t testing.TB, lines ...string) []dns.RR {
	t.Helper()
	var rrs []dns.RR
	for _, l := range lines {
		rr, err := dns.NewRR(l)
		if err != nil {
			t.Fatalf("%s: %v", l, err)
		}
		rrs = append(rrs, rr)
	}
	return rrs
}

func TestXFRPacker(t *testing.T) {
	rrs := mustRRs(t,
		"example.com. 60 IN SOA ns1.example.com. hostmaster.example.com. 7 60 60 600 30",
		"example.com. 60 IN NS ns1.example.com.",
		"example.com. 60 IN NS ns.other.net.",
		"example.com. 60 IN MX 10 mail.example.com.",
		"example.com. 60 IN TXT \"v=spf1 -all\" \"two\\\"quoted\"",
		"www.example.com. 60 IN A 192.0.2.1",
		"www.example.com. 60 IN A 192.0.2.2",
		"www.example.com. 60 IN AAAA 2001:db8::1",
		"a\\.b.example.com. 60 IN A 192.0.2.3",
		"x.a\\.b.example.com. 60 IN CNAME www.example.com.",
		"_sip._tcp.example.com. 60 IN SRV 10 5 5060 sip.example.com.",
		"1.2.0.192.in-addr.example.com. 60 IN PTR www.example.com.",
		"sub.example.com. 60 IN NS ns.sub.example.com.",
		"ns.sub.example.com. 60 IN A 192.0.2.53",
		"sub.example.com. 60 IN DS 12345 13 2 0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF",
		"caa.example.com. 60 IN CAA 0 issue \"ca.example.net\"",
		"example.com. 60 IN SOA ns1.example.com. hostmaster.example.com. 7 60 60 600 30",
	)
	before := make([]string, len(rrs))
	for i, rr := range rrs {
		before[i] = rr.String()
	}
	for _, qname := range []string{"example.com.", "EXAMPLE.com."} {
		for _, limit := range []int{xfrMessageSize, 100, 0} {
			msgs := packAll(t, qname, "example.com.", rrs, limit)
			m := new(dns.Msg)
			if err := m.Unpack(msgs[0]); err != nil {
				t.Fatal(err)
			}
			checkPacked(t, m.Id, msgs, rrs)
			if limit == 0 && len(msgs) != len(rrs) {
				t.Fatalf("limit 0: %d messages for %d records", len(msgs), len(rrs))
			}
		}
	}
	for i, rr := range rrs {
		if rr.String() != before[i] || rr.Header().Rdlength != 0 {
			t.Fatalf("record %d changed: %v", i, rr)
		}
	}
	// As many records per message as miekg/dns's packing, or more.
	var many []dns.RR
	for i := range 3000 {
		many = append(many, &dns.A{Hdr: dns.RR_Header{Name: "h" + strings.Repeat("x", i%7) + ".example.com.", Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 60}, A: []byte{10, 0, byte(i >> 8), byte(i)}})
	}
	msgs := packAll(t, "example.com.", "example.com.", many, xfrMessageSize)
	m := new(dns.Msg)
	if err := m.Unpack(msgs[0]); err != nil {
		t.Fatal(err)
	}
	checkPacked(t, m.Id, msgs, many)
	size := 0
	for _, rr := range many[:len(m.Answer)+1] {
		size += dns.Len(rr)
	}
	if size <= xfrMessageSize {
		t.Fatalf("%d records in the first message: fewer than miekg/dns's limit would hold", len(m.Answer))
	}
}

// FuzzXFRPacker packs records read from zone-file text and checks that
// miekg/dns reads them back as they were.
func FuzzXFRPacker(f *testing.F) {
	f.Add("www.example.com. 60 IN A 192.0.2.1", "example.com. 60 IN MX 10 mail.example.com.", "example.com.")
	f.Add("a\\.b.example.com. 60 IN CNAME x.example.com.", "x.example.com. 60 IN TXT \"a\" \"b\"", "example.com.")
	f.Add("example.com. 60 IN SOA ns1.example.com. h.example.com. 1 2 3 4 5", "example.com. 60 IN NS ns.example.org.", "EXAMPLE.com.")
	f.Add(". 60 IN NS a.root-servers.net.", "net. 60 IN NS a.gtld-servers.net.", ".")
	f.Fuzz(func(t *testing.T, a, b, qname string) {
		var rrs []dns.RR
		for _, l := range []string{a, b} {
			rr, err := dns.NewRR(l)
			if err != nil || rr == nil {
				return
			}
			rrs = append(rrs, rr)
		}
		if _, ok := dns.IsDomainName(qname); !ok || !dns.IsFqdn(qname) {
			return
		}
		// What miekg/dns cannot pack and read back, the packer need not.
		ref := new(dns.Msg)
		ref.SetAxfr(qname)
		ref.Answer = rrs
		wire, err := ref.Pack()
		if err != nil {
			return
		}
		back := new(dns.Msg)
		if back.Unpack(wire) != nil || len(back.Answer) != len(rrs) {
			return
		}
		for i := range rrs {
			if back.Answer[i].String() != rrs[i].String() {
				return
			}
		}
		zone := zoneKey(qname)
		for _, limit := range []int{xfrMessageSize, 0} {
			msgs := packAll(t, qname, zone, rrs, limit)
			m := new(dns.Msg)
			if err := m.Unpack(msgs[0]); err != nil {
				t.Fatalf("%v\n%x", err, msgs[0])
			}
			checkPacked(t, m.Id, msgs, rrs)
		}
	})
}

// FuzzPlainName checks plainName against dns.PackDomainName: whenever
// it writes a name, the bytes are miekg/dns's.
func FuzzPlainName(f *testing.F) {
	for _, s := range []string{"www.example.com.", "h0000123.", "a\\.b.", "a..b.", ".", "x", strings.Repeat("a", 63) + ".", strings.Repeat("a", 64) + ".", "*._tcp.x."} {
		f.Add(s, uint8(0))
	}
	f.Fuzz(func(t *testing.T, s string, room uint8) {
		got := make([]byte, int(room)+3)
		want := make([]byte, len(got))
		end, ok := plainName(s, got, 3)
		if !ok {
			return
		}
		wend, err := dns.PackDomainName(s, want, 3, nil, false)
		if err != nil || wend != end || !bytes.Equal(got[:end], want[:wend]) {
			t.Fatalf("%q: plainName %x (%d), PackDomainName %x (%d, %v)", s, got[:end], end, want[:max(wend, 3)], wend, err)
		}
	})
}
