package zonedata

import (
	"net/netip"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gslbkit/gslb/internal/zonerecord"
	"github.com/gslbkit/gslb/provider/dnssec"
	"github.com/libdns/libdns"
	"github.com/miekg/dns"
)

// SOA is a zone's start-of-authority record, field for field
// provider/memory's SOA (which converts to and from it), times in seconds.
type SOA struct {
	NS      string `json:"ns"`
	Mbox    string `json:"mbox"`
	Serial  uint32 `json:"serial"`
	Refresh uint32 `json:"refresh"`
	Retry   uint32 `json:"retry"`
	Expire  uint32 `json:"expire"`
	Minimum uint32 `json:"minimum"`
	TTL     uint32 `json:"ttl"`
}

// Set is one immutable set of zones keyed by name (lower case, fully
// qualified): what the answer path reads. A store publishes a new Set with
// every change; its address identifies that version.
type Set struct {
	Zones map[string]*Zone
}

// Zone is one immutable version of a zone. Writers build a new zone that
// shares unchanged nodes with the old one.
type Zone struct {
	Name  string // lower case, fully qualified
	SOA   SOA
	Nodes map[string]*Node // owner (fqdn, lower case) → records
	ENTs  map[string]bool  // empty non-terminals: names with no records but with descendants
	Cuts  map[string]bool  // delegation points: names below the apex holding NS records
	Wild  bool             // some owner name starts with the "*" label
	// SerialPolicy is the store's serial policy for the zone (memory's
	// ZoneConfig field of that name); a zone replaced by a restore keeps it.
	SerialPolicy string
	// Signer signs the zone online (nil: unsigned); kept like SerialPolicy.
	Signer *dnssec.Signer

	// canonical is CanonicalNodes' order of this version, once one
	// iteration has sorted it (a Clone starts without).
	canonical atomic.Pointer[[]*Node]
	// index is this version's name index (FastIndex), once built (a
	// Clone starts without).
	index atomic.Pointer[Index]
}

// Node holds the records at one owner name: one slice of them, its RRsets
// in zonerecord.Types order, each a run of its type (a map of RRsets per
// name cost some 300 bytes a name; most names hold one RRset, and one
// record). Read it with Get, Len, All and Sets; a writer changes a Clone
// with Put. Nodes never change once published: Put makes a new slice.
type Node struct {
	recs []Rec
	typ  uint16 // the type of every record when n holds one RRset; else 0
}

// RRset is one RRset of a Node (Sets).
type RRset struct {
	Type uint16
	Recs []Rec // never empty
}

// NewNode returns a node holding the one RRset rs of type typ (rs is kept,
// not copied; a node of one record is allocated with it).
func NewNode(typ uint16, rs []Rec) *Node {
	switch len(rs) {
	case 0:
		return &Node{}
	case 1:
		nd := &struct {
			n Node
			r [1]Rec
		}{n: Node{typ: typ}, r: [1]Rec{rs[0]}}
		nd.n.recs = nd.r[:1:1]
		return &nd.n
	}
	return &Node{recs: rs[:len(rs):len(rs)], typ: typ}
}

func recType(r Rec) uint16 { return r.Wire.Header().Rrtype }

// run returns the end of the run of one type starting at i.
func (n *Node) run(i int) int {
	t := recType(n.recs[i])
	j := i + 1
	for j < len(n.recs) && recType(n.recs[j]) == t {
		j++
	}
	return j
}

// Get returns n's RRset of type typ, nil when n holds none (or n is nil).
// The slice must not be changed.
func (n *Node) Get(typ uint16) []Rec {
	if n == nil {
		return nil
	}
	if n.typ != 0 {
		if n.typ == typ {
			return n.recs
		}
		return nil
	}
	for i := 0; i < len(n.recs); {
		j := n.run(i)
		if recType(n.recs[i]) == typ {
			return n.recs[i:j:j]
		}
		i = j
	}
	return nil
}

// Len returns how many RRsets n holds.
func (n *Node) Len() int {
	if n.typ != 0 {
		return 1
	}
	c := 0
	for i := 0; i < len(n.recs); i = n.run(i) {
		c++
	}
	return c
}

// All returns every record of n, RRsets in zonerecord.Types order (Sorted
// without the copy); the slice must not be changed.
func (n *Node) All() []Rec { return n.recs[:len(n.recs):len(n.recs)] }

// Sets returns n's RRsets in zonerecord.Types order; callers must not
// change them.
func (n *Node) Sets() []RRset {
	var out []RRset
	for i := 0; i < len(n.recs); {
		j := n.run(i)
		out = append(out, RRset{recType(n.recs[i]), n.recs[i:j:j]})
		i = j
	}
	return out
}

