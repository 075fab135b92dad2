package zoneops

import (
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/libdns/libdns"
)

// BenchmarkSetChanges diffs a 300-record zone against a 4-RRset update,
// the size of a GSLB zone and of one reconcile step.
func BenchmarkSetChanges(b *testing.B) {
	var existing []libdns.Record
	for i := range 100 {
		for j := range 3 {
			existing = append(existing, libdns.Address{Name: fmt.Sprintf("n%d", i), IP: netip.AddrFrom4([4]byte{192, 0, 2, byte(j)}), TTL: 30 * time.Second})
		}
	}
	want := []libdns.Record{
		libdns.Address{Name: "n1", IP: netip.MustParseAddr("192.0.2.9"), TTL: 30 * time.Second},
		libdns.Address{Name: "n2", IP: netip.MustParseAddr("192.0.2.1"), TTL: 30 * time.Second},
		libdns.CNAME{Name: "n3-alias", Target: "n3.example.test.", TTL: 30 * time.Second},
		libdns.TXT{Name: "hb", Text: "v=1; ts=1", TTL: 30 * time.Second},
	}
	b.ReportAllocs()
	for b.Loop() {
		_ = SetChanges(existing, want, "example.test.")
	}
}

// BenchmarkQuoteTXT round-trips a 600-byte heartbeat-like TXT value.
func BenchmarkQuoteTXT(b *testing.B) {
	text := strings.Repeat(`v=1; "c"=eu; `, 46)
	b.ReportAllocs()
	for b.Loop() {
		_ = UnquoteTXT(QuoteTXT(text))
	}
}
