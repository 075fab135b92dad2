package rfc2136_test

import (
	"context"
	"fmt"
	"net/netip"
	"testing"
	"time"

	"github.com/gslbkit/gslb/internal/testbind"
	"github.com/gslbkit/gslb/provider/rfc2136"
	"github.com/libdns/libdns"
)

func benchProvider(b *testing.B) *rfc2136.Provider {
	s := testbind.Start(b, "example.test.")
	cfg := rfc2136.DefaultConfig()
	cfg.Server, cfg.KeyName, cfg.KeyAlg, cfg.Secret = s.Addr, s.KeyName, s.KeyAlg, s.Secret
	p, err := rfc2136.New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	return p
}

// BenchmarkSetRecords is one signed UPDATE replacing an RRset of two A
// records on a real BIND over loopback TCP.
func BenchmarkSetRecords(b *testing.B) {
	p := benchProvider(b)
	ctx := context.Background()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		recs := []libdns.Record{
			libdns.Address{Name: "www", IP: netip.AddrFrom4([4]byte{192, 0, 2, byte(i)}), TTL: time.Minute},
			libdns.Address{Name: "www", IP: netip.AddrFrom4([4]byte{198, 51, 100, byte(i)}), TTL: time.Minute},
		}
		if _, err := p.SetRecords(ctx, "example.test.", recs); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkGetRecords is one signed AXFR of a 100-name zone.
func BenchmarkGetRecords(b *testing.B) {
	p := benchProvider(b)
	ctx := context.Background()
	var recs []libdns.Record
	for i := range 100 {
		recs = append(recs, libdns.Address{Name: fmt.Sprintf("n%d", i), IP: netip.AddrFrom4([4]byte{192, 0, 2, byte(i)}), TTL: 30 * time.Second})
	}
	if _, err := p.SetRecords(ctx, "example.test.", recs); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		got, err := p.GetRecords(ctx, "example.test.")
		if err != nil || len(got) < 100 {
			b.Fatal(len(got), err)
		}
	}
}
