package zonerecord_test

import (
	"errors"
	"testing"
	"time"

	"github.com/gslbkit/gslb/internal/zonerecord"
	"github.com/libdns/libdns"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   libdns.Record
		data string
		err  error
	}{
		{"apex A", libdns.RR{Name: "@", Type: "A", Data: " 192.0.2.1 "}, "192.0.2.1", nil},
		{"AAAA canonical", libdns.RR{Name: "x", Type: "AAAA", Data: "2001:DB8::0:1"}, "2001:db8::1", nil},
		{"TXT strings", libdns.RR{Name: "t", Type: "TXT", Data: `"a" "b"`}, `"a" "b"`, nil},
		{"TXT text", libdns.TXT{Name: "t", Text: `"a" "b"`}, `"a" "b"`, nil},
		{"MX", libdns.RR{Name: "m", Type: "MX", Data: "10 mail.example.com."}, "10 mail.example.com.", nil},
		{"outside the zone", libdns.RR{Name: "x.example.net.", Type: "A", Data: "192.0.2.1"}, "", zonerecord.ErrNotInZone},
		{"SOA", libdns.RR{Name: "@", Type: "SOA", Data: "x"}, "", zonerecord.ErrUnsupportedType},
		{"A of IPv6", libdns.RR{Name: "x", Type: "A", Data: "2001:db8::1"}, "", zonerecord.ErrInvalidRecord},
		{"negative TTL", libdns.RR{Name: "x", Type: "A", TTL: -time.Second, Data: "192.0.2.1"}, "", zonerecord.ErrInvalidRecord},
		{"empty name", libdns.RR{Type: "A", Data: "192.0.2.1"}, "", zonerecord.ErrInvalidRecord},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, _, data, wire, err := zonerecord.Parse("example.com.", tc.in)
			if !errors.Is(err, tc.err) || (tc.err == nil && (data != tc.data || wire == nil)) {
				t.Fatalf("Parse = %q, %v, %v; want %q, %v", data, wire, err, tc.data, tc.err)
			}
		})
	}
}

func TestRel(t *testing.T) {
	for fqdn, want := range map[string]string{"example.com.": "@", "www.example.com.": "www", "a.b.example.com.": "a.b"} {
		if got := zonerecord.Rel(fqdn, "example.com."); got != want {
			t.Errorf("Rel(%q) = %q, want %q", fqdn, got, want)
		}
	}
	if got := zonerecord.Rel("www.example.", "."); got != "www.example" {
		t.Errorf("Rel in the root = %q", got)
	}
}
