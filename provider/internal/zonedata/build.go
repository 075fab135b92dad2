package zonedata

import (
	"hash/maphash"
	"iter"
	"strings"
	"unsafe"

	"github.com/miekg/dns"
)

// Builder builds a zone from records in GetRecords order (as a snapshot
// holds them; any order is accepted). Records arrive grouped by RRset:
// each run of one RRset is gathered and stored once (storing after every
// record copied the set each time, quadratic in the size of an RRset).
// Names are gathered in a list and the zone's Nodes map is made once, at
// its final size, by Flush (growing it name by name rehashed it some
// twenty times at a million names), which also derives ENTs, Cuts and Wild
// from that list (RebuildENTs's work without walking the map). A name whose
// records come in several runs is merged there. Z is the zone being built:
// set it (Name, SOA, an empty Nodes) before the first Add.
type Builder struct {
	Z      *Zone
	run    SetBuilder
	runKey setKey
	names  [][]builtName // in chunks of nameChunk: growing one slice copied it ~20 times at a million names
	cnames []string      // names given a CNAME record
}

const nameChunk = 4096

// builtName is one run of names: a node of the records of one owner name
// that came together.
type builtName struct {
	name string
	n    *Node
	ns   bool // holds NS records
}

type setKey struct {
	name string
	typ  uint16
}

// Add adds r, owned by name (fully qualified, lower case), dropping a
// duplicate of a record of its RRset.
func (zb *Builder) Add(name string, r Rec) {
	if k := (setKey{name, r.Wire.Header().Rrtype}); k != zb.runKey {
		zb.flush()
		zb.runKey = k
	}
	zb.run.Add(r)
}

// Flush stores every RRset gathered so far in Z.Nodes and sets Z's ENTs,
// Cuts and Wild; call it once, after the last Add.
func (zb *Builder) Flush() {
	zb.flush()
	z := zb.Z
	held := len(z.Nodes) > 0 // names put in Z before: merged into, the slow way
	if !held {
		z.Nodes = make(map[string]*Node, zb.count())
	}
	var deep []string // names more than one label below the apex
	z.Cuts, z.Wild = nil, false
	var again map[string]bool // names that came in more than one run
	for _, b := range zb.all() {
		if held {
			if old := z.Nodes[b.name]; old != nil {
				merge(old, b.n)
			} else {
				z.Nodes[b.name] = b.n
			}
		} else {
			// One assignment, no lookup first: a name seen before shows
			// as a map that did not grow, and is merged below.
			n := len(z.Nodes)
			z.Nodes[b.name] = b.n
			if len(z.Nodes) == n {
				if again == nil {
					again = map[string]bool{}
				}
				again[b.name] = true
			}
		}
		if b.ns && b.name != z.Name {
			if z.Cuts == nil {
				z.Cuts = make(map[string]bool)
			}
			z.Cuts[b.name] = true
		}
		if strings.HasPrefix(b.name, "*.") {
			z.Wild = true
		}
		if i := strings.IndexByte(b.name, '.'); i >= 0 && i < len(b.name)-1 && b.name[i+1:] != z.Name && b.name != z.Name {
			deep = append(deep, b.name)
		}
	}
	if again != nil {
		// Each such name's node is its first run's, the later runs merged
		// in, in order.
		first := map[string]*Node{}
		for _, b := range zb.all() {
			if !again[b.name] {
				continue
			}
			if base := first[b.name]; base != nil {
				merge(base, b.n)
			} else {
				first[b.name] = b.n
				z.Nodes[b.name] = b.n
			}
		}
	}
	if held {
		zb.names = nil
		z.RebuildENTs() // the names held before count too
		return
	}
	ents := make(map[string]bool)
	for _, name := range deep {
		z.addENTs(ents, name)
	}
	z.ENTs = ents
	if len(z.Nodes) >= indexMinNames {
		z.index.Store(zb.index(again))
	}
	zb.names = nil
}

// index returns the name index of the zone Flush built, from the list of
// names in the order they came (see NewIndex): their nodes and names were
// allocated in that order, so reading them is a walk through memory where
// iterating the Nodes map (NewIndex) read each name, node and Cuts entry
// at random. again holds the names that came in more than one run, whose
// node is the map's.
func (zb *Builder) index(again map[string]bool) *Index {
	z := zb.Z
	x := newIndexTable(len(z.Nodes) + len(z.ENTs))
	var placed map[string]bool
	for _, b := range zb.all() {
		n, cut := b.n, b.ns && b.name != z.Name
		if again[b.name] {
			if placed[b.name] {
				continue
			}
			if placed == nil {
				placed = map[string]bool{}
			}
			placed[b.name] = true
			n, cut = z.Nodes[b.name], z.Cuts[b.name]
		}
		x.place(maphash.String(x.seed, b.name), nodeEntry(b.name, n, cut))
	}
	x.placeENTs(z)
	return x
}

// CNAMEs returns the names given a CNAME record (some more than once), for
// the CNAME rules a store checks once the zone is built.
func (zb *Builder) CNAMEs() []string { return zb.cnames }