// Put replaces n's RRset of type typ by rs (removes it when rs is empty),
// in a new slice. Only a writer's own Clone may be changed so.
func (n *Node) Put(typ uint16, rs []Rec) {
	o := typeOrder(typ)
	out := make([]Rec, 0, len(n.recs)+len(rs))
	placed := false
	for i := 0; i < len(n.recs); {
		j := n.run(i)
		t := recType(n.recs[i])
		if !placed && typeOrder(t) >= o {
			out = append(out, rs...)
			placed = true
		}
		if t != typ {
			out = append(out, n.recs[i:j]...)
		}
		i = j
	}
	if !placed {
		out = append(out, rs...)
	}
	n.recs = out
	n.typ = 0
	if len(out) > 0 && n.run(0) == len(out) {
		n.typ = recType(out[0])
	}
}

func typeOrder(t uint16) int { return zonerecord.TypeOrder(dns.TypeToString[t]) }

// Clone returns a copy of n that shares its records (Put makes a new
// slice).
func (n *Node) Clone() *Node {
	c := *n
	return &c
}

// Clone returns a copy of z that shares its Nodes (a writer clones a Node
// before changing it).
func (z *Zone) Clone() *Zone {
	// Every field but canonical, which is this version's.
	c := &Zone{Name: z.Name, SOA: z.SOA, ENTs: z.ENTs, Cuts: z.Cuts, Wild: z.Wild, SerialPolicy: z.SerialPolicy, Signer: z.Signer}
	c.Nodes = make(map[string]*Node, len(z.Nodes)+1)
	for k, v := range z.Nodes {
		c.Nodes[k] = v
	}
	return c
}

// SOARR returns the zone's SOA as a wire record.
func (z *Zone) SOARR() *dns.SOA {
	return &dns.SOA{
		Hdr: dns.RR_Header{Name: z.Name, Rrtype: dns.TypeSOA, Class: dns.ClassINET, Ttl: z.SOA.TTL},
		Ns:  z.SOA.NS, Mbox: z.SOA.Mbox, Serial: z.SOA.Serial,
		Refresh: z.SOA.Refresh, Retry: z.SOA.Retry, Expire: z.SOA.Expire, Minttl: z.SOA.Minimum,
	}
}

// RebuildENTs recomputes what is derived from the set of owner names: the
// empty non-terminals below the apex, the delegation points and whether the
// zone holds wildcards.
func (z *Zone) RebuildENTs() {
	ents := make(map[string]bool)
	z.Cuts, z.Wild = nil, false
	for name, nd := range z.Nodes {
		if strings.HasPrefix(name, "*.") {
			z.Wild = true
		}
		if name != z.Name && len(nd.Get(dns.TypeNS)) > 0 {
			if z.Cuts == nil {
				z.Cuts = make(map[string]bool)
			}
			z.Cuts[name] = true
		}
		z.addENTs(ents, name)
	}
	z.ENTs = ents
}

// addENTs adds to ents the names between name and the apex that hold no
// node: the empty non-terminals name implies.
func (z *Zone) addENTs(ents map[string]bool, name string) {
	for n := name; n != z.Name; {
		i := strings.IndexByte(n, '.')
		if i < 0 || i == len(n)-1 {
			return
		}
		n = n[i+1:]
		if n == z.Name || !dns.IsSubDomain(z.Name, n) {
			return
		}
		if _, ok := z.Nodes[n]; ok {
			continue
		}
		ents[n] = true
	}
}

// SortedNames returns the zone's owner names, apex first, then in DNS
// canonical order (RFC 4034 section 6.1).
func (z *Zone) SortedNames() []string {
	// Sort by a key computed once per name: splitting names in every
	// comparison made a 10,000-name zone take half a second to list.
	type keyed struct{ key, name string }
	ks := make([]keyed, 0, len(z.Nodes))
	for n := range z.Nodes {
		ks = append(ks, keyed{zonerecord.CanonicalKey(n), n})
	}
	slices.SortFunc(ks, func(a, b keyed) int { return strings.Compare(a.key, b.key) })
	names := make([]string, len(ks))
	for i, k := range ks {
		names[i] = k.name
	}
	return names
}

// Records returns every record in the zone: names in canonical order, types
// in SupportedTypes order, Records in insertion order.
func (z *Zone) Records() []Rec {
	var out []Rec
	for _, name := range z.SortedNames() {
		out = append(out, z.Nodes[name].Sorted()...)
	}
	return out
}

// Sorted returns a copy of n's records, types in zonerecord.Types order,
// records in insertion order.
func (n *Node) Sorted() []Rec { return slices.Clone(n.recs) }

// NewA, NewAAAA and NewTXT return a record with header hdr in one
// allocation with its data: the address, or the slot of a TXT record's
// one string (n strings: a slice of its own beside). An answer that
// writes the record reads one object, not two (a zone of a million names
// misses the cache on each object an answer touches).
func NewA(hdr dns.RR_Header, ip [4]byte) *dns.A {
	p := &inlineA{rr: dns.A{Hdr: hdr}, ip: ip}
	p.wire()
	return &p.rr
}

