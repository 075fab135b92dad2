package zonetransfer

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/gslbkit/gslb/internal/zonerecord"
	"github.com/gslbkit/gslb/provider/memory"
	"github.com/miekg/dns"
)

// TestWireRecord checks wireRecord's shortcut against zonerecord.Parse.
func TestWireRecord(t *testing.T) {
	const zone = "example.com."
	var cases []memory.ZoneRecord
	for _, name := range []string{"@", "www", "a.b", "WWW", "x.example.com.", "x.example.com", "bad name", "", "*", "*.a", "a..b", ".a", "a.", "-x", "_sip._tcp", strings.Repeat("a", 63), strings.Repeat("a", 64), strings.Repeat("abcdefg.", 30) + "x"} {
		for _, typ := range []string{"A", "AAAA", "a", "TXT"} {
			for _, data := range []string{"192.0.2.1", " 192.0.2.1", "010.0.0.1", "2001:db8::1", "2001:DB8::1", "::ffff:192.0.2.1", "fe80::1%eth0", "x", ""} {
				for _, ttl := range []uint32{0, 60, zonerecord.MaxTTL, zonerecord.MaxTTL + 1} {
					cases = append(cases, memory.ZoneRecord{Name: name, Type: typ, TTL: ttl, Data: data})
				}
			}
		}
	}
	for _, name := range []string{"@", "www", "*", "x.example.com.", "a..b", strings.Repeat("a", 64)} {
		for _, typ := range []string{"CNAME", "NS", "PTR", "MX", "cname"} {
			for _, data := range []string{"target.example.com.", "t.example.net.", "target", "Target.example.com.", "a_b-c.example.com.", "a..b.", ".", "", "x.", strings.Repeat("a", 64) + ".", strings.Repeat("abcdefg.", 31) + "x.", strings.Repeat("abcdefg.", 32) + "x.", "10 mx.example.com.", "a\\.b."} {
				for _, ttl := range []uint32{0, 60, zonerecord.MaxTTL + 1} {
					cases = append(cases, memory.ZoneRecord{Name: name, Type: typ, TTL: ttl, Data: data})
				}
			}
		}
	}
	for _, typ := range []string{"TXT", "MX", "SRV", "CAA"} {
		for _, data := range []string{"", " ", "0 .", "10 mx.example.com.", "010 mx.example.com.", "65535 mx.", "65536 mx.", "123456 mx.",
			"10  mx.", "10 mx.example.com. ", "10 mx", "10 MX.example.com.", "-1 mx.", "+1 mx.", "1 2 3 sip.example.com.", "1 2 3 .",
			"0 0 65535 a.", "0 0 65536 a.", "1 2 sip.", "0 issue \"ca.example.net\"", "128 issue \"ca.example.net; account=1\"",
			"255 iodef \"mailto:a@example.com\"", "256 issue \"x\"", "0 issue \"\"", "0 issue \"a\\\"b\"", "0 issue x", "0 Issue \"x\"",
			"0 issue \"" + strings.Repeat("a", 255) + "\"", "0 issue \"" + strings.Repeat("a", 256) + "\"", "0 issue \"a b\"", "0 issue \"a;b\"",
			"v=spf1 -all", "\"quoted\" \"strings\"", "a\"b\\c\x01\xff", strings.Repeat("t", 300), strings.Repeat("t", zonerecord.MaxTXTData), strings.Repeat("t", zonerecord.MaxTXTData+1)} {
			cases = append(cases, memory.ZoneRecord{Name: "www", Type: typ, TTL: 60, Data: data})
		}
	}
	for _, r := range cases {
		checkWireRecord(t, zone, r)
	}
}