// merge adds the RRsets of n (a name's records that came in a later run)
// to old: a set of a type old holds is joined to it, duplicates dropped.
func merge(old, n *Node) {
	for _, s := range n.Sets() {
		cur := old.Get(s.Type)
		if len(cur) == 0 {
			old.Put(s.Type, s.Recs)
			continue
		}
		var b SetBuilder
		for _, r := range cur {
			b.Add(r)
		}
		for _, r := range s.Recs {
			b.Add(r)
		}
		old.Put(s.Type, b.Recs)
	}
}

// SetBuilder gathers an RRset's records in order, dropping duplicates (same
// data) in constant time per record: a linear scan while the set is small,
// a map beyond.
type SetBuilder struct {
	Recs []Rec // the RRset so far
	seen map[string]bool
}

// Add adds r unless the set holds a record with its data.
func (b *SetBuilder) Add(r Rec) {
	const small = 16
	switch {
	case b.seen != nil:
		if b.seen[r.Data()] {
			return
		}
		b.seen[r.Data()] = true
	case len(b.Recs) < small:
		if containsData(b.Recs, r) {
			return
		}
	default:
		b.seen = make(map[string]bool, 2*len(b.Recs))
		for _, o := range b.Recs {
			b.seen[o.Data()] = true
		}
		if b.seen[r.Data()] {
			return
		}
		b.seen[r.Data()] = true
	}
	b.Recs = append(b.Recs, r)
}

func containsData(set []Rec, r Rec) bool {
	for _, o := range set {
		if o.SameData(r) {
			return true
		}
	}
	return false
}

func (zb *Builder) flush() {
	if len(zb.run.Recs) == 0 {
		return
	}
	k := zb.runKey
	if k.typ == dns.TypeCNAME {
		zb.cnames = append(zb.cnames, k.name)
	}
	if b := zb.last(); b != nil && b.name == k.name {
		// Another RRset of the name before: the node is the builder's own.
		b.ns = b.ns || k.typ == dns.TypeNS
		if existing := b.n.Get(k.typ); len(existing) > 0 {
			merge(b.n, NewNode(k.typ, slicesClone(zb.run.Recs)))
		} else {
			b.n.Put(k.typ, zb.run.Recs)
		}
		zb.run = SetBuilder{Recs: zb.run.Recs[:0]} // Put copied them
		return
	}
	if len(zb.names) == 0 || len(zb.names[len(zb.names)-1]) == nameChunk {
		zb.names = append(zb.names, make([]builtName, 0, min(nameChunk, max(64, zb.count()))))
	}
	c := &zb.names[len(zb.names)-1]
	n, name, packed := packedNode(k.name, k.typ, zb.run.Recs, zb.count() >= ownNamesFrom)
	if n == nil {
		n = NewNode(k.typ, zb.run.Recs)
	}
	*c = append(*c, builtName{name: name, n: n, ns: k.typ == dns.TypeNS})
	if !packed && len(zb.run.Recs) > 1 { // the node keeps the slice
		zb.run = SetBuilder{}
		return
	}
	// The node copied the run's records: its slice serves the next run.
	zb.run = SetBuilder{Recs: zb.run.Recs[:0]}
}

// packedNode returns the node of the commonest names a zone holds — one
// or two A records, one AAAA, CNAME or NS record, one TXT record of one
// string — with its records copied into the node's own allocation (true),
// or nil for any other RRset; and name, the records' owner, as the node
// holds it. An answer then reads one object, in adjacent cache lines and
// one page, where it chased a pointer from the node to each record: at a
// million names each was a cache and TLB miss. The records given become
// garbage; all of a kind do, so the load leaves no holes between records
// kept (in the same size class they would stay resident).
//
// A name of up to ownerRoom bytes is copied into the node's allocation
// too, and the records' owners and the name returned (the key of Nodes)
// are that copy: a lookup in the name index (Index) compares the name
// with the first record's owner, which then lies beside the node, not in
// an allocation of its own (another cache line and page at a million
// names). A name's separate string cost 24 bytes and the room costs 32
// (an A record's node: the 112-byte size class becomes the 144-byte one),
// and the strings left behind stay resident where live strings of their
// size class (TXT data, CNAME and NS targets) share their pages: a room
// is given (room true) only from the ownNamesFrom-th name of a zone on.
func packedNode(name string, typ uint16, rs []Rec, room bool) (*Node, string, bool) {
	switch len(rs) {
	case 1:
		switch w := rs[0].Wire.(type) {
		case *dns.A:
			if len(w.A) == 4 {
				n, name := packed(typ, inlineA{rr: *w, ip: [4]byte(w.A)}, name, room)
				return n, name, true
			}
		case *dns.AAAA:
			if len(w.AAAA) == 16 {
				n, name := packed(typ, inlineAAAA{rr: *w, ip: [16]byte(w.AAAA)}, name, room)
				return n, name, true
			}
		case *dns.TXT:
			if len(w.Txt) == 1 {
				n, name := packed(typ, inlineTXT{rr: *w, s: [1]string(w.Txt)}, name, room)
				return n, name, true
			}
		case *dns.CNAME:
			n, name := packed(typ, plain[dns.CNAME]{*w}, name, room)
			return n, name, true
		case *dns.NS:
			n, name := packed(typ, plain[dns.NS]{*w}, name, room)
			return n, name, true
		}
	case 2:
		w0, ok0 := rs[0].Wire.(*dns.A)
		w1, ok1 := rs[1].Wire.(*dns.A)
		if !ok0 || !ok1 || len(w0.A) != 4 || len(w1.A) != 4 {
			return nil, name, false
		}
		a := [2]inlineA{{rr: *w0, ip: [4]byte(w0.A)}, {rr: *w1, ip: [4]byte(w1.A)}}
		var n *Node
		switch {
		case !room:
			n, name = packedTwoA[[0]byte](typ, a, name)
		case len(name) <= ownerRoom:
			n, name = packedTwoA[[ownerRoom]byte](typ, a, name)
		case len(name) <= 2*ownerRoom:
			n, name = packedTwoA[[2 * ownerRoom]byte](typ, a, name)
		default:
			n, name = packedTwoA[[0]byte](typ, a, name)
		}
		return n, name, true
	}
	return nil, name, false
}

