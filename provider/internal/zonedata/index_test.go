package zonedata_test

import (
	"fmt"
	"net"
	"slices"
	"testing"
	"testing/synctest"

	"github.com/gslbkit/gslb/provider/internal/zonedata"
	"github.com/miekg/dns"
	"pgregory.net/rapid"
)

// TestIndexMatchesMaps: an Index finds every owner name's node, tells
// the empty non-terminals and the delegation points as the zone's ENTs
// and Cuts maps hold them, and finds nothing for names the zone does not
// hold (an owner name's node whose first record is owned by another
// spelling included).
func TestIndexMatchesMaps(t *testing.T) {
	const zone = "example.test."
	b := zonedata.Builder{Z: &zonedata.Zone{Name: zone, Nodes: map[string]*zonedata.Node{}}}
	add := func(rr dns.RR) { b.Add(rr.Header().Name, zonedata.Rec{Wire: rr}) }
	for i := range 3000 {
		h := dns.RR_Header{Name: fmt.Sprintf("h%d.x%d.%s", i, i%7, zone), Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 300}
		add(&dns.A{Hdr: h, A: net.IPv4(10, 0, byte(i>>8), byte(i)).To4()})
		if i%10 == 0 {
			add(&dns.NS{Hdr: dns.RR_Header{Name: fmt.Sprintf("d%d.%s", i, zone), Rrtype: dns.TypeNS, Class: dns.ClassINET, Ttl: 300}, Ns: "ns." + zone})
		}
	}
	b.Flush()
	z := b.Z
	z.Nodes["odd."+zone] = zonedata.NewNode(dns.TypeA, []zonedata.Rec{{Wire: &dns.A{Hdr: dns.RR_Header{Name: "ODD." + zone, Rrtype: dns.TypeA, Class: dns.ClassINET}, A: net.IPv4(10, 9, 9, 9).To4()}}})
	z.Nodes["empty."+zone] = zonedata.NewNode(dns.TypeA, nil)
	x := zonedata.NewIndex(z)
	for name, n := range z.Nodes {
		got, kind := x.Find([]byte(name))
		want := uint16(zonedata.IndexNode)
		if z.Cuts[name] {
			want |= zonedata.IndexCut
		}
		if got != n || kind != want {
			t.Fatalf("%s: %p %b, want %p %b", name, got, kind, n, want)
		}
	}
	if len(z.ENTs) != 7 || len(z.Cuts) != 300 {
		t.Fatalf("%d ENTs, %d cuts: the zone is not the one meant", len(z.ENTs), len(z.Cuts))
	}
	for name := range z.ENTs {
		if n, kind := x.Find([]byte(name)); n != nil || kind != zonedata.IndexENT {
			t.Fatalf("%s: %p %b, want an ENT", name, n, kind)
		}
	}
	for _, name := range []string{"nope." + zone, "h1.x2." + zone, "x7." + zone, "", zone, "ODD." + zone, "h1.x1.example.test"} {
		if n, kind := x.Find([]byte(name)); n != nil || kind != 0 {
			t.Fatalf("%q: %p %b, want nothing", name, n, kind)
		}
	}
	if a := testing.AllocsPerRun(100, func() { x.Find([]byte("h5.x5." + zone)) }); a != 0 {
		t.Errorf("Find: %v allocations", a)
	}
}

