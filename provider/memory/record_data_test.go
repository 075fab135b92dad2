package memory

import (
	"strings"
	"testing"

	"github.com/gslbkit/gslb/internal/zonerecord"
	"github.com/libdns/libdns"
)

// TestRecDataRoundTrip: a stored record keeps only its wire form; the data
// it reports (Rec.Data, and so GetRecords, snapshots and journal entries) is
// the canonical data zonerecord.Parse made, for every supported type, and
// SameData agrees with comparing it.
func TestRecDataRoundTrip(t *testing.T) {
	const zone = "example.test."
	long := strings.Repeat("x", 300)
	ins := []libdns.Record{
		libdns.RR{Name: "a", Type: "A", Data: "192.0.2.1"},
		libdns.RR{Name: "a", Type: "AAAA", Data: "2001:DB8::1"},
		libdns.RR{Name: "a", Type: "AAAA", Data: "::ffff:192.0.2.1"},
		libdns.RR{Name: "c", Type: "CNAME", Data: "Target.Example.Test"},
		libdns.RR{Name: "d", Type: "NS", Data: "ns.elsewhere."},
		libdns.RR{Name: "p", Type: "PTR", Data: "host.example.test."},
		libdns.TXT{Name: "t", Text: "v=spf1 -all"},
		libdns.TXT{Name: "t", Text: `a "quoted" \ text; with ; semicolons`},
		libdns.TXT{Name: "t", Text: long},
		libdns.RR{Name: "t", Type: "TXT", Data: `"one" "two"`},
		libdns.RR{Name: "@", Type: "MX", Data: "10 Mail.Example.Test."},
		libdns.RR{Name: "_sip._tcp", Type: "SRV", Data: "10 20 5060 sip.example.test."},
		libdns.RR{Name: "@", Type: "CAA", Data: `0 issue "ca.example"`},
		libdns.RR{Name: "@", Type: "HTTPS", Data: `1 . alpn="h2,h3"`},
		libdns.RR{Name: "s", Type: "SVCB", Data: `1 svc.example.test. port=8443`},
		libdns.RR{Name: "d", Type: "DS", Data: "12345 13 2 " + strings.Repeat("ab", 32)},
	}
	var recs []rec
	for _, in := range ins {
		_, _, _, data, _, err := zonerecord.Parse(zone, in)
		if err != nil {
			t.Fatalf("%v: %v", in, err)
		}
		_, r, err := makeRec(zone, in)
		if err != nil {
			t.Fatalf("%v: %v", in, err)
		}
		if got := r.Data(); got != data {
			t.Errorf("%v: Data() = %q, Parse made %q", in, got, data)
		}
		if rr := r.RR(zone); rr.Name != in.RR().Name || rr.Type != in.RR().Type || rr.Data != data {
			t.Errorf("%v: RR(zone) = %+v", in, rr)
		}
		recs = append(recs, r)
	}
	for i, a := range recs {
		for j, b := range recs {
			if a.Wire.Header().Rrtype != b.Wire.Header().Rrtype {
				continue
			}
			if got, want := a.SameData(b), a.Data() == b.Data(); got != want {
				t.Errorf("records %d, %d: SameData %v, data equal %v", i, j, got, want)
			}
		}
	}
}

// TestZoneBuildQuick: the snapshot builder's quick path makes the record
// makeRec makes from the same ZoneRecord, and leaves to makeRec whatever
// it does not take (errors included).
func TestZoneBuildQuick(t *testing.T) {
	zb, err := newZoneBuild(t.Context(), "example.test.", SOA{NS: "ns1.example.test.", Mbox: "h.example.test."})
	if err != nil {
		t.Fatal(err)
	}
	for _, zr := range []ZoneRecord{
		{Name: "www", Type: "A", TTL: 30, Data: "192.0.2.1"},
		{Name: "www", Type: "a", TTL: 30, Data: " 192.0.2.2 "},
		{Name: "WWW", Type: "AAAA", TTL: 30, Data: "2001:db8::1"},
		{Name: "www", Type: "AAAA", TTL: 30, Data: "::ffff:192.0.2.1"},
		{Name: "www", Type: "A", TTL: 30, Data: "2001:db8::1"},
		{Name: "www", Type: "AAAA", TTL: 30, Data: "192.0.2.1"},
		{Name: "www", Type: "A", TTL: 30, Data: "fe80::1%eth0"},
		{Name: "www", Type: "A", TTL: maxTTL + 1, Data: "192.0.2.1"},
		{Name: "www.other.test.", Type: "A", TTL: 30, Data: "192.0.2.1"},
		{Name: "", Type: "A", TTL: 30, Data: "192.0.2.1"},
		{Name: "c", Type: "CNAME", TTL: 30, Data: "Www"},
		{Name: "@", Type: "MX", TTL: 30, Data: "10 mail.example.test."},
		{Name: "@", Type: "MX", TTL: 30, Data: "mail"},
		{Name: "@", Type: "SOA", TTL: 30, Data: "x"},
		{Name: "t", Type: "TXT", TTL: 30, Data: "text"},
	} {
		owner, r, err := makeRec(zb.z.Name, zr.Record())
		qOwner, q, ok := zb.quick(zr)
		zb.lastName, zb.lastOwner = zr.Name, owner
		if !ok {
			continue
		}
		if err != nil {
			t.Errorf("%+v: quick took it, makeRec: %v", zr, err)
			continue
		}
		if qOwner != owner || q.Wire.String() != r.Wire.String() || q.Data() != r.Data() {
			t.Errorf("%+v: quick made %s %v, makeRec %s %v", zr, qOwner, q.Wire, owner, r.Wire)
		}
	}
}
