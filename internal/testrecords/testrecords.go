package testrecords

import (
	"context"
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/libdns/libdns"

	"github.com/gslbkit/gslb/record"
)

// TTL is the TTL of the records Address and Fence return.
const TTL = time.Minute

// At returns the records of recs at name and type (relative names, as
// GetRecords returns them) and their data, sorted.
func At(recs []libdns.Record, name, typ string) ([]libdns.Record, []string) {
	var out []libdns.Record
	var data []string
	for _, r := range recs {
		if rr := r.RR(); rr.Name == name && rr.Type == typ {
			out = append(out, r)
			data = append(data, rr.Data)
		}
	}
	slices.Sort(data)
	return out, data
}

// Data returns the sorted data of zone's records at name and type, as g
// returns them; a failing GetRecords fails t.
func Data(t testing.TB, g libdns.RecordGetter, zone, name, typ string) []string {
	t.Helper()
	recs, err := g.GetRecords(context.Background(), zone)
	if err != nil {
		t.Fatalf("GetRecords(%s): %v", zone, err)
	}
	_, data := At(recs, name, typ)
	return data
}

// Address returns an A or AAAA record of name for ip.
func Address(name, ip string) libdns.Record {
	return libdns.Address{Name: name, TTL: TTL, IP: netip.MustParseAddr(ip)}
}

// Fence returns the fence record a fenced store compares and sets: a TXT
// at record.DefaultFenceName holding text.
func Fence(text string) libdns.TXT {
	return libdns.TXT{Name: record.DefaultFenceName, TTL: TTL, Text: text}
}