// TestWireRecordRandom checks wireRecord against zonerecord.Parse over
// random records of each type wireRecord builds directly, in the
// canonical form the journal holds (Parse's own data).
func TestWireRecordRandom(t *testing.T) {
	const zone = "example.com."
	rng := rand.New(rand.NewPCG(1, 2))
	label := func() string {
		const chars = "abcdefghijklmnopqrstuvwxyz0123456789-_"
		b := make([]byte, 1+rng.IntN(12))
		for i := range b {
			b[i] = chars[rng.IntN(len(chars))]
		}
		return string(b)
	}
	target := func() string { return label() + "." + label() + "." }
	printable := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(' ' + rng.IntN(95))
		}
		return string(b)
	}
	gen := map[string]func() string{
		"A": func() string {
			return fmt.Sprintf("%d.%d.%d.%d", rng.IntN(256), rng.IntN(256), rng.IntN(256), rng.IntN(256))
		},
		"AAAA":  func() string { return fmt.Sprintf("2001:db8::%x:%x", rng.IntN(0x10000), rng.IntN(0x10000)) },
		"CNAME": target, "NS": target, "PTR": target,
		"TXT": func() string {
			b := make([]byte, rng.IntN(600))
			for i := range b {
				b[i] = byte(rng.IntN(256))
			}
			return string(b)
		},
		"MX": func() string { return fmt.Sprintf("%d %s", rng.IntN(0x10000), target()) },
		"SRV": func() string {
			return fmt.Sprintf("%d %d %d %s", rng.IntN(0x10000), rng.IntN(0x10000), rng.IntN(0x10000), target())
		},
		"CAA": func() string {
			return fmt.Sprintf("%d %s %q", rng.IntN(256), []string{"issue", "issuewild", "iodef", "Tag9"}[rng.IntN(4)], strings.NewReplacer(`"`, "", `\`, "").Replace(printable(1+rng.IntN(80))))
		},
	}
	for typ, data := range gen {
		for range 2000 {
			r := memory.ZoneRecord{Name: label(), Type: typ, TTL: rng.Uint32N(zonerecord.MaxTTL + 1), Data: data()}
			// The journal holds Parse's canonical data: store that.
			_, _, _, canon, _, err := zonerecord.Parse(zone, r.Record())
			if err != nil {
				t.Fatalf("%+v: %v", r, err)
			}
			r.Data = canon
			if typ != "TXT" && directRecord(dns.RR_Header{Rrtype: directTypes[typ]}, zone, canon) == nil {
				t.Fatalf("%+v: not built directly", r)
			}
			checkWireRecord(t, zone, r)
		}
	}
}

// FuzzWireRecord checks wireRecord against zonerecord.Parse over any data
// of the types it builds directly.
func FuzzWireRecord(f *testing.F) {
	for _, s := range []string{"10 mx.example.com.", "1 2 3 sip.example.com.", "0 issue \"ca.example.net\"", "v=spf1 -all", "192.0.2.1", "2001:db8::1", "t.example.com."} {
		f.Add(uint8(0), "www", s)
	}
	types := []string{"A", "AAAA", "CNAME", "NS", "PTR", "TXT", "MX", "SRV", "CAA"}
	f.Fuzz(func(t *testing.T, typ uint8, name, data string) {
		checkWireRecord(t, "example.com.", memory.ZoneRecord{Name: name, Type: types[int(typ)%len(types)], TTL: 60, Data: data})
	})
}

// checkWireRecord fails t unless wireRecord(zone, r) is what Parse makes
// of r: both fail, or both give the same record, field for field and
// packed byte for byte.
func checkWireRecord(t *testing.T, zone string, r memory.ZoneRecord) {
	t.Helper()
	got, ok := wireRecord(zone, r)
	_, _, _, _, want, err := zonerecord.Parse(zone, r.Record())
	if ok != (err == nil) {
		t.Fatalf("%+v: ok %v, Parse's error %v", r, ok, err)
	}
	if !ok {
		return
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%+v: %#v, Parse %#v", r, got, want)
	}
	gb, gerr := packRR(got)
	wb, werr := packRR(want)
	if !bytes.Equal(gb, wb) || (gerr == nil) != (werr == nil) {
		t.Fatalf("%+v: packed %x (%v), Parse's %x (%v)", r, gb, gerr, wb, werr)
	}
}

func packRR(rr dns.RR) ([]byte, error) {
	b := make([]byte, dns.Len(rr)+64)
	n, err := dns.PackRR(rr, b, 0, nil, false)
	return b[:n], err
}