// TestCarryIndexMatchesMaps: a zone changed name by name (records put
// and removed, names added and deleted, delegations made and undone),
// each version carrying the previous one's index updated for the names
// changed, finds every name as a fresh index of that version does and as
// its maps say.
func TestCarryIndexMatchesMaps(t *testing.T) {
	const zone = "example.test."
	var pool []string
	for _, a := range []string{"a", "b", "c", "*", "d"} {
		pool = append(pool, a+"."+zone)
		for _, b := range []string{"x", "y", "*"} {
			pool = append(pool, b+"."+a+"."+zone, "q."+b+"."+a+"."+zone)
		}
	}
	rapid.Check(t, func(t *rapid.T) {
		z := &zonedata.Zone{Name: zone, Nodes: map[string]*zonedata.Node{}}
		z.Nodes[zone] = zonedata.NewNode(dns.TypeNS, []zonedata.Rec{{Wire: &dns.NS{Hdr: dns.RR_Header{Name: zone, Rrtype: dns.TypeNS, Class: dns.ClassINET}, Ns: "ns." + zone}}})
		for i := range 200 { // room in the table for every name of the pool
			name := fmt.Sprintf("f%d.%s", i, zone)
			z.Nodes[name] = zonedata.NewNode(dns.TypeA, []zonedata.Rec{{Wire: &dns.A{Hdr: dns.RR_Header{Name: name, Rrtype: dns.TypeA, Class: dns.ClassINET}, A: net.IPv4(10, 0, 0, 2).To4()}}})
		}
		z.RebuildENTs()
		z.IndexAnySize()
		for range rapid.IntRange(1, 40).Draw(t, "writes") {
			nz := z.Clone()
			var changed []string
			for range rapid.IntRange(1, 4).Draw(t, "names") {
				name := rapid.SampledFrom(pool).Draw(t, "name")
				typ := rapid.SampledFrom([]uint16{dns.TypeA, dns.TypeNS}).Draw(t, "type")
				var rs []zonedata.Rec
				if rapid.Bool().Draw(t, "put") {
					h := dns.RR_Header{Name: name, Rrtype: typ, Class: dns.ClassINET, Ttl: 60}
					if typ == dns.TypeA {
						rs = append(rs, zonedata.Rec{Wire: &dns.A{Hdr: h, A: net.IPv4(10, 0, 0, 1).To4()}})
					} else {
						rs = append(rs, zonedata.Rec{Wire: &dns.NS{Hdr: h, Ns: "ns." + zone}})
					}
				}
				n := nz.Nodes[name]
				if n == nil {
					n = zonedata.NewNode(typ, nil)
				} else {
					n = n.Clone()
				}
				n.Put(typ, rs)
				if n.Len() == 0 {
					delete(nz.Nodes, name)
				} else {
					nz.Nodes[name] = n
				}
				changed = append(changed, name)
			}
			nz.RebuildENTs()
			nz.CarryIndex(z, slices.Values(changed))
			x := nz.FastIndex()
			if x == nil {
				t.Fatal("no index carried")
			}
			fresh := zonedata.NewIndex(nz)
			for _, name := range append(pool, zone, "nope."+zone) {
				n, kind := x.Find([]byte(name))
				fn, fkind := fresh.Find([]byte(name))
				want := indexKind(nz, name)
				if n != nz.Nodes[name] || kind != want || fn != n || fkind != kind {
					t.Fatalf("%s: %p %b (fresh %p %b), want %p %b", name, n, kind, fn, fkind, nz.Nodes[name], want)
				}
				// The old version's index is untouched.
				if n, kind := z.FastIndex().Find([]byte(name)); n != z.Nodes[name] || kind != indexKind(z, name) {
					t.Fatalf("%s in the old version: %p %b, want %p %b", name, n, kind, z.Nodes[name], indexKind(z, name))
				}
			}
			z = nz
		}
	})
}

// TestCarryIndexFull: a write adding more names than the carried table
// has room for leaves the new version without an index (it builds one
// when asked, FastIndex), and does not loop.
func TestCarryIndexFull(t *testing.T) {
	const zone = "example.test."
	z := &zonedata.Zone{Name: zone, Nodes: map[string]*zonedata.Node{}}
	z.Nodes["a."+zone] = zonedata.NewNode(dns.TypeA, []zonedata.Rec{{Wire: &dns.A{Hdr: dns.RR_Header{Name: "a." + zone, Rrtype: dns.TypeA, Class: dns.ClassINET}, A: net.IPv4(10, 0, 0, 1).To4()}}})
	z.RebuildENTs()
	z.IndexAnySize()
	nz := z.Clone()
	deep := zone
	for i := range 100 {
		deep = fmt.Sprintf("l%d.%s", i, deep)
	}
	nz.Nodes[deep] = zonedata.NewNode(dns.TypeA, []zonedata.Rec{{Wire: &dns.A{Hdr: dns.RR_Header{Name: deep, Rrtype: dns.TypeA, Class: dns.ClassINET}, A: net.IPv4(10, 0, 0, 2).To4()}}})
	nz.RebuildENTs()
	nz.CarryIndex(z, slices.Values([]string{deep}))
	if nz.FastIndex() != nil {
		t.Fatal("an index carried past its room")
	}
}

