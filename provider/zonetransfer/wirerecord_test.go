package zonetransfer

import (
	"strings"
	"testing"

	"github.com/gslbkit/gslb/internal/zonerecord"
	"github.com/gslbkit/gslb/provider/memory"
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
	for _, r := range cases {
		got, ok := wireRecord(zone, r)
		_, _, _, _, want, err := zonerecord.Parse(zone, r.Record())
		if ok != (err == nil) {
			t.Fatalf("%+v: ok %v, Parse's error %v", r, ok, err)
		}
		if ok && got.String() != want.String() {
			t.Fatalf("%+v: %v, Parse %v", r, got, want)
		}
	}
}