// ownerRoom is the room a packed node keeps for its owner's name (twice
// as much for a longer name; none beyond).
const ownerRoom = 32

// ownNamesFrom is the count of a zone's names from which its packed nodes
// hold their names (packedNode): only a zone that large gains by it. Its
// names are looked up in its name index (from indexMinNames names), and
// below that size the zone's lines stay in the last-level cache with or
// without the room; at 10,000 names of scale.sh's zone the rooms and the
// strings they left cost some 30 B a record of RSS (276 B against Knot's
// 268 in the scale run of 2026-12-04 21:59, 229–244 B before the rooms).
const ownNamesFrom = indexMinNames / 2

// plain is a record whose data needs no slot of its own (a CNAME's or an
// NS record's data is its target's name, a string).
type plain[R any] struct{ rr R }

func (p *plain[R]) wire() dns.RR { return any(&p.rr).(dns.RR) }

// packed returns a node of one record, d's, owned by name, in one
// allocation with it and, with room, name's bytes (packedNode), and name
// as the node holds it.
func packed[T any, P interface {
	*T
	wire() dns.RR
}](typ uint16, d T, name string, room bool) (*Node, string) {
	switch {
	case !room:
	case len(name) <= ownerRoom:
		return packedOwned[T, P, [ownerRoom]byte](typ, d, name)
	case len(name) <= 2*ownerRoom:
		return packedOwned[T, P, [2 * ownerRoom]byte](typ, d, name)
	}
	return packedOwned[T, P, [0]byte](typ, d, name)
}

func packedOwned[T any, P interface {
	*T
	wire() dns.RR
}, B any](typ uint16, d T, name string) (*Node, string) {
	p := &struct {
		n  Node
		r  [1]Rec
		nm B // before d: a last field of size 0 would be padded
		d  T
	}{d: d}
	rr := P(&p.d).wire()
	name = own(&p.nm, name, rr)
	p.r[0] = Rec{Wire: rr}
	p.n = Node{recs: p.r[:], typ: typ}
	return &p.n, name
}

// packedTwoA is packed for the two A records a.
func packedTwoA[B any](typ uint16, a [2]inlineA, name string) (*Node, string) {
	p := &struct {
		n  Node
		r  [2]Rec
		nm B
		a  [2]inlineA
	}{a: a}
	for i := range p.a {
		p.r[i] = Rec{Wire: p.a[i].wire()}
	}
	name = own(&p.nm, name, p.r[0].Wire, p.r[1].Wire)
	p.n = Node{recs: p.r[:], typ: typ}
	return &p.n, name
}

// own copies name into buf when it fits and points the owners of rrs
// spelled so at the copy, which it returns; else it returns name.
func own[B any](buf *B, name string, rrs ...dns.RR) string {
	b := unsafe.Slice((*byte)(unsafe.Pointer(buf)), unsafe.Sizeof(*buf))
	if len(name) == 0 || len(name) > len(b) {
		return name
	}
	copy(b, name)
	s := unsafe.String(&b[0], len(name))
	for _, rr := range rrs {
		if h := rr.Header(); h.Name == name {
			h.Name = s
		}
	}
	return s
}

// last returns the name gathered last, nil if none.
func (zb *Builder) last() *builtName {
	if len(zb.names) == 0 {
		return nil
	}
	c := zb.names[len(zb.names)-1]
	return &c[len(c)-1]
}

func (zb *Builder) count() int {
	if len(zb.names) == 0 {
		return 0
	}
	return (len(zb.names)-1)*nameChunk + len(zb.names[len(zb.names)-1])
}

// all yields the names gathered, in order.
func (zb *Builder) all() iter.Seq2[int, builtName] {
	return func(yield func(int, builtName) bool) {
		i := 0
		for _, c := range zb.names {
			for _, b := range c {
				if !yield(i, b) {
					return
				}
				i++
			}
		}
	}
}

func slicesClone(rs []Rec) []Rec { return append([]Rec(nil), rs...) }
