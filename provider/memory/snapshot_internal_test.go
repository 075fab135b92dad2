package memory

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

func bigRRsetSnapshot(n int) ZoneSnapshot {
	zs := ZoneSnapshot{Name: "example.test.", SOA: SOA{NS: "ns1.example.test.", Mbox: "h.example.test.", Serial: 1}}
	for i := range n {
		zs.Records = append(zs.Records, ZoneRecord{Name: "www", Type: "A", TTL: 30, Data: fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255)})
	}
	return zs
}

// TestBuildLargeRRset: one RRset of many records builds in time linear in
// its size. It was quadratic (every record copied the set so far): 40,000
// records took 6 minutes, past this test's 60 s hang guard; now well under
// a second. The times are reported, not asserted.
func TestBuildLargeRRset(t *testing.T) {
	for _, n := range []int{10_000, 40_000} {
		zs := bigRRsetSnapshot(n)
		start := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		z, err := buildZone(ctx, zs)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%d records in one RRset: built in %v", n, time.Since(start))
		if got := len(z.Nodes["www.example.test."].Get(1)); got != n {
			t.Fatalf("%d records, want %d", got, n)
		}
		p := new(Provider)
		if err := p.Restore(Snapshot{Zones: []ZoneSnapshot{{Name: zs.Name, SOA: zs.SOA}}}); err != nil {
			t.Fatal(err)
		}
		start = time.Now()
		if err := p.Apply([]Change{{Kind: ChangeRRSet, Zone: zs.Name, Name: "www", Type: "A", Records: zs.Records}}); err != nil {
			t.Fatal(err)
		}
		t.Logf("%d records in one RRset: applied in %v", n, time.Since(start))
	}
	// Duplicates are still dropped.
	zs := bigRRsetSnapshot(100)
	zs.Records = append(zs.Records, zs.Records...)
	z, err := buildZone(context.Background(), zs)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(z.Nodes["www.example.test."].Get(1)); got != 100 {
		t.Fatalf("%d records after duplicates, want 100", got)
	}
}

// TestBuildStopsWithContext: building a copy stops when its context ends,
// which is how a Replica's Timeout bounds applying a snapshot.
func TestBuildStopsWithContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := buildZones(ctx, Snapshot{Zones: []ZoneSnapshot{bigRRsetSnapshot(10_000)}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want context.Canceled", err)
	}
}

// TestBuildInterleavedRRsets: records of RRsets that come in several runs
// (not in GetRecords order) are gathered into one RRset each, in order,
// without duplicates.
func TestBuildInterleavedRRsets(t *testing.T) {
	zs := ZoneSnapshot{Name: "example.test.", SOA: SOA{NS: "ns1.example.test.", Mbox: "h.example.test.", Serial: 1}}
	for i := range 3000 {
		name := []string{"a", "b"}[i%2]
		zs.Records = append(zs.Records, ZoneRecord{Name: name, Type: "A", TTL: 30, Data: fmt.Sprintf("10.0.%d.%d", i>>8&255, i&255)})
	}
	zs.Records = append(zs.Records, zs.Records[0], zs.Records[1], ZoneRecord{Name: "a", Type: "TXT", TTL: 30, Data: "x"}, zs.Records[2])
	z, err := buildZone(context.Background(), zs)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"a.example.test.", "b.example.test."} {
		set := z.Nodes[name].Get(1)
		if len(set) != 1500 {
			t.Fatalf("%s: %d records, want 1500", name, len(set))
		}
		first := 0
		if name == "b.example.test." {
			first = 1
		}
		if set[0].Data() != fmt.Sprintf("10.0.0.%d", first) || set[1].Data() != fmt.Sprintf("10.0.0.%d", first+2) {
			t.Fatalf("%s: order %s, %s", name, set[0].Data(), set[1].Data())
		}
	}
	if len(z.Nodes["a.example.test."].Get(16)) != 1 {
		t.Fatal("the TXT record is missing")
	}
}
