package memory_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gslbkit/gslb/provider/memory"
	"github.com/libdns/libdns"
	"pgregory.net/rapid"
)

// genStreamRecord draws a record of many shapes: names with wildcards and
// delegations, TXT with several strings and characters JSON escapes.
func genStreamRecord(t *rapid.T, label string) libdns.Record {
	name := rapid.SampledFrom([]string{"@", "a", "b", "a.b", "*.w", "d.e", "x<y>&z"}).Draw(t, label+"-name")
	if strings.Contains(name, "<") {
		name = "c"
	}
	ttl := time.Duration(rapid.IntRange(0, 86400).Draw(t, label+"-ttl")) * time.Second
	switch rapid.IntRange(0, 5).Draw(t, label+"-type") {
	case 0:
		return libdns.Address{Name: name, TTL: ttl, IP: netip.AddrFrom4([4]byte{192, 0, 2, byte(rapid.IntRange(1, 250).Draw(t, label+"-ip"))})}
	case 1:
		return libdns.Address{Name: name, TTL: ttl, IP: netip.MustParseAddr(fmt.Sprintf("2001:db8::%x", rapid.IntRange(1, 5000).Draw(t, label+"-ip6")))}
	case 2:
		return libdns.CNAME{Name: name, TTL: ttl, Target: rapid.SampledFrom([]string{"a.example.test.", "x.example.net."}).Draw(t, label+"-target")}
	case 3:
		text := rapid.StringOf(rapid.SampledFrom([]rune{'a', 'z', ' ', '"', '\\', '<', '>', '&', 'é', '\u2028', '\t', ';'})).Draw(t, label+"-text")
		return libdns.TXT{Name: name, TTL: ttl, Text: text}
	case 4:
		return libdns.RR{Name: name, TTL: ttl, Type: "TXT", Data: `"one" "two<&>" "thr\"ee"`}
	default:
		return libdns.RR{Name: "d", TTL: ttl, Type: "NS", Data: "ns.example.net."}
	}
}

// genStreamProvider fills a Provider with one to three zones of random
// records; writes the CNAME rules refuse are skipped.
func genStreamProvider(t *rapid.T) *memory.Provider {
	p := new(memory.Provider)
	ctx := context.Background()
	for i := range rapid.IntRange(1, 3).Draw(t, "zones") {
		zone := fmt.Sprintf("z%d.example.test.", i)
		if err := p.AddZone(zone); err != nil {
			t.Fatal(err)
		}
		for j := range rapid.IntRange(0, 30).Draw(t, fmt.Sprintf("writes%d", i)) {
			r := genStreamRecord(t, fmt.Sprintf("r%d.%d", i, j))
			_, _ = p.AppendRecords(ctx, zone, []libdns.Record{r})
		}
	}
	return p
}

// TestPropertySnapshotStream: a view writes exactly the JSON of the
// Snapshot, and building a Provider from it record by record gives the
// same records, serials, version and epoch.
func TestPropertySnapshotStream(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		p := genStreamProvider(t)
		snap := p.Snapshot()
		want, err := json.Marshal(snap)
		if err != nil {
			t.Fatal(err)
		}
		view := p.SnapshotView()
		var got bytes.Buffer
		if err := view.WriteJSON(&got, nil); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), want) {
			t.Fatalf("WriteJSON wrote\n%s\nwant\n%s", got.Bytes(), want)
		}

		// A filter drops what json.Marshal of the filtered Snapshot drops.
		keep := func(zone string, r memory.ZoneRecord) bool { return r.Type != "TXT" }
		filtered := p.Snapshot()
		for i, z := range filtered.Zones {
			recs := []memory.ZoneRecord{}
			for _, r := range z.Records {
				if keep(z.Name, r) {
					recs = append(recs, r)
				}
			}
			filtered.Zones[i].Records = recs
		}
		wantF, _ := json.Marshal(filtered)
		got.Reset()
		if err := view.WriteJSON(&got, keep); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), wantF) {
			t.Fatalf("filtered WriteJSON wrote\n%s\nwant\n%s", got.Bytes(), wantF)
		}

		// Built back record by record.
		var back memory.Snapshot
		if err := json.Unmarshal(want, &back); err != nil {
			t.Fatal(err)
		}
		b := memory.NewSnapshotBuilder(context.Background())
		b.Version, b.Epoch = back.Version, back.Epoch
		for _, z := range back.Zones {
			if err := b.Zone(z.Name, z.SOA); err != nil {
				t.Fatal(err)
			}
			for _, r := range z.Records {
				if err := b.Add(r); err != nil {
					t.Fatal(err)
				}
			}
		}
		q := new(memory.Provider)
		if err := q.ResumeBuilt(b); err != nil {
			t.Fatal(err)
		}
		if again := q.Snapshot(); !reflect.DeepEqual(again, snap) {
			t.Fatalf("built back:\n%+v\nwant\n%+v", again, snap)
		}
		if q.Version() != p.Version() || q.Epoch() != p.Epoch() {
			t.Fatalf("version %d epoch %s, want %d %s", q.Version(), q.Epoch(), p.Version(), p.Epoch())
		}
	})
}