// TestFastIndexBuildsInBackground: a large zone version without an index
// (one no load built and no write carried) answers FastIndex with nil and
// builds its index in the background, which FastIndex then returns.
func TestFastIndexBuildsInBackground(t *testing.T) {
	const zone = "example.test."
	z := &zonedata.Zone{Name: zone, Nodes: map[string]*zonedata.Node{}}
	for i := range 40000 {
		name := fmt.Sprintf("h%d.%s", i, zone)
		z.Nodes[name] = zonedata.NewNode(dns.TypeA, []zonedata.Rec{{Wire: &dns.A{Hdr: dns.RR_Header{Name: name, Rrtype: dns.TypeA, Class: dns.ClassINET}, A: net.IPv4(10, 0, byte(i>>8), byte(i)).To4()}}})
	}
	z.RebuildENTs()
	synctest.Test(t, func(t *testing.T) {
		if z.FastIndex() != nil {
			t.Fatal("an index before any was built")
		}
		synctest.Wait() // the build has ended
		x := z.FastIndex()
		if x == nil {
			t.Fatal("no index built")
		}
		if n, kind := x.Find([]byte("h39999." + zone)); n != z.Nodes["h39999."+zone] || kind != zonedata.IndexNode {
			t.Fatalf("h39999: %p %b", n, kind)
		}
	})
}

// indexKind is what an Index should say name is in z, from z's maps.
func indexKind(z *zonedata.Zone, name string) uint16 {
	switch {
	case z.Nodes[name] != nil:
		if z.Cuts[name] {
			return zonedata.IndexNode | zonedata.IndexCut
		}
		return zonedata.IndexNode
	case z.ENTs[name]:
		return zonedata.IndexENT
	}
	return 0
}

// TestFlushBuildsIndex: a zone loaded whole (Builder.Flush) with enough
// names has its index at once, made from the builder's list of names, and
// it finds what an index made from the zone's maps (NewIndex) finds: every
// node, with its delegation flag (a name whose records came in two runs,
// its NS records in the second, included; the apex's NS records make no
// cut), every empty non-terminal, and nothing for names the zone lacks.
func TestFlushBuildsIndex(t *testing.T) {
	const zone = "example.test."
	b := zonedata.Builder{Z: &zonedata.Zone{Name: zone, Nodes: map[string]*zonedata.Node{}}}
	add := func(rr dns.RR) { b.Add(rr.Header().Name, zonedata.Rec{Wire: rr}) }
	hdr := func(name string, typ uint16) dns.RR_Header {
		return dns.RR_Header{Name: name, Rrtype: typ, Class: dns.ClassINET, Ttl: 300}
	}
	add(&dns.NS{Hdr: hdr(zone, dns.TypeNS), Ns: "ns." + zone})
	const names = 34000
	for i := range names {
		name := fmt.Sprintf("h%d.x%d.%s", i, i%11, zone)
		add(&dns.A{Hdr: hdr(name, dns.TypeA), A: net.IPv4(10, 0, byte(i>>8), byte(i)).To4()})
		if i%50 == 0 {
			add(&dns.NS{Hdr: hdr(fmt.Sprintf("d%d.%s", i, zone), dns.TypeNS), Ns: "ns." + zone})
		}
	}
	for i := 0; i < names; i += 997 { // a second run of these names: merged
		name := fmt.Sprintf("h%d.x%d.%s", i, i%11, zone)
		add(&dns.NS{Hdr: hdr(name, dns.TypeNS), Ns: "ns." + zone})
	}
	b.Flush()
	z := b.Z
	x := z.FastIndex()
	if x == nil {
		t.Fatalf("a zone of %d names loaded whole has no index", len(z.Nodes))
	}
	y := zonedata.NewIndex(z)
	check := func(name string) {
		t.Helper()
		n, kind := x.Find([]byte(name))
		wn, wkind := y.Find([]byte(name))
		if n != wn || kind != wkind {
			t.Fatalf("%s: %p %b, NewIndex %p %b", name, n, kind, wn, wkind)
		}
	}
	cuts := 0
	for name := range z.Nodes {
		check(name)
		if _, kind := x.Find([]byte(name)); kind&zonedata.IndexCut != 0 {
			cuts++
		}
	}
	if want := names/50 + names/997 + 1; len(z.ENTs) != 11 || len(z.Cuts) != want || cuts != want {
		t.Fatalf("%d ENTs, %d cuts, %d found: want 11, %d, %d", len(z.ENTs), len(z.Cuts), cuts, want, want)
	}
	for name := range z.ENTs {
		check(name)
	}
	for _, name := range []string{"nope." + zone, "h1.x2." + zone, "x11." + zone, zone} {
		check(name)
	}
}
