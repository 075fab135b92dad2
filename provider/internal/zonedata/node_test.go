package zonedata

import (
	"fmt"
	"net"
	"testing"
	"unsafe"

	"github.com/miekg/dns"
)

func rec(t *testing.T, s string) Rec {
	t.Helper()
	rr, err := dns.NewRR(s)
	if err != nil {
		t.Fatal(err)
	}
	return Rec{Wire: rr}
}

// TestNodePut: a Node keeps its RRsets in zonerecord.Types order whatever
// the order of Puts, Get returns each (never the next set on append), Put
// leaves the node it was cloned from as it was, and removing every RRset
// empties it.
func TestNodePut(t *testing.T) {
	a1, a2 := rec(t, "x. 60 IN A 192.0.2.1"), rec(t, "x. 60 IN A 192.0.2.2")
	txt := rec(t, `x. 60 IN TXT "t"`)
	aaaa := rec(t, "x. 60 IN AAAA 2001:db8::1")
	ns := rec(t, "x. 60 IN NS ns.x.")
	n := NewNode(dns.TypeTXT, []Rec{txt})
	if n.Len() != 1 || len(n.Get(dns.TypeTXT)) != 1 || n.Get(dns.TypeA) != nil {
		t.Fatalf("one TXT: Len %d, Get %v", n.Len(), n.Get(dns.TypeTXT))
	}
	c := n.Clone()
	c.Put(dns.TypeA, []Rec{a1, a2})
	c.Put(dns.TypeAAAA, []Rec{aaaa})
	c.Put(dns.TypeNS, []Rec{ns})
	if n.Len() != 1 || len(n.All()) != 1 {
		t.Fatalf("the original changed: %v", n.All())
	}
	got := SortedTypes(c, nil)
	want := []uint16{dns.TypeNS, dns.TypeA, dns.TypeAAAA, dns.TypeTXT}
	if len(got) != len(want) || c.Len() != 4 || len(c.Sets()) != 4 {
		t.Fatalf("types %v, want %v (Len %d)", got, want, c.Len())
	}
	for i := range want {
		if got[i] != want[i] || c.Sets()[i].Type != want[i] {
			t.Fatalf("types %v, want %v", got, want)
		}
	}
	as := c.Get(dns.TypeA)
	if len(as) != 2 || as[0] != a1 || as[1] != a2 {
		t.Fatalf("A set %v", as)
	}
	_ = append(as, a1) // must not overwrite the AAAA set
	if g := c.Get(dns.TypeAAAA); len(g) != 1 || g[0] != aaaa {
		t.Fatalf("AAAA set %v after an append to the A set", g)
	}
	c.Put(dns.TypeA, []Rec{a2})
	if g := c.Get(dns.TypeA); len(g) != 1 || g[0] != a2 || c.Len() != 4 {
		t.Fatalf("A set %v after replacing it", g)
	}
	for _, typ := range want {
		c.Put(typ, nil)
	}
	if c.Len() != 0 || len(c.All()) != 0 || c.Get(dns.TypeA) != nil {
		t.Fatalf("after removing every set: %v", c.All())
	}
	c.Put(dns.TypeA, []Rec{a1})
	if c.Len() != 1 || len(c.Get(dns.TypeA)) != 1 {
		t.Fatalf("one A again: %v", c.All())
	}
}

// TestPackedNodesOwnTheirNames: a zone loaded whole gives its packed
// nodes room for their names from its ownNamesFrom-th name on: from there
// the name's bytes (the Nodes key, the record's owner) lie in the node's
// own allocation; before, the name stays the string it came as.
func TestPackedNodesOwnTheirNames(t *testing.T) {
	const zone = "example.test."
	b := Builder{Z: &Zone{Name: zone, Nodes: map[string]*Node{}}}
	total := ownNamesFrom + 500
	names := make([]string, total)
	for i := range names {
		names[i] = fmt.Sprintf("h%d.%s", i, zone)
		rr := &dns.A{Hdr: dns.RR_Header{Name: names[i], Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 300}, A: net.IPv4(10, 0, byte(i>>8), byte(i)).To4()}
		b.Add(names[i], Rec{Wire: rr})
	}
	b.Flush()
	within := func(s string, n *Node) bool {
		d := uintptr(unsafe.Pointer(unsafe.StringData(s))) - uintptr(unsafe.Pointer(n))
		return d < 256 // the node, its record and the room: one allocation
	}
	keys := make(map[*Node]string, len(b.Z.Nodes)) // the map's own key strings
	for k, n := range b.Z.Nodes {
		keys[n] = k
	}
	for i, name := range names {
		n := b.Z.Nodes[name]
		key := keys[n]
		owner := n.recs[0].Wire.Header().Name
		if want := i >= ownNamesFrom; within(key, n) != want || within(owner, n) != want {
			t.Fatalf("name %d of %d: key in node %v, owner in node %v, want %v", i, total, within(key, n), within(owner, n), want)
		}
	}
}

// TestIndexSlotSize: an index slot is the 16 bytes Index's doc counts.
func TestIndexSlotSize(t *testing.T) {
	if n := unsafe.Sizeof(indexSlot{}); n != 16 {
		t.Errorf("indexSlot is %d bytes, want 16", n)
	}
}
