package memory

import (
	"bytes"
	"encoding/json"
	"net"
	"strings"
	"testing"

	"github.com/gslbkit/gslb/provider/internal/zonejson"
	"github.com/miekg/dns"
	"pgregory.net/rapid"
)

// checkRecordJSON fails unless enc writes r as json.Marshal writes its
// ZoneRecord (zoneRecord, what SnapshotView.WriteJSON wrote each record
// from before it wrote them from their wire form).
func checkRecordJSON(t interface{ Fatalf(string, ...any) }, enc *zonejson.Encoder, zone string, r rec) {
	want, err := json.Marshal(zoneRecord(zone, r))
	if err != nil {
		t.Fatalf("json.Marshal: %v", err)
	}
	if got := enc.AppendRecord(nil, zone, r); !bytes.Equal(got, want) {
		t.Fatalf("%q in %s:\ngot  %s\nwant %s", r.Wire.String(), zone, got, want)
	}
}

// TestRecordJSON: the encoder writes the bytes of the ZoneRecord of random
// records of every type the store holds, names and data with JSON's and
// the zone file's special characters, invalid UTF-8, TXT strings around
// 255 bytes, addresses of every length, one encoder reused throughout.
func TestRecordJSON(t *testing.T) {
	pieces := rapid.SliceOf(rapid.SampledFrom([]string{"a", "Z", "0", ".", " ", `\`, `"`, `\"`, `\\`, `\065`, `\255`, `\256`, `\09`, "<", ">", "&", "\x00", "\x1f", "\x7f", "\xff", "\xc3", "é", "\u2028", "\u2029", "\U0001F600"}))
	text := rapid.Custom(func(t *rapid.T) string { return strings.Join(pieces.Draw(t, "pieces"), "") })
	long := rapid.Custom(func(t *rapid.T) string {
		n := rapid.SampledFrom([]int{0, 1, 254, 255, 256}).Draw(t, "n")
		return strings.Repeat(rapid.SampledFrom([]string{"x", "é"}).Draw(t, "c"), n)
	})
	rapid.Check(t, func(t *rapid.T) {
		zone := rapid.SampledFrom([]string{"example.test.", "test.", "."}).Draw(t, "zone")
		var enc zonejson.Encoder
		for range rapid.IntRange(1, 8).Draw(t, "records") {
			owner := zone
			if rapid.Bool().Draw(t, "below") {
				owner = text.Draw(t, "label") + "." + strings.TrimPrefix(zone, ".")
			}
			hdr := func(typ uint16) dns.RR_Header {
				return dns.RR_Header{Name: owner, Rrtype: typ, Class: dns.ClassINET, Ttl: rapid.Uint32().Draw(t, "ttl")}
			}
			addr := rapid.SliceOfN(rapid.Byte(), 0, 16).Draw(t, "addr")
			if rapid.Bool().Draw(t, "full length") {
				addr = rapid.SampledFrom([][]byte{net.IPv4(192, 0, 2, 1), net.ParseIP("2001:db8::1"), net.ParseIP("::ffff:10.1.2.3"), net.ParseIP("::"), {10, 0, 0, 1}}).Draw(t, "ip")
			}
			var rr dns.RR
			switch rapid.IntRange(0, 8).Draw(t, "type") {
			case 0:
				rr = &dns.A{Hdr: hdr(dns.TypeA), A: addr}
			case 1:
				rr = &dns.AAAA{Hdr: hdr(dns.TypeAAAA), AAAA: addr}
			case 2:
				rr = &dns.CNAME{Hdr: hdr(dns.TypeCNAME), Target: text.Draw(t, "target")}
			case 3:
				rr = &dns.NS{Hdr: hdr(dns.TypeNS), Ns: text.Draw(t, "target")}
			case 4:
				rr = &dns.PTR{Hdr: hdr(dns.TypePTR), Ptr: text.Draw(t, "target")}
			case 5:
				rr = &dns.MX{Hdr: hdr(dns.TypeMX), Preference: rapid.Uint16().Draw(t, "pref"), Mx: text.Draw(t, "target")}
			case 6:
				rr = &dns.CAA{Hdr: hdr(dns.TypeCAA), Tag: "issue", Value: text.Draw(t, "value")}
			default:
				ss := rapid.SliceOfN(rapid.OneOf(text, long), 0, 4).Draw(t, "strings")
				rr = &dns.TXT{Hdr: hdr(dns.TypeTXT), Txt: ss}
			}
			checkRecordJSON(t, &enc, zone, rec{Wire: rr})
		}
	})
}

// FuzzRecordJSON is TestRecordJSON over any bytes: a TXT record of up to
// three strings, an address record, a CNAME.
func FuzzRecordJSON(f *testing.F) {
	f.Add("www", `v=spf1 \"x\" \255`, strings.Repeat("a", 255), "b", uint8(3), []byte{192, 0, 2, 1})
	f.Add("@", "", "", "", uint8(0), []byte(net.ParseIP("::ffff:10.0.0.1")))
	f.Add("\xff<&>", "\u2028\xc3", "é", `\`, uint8(2), []byte{1, 2, 3})
	f.Fuzz(func(t *testing.T, label, s1, s2, s3 string, n uint8, addr []byte) {
		const zone = "example.test."
		owner := zone
		if label != "@" {
			owner = label + "." + zone
		}
		h := dns.RR_Header{Name: owner, Class: dns.ClassINET, Ttl: 300}
		var enc zonejson.Encoder
		txt := &dns.TXT{Hdr: h, Txt: []string{s1, s2, s3}[:n%4]}
		txt.Hdr.Rrtype = dns.TypeTXT
		a := &dns.A{Hdr: h, A: addr}
		a.Hdr.Rrtype = dns.TypeA
		aaaa := &dns.AAAA{Hdr: h, AAAA: addr}
		aaaa.Hdr.Rrtype = dns.TypeAAAA
		cname := &dns.CNAME{Hdr: h, Target: s1}
		cname.Hdr.Rrtype = dns.TypeCNAME
		for _, rr := range []dns.RR{txt, a, aaaa, cname} {
			checkRecordJSON(t, &enc, zone, rec{Wire: rr})
		}
	})
}
