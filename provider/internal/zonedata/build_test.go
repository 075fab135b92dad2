package zonedata_test

import (
	"maps"
	"net"
	"reflect"
	"slices"
	"strconv"
	"testing"
	"unsafe"

	"github.com/gslbkit/gslb/provider/internal/zonedata"
	"github.com/miekg/dns"
	"pgregory.net/rapid"
)

// TestBuilderMatchesReference: whatever the order of the records, Builder
// stores every name's RRsets as adding the records one at a time would
// (each set in first-seen order, duplicates dropped), and derives the
// ENTs, cuts and wildcard flag RebuildENTs derives.
func TestBuilderMatchesReference(t *testing.T) {
	const zone = "example.test."
	owners := []string{zone, "a." + zone, "b.a." + zone, "c.b.a." + zone, "x.y.z." + zone, "*.w." + zone, "d." + zone, "ns.d." + zone}
	types := []uint16{dns.TypeA, dns.TypeAAAA, dns.TypeNS, dns.TypeTXT, dns.TypeCNAME}
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(0, 60).Draw(t, "n")
		var recs []zonedata.Rec
		for range n {
			name := rapid.SampledFrom(owners).Draw(t, "owner")
			typ := rapid.SampledFrom(types).Draw(t, "type")
			v := rapid.IntRange(0, 3).Draw(t, "data")
			h := dns.RR_Header{Name: name, Rrtype: typ, Class: dns.ClassINET, Ttl: 300}
			var rr dns.RR
			switch typ {
			case dns.TypeA:
				rr = &dns.A{Hdr: h, A: net.IPv4(10, 0, 0, byte(v)).To4()}
			case dns.TypeAAAA:
				rr = &dns.AAAA{Hdr: h, AAAA: net.ParseIP("2001:db8::" + strconv.Itoa(v))}
			case dns.TypeNS:
				rr = &dns.NS{Hdr: h, Ns: string(rune('a'+v)) + ".ns.test."}
			case dns.TypeCNAME:
				rr = &dns.CNAME{Hdr: h, Target: string(rune('a'+v)) + ".target.test."}
			default:
				rr = &dns.TXT{Hdr: h, Txt: []string{string(rune('a' + v))}}
			}
			recs = append(recs, zonedata.Rec{Wire: rr})
		}

		b := zonedata.Builder{Z: &zonedata.Zone{Name: zone, Nodes: map[string]*zonedata.Node{}}}
		for _, r := range recs {
			b.Add(r.Wire.Header().Name, r)
		}
		b.Flush()
		got := b.Z

		// The reference: each record put into its name's node in turn.
		want := &zonedata.Zone{Name: zone, Nodes: map[string]*zonedata.Node{}}
		for _, r := range recs {
			h := r.Wire.Header()
			nd := want.Nodes[h.Name]
			set := nd.Get(h.Rrtype)
			if slices.ContainsFunc(set, r.SameData) {
				continue
			}
			set = append(slices.Clone(set), r)
			if nd == nil {
				want.Nodes[h.Name] = zonedata.NewNode(h.Rrtype, set)
			} else {
				nd.Put(h.Rrtype, set)
			}
		}
		want.RebuildENTs()

		if !slices.Equal(slices.Sorted(maps.Keys(got.Nodes)), slices.Sorted(maps.Keys(want.Nodes))) {
			t.Fatalf("names %v, want %v", slices.Sorted(maps.Keys(got.Nodes)), slices.Sorted(maps.Keys(want.Nodes)))
		}
		for name, wn := range want.Nodes {
			g, w := got.Nodes[name].All(), wn.All()
			if !slices.EqualFunc(g, w, zonedata.Rec.Equal) {
				t.Fatalf("%s: %v, want %v", name, g, w)
			}
		}
		if !maps.Equal(got.ENTs, want.ENTs) || !maps.Equal(got.Cuts, want.Cuts) || got.Wild != want.Wild {
			t.Fatalf("ENTs %v cuts %v wild %v, want %v %v %v", got.ENTs, got.Cuts, got.Wild, want.ENTs, want.Cuts, want.Wild)
		}
		var cn []string
		for name, nd := range want.Nodes {
			if len(nd.Get(dns.TypeCNAME)) > 0 {
				cn = append(cn, name)
			}
		}
		gotCN := slices.Compact(slices.Sorted(slices.Values(b.CNAMEs())))
		if !slices.Equal(gotCN, slices.Sorted(slices.Values(cn))) {
			t.Fatalf("CNAMEs %v, want %v", gotCN, cn)
		}
	})
}

