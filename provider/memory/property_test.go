package memory_test

import (
	"context"
	"fmt"
	"net/netip"
	"testing"
	"time"

	"github.com/gslbkit/gslb/provider/memory"
	"github.com/libdns/libdns"
	"github.com/miekg/dns"
	"pgregory.net/rapid"
)

// genRecord draws a record among a few names, types and values, so calls
// collide often.
func genRecord(t *rapid.T, label string) libdns.Record {
	name := rapid.SampledFrom([]string{"@", "a", "b", "a.b", "c"}).Draw(t, label+"-name")
	ttl := time.Duration(rapid.SampledFrom([]int{30, 60}).Draw(t, label+"-ttl")) * time.Second
	switch rapid.IntRange(0, 3).Draw(t, label+"-type") {
	case 0:
		return libdns.Address{Name: name, TTL: ttl, IP: netip.AddrFrom4([4]byte{192, 0, 2, byte(rapid.IntRange(1, 3).Draw(t, label+"-ip"))})}
	case 1:
		return libdns.Address{Name: name, TTL: ttl, IP: netip.MustParseAddr(fmt.Sprintf("2001:db8::%d", rapid.IntRange(1, 3).Draw(t, label+"-ip6")))}
	case 2:
		return libdns.CNAME{Name: name, TTL: ttl, Target: rapid.SampledFrom([]string{"a.example.test.", "c.example.test.", "x.example.net."}).Draw(t, label+"-target")}
	default:
		return libdns.TXT{Name: name, TTL: ttl, Text: rapid.SampledFrom([]string{"v1", "v2", `q"uote`}).Draw(t, label+"-text")}
	}
}

// TestPropertyZoneInvariants drives a zone with random calls and checks,
// after each: no CNAME beside other data or at the apex; the serial and the
// version move by exactly one per changing call and not at all otherwise; a
// replica fed with Changes holds the same zone; answers never panic.
func TestPropertyZoneInvariants(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ctx := context.Background()
		src := new(memory.Provider)
		if err := src.AddZone(zone); err != nil {
			t.Fatal(err)
		}
		rep := new(memory.Provider)
		if err := rep.Restore(src.Snapshot()); err != nil {
			t.Fatal(err)
		}
		seen := src.Version()
		for i := range rapid.IntRange(1, 25).Draw(t, "calls") {
			var recs []libdns.Record
			for j := range rapid.IntRange(1, 3).Draw(t, fmt.Sprintf("n%d", i)) {
				recs = append(recs, genRecord(t, fmt.Sprintf("r%d.%d", i, j)))
			}
			v0 := src.Version()
			soa0, _ := src.SOA(zone)
			var err error
			switch rapid.IntRange(0, 2).Draw(t, fmt.Sprintf("op%d", i)) {
			case 0:
				_, err = src.SetRecords(ctx, zone, recs)
			case 1:
				_, err = src.AppendRecords(ctx, zone, recs)
			default:
				_, err = src.DeleteRecords(ctx, zone, recs)
			}
			v1 := src.Version()
			soa1, _ := src.SOA(zone)
			switch {
			case err != nil && v1 != v0:
				t.Fatalf("a refused call changed the version: %v", err)
			case v1 != v0 && v1 != v0+1:
				t.Fatalf("version moved from %d to %d in one call", v0, v1)
			case (v1 == v0) != (soa1.Serial == soa0.Serial):
				t.Fatalf("version %d→%d but serial %d→%d", v0, v1, soa0.Serial, soa1.Serial)
			case v1 == v0+1 && soa1.Serial != soa0.Serial+1:
				t.Fatalf("serial moved from %d to %d", soa0.Serial, soa1.Serial)
			}
			checkCNAMERules(t, src)
			for _, n := range []string{"example.test.", "a.example.test.", "b.example.test.", "a.b.example.test.", "c.example.test."} {
				_ = src.Respond(query(n, dns.TypeA), netip.Addr{}, false)
			}
		}
		ch, ok := src.Changes(seen)
		if !ok {
			t.Fatal("journal lost changes within its size")
		}
		if err := rep.Apply(ch); err != nil {
			t.Fatalf("replica could not apply: %v", err)
		}
		want, got := src.Snapshot().Zones, rep.Snapshot().Zones
		if fmt.Sprint(want) != fmt.Sprint(got) {
			t.Fatalf("replica differs:\nsource  %v\nreplica %v", want, got)
		}
	})
}

func checkCNAMERules(t *rapid.T, p *memory.Provider) {
	recs, err := p.GetRecords(context.Background(), zone)
	if err != nil {
		t.Fatal(err)
	}
	types := map[string]map[string]int{}
	for _, r := range recs {
		rr := r.RR()
		if types[rr.Name] == nil {
			types[rr.Name] = map[string]int{}
		}
		types[rr.Name][rr.Type]++
	}
	for name, ts := range types {
		if ts["CNAME"] == 0 {
			continue
		}
		if name == "@" {
			t.Fatalf("CNAME at the apex")
		}
		if ts["CNAME"] > 1 || len(ts) > 1 {
			t.Fatalf("CNAME beside other data at %s: %v", name, ts)
		}
	}
}

func BenchmarkSetRecords(b *testing.B) {
	p := new(memory.Provider)
	if err := p.AddZone(zone); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	for i := range 100 {
		_, _ = p.SetRecords(ctx, zone, []libdns.Record{a(fmt.Sprintf("n%d", i), "192.0.2.1"), a(fmt.Sprintf("n%d", i), "192.0.2.2")})
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		_, _ = p.SetRecords(ctx, zone, []libdns.Record{a("n7", fmt.Sprintf("192.0.2.%d", 3+i%2))})
	}
}

func BenchmarkGetRecords(b *testing.B) {
	p := fixture(b)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		_, _ = p.GetRecords(ctx, zone)
	}
}