// NewAAAA: see NewA.
func NewAAAA(hdr dns.RR_Header, ip [16]byte) *dns.AAAA {
	p := &inlineAAAA{rr: dns.AAAA{Hdr: hdr}, ip: ip}
	p.wire()
	return &p.rr
}

// NewTXT returns a TXT record with hdr and n empty strings to fill: see
// NewA.
func NewTXT(hdr dns.RR_Header, n int) *dns.TXT {
	if n != 1 {
		return &dns.TXT{Hdr: hdr, Txt: make([]string, n)}
	}
	p := &inlineTXT{rr: dns.TXT{Hdr: hdr}}
	p.wire()
	return &p.rr
}

// inlineA, inlineAAAA and inlineTXT are records with their data beside
// them; wire points the record at it and returns the record.
type inlineA struct {
	rr dns.A
	ip [4]byte
}

type inlineAAAA struct {
	rr dns.AAAA
	ip [16]byte
}

type inlineTXT struct {
	rr dns.TXT
	s  [1]string
}

func (p *inlineA) wire() dns.RR    { p.rr.A = p.ip[:]; return &p.rr }
func (p *inlineAAAA) wire() dns.RR { p.rr.AAAA = p.ip[:]; return &p.rr }
func (p *inlineTXT) wire() dns.RR  { p.rr.Txt = p.s[:]; return &p.rr }

// Rec is one stored record: its wire form (owner fully qualified and lower
// case). Its libdns forms (Data, RR, Typed) are derived on demand: keeping
// them beside it tripled a record's memory.
type Rec struct {
	Wire dns.RR // wire form
}

// Data returns r's libdns data in canonical form, as zonerecord.Canonical
// made it: derived from the wire form, which that function made from it.
func (r Rec) Data() string {
	switch w := r.Wire.(type) {
	case *dns.A:
		a, _ := netip.AddrFromSlice(w.A)
		return a.Unmap().String() // a 16-byte form too (as dns.NewRR makes)
	case *dns.AAAA:
		a, _ := netip.AddrFromSlice(w.AAAA)
		return a.String()
	case *dns.CNAME:
		return w.Target
	case *dns.NS:
		return w.Ns
	case *dns.PTR:
		return w.Ptr
	case *dns.TXT:
		d, _ := zonerecord.TXTData(zonerecord.TXTStrings(w))
		return d
	}
	return strings.TrimPrefix(r.Wire.String(), r.Wire.Header().String())
}

// SameData reports whether r and o hold the same data (Data equal), for
// records of one RRset; it formats no data for the common types.
func (r Rec) SameData(o Rec) bool {
	switch w := r.Wire.(type) {
	case *dns.A:
		if v, ok := o.Wire.(*dns.A); ok {
			return w.A.Equal(v.A)
		}
	case *dns.AAAA:
		if v, ok := o.Wire.(*dns.AAAA); ok {
			return slices.Equal(w.AAAA, v.AAAA)
		}
	case *dns.CNAME:
		if v, ok := o.Wire.(*dns.CNAME); ok {
			return w.Target == v.Target
		}
	case *dns.NS:
		if v, ok := o.Wire.(*dns.NS); ok {
			return w.Ns == v.Ns
		}
	}
	return r.Data() == o.Data()
}

// Type returns r's type name, as libdns spells it.
func (r Rec) Type() string { return dns.TypeToString[r.Wire.Header().Rrtype] }

// RR returns r's libdns form in zone: name relative to zone and lower case
// ("@" at the apex), TTL in whole seconds, canonical data.
func (r Rec) RR(zone string) libdns.RR {
	h := r.Wire.Header()
	return libdns.RR{Name: zonerecord.Rel(h.Name, zone), TTL: time.Duration(h.Ttl) * time.Second, Type: dns.TypeToString[h.Rrtype], Data: r.Data()}
}

// Equal reports whether r and o are the same record: owner, type, TTL and
// data.
func (r Rec) Equal(o Rec) bool {
	a, b := r.Wire.Header(), o.Wire.Header()
	return a.Name == b.Name && a.Rrtype == b.Rrtype && a.Ttl == b.Ttl && r.SameData(o)
}

// Typed returns the record in zone as the libdns struct for its type
// (Address, CNAME, TXT, NS, MX, SRV, CAA, ServiceBinding), or its RR for
// types libdns does not parse: what answer hooks and GetRecords hand out.
func (r Rec) Typed(zone string) libdns.Record {
	rr := r.RR(zone)
	if t, ok := r.Wire.(*dns.TXT); ok {
		if _, plain := zonerecord.TXTData(zonerecord.TXTStrings(t)); !plain {
			return rr // several strings: presentation form, see zonerecord.TXTData
		}
	}
	t, err := rr.Parse()
	if err != nil {
		return rr
	}
	return t
}

// Get returns the RRset (name, typ), nil when z holds none.
func (z *Zone) Get(name string, typ uint16) []Rec {
	return z.Nodes[name].Get(typ)
}