// TestBuilderManyNames: names beyond one chunk of the builder's list are
// all stored, with their empty non-terminals.
func TestBuilderManyNames(t *testing.T) {
	const zone = "example.test."
	b := zonedata.Builder{Z: &zonedata.Zone{Name: zone, Nodes: map[string]*zonedata.Node{}}}
	const n = 10000
	for i := range n {
		name := "h" + strconv.Itoa(i) + ".p" + strconv.Itoa(i%7) + "." + zone
		b.Add(name, zonedata.Rec{Wire: &dns.A{Hdr: dns.RR_Header{Name: name, Rrtype: dns.TypeA, Class: dns.ClassINET}, A: net.IPv4(10, 0, 0, 1).To4()}})
		b.Add(name, zonedata.Rec{Wire: &dns.TXT{Hdr: dns.RR_Header{Name: name, Rrtype: dns.TypeTXT, Class: dns.ClassINET}, Txt: []string{"x"}}})
	}
	b.Flush()
	if len(b.Z.Nodes) != n || len(b.Z.ENTs) != 7 {
		t.Fatalf("%d names, %d ENTs; want %d, 7", len(b.Z.Nodes), len(b.Z.ENTs), n)
	}
	for name, nd := range b.Z.Nodes {
		if nd.Len() != 2 {
			t.Fatalf("%s holds %d RRsets", name, nd.Len())
		}
	}
}

// TestBuilderIntoHeldNodes: a Builder whose zone already holds names
// merges into them.
func TestBuilderIntoHeldNodes(t *testing.T) {
	const zone = "example.test."
	a := func(name string, last byte) zonedata.Rec {
		return zonedata.Rec{Wire: &dns.A{Hdr: dns.RR_Header{Name: name, Rrtype: dns.TypeA, Class: dns.ClassINET}, A: net.IPv4(10, 0, 0, last).To4()}}
	}
	z := &zonedata.Zone{Name: zone, Nodes: map[string]*zonedata.Node{"a." + zone: zonedata.NewNode(dns.TypeA, []zonedata.Rec{a("a."+zone, 1)})}}
	b := zonedata.Builder{Z: z}
	b.Add("a."+zone, a("a."+zone, 1))
	b.Add("a."+zone, a("a."+zone, 2))
	b.Add("x.y."+zone, a("x.y."+zone, 3))
	b.Flush()
	if got := len(z.Nodes["a."+zone].Get(dns.TypeA)); got != 2 || len(z.Nodes) != 2 || !z.ENTs["y."+zone] {
		t.Fatalf("a holds %d A records, %d names, ENTs %v", got, len(z.Nodes), z.ENTs)
	}
}

// TestBuilderPacksCommonNodes: the Builder stores a name of one or two A
// records, one AAAA, CNAME or NS record or one TXT record of one string
// with its records in the node's own allocation (packedNode), equal to
// those given and not sharing their memory.
func TestBuilderPacksCommonNodes(t *testing.T) {
	const zone = "example.test."
	h := func(name string, typ uint16) dns.RR_Header {
		return dns.RR_Header{Name: name + "." + zone, Rrtype: typ, Class: dns.ClassINET, Ttl: 300}
	}
	in := []dns.RR{
		&dns.A{Hdr: h("one", dns.TypeA), A: net.IPv4(192, 0, 2, 1).To4()},
		&dns.A{Hdr: h("two", dns.TypeA), A: net.IPv4(192, 0, 2, 2).To4()},
		&dns.A{Hdr: h("two", dns.TypeA), A: net.IPv4(192, 0, 2, 3).To4()},
		&dns.AAAA{Hdr: h("six", dns.TypeAAAA), AAAA: net.ParseIP("2001:db8::6")},
		&dns.TXT{Hdr: h("txt", dns.TypeTXT), Txt: []string{"v=spf1 -all"}},
		&dns.CNAME{Hdr: h("alias", dns.TypeCNAME), Target: "one." + zone},
		&dns.NS{Hdr: h("sub", dns.TypeNS), Ns: "ns.sub." + zone},
	}
	b := zonedata.Builder{Z: &zonedata.Zone{Name: zone, Nodes: map[string]*zonedata.Node{}}}
	for _, rr := range in {
		b.Add(rr.Header().Name, zonedata.Rec{Wire: rr})
	}
	b.Flush()
	i := 0
	for _, name := range []string{"one", "two", "six", "txt", "alias", "sub"} {
		nd := b.Z.Nodes[name+"."+zone]
		at := uintptr(unsafe.Pointer(nd))
		for _, r := range nd.All() {
			if want := (zonedata.Rec{Wire: in[i]}); !r.Equal(want) || r.Wire == want.Wire {
				t.Errorf("%s: %v (the same value %v), want a copy of %v", name, r.Wire, r.Wire == want.Wire, want.Wire)
			}
			if p := reflect.ValueOf(r.Wire).Pointer(); p < at || p >= at+256 {
				t.Errorf("%s: record at %#x, node at %#x: not in the node's allocation", name, p, at)
			}
			i++
		}
	}
}
