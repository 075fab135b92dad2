package zonedata_test

import (
	"slices"
	"sync"
	"testing"

	"github.com/gslbkit/gslb/provider/internal/zonedata"
	"github.com/miekg/dns"
	"pgregory.net/rapid"
)

// TestCanonicalNodes: the nodes come in SortedOwners' order, the apex
// left out (SortedNodes' too, the apex first), whatever the names (escaped
// dots, long labels sharing their first 16 bytes, names deeper than
// others, the root zone).
func TestCanonicalNodes(t *testing.T) {
	label := rapid.StringOfN(rapid.SampledFrom([]rune{'a', 'b', '\\', '.', '*', '-'}), 1, 20, -1)
	rapid.Check(t, func(t *rapid.T) {
		zone := rapid.SampledFrom([]string{"example.test.", "test.", "."}).Draw(t, "zone")
		z := &zonedata.Zone{Name: zone, Nodes: map[string]*zonedata.Node{}}
		apex, err := dns.NewRR(zone + " 60 IN NS ns.example.")
		if err != nil {
			t.Fatal(err)
		}
		z.Nodes[zone] = zonedata.NewNode(dns.TypeNS, []zonedata.Rec{{Wire: apex}})
		for _, l := range rapid.SliceOf(label).Draw(t, "names") {
			name := l + "." + zone
			if zone == "." {
				name = l + "."
			}
			if _, ok := dns.IsDomainName(name); !ok || !dns.IsFqdn(name) || name == zone {
				continue
			}
			rr := &dns.A{Hdr: dns.RR_Header{Name: name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 60}, A: []byte{192, 0, 2, 1}}
			z.Nodes[name] = zonedata.NewNode(dns.TypeA, []zonedata.Rec{{Wire: rr}})
		}
		var want, all []*zonedata.Node
		for _, n := range zonedata.SortedOwners(z) {
			all = append(all, z.Nodes[n])
			if n != zone {
				want = append(want, z.Nodes[n])
			}
		}
		if got := slices.Collect(zonedata.SortedNodes(z)); !slices.Equal(got, all) {
			t.Fatalf("SortedNodes' order differs:\ngot  %v\nwant %v", owners(got), owners(all))
		}
		got := slices.Collect(zonedata.CanonicalNodes(z))
		if !slices.Equal(got, want) {
			t.Fatalf("order differs:\ngot  %v\nwant %v", owners(got), owners(want))
		}
		// CanonicalNodes kept the order: SortedNodes reads it now.
		if got := slices.Collect(zonedata.SortedNodes(z)); !slices.Equal(got, all) {
			t.Fatalf("SortedNodes' order from the kept order differs:\ngot  %v\nwant %v", owners(got), owners(all))
		}
	})
}

func owners(ns []*zonedata.Node) []string {
	var out []string
	for _, n := range ns {
		out = append(out, n.All()[0].Wire.Header().Name)
	}
	return out
}

// TestCanonicalNodesKept: a version's order, sorted by its first
// iteration, serves its later ones (concurrent ones too) and is not a
// Clone's, whose own nodes come in order.
func TestCanonicalNodesKept(t *testing.T) {
	z := &zonedata.Zone{Name: "example.test.", Nodes: map[string]*zonedata.Node{}}
	add := func(z *zonedata.Zone, name string) {
		rr := &dns.A{Hdr: dns.RR_Header{Name: name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 60}, A: []byte{192, 0, 2, 1}}
		z.Nodes[name] = zonedata.NewNode(dns.TypeA, []zonedata.Rec{{Wire: rr}})
	}
	for _, n := range []string{"c.example.test.", "a.example.test.", "b.a.example.test."} {
		add(z, n)
	}
	want := []string{"a.example.test.", "b.a.example.test.", "c.example.test."}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			if got := owners(slices.Collect(zonedata.CanonicalNodes(z))); !slices.Equal(got, want) {
				t.Errorf("got %v, want %v", got, want)
			}
		})
	}
	wg.Wait()
	c := z.Clone()
	add(c, "b.example.test.")
	delete(c.Nodes, "a.example.test.")
	if got, want := owners(slices.Collect(zonedata.CanonicalNodes(c))), []string{"b.a.example.test.", "b.example.test.", "c.example.test."}; !slices.Equal(got, want) {
		t.Fatalf("clone: got %v, want %v", got, want)
	}
	if got := owners(slices.Collect(zonedata.CanonicalNodes(z))); !slices.Equal(got, want) {
		t.Fatalf("after the clone: got %v, want %v", got, want)
	}
}
