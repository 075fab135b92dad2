package failovertest

import (
	"context"
	"net/netip"
	"testing"
	"time"

	"github.com/libdns/libdns"
)

// BenchmarkResolve measures the kit's resolver over the three-hop chain
// app → global → regional (two zones, A and AAAA queries per hop).
func BenchmarkResolve(b *testing.B) {
	s := New(DefaultConfig()).Region("eu").Cluster("eu-1", "eu").Gateway("eu-1", "eu-a", "192.0.2.1", "2001:db8::1")
	if s.Err() != nil {
		b.Fatal(s.Err())
	}
	w, err := newWorld(s, time.Now())
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	gz, lz := s.cfg.globalZone(), s.cfg.localZone()
	_, err = w.global.SetRecords(ctx, gz, []libdns.Record{
		libdns.CNAME{Name: libdns.RelativeName(s.AppName(), gz), TTL: 30 * time.Second, Target: s.GlobalName()},
		libdns.CNAME{Name: libdns.RelativeName(s.GlobalName(), gz), TTL: 30 * time.Second, Target: s.RegionalName()},
	})
	if err != nil {
		b.Fatal(err)
	}
	_, err = w.locals["eu"].SetRecords(ctx, lz, []libdns.Record{
		libdns.Address{Name: libdns.RelativeName(s.RegionalName(), lz), TTL: 30 * time.Second, IP: netip.MustParseAddr("192.0.2.1")},
		libdns.Address{Name: libdns.RelativeName(s.RegionalName(), lz), TTL: 30 * time.Second, IP: netip.MustParseAddr("2001:db8::1")},
	})
	if err != nil {
		b.Fatal(err)
	}
	if got := w.Resolve("eu", s.AppName()); len(got) != 2 {
		b.Fatalf("resolved %v", got)
	}
	app := s.AppName()
	b.ReportAllocs()
	for b.Loop() {
		w.Resolve("eu", app)
	}
}