// TestSnapshotBuilderErrors: a bad record or zone fails the builder, the
// error sticks, and the Provider keeps its zones.
func TestSnapshotBuilderErrors(t *testing.T) {
	p := new(memory.Provider)
	if err := p.AddZone("keep.test."); err != nil {
		t.Fatal(err)
	}
	soa := memory.SOA{NS: "ns.keep.test.", Mbox: "h.keep.test.", Serial: 1}
	b := memory.NewSnapshotBuilder(context.Background())
	if err := b.Add(memory.ZoneRecord{Name: "a", Type: "A", Data: "192.0.2.1"}); !errors.Is(err, memory.ErrInvalidZone) {
		t.Fatalf("a record before a zone: %v", err)
	}
	b = memory.NewSnapshotBuilder(context.Background())
	if err := b.Zone("new.test.", soa); err != nil {
		t.Fatal(err)
	}
	if err := b.Add(memory.ZoneRecord{Name: "a", Type: "A", Data: "not an address"}); err == nil {
		t.Fatal("a bad record was accepted")
	}
	if err := b.Zone("other.test.", soa); err == nil || b.Err() == nil {
		t.Fatal("the error did not stick")
	}
	if err := p.RestoreBuilt(b); err == nil {
		t.Fatal("RestoreBuilt applied a failed builder")
	}
	b = memory.NewSnapshotBuilder(context.Background())
	_ = b.Zone("new.test.", soa)
	if err := b.Zone("NEW.test", soa); !errors.Is(err, memory.ErrInvalidZone) {
		t.Fatalf("a zone twice: %v", err)
	}
	b = memory.NewSnapshotBuilder(context.Background())
	_ = b.Zone("new.test.", soa)
	_ = b.Add(memory.ZoneRecord{Name: "c", Type: "CNAME", Data: "x.test."})
	_ = b.Add(memory.ZoneRecord{Name: "c", Type: "A", Data: "192.0.2.1"})
	if err := p.RestoreBuilt(b); !errors.Is(err, memory.ErrCNAMEConflict) {
		t.Fatalf("a CNAME beside an A: %v", err)
	}
	if zones := p.Snapshot().Zones; len(zones) != 1 || zones[0].Name != "keep.test." {
		t.Fatalf("the Provider changed: %+v", zones)
	}
}

// TestSnapshotBuilderZero: the zero builder builds; a used one refuses.
func TestSnapshotBuilderZero(t *testing.T) {
	var b memory.SnapshotBuilder
	if err := b.Zone("zero.test.", memory.SOA{NS: "ns.zero.test.", Mbox: "h.zero.test."}); err != nil {
		t.Fatal(err)
	}
	if err := b.Add(memory.ZoneRecord{Name: "a", Type: "A", TTL: 1, Data: "192.0.2.1"}); err != nil {
		t.Fatal(err)
	}
	p := new(memory.Provider)
	if err := p.RestoreBuilt(&b); err != nil {
		t.Fatal(err)
	}
	if err := p.RestoreBuilt(&b); err == nil {
		t.Fatal("a builder was used twice")
	}
	if err := p.RestoreBuilt(nil); err == nil {
		t.Fatal("a nil builder was accepted")
	}
	if zones := p.Zones(); len(zones) != 1 {
		t.Fatalf("zones %v", zones)
	}
	var v memory.SnapshotView
	var buf bytes.Buffer
	if err := v.WriteJSON(&buf, nil); err != nil || buf.String() != `{"format":2,"version":0,"zones":[]}` {
		t.Fatalf("zero view: %s %v", buf.String(), err)
	}
}

// TestWriteJSONAllocs: writing a view allocates the same whatever the
// number of records (a sorted list of each zone's names, buffers), nothing
// per record: a walk of a large copy leaves no garbage in proportion to it.
func TestWriteJSONAllocs(t *testing.T) {
	allocs := func(n int) float64 {
		zs := memory.ZoneSnapshot{Name: "example.test.", SOA: memory.SOA{NS: "ns1.example.test.", Mbox: "h.example.test.", Serial: 1}}
		for i := range n {
			r := memory.ZoneRecord{Name: fmt.Sprintf("h%d", i), TTL: 300}
			switch i % 4 {
			case 0:
				r.Type, r.Data = "A", fmt.Sprintf("10.0.%d.%d", i>>8&255, i&255)
			case 1:
				r.Type, r.Data = "AAAA", fmt.Sprintf("2001:db8::%x", i)
			case 2:
				r.Type, r.Data = "TXT", fmt.Sprintf(`v=spf1 "ip4:10.0.%d.0/24" \ -all`, i&255)
			default:
				r.Type, r.Data = "CNAME", "target.example.net."
			}
			zs.Records = append(zs.Records, r)
		}
		p := new(memory.Provider)
		if err := p.Restore(memory.Snapshot{Zones: []memory.ZoneSnapshot{zs}}); err != nil {
			t.Fatal(err)
		}
		view := p.SnapshotView()
		var buf bytes.Buffer
		return testing.AllocsPerRun(5, func() {
			buf.Reset()
			if err := view.WriteJSON(&buf, nil); err != nil {
				t.Fatal(err)
			}
		})
	}
	small, large := allocs(1000), allocs(8000)
	t.Logf("allocations per write: %.0f for 1,000 records, %.0f for 8,000", small, large)
	if large > small+2 {
		t.Fatalf("%.0f allocations for 8,000 records, %.0f for 1,000: the walk allocates per record", large, small)
	}
}
